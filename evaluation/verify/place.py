"""Place a new model among the annotated systems of a verify run (paper 5.1): per category, fit
human score against pass rate over the systems and predict the new model's human score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.limits import kept_tests_differ
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.evaluation.saved import load_report
from nnd_suites.evaluation.verify.models import (
    Correlation,
    PlacedScore,
    PlacementReport,
    VerifyReport,
)
from nnd_suites.evaluation.verify.render import (
    PLACEMENT_FILE,
    check_verify_folder,
    load_verify,
    write_placement,
)
from nnd_suites.evaluation.verify.stats import place_model
from nnd_suites.infra.formatting import plural
from nnd_suites.statistics.outcomes import outcome_map, rated_by_all


def _clip(value: float, bounds: tuple[float, float] | None) -> float:
    return value if bounds is None else min(max(value, bounds[0]), bounds[1])


def _place(
    pass_rates: Mapping[str, float],
    human_scores: Mapping[str, float],
    pass_rate: float,
    confidence: float,
    bounds: tuple[float, float] | None = None,
) -> PlacedScore:
    """The fit's prediction, cut to ``bounds`` (the range a human score can take) if given."""
    placed = place_model(pass_rates, human_scores, pass_rate, confidence=confidence)
    predicted = _clip(placed.predicted, bounds)
    interval = placed.interval
    if interval is not None:
        interval = (_clip(interval[0], bounds), _clip(interval[1], bounds))
    return PlacedScore(
        pass_rate=pass_rate,
        predicted_human_score=predicted,
        prediction_interval=interval,
        clipped=predicted != placed.predicted or interval != placed.interval,
        r_squared=placed.r_squared,
        systems=placed.systems,
        poor_fit=placed.poor_fit,
        reason=placed.reason,
        extrapolated=placed.extrapolated,
    )


def _pass_rate(outcomes: Mapping[str, str], tests: Sequence[str]) -> float:
    return sum(outcomes[pair_id] == "pass" for pair_id in tests) / len(tests)


def check_same_scoring(verify: VerifyReport, mode: str, template: str, scorer: str) -> None:
    """A placement reads a pass rate on the verify run's fit: it must be scored the same way."""
    if verify.mode is None or verify.template is None:
        raise NNDError(
            f"the verify run of {verify.suite} records no scoring mode or template (written by an "
            "earlier version): re-run verify before placing a model in it"
        )
    for what, theirs, ours in (
        ("scoring mode", verify.mode, mode),
        ("template", verify.template, template),
        ("scorer", verify.scorer, scorer),
    ):
        if theirs != ours:
            raise NNDError(
                f"{verify.suite}: the verify run was scored with {what} {theirs!r}, the model to "
                f"place with {ours!r}; evaluate the model with the verify run's {what}"
            )


def place_in_verify(verify: VerifyReport, report: EvaluationReport) -> PlacementReport:
    """The new model of ``report`` (an ``evaluate`` run on the verified suite, same tests),
    placed on a line fitted on the tests it rated: each system's pass rate and its own are
    counted on the tests every one of them rated (:func:`rated_by_all`), so a test the new
    model skipped leaves the systems' rates too (``not_rated`` says how many)."""
    result = report.suites.get(verify.suite)
    if result is None:
        raise NNDError(
            f"the evaluation of {report.model} has no suite {verify.suite!r} (it has "
            f"{sorted(report.suites)}); evaluate the model on the verified suite"
        )
    kept = kept_tests_differ(result.limited, verify.limited)
    if result.content_hash != verify.content_hash or kept is not None:
        raise NNDError(
            f"{report.model} was scored on other tests of {verify.suite} than the verify run "
            f"(content hash {result.content_hash[:12]} vs {verify.content_hash[:12]}"
            + (f"; {kept}" if kept else "")
            + "); evaluate it on the same suite, keeping the same context groups"
        )
    check_same_scoring(verify, report.mode, result.template, report.scorer)
    if verify.outcomes is None:
        raise NNDError(
            f"the verify run of {verify.suite} records no per-test outcomes of its systems "
            "(written by an earlier version), so its fit cannot be restricted to the tests "
            f"{report.model} rated: re-run verify before placing a model in it"
        )
    model = report.outcomes.get(verify.suite)
    if not model:
        raise NNDError(
            f"the evaluation of {report.model} holds no per-test outcomes of {verify.suite}: "
            "give a run saved by `evaluate --out` (its outcomes folder with it)"
        )
    mine = outcome_map(model)
    systems = [verify.outcomes[name] for name in sorted(verify.outcomes)]
    tests = rated_by_all(mine, *systems)
    not_rated = len(rated_by_all(*systems)) - len(tests)
    if not tests:
        raise NNDError(
            f"{report.model} rated none of the tests of {verify.suite} that every annotated "
            f"system rated ({plural(not_rated, 'test')} skipped or degenerate): nothing to place"
        )
    categories = {o.pair_id: o.category for o in model}

    def rates(among: list[str]) -> dict[str, float]:
        return {name: _pass_rate(verify.outcomes[name], among) for name in verify.outcomes}

    def placed(correlation: Correlation, among: list[str]) -> PlacedScore:
        return _place(
            rates(among),
            correlation.human_scores,
            _pass_rate(mine, among),
            verify.confidence,
            verify.score_range,
        )

    skipped: dict[str, str] = {}
    by_category: dict[str, PlacedScore] = {}
    for category, correlation in verify.by_category.items():
        among = [pair_id for pair_id in tests if categories[pair_id] == category]
        if not among:
            skipped[category] = "the new model rated no test of this category"
            continue
        try:
            by_category[category] = placed(correlation, among)
        except NNDError as exc:  # every system with the same pass rate: nothing to fit
            skipped[category] = str(exc)
    return PlacementReport(
        model=report.model,
        suite=verify.suite,
        measure=verify.measure,
        confidence=verify.confidence,
        tests=len(tests),
        not_rated=not_rated,
        system_pass_rates=rates(tests),
        overall=placed(verify.overall, tests),
        by_category=by_category,
        skipped=skipped,
    )


def place_saved(
    verify_folder: str | Path, report: str | Path, out: str | Path | None = None
) -> PlacementReport:
    """:func:`place_in_verify` for a verify folder and a saved ``evaluate --out`` run; with
    ``out``, the placement folder is written there (a foreign ``out`` is refused before anything
    is read)."""
    if out is not None:
        check_verify_folder(out, PLACEMENT_FILE)
    verify = load_verify(verify_folder)
    placement = place_in_verify(verify, load_report(report))
    if out is not None:
        write_placement(placement, verify, out)
    return placement
