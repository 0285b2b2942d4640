"""``python -m nnd_suites.cli`` is ``python -m nnd_suites`` (and the ``nnd-suites`` command)."""

import runpy

runpy.run_module("nnd_suites", run_name="__main__", alter_sys=True)
