"""Robustness of one model across suites x transformations (GEM evaluation suites, section 3.1).

Each suite is evaluated untouched and under each transformation; every transformed test is
compared with its parent test (same id), so the deltas are paired (``stats.py``).
"""

from __future__ import annotations

from nnd_suites.evaluation.robustness.models import RobustnessReport, make_cell
from nnd_suites.evaluation.robustness.report import to_markdown, write_report
from nnd_suites.evaluation.robustness.run import robustness

__all__ = ["RobustnessReport", "make_cell", "robustness", "to_markdown", "write_report"]
