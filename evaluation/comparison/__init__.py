"""Paired comparison of two evaluation runs on the same tests (paper 5.2).

Its statistics (McNemar, Newcombe, Holm) are the ones robustness uses too:
:mod:`nnd_suites.statistics.paired`.
"""

from nnd_suites.evaluation.comparison.paired import (
    Comparison,
    IncomparableRunsError,
    SameRunError,
    compare_reports,
    compare_runs,
)
from nnd_suites.evaluation.comparison.render import comparison_markdown, write_comparison

__all__ = [
    "Comparison",
    "IncomparableRunsError",
    "SameRunError",
    "compare_reports",
    "compare_runs",
    "comparison_markdown",
    "write_comparison",
]
