"""Paired comparison of two runs on the same tests: exact McNemar tests, Holm across categories.

Both runs scored the same tests, so they are compared test by test (paper 5.2), counted by the
one paired statistic of :mod:`nnd_suites.statistics.paired`: a tie is not a pass (ties are
counted per run); a test degenerate (both candidates the same text) or skipped (a candidate too
long for a model's window) in either run is left out and counted, exactly as each run's own
report leaves it out. A suite of run A is matched with the suite of run B of the same own name
and content hash, whatever the order the runs were given their suites in.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import Field

from nnd_suites.errors import ArgumentError, NNDError
from nnd_suites.evaluation.limits import RecordedLimit, SuiteLimit
from nnd_suites.evaluation.report import EvaluationReport, SuiteResult
from nnd_suites.evaluation.report_markdown import pipeline_check
from nnd_suites.evaluation.run_differences import coverage_differences, scoring_differences
from nnd_suites.evaluation.saved import load_report, report_file
from nnd_suites.infra.formatting import count
from nnd_suites.infra.key_values import require_unique
from nnd_suites.infra.output_kinds import register_model
from nnd_suites.infra.validation import StrictModel
from nnd_suites.statistics.outcomes import TestOutcome
from nnd_suites.statistics.paired import MCNEMAR, PairedResult, holm, paired_counts

TIE_RULE = (
    "a tie (equal scores for both candidates) is not a pass; ties are counted per run; tests "
    "degenerate or skipped in either run are left out and counted"
)
TEST = MCNEMAR
CORRECTION = "Holm step-down over the categories of each suite (family-wise error)"
#: Why a run is not compared with itself, and what to give instead.
ONE_RUN = (
    "a run compared with itself differs nowhere (every difference 0, every p 1). Give two "
    "different runs: another model's, or this model's scored again"
)


class IncomparableRunsError(NNDError):
    """Two runs do not cover the same tests (suites, content hashes or test ids differ)."""


class SameRunError(IncomparableRunsError):
    """Runs A and B are one run: the same report file, or the same report read twice (a copy)."""


class SuiteComparison(StrictModel):
    suite: str
    suite_b: str | None = Field(
        None,
        description="run B's name for the suite when it is not run A's (suites of one name, "
        "NAME and NAME_2, given in the other order); null: the same name",
    )
    content_hash: str
    template_a: str
    template_b: str
    overall: PairedResult
    by_category: dict[str, PairedResult]
    limited: SuiteLimit | None = Field(
        None,
        description="both runs scored part of the suite (--limit): the whole suite's test count "
        "and the categories left with no test (null: scored whole)",
    )


class Comparison(StrictModel):
    """What ``nnd-suites compare`` reports (``comparison.json``)."""

    model_a: str
    model_b: str
    mode_a: str
    mode_b: str
    source_a: str | None = Field(None, description="where run A was read from")
    source_b: str | None = None
    random_weights: bool = Field(
        False,
        description="run A's or B's model is a tiny one with random weights, as its report "
        "records: the comparison is a pipeline check",
    )
    tie_rule: str = TIE_RULE
    test: str = TEST
    correction: str = CORRECTION
    scoring_differences: list[str] = Field(
        default_factory=list,
        description="how the two runs were scored differently (compared on purpose)",
    )
    suites: dict[str, SuiteComparison]
    limit: RecordedLimit = Field(
        None,
        description="run A's --limit as given (the first N context groups of each suite, or "
        "that fraction of them); the runs are matched on the tests kept (each suite's "
        "`limited`), not on how --limit was spelled",
    )


def paired(pairs: Iterable[tuple[TestOutcome, TestOutcome]]) -> PairedResult:
    """The paired result of the outcomes of the same tests in runs A and B."""
    return PairedResult.of(paired_counts((a.outcome, b.outcome) for a, b in pairs))


def _suites(names: Iterable[str]) -> str:
    """``suite a`` or ``suites a, b and c``, sorted: the words of a message."""
    ordered = sorted(names)
    listed = ordered[0] if len(ordered) == 1 else f"{', '.join(ordered[:-1])} and {ordered[-1]}"
    return f"suite{'s' if len(ordered) > 1 else ''} {listed}"


def _suite_names(a: EvaluationReport, b: EvaluationReport, only: Sequence[str] | None) -> list[str]:
    if only:
        require_unique(list(only), "suite", "--suite")
        missing = [
            f"{_suites([name])} is not in run {side} (it has {', '.join(sorted(run.suites))})"
            for name in only
            for side, run in (("A", a), ("B", b))
            if name not in run.suites
        ]
        if missing:
            raise IncomparableRunsError("; ".join(missing))
        return list(only)
    if set(a.suites) != set(b.suites):
        extra = [
            f"only run {side} has {_suites(set(run.suites) - set(other.suites))}"
            for side, run, other in (("A", a, b), ("B", b, a))
            if set(run.suites) - set(other.suites)
        ]
        common = [name for name in a.suites if name in b.suites]
        then = (
            f"compare the suites both have with --suite NAME (here: {', '.join(common)})"
            if common
            else "the runs share no suite, so there is nothing to compare"
        )
        raise IncomparableRunsError(
            f"the runs cover different suites: {'; '.join(extra)}; {then}"
            + "".join(f"; {same}" for same in _same_tests_renamed(a, b))
        )
    return list(a.suites)


def _same_tests_renamed(a: EvaluationReport, b: EvaluationReport) -> list[str]:
    """Suites of one run only whose tests (pairs and candidates) are those of a suite of the
    other run only: one suite built twice under two names (``build --name``). A suite's name is
    part of what a run scored, so they are not paired; the message says how to compare them."""
    found = []
    for name_a, result_a in a.suites.items():
        for name_b, result_b in b.suites.items():
            if name_a in b.suites or name_b in a.suites or name_a == name_b:
                continue
            tests_a, tests_b = (
                {k: (r.section_hashes or {}).get(k) for k in ("pairs", "candidates")}
                for r in (result_a, result_b)
            )
            if None not in tests_a.values() and tests_a == tests_b:
                found.append(
                    f"run B's {name_b} holds the same tests as run A's {name_a} under another "
                    "name (built with --name): to compare them, evaluate both models on one "
                    "suite folder"
                )
    return found


def _identity(name: str, result: SuiteResult) -> tuple[str, str]:
    """A suite as a run holds it: its own name (a run calls a second suite NAME ``NAME_2``)
    and its content hash."""
    return (result.suite_name or name, result.content_hash)


def _renamed_like(a: EvaluationReport, b: EvaluationReport) -> tuple[EvaluationReport, dict]:
    """Run B with each suite under the name run A gives the same suite (:func:`_identity`), so
    that suites of one name given in the other order (``NAME`` in A is ``NAME_2`` in B) are
    matched; B's other suites of that name take the names left, in B's order, so that a suite
    whose content differs is still named and refused. Also A's name -> B's, where they differ.
    B unchanged when that would give two suites one name (a suite named ``NAME_2`` itself)."""
    in_a = {_identity(name, result): name for name, result in a.suites.items()}
    renamed = {name: in_a.get(_identity(name, result)) for name, result in b.suites.items()}
    taken = set(renamed.values())
    for name in [name for name, new in renamed.items() if new is None]:
        own, number = _identity(name, b.suites[name])[0], 2
        new = own
        while new in taken:  # the run's own numbering (evaluation/prepared.py), names left
            new, number = f"{own}_{number}", number + 1
        renamed[name] = new
        taken.add(new)
    if len(set(renamed.values())) < len(renamed) or all(k == v for k, v in renamed.items()):
        return b, {}
    rekeyed = b.model_copy(update={"suites": {renamed[k]: v for k, v in b.suites.items()}})
    rekeyed._outcomes = {renamed.get(k, k): v for k, v in b.outcomes.items()}
    return rekeyed, {new: old for old, new in renamed.items() if new != old}


def _matched(
    name: str, a: EvaluationReport, b: EvaluationReport
) -> list[tuple[TestOutcome, TestOutcome]]:
    """The two runs' outcomes of suite ``name``, test by test; refuses different tests."""
    by_id_b = {o.pair_id: o for o in b.outcomes[name]}
    ids_a = [o.pair_id for o in a.outcomes[name]]
    problems = []
    if len(set(ids_a)) != len(ids_a) or len(by_id_b) != len(b.outcomes[name]):
        problems.append("repeated test ids")
    only_a, only_b = set(ids_a) - set(by_id_b), set(by_id_b) - set(ids_a)
    if only_a or only_b:
        problems.append(
            f"{count(len(only_a))} test id(s) only in A (e.g. {sorted(only_a)[:3]}), "
            f"{count(len(only_b))} only in B (e.g. {sorted(only_b)[:3]})"
        )
    if problems:
        raise IncomparableRunsError(
            f"suite {name}: the per-test outcomes do not cover the same tests: "
            + "; ".join(problems)
            + "; re-run the evaluations with --out"
        )
    return [(o, by_id_b[o.pair_id]) for o in a.outcomes[name]]


def _refuse_one_run(a: EvaluationReport, b: EvaluationReport, said: str) -> None:
    """Refuse A and B when they are one run: the same object, or one ``run_id`` (a run folder
    copied); a run scored again (a reproducibility check) draws another id and is compared, even
    within the second its ``created`` is kept to. Reports written before run ids: one run when
    the reports are equal (but for a run id one lacks) with equal outcomes."""
    if a.run_id and b.run_id:
        one = a.run_id == b.run_id
    else:
        dumps = [r.model_dump(mode="json", exclude={"run_id"}) for r in (a, b)]
        one = dumps[0] == dumps[1] and a.outcomes == b.outcomes
    if a is b or one:
        raise SameRunError(
            f"runs A and B are one run: {said} (model {a.model!r}, created {a.created}); {ONE_RUN}"
        )


def compare_reports(
    a: EvaluationReport,
    b: EvaluationReport,
    *,
    suites: Sequence[str] | None = None,
    allow_different_scoring: bool = False,
) -> Comparison:
    """Compare two runs test by test, per suite and per category (reports with outcomes, as
    :func:`nnd_suites.evaluation.saved.load_report` or ``evaluate`` return them).

    The runs must cover the same tests (limit, suite content) and, unless
    ``allow_different_scoring`` (to compare two modes or templates on purpose, said in the
    result), be scored the same way (mode, template)."""
    for side, report in (("a", a), ("b", b)):
        if not isinstance(report, EvaluationReport):
            raise ArgumentError(
                f"compare_reports({side}={reprlib.repr(report)}): give the EvaluationReport "
                "evaluate() returns; compare run folders with compare_runs(FOLDER_A, FOLDER_B)"
            )
    return _compare(a, b, suites, allow_different_scoring, "the same report given twice")


def _compare(
    a: EvaluationReport,
    b: EvaluationReport,
    suites: Sequence[str] | None,
    allow_different_scoring: bool,
    same_run: str,
) -> Comparison:
    """:func:`compare_reports`, ``same_run`` saying how A and B were found to be one run."""
    _refuse_one_run(a, b, same_run)
    b, names_in_b = _renamed_like(a, b)
    names = _suite_names(a, b, suites)
    coverage = coverage_differences(a, b, names)
    if coverage:
        raise IncomparableRunsError(
            "the runs cover different tests: "
            + "; ".join(coverage)
            + "; score both models on the same suite folder, keeping the same context groups"
        )
    differences = scoring_differences(a, b, names)
    if differences and not allow_different_scoring:
        raise IncomparableRunsError(
            "the runs were scored differently: "
            + "; ".join(differences)
            + "; score both the same way, or compare them on purpose with "
            "--allow-different-scoring"
        )
    compared: dict[str, SuiteComparison] = {}
    for name in names:
        matched = _matched(name, a, b)
        groups: dict[str, list[tuple[TestOutcome, TestOutcome]]] = {
            c: [] for c in a.suites[name].by_category
        }
        for pair in matched:
            groups.setdefault(pair[0].category, []).append(pair)
        by_category = {c: paired(tests) for c, tests in groups.items()}
        for category, p in zip(
            by_category, holm([r.p_value for r in by_category.values()]), strict=True
        ):
            by_category[category].p_holm = p
        compared[name] = SuiteComparison(
            suite=name,
            suite_b=names_in_b.get(name),
            content_hash=a.suites[name].content_hash,
            template_a=a.suites[name].template,
            template_b=b.suites[name].template,
            overall=paired(matched),
            by_category=by_category,
            limited=a.suites[name].limited,
        )
    return Comparison(
        model_a=a.model,
        model_b=b.model,
        mode_a=a.mode,
        mode_b=b.mode,
        random_weights=any(pipeline_check(r.model, r.random_weights) for r in (a, b)),
        scoring_differences=differences,
        suites=compared,
        limit=a.limit,
    )


def compare_runs(
    a: str | Path,
    b: str | Path,
    *,
    suites: Sequence[str] | None = None,
    allow_different_scoring: bool = False,
) -> Comparison:
    """:func:`compare_reports` of two saved runs (folders written by ``evaluate --out``, or
    their report.json), the comparison recording which report file each side came from."""
    file_a, file_b = report_file(a), report_file(b)
    if file_a.samefile(file_b):  # before reading either: one file, however it was named
        raise SameRunError(f"runs A and B are one run: both are {file_a}; {ONE_RUN}")
    comparison = _compare(
        load_report(file_a),
        load_report(file_b),
        suites,
        allow_different_scoring,
        f"{file_b} holds the same report as {file_a}",
    )
    comparison.source_a, comparison.source_b = str(file_a), str(file_b)
    return comparison


register_model("comparison", Comparison)
