"""Place a new model among the annotated systems of a verify run (paper 5.1): per category, fit
human score against pass rate over the systems and predict the new model's human score."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.identity import model_content, same_model
from nnd_suites.evaluation.limits import kept_tests_differ
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.evaluation.report_markdown import pipeline_check
from nnd_suites.evaluation.saved import load_report
from nnd_suites.evaluation.verify.models import (
    PlacedScore,
    PlacementReport,
    VerifyReport,
)
from nnd_suites.evaluation.verify.render import (
    VERIFY_FILE,
    load_verify,
    refuse_edited,
    systems_check,
    write_placement,
)
from nnd_suites.evaluation.verify.stats import place_model
from nnd_suites.human.pairwise_scores import WIN_RATE_MEASURE
from nnd_suites.infra.formatting import plural
from nnd_suites.infra.output_folder import check_output_folder
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


def refuse_a_system(verify: VerifyReport, report: EvaluationReport) -> None:
    """A model that verify scored for an annotated system is a point of the fit: placed, it
    would predict a human score from a line drawn through its own (circular). Its weights are
    matched by content (:func:`model_content`: the folder's weight files alone match, whatever
    README or marker lies beside them); by name for a verify run written before."""
    if verify.system_models is None:
        found = [name for name, model in verify.systems.items() if model == report.model]
    else:
        mine = model_content(report.backend)
        found = [n for n, model in verify.system_models.items() if same_model(model, mine)]
    if found:
        raise NNDError(
            f"{report.model} is the model the verify run of {verify.suite} scored for system(s) "
            f"{', '.join(sorted(found))}: the fit is drawn through its own pass rate and human "
            "score, so its placement would be circular, not a prediction. Place a model the "
            f"verify run did not score; to test the fit on {min(found)}, run verify without it "
            "and place it there"
        )


#: what a placement reads for one category (None: overall): the systems' pass rates and the new
#: model's, on the same tests; None where the new model rated no test
RatesOn = Callable[[str | None], tuple[Mapping[str, float], float] | None]


def place_in_verify(
    verify: VerifyReport, report: EvaluationReport, verify_file: str | Path | None = None
) -> PlacementReport:
    """The new model of ``report`` (an ``evaluate`` run on the verified suite, same tests),
    placed on a line fitted on the tests it rated: each system's pass rate and its own are
    counted on the tests every one of them rated (:func:`rated_by_all`), so a test the new
    model skipped leaves the systems' rates too (``not_rated`` says how many). A ``verify``
    whose figures are not those verify found is refused (:func:`refuse_edited`; named as
    ``verify_file`` when given), after the named checks, which say their fault better."""
    placement = _placed(verify, report)
    refuse_edited(verify, verify_file)
    return placement


def _placed(verify: VerifyReport, report: EvaluationReport) -> PlacementReport:
    # the verified suite by its own name and content: a run of two suites of one name reports
    # the second as NAME_2, whichever was given first
    scored_as = next(
        (
            key
            for key, found in report.suites.items()
            if (found.suite_name or key, found.content_hash) == (verify.suite, verify.content_hash)
        ),
        verify.suite,
    )
    result = report.suites.get(scored_as)
    if result is None:
        raise NNDError(
            f"the evaluation of {report.model} has no suite {verify.suite!r} (it has "
            f"{sorted(report.suites)}); evaluate the model on the verified suite"
        )
    kept = kept_tests_differ(result.limited, verify.limited)
    differences = [] if kept is None else [kept]
    if result.content_hash != verify.content_hash:  # said only when it differs: "X vs X" misleads
        differences.insert(
            0, f"content hash {result.content_hash[:12]} vs {verify.content_hash[:12]}"
        )
    if differences:
        raise NNDError(
            f"{report.model} was scored on other tests of {verify.suite} than the verify run "
            f"({'; '.join(differences)}); evaluate it on the same suite, keeping the same "
            "context groups"
        )
    check_same_scoring(verify, report.mode, result.template, report.scorer)
    refuse_a_system(verify, report)
    accounted = {*verify.by_category, *verify.categories_left_out}
    unfitted = sorted(set(result.by_category) - accounted)
    if unfitted and verify.measure != WIN_RATE_MEASURE:  # human win rates have no categories
        raise NNDError(
            f"{VERIFY_FILE} of {verify.suite}: the suite's tests fall in categories "
            f"{unfitted} that neither by_category nor categories_left_out names (verify gives "
            "every category one or the other); the file was edited: re-run `nnd-suites verify`"
        )
    if verify.outcomes is None and result.skipped == 0 and result.pass_rate is not None:
        # written before verify kept per-test outcomes; the model skipped nothing its fit
        # counts: the stored fit, each pass rate as its run counted it (``tests`` null)
        def stored(category: str | None) -> tuple[Mapping[str, float], float] | None:
            fit = verify.overall if category is None else verify.by_category[category]
            rate = result.overall if category is None else result.by_category.get(category)
            if rate is None or rate.pass_rate is None:
                return None
            return fit.pass_rates, rate.pass_rate

        return _placement(verify, report, stored)
    if verify.outcomes is None:
        raise NNDError(
            f"the verify run of {verify.suite} records no per-test outcomes of its systems "
            "(written by an earlier version), so its fit cannot be restricted to the tests "
            f"{report.model} rated: re-run verify before placing a model in it"
        )
    model = report.outcomes.get(scored_as)
    if not model:
        raise NNDError(
            f"the evaluation of {report.model} holds no per-test outcomes of {verify.suite}: "
            "give a run saved by `evaluate --out` (its outcomes folder with it)"
        )
    systems = verify.outcomes
    mine = outcome_map(model)
    tests = rated_by_all(mine, *(systems[name] for name in sorted(systems)))
    not_rated = len(rated_by_all(*systems.values())) - len(tests)
    if not tests:
        raise NNDError(
            f"{report.model} rated none of the tests of {verify.suite} that every annotated "
            f"system rated ({plural(not_rated, 'test')} skipped or degenerate): nothing to place"
        )
    categories = {o.pair_id: o.category for o in model}

    def refitted(category: str | None) -> tuple[Mapping[str, float], float] | None:
        among = [t for t in tests if category is None or categories[t] == category]
        if not among:
            return None
        return {n: _pass_rate(o, among) for n, o in systems.items()}, _pass_rate(mine, among)

    placement = _placement(verify, report, refitted)
    placement.tests, placement.not_rated = len(tests), not_rated
    placement.system_pass_rates = refitted(None)[0]  # type: ignore[index]  # tests: not empty
    return placement


def _placement(
    verify: VerifyReport, report: EvaluationReport, rates_on: RatesOn
) -> PlacementReport:
    """The placement overall and per category of the verify run, each on ``rates_on``'s rates."""

    def placed(category: str | None) -> PlacedScore:
        fit = verify.overall if category is None else verify.by_category[category]
        found = rates_on(category)
        if found is None:
            raise NNDError("the new model rated no test of this category")
        systems, mine = found
        return _place(systems, fit.human_scores, mine, verify.confidence, verify.score_range)

    skipped: dict[str, str] = {}
    by_category: dict[str, PlacedScore] = {}
    for category in verify.by_category:
        try:
            by_category[category] = placed(category)
        except NNDError as exc:  # no test rated there, or every system with one pass rate
            skipped[category] = str(exc)
    return PlacementReport(
        model=report.model,
        # the new model, or the systems it is placed among: either makes it a pipeline check
        random_weights=pipeline_check(report.model, report.random_weights) or systems_check(verify),
        suite=verify.suite,
        measure=verify.measure,
        confidence=verify.confidence,
        overall=placed(None),
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
        check_output_folder(out, "placement")
    verify, run = load_verify(verify_folder), load_report(report)
    try:
        placement = place_in_verify(verify, run, verify_folder)
    except NNDError as exc:  # the two files disagree: which two is said
        raise NNDError(f"placing {report} in {verify_folder}: {exc}") from None
    if out is not None:
        write_placement(placement, verify, out)
    return placement
