"""Place a new model among the annotated systems of a verify run (paper 5.1): per category, fit
human score against pass rate over the systems and predict the new model's human score."""

from __future__ import annotations

from pathlib import Path

from nnd_suites.errors import NNDError
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


def _clip(value: float, bounds: tuple[float, float] | None) -> float:
    return value if bounds is None else min(max(value, bounds[0]), bounds[1])


def _place(
    correlation: Correlation,
    pass_rate: float,
    confidence: float,
    bounds: tuple[float, float] | None = None,
) -> PlacedScore:
    """The fit's prediction, cut to ``bounds`` (the range a human score can take) if given."""
    placed = place_model(
        correlation.pass_rates, correlation.human_scores, pass_rate, confidence=confidence
    )
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
    """The new model of ``report`` (an ``evaluate`` run on the verified suite, same tests)."""
    result = report.suites.get(verify.suite)
    if result is None:
        raise NNDError(
            f"the evaluation of {report.model} has no suite {verify.suite!r} (it has "
            f"{sorted(report.suites)}); evaluate the model on the verified suite"
        )
    if result.content_hash != verify.content_hash or report.limit != verify.limit:
        raise NNDError(
            f"{report.model} was scored on other tests of {verify.suite} than the verify run "
            f"(content hash {result.content_hash[:12]} vs {verify.content_hash[:12]}, --limit "
            f"{report.limit} vs {verify.limit}); evaluate it on the same suite and limit"
        )
    check_same_scoring(verify, report.mode, result.template, report.scorer)
    if result.pass_rate is None:
        raise NNDError(f"{report.model} has no pass rate on {verify.suite} (no test scored)")
    skipped: dict[str, str] = {}
    by_category: dict[str, PlacedScore] = {}
    for category, correlation in verify.by_category.items():
        rate = result.by_category.get(category)
        if rate is None or rate.pass_rate is None:
            skipped[category] = "the new model has no pass rate in this category"
            continue
        try:
            by_category[category] = _place(
                correlation, rate.pass_rate, verify.confidence, verify.score_range
            )
        except NNDError as exc:  # every system with the same pass rate: nothing to fit
            skipped[category] = str(exc)
    return PlacementReport(
        model=report.model,
        suite=verify.suite,
        measure=verify.measure,
        confidence=verify.confidence,
        overall=_place(verify.overall, result.pass_rate, verify.confidence, verify.score_range),
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
