"""The robustness run: one model, several suites, several transformations, one evaluation.

Every suite and every (suite, transformation) child go to the evaluator in one call, so the model
loads once, the (context, candidate) requests are deduplicated across all of them (a transformation
that leaves a text alone costs nothing) and the score cache is shared with any other run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nnd_suites.errors import ArgumentError, NNDError
from nnd_suites.evaluation.arguments import check_evaluate_arguments
from nnd_suites.evaluation.evaluator import evaluate
from nnd_suites.evaluation.parallel import current_rank
from nnd_suites.evaluation.prepared import first_groups
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.evaluation.robustness.models import (
    ALPHA,
    RobustnessReport,
    corrected,
    evaluation_record,
    make_cell,
)
from nnd_suites.evaluation.robustness.report import write_report
from nnd_suites.evaluation.robustness.stats import paired_tests
from nnd_suites.infra.key_values import require_unique
from nnd_suites.infra.output_folder import check_output_folder
from nnd_suites.resolve import resolve_suites, suite_origins
from nnd_suites.statistics.outcomes import Rate
from nnd_suites.suite import Suite
from nnd_suites.transformations import make_transformation, transform_suite
from nnd_suites.transformations.apply import refused_rewrites


def robustness(
    model: Any,
    suites: Sequence[str | Path | Suite],
    transforms: Sequence[str],
    *,
    out: str | Path | None = None,
    alpha: float = ALPHA,
    **evaluate_options: Any,
) -> RobustnessReport:
    """Evaluate ``model`` on each suite untouched and under each transformation.

    ``transforms`` are ``NAME[:param=value,...]`` specs; ``evaluate_options`` go to
    :func:`nnd_suites.evaluate` (template, compat, batch_size, device, dtype, cache, cache_dir,
    progress). With ``out``, the JSON, Markdown and PNG reports and the evaluator's own report
    (under evaluation/) are written there, as one folder, after every score is in.
    """
    if not suites or not transforms:
        raise NNDError("a robustness run needs at least one suite and one transformation")
    if isinstance(transforms, str):  # read letter by letter: "unknown transformation 'l'"
        raise ArgumentError(
            f"robustness(transforms={transforms!r}): give a list of transformation specs, "
            f"e.g. [{transforms!r}]"
        )
    if evaluate_options.get("data_parallel") not in (None, 1):
        raise ArgumentError(
            f"robustness(data_parallel={evaluate_options['data_parallel']!r}): robustness scores "
            "the transformed suites it makes in memory, which cannot be sent to other processes; "
            "run the whole call in ranks (accelerate launch --num_processes N -m nnd_suites "
            "robustness ...: each rank makes them, rank 0 writes), or in this process"
        )
    if "out" in evaluate_options:
        raise NNDError("give robustness's out=, not the evaluator's (it writes evaluation/ there)")
    # before any work, as evaluate checks them (limit is applied here, not by evaluate)
    check_evaluate_arguments({**evaluate_options, "model": model, "out": out}, "robustness")
    if out is not None:  # before any scoring: a foreign folder must cost no run
        check_output_folder(out, "robustness")
    parents = resolve_suites(suites)
    require_unique([s.name for s in parents], "suite")
    whole = [parent.manifest for parent in parents]  # each one's identity, before --limit cuts it
    limit = evaluate_options.pop("limit", None)
    if limit is not None:  # cut the parents, so children and the paired tests follow
        parents = [first_groups(parent, limit) for parent in parents]
    transformations = [make_transformation(spec) for spec in transforms]
    specs = [t.spec for t in transformations]
    require_unique(specs, "transformation")
    # `typos` and `typos:rate=0.05`, `lowercase` and `lowercase:on=both`: one transformation
    if len({(t.name, repr(t.params_dict())) for t in transformations}) < len(transformations):
        raise NNDError(
            f"transformations {specs} include the same one twice (with its default "
            "parameters spelt out or not); give each once"
        )
    children = {
        (parent.name, t.spec): transform_suite(parent, t)
        for parent in parents
        for t in transformations
    }
    scored = [*parents, *children.values()]
    outcomes, untouched, evaluation, full = _evaluate(model, scored, evaluate_options, limit)
    # the parents as `evaluate --suite SPEC --limit N` records them: the whole suite's identity
    # (`limited` says what was cut) and where each came from, so that the runs compare
    parent_results = list(full.suites.values())[: len(parents)]
    for result, manifest, origin in zip(parent_results, whole, suite_origins(suites), strict=True):
        result.content_hash, result.section_hashes = manifest.content_hash, manifest.section_hashes
        result.given_as = origin
    # by position, never by name: a given suite may be named like a child ("x.lowercase")
    by_suite = {id(suite): i for i, suite in enumerate(scored)}
    cells = []
    for parent in parents:
        for spec in specs:
            child = children[(parent.name, spec)]
            tests = paired_tests(
                parent, child, outcomes[by_suite[id(parent)]], outcomes[by_suite[id(child)]]
            )
            kept = {skipped.reason: skipped.count for skipped in refused_rewrites(child)}
            cells.append(make_cell(parent.name, spec, child.name, tests, alpha, kept))
    report = corrected(
        RobustnessReport(
            model=str(evaluation["model"]),
            random_weights=full.random_weights,
            alpha=alpha,
            suites={p.name: untouched[by_suite[id(p)]] for p in parents},
            transforms=specs,
            transform_params={t.spec: t.params_dict() for t in transformations},
            cells=cells,
            evaluation=evaluation,
        )
    )
    rank = current_rank()  # in ranks (accelerate launch, torchrun): rank 0 alone writes
    if out is not None and (rank is None or rank.main):
        write_report(report, out, evaluation=full)
    return report


def _evaluate(
    model: Any, suites: list[Suite], options: dict[str, Any], limit: float | None
) -> tuple[list[dict[str, str]], list[Rate], dict[str, Any], EvaluationReport]:
    """One evaluator call for every suite: per suite (in the order given), the outcome of each
    test id and the untouched pass rate; what the evaluator recorded (model, backend, requests,
    cache); and its full report. ``limit`` already cut the parents (so that their children
    follow): the report records it as if the evaluator had applied it."""
    report = evaluate(model, suites, **options)
    report.limit = limit
    if len(report.suites) != len(suites):  # the evaluator keeps one result per suite given
        raise NNDError(f"{len(suites)} suites scored, {len(report.suites)} results returned")
    outcomes = [{row.pair_id: row.outcome for row in rows} for rows in report.outcomes.values()]
    evaluation = evaluation_record(report)
    return outcomes, [r.overall for r in report.suites.values()], evaluation, report
