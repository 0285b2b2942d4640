"""Whether two runs can be combined (compare, leaderboards, place): the tests they cover and how
they scored them, each difference a line that names it."""

from __future__ import annotations

from collections.abc import Iterable

from nnd_suites.evaluation.limits import kept_tests_differ
from nnd_suites.evaluation.report import EvaluationReport, SuiteResult
from nnd_suites.suite.manifest import CANDIDATES_SECTION, OUTSIDE_CONTENT, PAIRS_SECTION


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
                f"suite {name}: content {x.content_hash[:12]} vs {y.content_hash[:12]}"
                + content_difference(x, y)
            )
        elif (kept := kept_tests_differ(x.limited, y.limited)) is not None:
            found.append(f"suite {name}: {kept}")
    return found


def content_difference(x: SuiteResult, y: SuiteResult) -> str:
    """Where two suites of one name came from and what their contents differ in: the tests
    (pairs, candidates) or only the manifest (a suite is its content hash, manifest included)."""
    where = f" (A's from {x.given_as}, B's from {y.given_as})" if x.given_as and y.given_as else ""
    if not (x.section_hashes and y.section_hashes):  # reports written before section hashes
        return f"{where} (another build, version or transformation)"
    differ = [
        section
        for section in dict.fromkeys([*x.section_hashes, *y.section_hashes])
        if section not in OUTSIDE_CONTENT
        and x.section_hashes.get(section) != y.section_hashes.get(section)
    ]
    tests = [s for s in (PAIRS_SECTION, CANDIDATES_SECTION) if s in differ]
    fields = ", ".join(s for s in differ if s not in tests)
    if not tests:
        return f"{where}: the same pairs and candidates, but manifests differing in {fields}"
    return f"{where}: {' and '.join(tests)} differ" + (f"; manifests in {fields}" if fields else "")


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
