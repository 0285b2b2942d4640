"""Paired comparison of two evaluation runs on the same tests (paper 5.2).

Not named ``compare``: ``nnd_suites.evaluation.compare`` is the function deciding one test.
"""

from nnd_suites.evaluation.comparison.paired import (
    Comparison,
    IncomparableRunsError,
    PairedResult,
    SuiteComparison,
    compare_reports,
    holm,
    mcnemar_exact,
)
from nnd_suites.evaluation.comparison.render import comparison_markdown, write_comparison

__all__ = [
    "Comparison",
    "IncomparableRunsError",
    "PairedResult",
    "SuiteComparison",
    "compare_reports",
    "comparison_markdown",
    "holm",
    "mcnemar_exact",
    "write_comparison",
]
