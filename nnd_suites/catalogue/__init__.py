"""The catalogue: every suite nnd-suites knows how to build, declared as data
(``catalogue.yaml``: adapter and options, task type, judgment, where the source comes from, and
the figures a build must give), listed by ``nnd-suites catalogue`` and built, figures checked,
into one dataset folder by ``nnd-suites build --catalogue``."""
