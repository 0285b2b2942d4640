"""Verify a suite against human judgments (paper 2.3): score each annotated system's model on the
suite, then correlate the pass rates with the systems' human scores, overall and per category.

``verify_suite(suite, {"mixqg": "Salesforce/mixqg-base", ...})`` returns a :class:`VerifyReport`
(written with ``out`` as verify.json, its schema, verify.md and verify.png); ``place_in_verify``
then places a new model's evaluation report among the annotated systems (paper 5.1).

How verify uses the tests' human margins (issue 22 §2): a test decided 51/49 is weaker evidence of
which candidate is better than a unanimous one, so beside the plain correlations verify gives the
same correlations over *margin-weighted* pass rates: each system's sum(weight x passed) /
sum(weight) over the tests every system scored, the weight being how decisive the humans were
(:func:`nnd_suites.human.agreement.margin_weight`): ``max(0, 2 x share - 1)`` for rater
shares (a test at most half the raters preferred weighs 0), the score gap for score gaps.
Stated confidences (no common zero across sources) and margins of an unstated kind are not used;
tests without a margin are left out of the weighted figures.
``VerifyReport.margins`` says which applied; ``Correlation.margin_weighted`` holds the figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nnd_suites import __version__
from nnd_suites.errors import NNDError, UnknownItemError
from nnd_suites.evaluation.arguments import (
    check_bootstrap,
    check_evaluate_arguments,
    check_system_models,
)
from nnd_suites.evaluation.chat_prompts import CHAT_TEMPLATE
from nnd_suites.evaluation.identity import model_content
from nnd_suites.evaluation.limits import suite_limit
from nnd_suites.evaluation.parallel import current_rank
from nnd_suites.evaluation.rank_job import rank_job, refuse_before_ranks, run_in_ranks, wants_ranks
from nnd_suites.evaluation.report_markdown import pipeline_check
from nnd_suites.evaluation.shared_runs import share_runs
from nnd_suites.evaluation.verify.models import Correlation, VerifyReport, sealed
from nnd_suites.evaluation.verify.render import write_verify
from nnd_suites.evaluation.verify.stats import bootstrap_correlations, weighted_pass_rates
from nnd_suites.human.agreement import margin_weight
from nnd_suites.human.scores import HumanScores, human_scores
from nnd_suites.infra.formatting import plural
from nnd_suites.infra.output_folder import check_output_folder
from nnd_suites.infra.reading import read_yaml_file
from nnd_suites.infra.strict_yaml import StrictYAML
from nnd_suites.statistics.outcomes import TestOutcome, outcome_map, rated_by_all
from nnd_suites.suite import Suite

#: How verify weighs a test by its human margin, per margin kind (see agreement.margin_weight).
WEIGHT_RULES = {
    "rater_share": "Each test weighs max(0, 2 x share - 1), share being the share of raters' "
    "votes preferring the better candidate (a tie vote does not prefer it): a unanimous test "
    "weighs 1, a 2-to-1 vote 1/3, a test that at most half the votes prefer weighs 0 (it is no "
    "evidence of which candidate is better).",
    "score_gap": "Each test weighs its human score gap (0 if not positive): a test whose "
    "candidates' human scores are twice as far apart weighs twice as much (the weighted mean "
    "does not depend on the score's unit).",
}
WEIGHTED_MEAN = (
    " A system's margin-weighted pass rate is sum(weight x passed) / sum(weight) over the tests "
    "every system scored; Kendall's tau and the gap correlation are computed on it beside the "
    "unweighted ones, with the same resampling of tests."
)

#: Said in every report: a correlation over a handful of systems is a rough signal.
FEW_SYSTEMS = (
    "{n} systems. Human evaluations usually annotate 3 to 7 systems; correlations over so few "
    "points have wide bootstrap intervals: read the intervals before the point values."
)
MANY_SYSTEMS = (
    "{n} systems. The bootstrap intervals resample tests, not systems: they say how stable the "
    "correlation is on this suite, not how it would hold for other systems."
)


def read_systems_file(path: str | Path) -> dict[str, str]:
    """``NAME: MODEL`` lines (YAML), optionally under a ``systems:`` key."""
    path = Path(path)
    # A bounded regular file (/dev/zero would be read forever), strictly parsed: a repeated
    # system would silently take the last model.
    data = read_yaml_file(path, "systems file", loader=StrictYAML)
    if isinstance(data, dict) and set(data) == {"systems"}:
        data = data["systems"]
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise NNDError(
            f"{path}: a systems file maps each annotated system to a model, one "
            "`NAME: MODEL` per line (a Hub id or a local folder)"
        )
    return data


def collect_systems(
    given: Sequence[str] = (), systems_file: str | Path | None = None
) -> dict[str, str]:
    """The systems of a verify run: the file's ``NAME: MODEL`` lines, then each ``NAME=MODEL``
    of ``given``; a system given twice is an error (which model would stand for it?)."""
    systems = read_systems_file(systems_file) if systems_file is not None else {}
    for text in given:
        name, sep, model = text.partition("=")
        if not sep or not name or not model:
            raise NNDError(f"--system {text!r}: write NAME=MODEL (an annotated system, a model)")
        if name in systems:
            raise NNDError(f"--system {name} is given twice; give each system one model")
        systems[name] = model
    return systems


def _nan_to_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def margin_weights(suite: Suite) -> tuple[dict[str, float] | None, str]:
    """Each test's weight by its human margin (pair id -> weight), and how margins entered."""
    kind = suite.manifest.margin_kind
    if all(pair.margin is None for pair in suite.pairs):
        return None, "not used: no test of the suite has a human margin"
    weights = {
        pair.id: weight
        for pair in suite.pairs
        if (weight := margin_weight(pair.margin, kind)) is not None
    }
    if kind not in WEIGHT_RULES or not weights:
        return None, (
            f"not used: margins of kind {kind or '(not stated)'} give no weight (a stated "
            "confidence has no common zero across sources; a margin of unstated kind is "
            "unreadable)"
        )
    without = len(suite.pairs) - len(weights)
    return weights, WEIGHT_RULES[kind] + WEIGHTED_MEAN + (
        f" Left out of the weighted figures: {plural(without, 'test')} without a margin."
        if without
        else ""
    )


def _correlation(
    outcomes: Mapping[str, list[TestOutcome]],
    human: Mapping[str, float],
    category: str | None,
    weights: Mapping[str, float] | None = None,
    **bootstrap: Any,
) -> Correlation | None:
    names = sorted(human)
    categories = {o.pair_id: o.category for o in outcomes[names[0]]}
    by_system = {n: outcome_map(outcomes[n]) for n in names}
    keep = [
        pair_id
        for pair_id in rated_by_all(*by_system.values())
        if category is None or categories[pair_id] == category
    ]
    if not keep:
        return None
    passes = {n: [by_system[n][pair_id] == "pass" for pair_id in keep] for n in names}
    found = _fit(passes, human, None, **bootstrap)
    if weights is not None:
        weighed = [(j, weights[pair_id]) for j, pair_id in enumerate(keep) if pair_id in weights]
        if sum(w for _, w in weighed) > 0:
            chosen = {n: [p[j] for j, _ in weighed] for n, p in passes.items()}
            found.margin_weighted = _fit(chosen, human, [w for _, w in weighed], **bootstrap)
    return found


def _fit(
    passes: Mapping[str, list[bool]],
    human: Mapping[str, float],
    weights: list[float] | None,
    **bootstrap: Any,
) -> Correlation:
    """The correlations of the systems' (weighted) pass rates on these tests with human scores."""
    names = sorted(human)
    tests = len(passes[names[0]])
    result = bootstrap_correlations(passes, human, weights=weights, **bootstrap)
    return Correlation(
        tests=tests,
        systems=len(names),
        pass_rates=(
            weighted_pass_rates(passes, weights)
            if weights is not None
            else {n: sum(p) / len(p) for n, p in passes.items()}
        ),
        human_scores=dict(human),
        kendall_tau=_nan_to_none(result.rank),
        kendall_tau_ci=result.rank_ci,
        gap_pearson=_nan_to_none(result.gap),
        gap_pearson_ci=result.gap_ci,
        undefined_resamples={
            "kendall_tau": result.rank_undefined,
            "gap_pearson": result.gap_undefined,
        },
    )


def check_systems(systems: Mapping[str, str], scores: HumanScores) -> None:
    for name in systems:
        if name not in scores.systems:
            raise UnknownItemError(
                f"system of suite {scores.suite}",
                name,
                list(scores.systems),
                hint="`nnd-suites systems SUITE` lists the annotated systems",
            )
    if len(systems) < 2:
        raise NNDError(f"verify needs at least 2 systems to correlate, got {sorted(systems)}")


def verify_suite(
    suite: str | Path | Suite,
    systems: Mapping[str, str | Path],
    *,
    out: str | Path | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    template: str | None = None,
    limit: int | float | None = None,
    data_parallel: int | None = None,
    **scoring: Any,
) -> VerifyReport:
    """Score ``systems[name]`` (a model: Hub id or folder) for each annotated system ``name``,
    correlate pass rates with human scores overall and per category, and (with ``out``) write
    the report folder. ``scoring`` takes :func:`nnd_suites.evaluate`'s options (device,
    dtype, batch_size, cache, progress, ...); ``data_parallel=N`` scores in N local processes."""
    check_system_models("verify_suite", systems)  # before any work, as evaluate checks its own
    check_bootstrap("verify_suite", resamples, seed, confidence)
    check_evaluate_arguments(
        {**scoring, "template": template, "limit": limit, "out": out}, "verify_suite"
    )
    # taken before any parameter is reassigned: this call, as each rank will make it
    job = rank_job(verify_suite, locals()) if wants_ranks(data_parallel) else None
    # imported here: the HF loading helpers import torch, which `import nnd_suites` must not
    from nnd_suites.evaluation.backends.hf_loading import check_model_references

    # every system's model must load (with the revision) before the first one is scored
    references = (
        systems.values(),
        scoring.get("backend"),
        scoring.get("backend_options"),
        scoring.get("revision"),
    )
    rank = current_rank()  # data parallel: every rank scores, rank 0 alone writes
    main = rank is None or rank.main
    if out is not None and main:
        check_output_folder(out, "verify")  # before any scoring: a bad --out must not cost a run
    if job is not None:  # N local ranks make this call; what would fail in each fails here
        check_model_references(*references)
        refuse_before_ranks(suite, scoring.get("backend"), scoring.get("backend_options"))
        return run_in_ranks(job, data_parallel, VerifyReport)  # type: ignore[arg-type]
    runs = share_runs([suite], template=template, limit=limit)
    plan = runs.tests.plans[0]
    scores = human_scores(plan.suite)
    check_systems(systems, scores)
    check_model_references(*references)
    reports = {name: runs.evaluate(str(model), **scoring) for name, model in systems.items()}
    outcomes = {name: report.outcomes[plan.name] for name, report in reports.items()}
    modes = {report.mode for report in reports.values()}
    if len(modes) > 1:  # one fit over runs scored two ways would mean nothing
        raise NNDError(f"{plan.name}: the systems' models were scored in modes {sorted(modes)}")
    scorer = next(iter(reports.values())).scorer
    bootstrap = {"resamples": resamples, "seed": seed, "confidence": confidence}
    human = {n: scores.systems[n].human_score for n in systems}
    weights, margins = margin_weights(plan.suite)
    overall = _correlation(outcomes, human, None, weights, **bootstrap)
    if overall is None:
        raise NNDError(f"{plan.name}: no test was scored by every system; nothing to correlate")
    by_category, left_out = {}, {}
    limited = suite_limit(plan.suite)
    dropped = limited.categories_without_tests if limited else []
    for category in scores.categories:
        per = {n: scores.systems[n].by_category.get(category) for n in systems}
        missing = sorted(n for n, v in per.items() if v is None)
        if missing:  # a system with no candidate there has no human score to compare
            left_out[category] = f"no human score for {', '.join(missing)} (no candidate there)"
            continue
        found = _correlation(outcomes, per, category, weights, **bootstrap)  # type: ignore[arg-type]
        if found is None and category in dropped:
            left_out[category] = "--limit left no test of this category"
        elif found is None:
            left_out[category] = "no test of this category among the tests every system scored"
        else:
            by_category[category] = found
    report = VerifyReport(
        nnd_suites_version=__version__,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        suite=plan.name,
        content_hash=plan.content_hash,
        measure=scores.measure,
        score_range=scores.score_range,
        systems={n: str(m) for n, m in systems.items()},
        limit=limit,
        limited=limited,
        mode=modes.pop(),
        template=CHAT_TEMPLATE if runs.chat else plan.template,
        scorer=scorer,
        note=(FEW_SYSTEMS if len(systems) <= 7 else MANY_SYSTEMS).format(n=len(systems)),
        overall=overall,
        by_category=by_category,
        category_kinds={c: scores.categories[c] for c in by_category},
        categories_left_out=left_out,
        margins=margins,
        outcomes={n: outcome_map(o) for n, o in outcomes.items()},
        system_models={n: model_content(r.backend) for n, r in reports.items()},
        random_weights=any(pipeline_check(r.model, r.random_weights) for r in reports.values()),
        **bootstrap,
    )
    sealed(report)
    if out is not None and main:
        write_verify(report, out)
    return report
