"""Robustness of one model across suites x transformations (GEM evaluation suites, section 3.1).

Each suite is evaluated untouched and under each transformation; every transformed test is
compared with its parent test (same id), so the deltas are paired.
"""

from __future__ import annotations

from nnd_suites.evaluation.robustness.models import RobustnessCell, RobustnessReport, make_cell
from nnd_suites.evaluation.robustness.report import to_markdown, write_report
from nnd_suites.evaluation.robustness.run import robustness
from nnd_suites.evaluation.robustness.stats import (
    PairedTest,
    compare_to_parent,
    paired_tests,
)

__all__ = [
    "PairedTest",
    "RobustnessCell",
    "RobustnessReport",
    "compare_to_parent",
    "make_cell",
    "paired_tests",
    "robustness",
    "to_markdown",
    "write_report",
]
