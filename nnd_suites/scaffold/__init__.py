"""The contribution kit: ``nnd-suites new-adapter`` templates and the per-adapter test harness."""
