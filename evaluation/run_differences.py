"""Whether two runs can be combined (compare, leaderboards, place): the tests they cover and how
they scored them, each difference a line that names it."""

from __future__ import annotations

from collections.abc import Iterable

from nnd_suites.evaluation.limits import kept_tests_differ
from nnd_suites.evaluation.report import EvaluationReport


def coverage_differences(
    a: EvaluationReport, b: EvaluationReport, suites: Iterable[str]
) -> list[str]:
    """How two runs scored different tests of ``suites`` (each in both runs): each suite's
    content, and the tests --limit kept (what was kept, not how --limit was spelled)."""
    found = []
    for name in suites:
        x, y = a.suites[name], b.suites[name]
        if x.content_hash != y.content_hash:
            found.append(
                f"suite {name}: content {x.content_hash[:12]} vs {y.content_hash[:12]} "
                "(another build, version or transformation)"
            )
        elif (kept := kept_tests_differ(x.limited, y.limited)) is not None:
            found.append(f"suite {name}: {kept}")
    return found


def scoring_differences(
    a: EvaluationReport, b: EvaluationReport, suites: Iterable[str]
) -> list[str]:
    """How two runs differ on ``suites`` (each in both runs): the tests they cover
    (:func:`coverage_differences`), then scoring mode, scorer, reference model and each suite's
    template. Runs that are combined (compare, leaderboards) must have none of these, or say
    them."""
    suites = list(suites)  # read twice
    found = coverage_differences(a, b, suites)
    if a.mode != b.mode:
        found.append(f"scoring mode {a.mode!r} vs {b.mode!r}")
    if a.scorer != b.scorer:
        found.append(f"scorer {a.scorer!r} vs {b.scorer!r}")
    if _other_reference(a, b):
        found.append(f"reference model {a.reference_model!r} vs {b.reference_model!r}")
        if a.reference_model == b.reference_model:
            found[-1] += " (the same path, other weights)"
    for name in suites:
        x, y = a.suites[name], b.suites[name]
        if x.template != y.template:
            found.append(f"suite {name}: template {x.template!r} vs {y.template!r}")
    return found


def _other_reference(a: EvaluationReport, b: EvaluationReport) -> bool:
    """The runs' reference models differ by content (``./models/x`` and ``models/x`` are one);
    by the path given when a report predates content identities."""
    if a.reference_identity is not None and b.reference_identity is not None:
        return a.reference_identity != b.reference_identity
    return a.reference_model != b.reference_model
