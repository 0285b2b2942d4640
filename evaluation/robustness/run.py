"""The robustness run: one model, several suites, several transformations, one evaluation.

Every suite and every (suite, transformation) child go to the evaluator in one call, so the model
loads once, the (context, candidate) requests are deduplicated across all of them (a transformation
that leaves a text alone costs nothing) and the score cache is shared with any other run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nnd_suites.errors import NNDError
from nnd_suites.suite import Suite
from nnd_suites.suites import load_suite
from nnd_suites.transformations import make_transformation, transform_suite

from .report import ALPHA, RobustnessReport, SuiteBaseline, make_cell, write_report
from .stats import did_pass, paired_tests


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
    progress). With ``out``, the JSON, Markdown and PNG reports are written there.
    """
    if not suites or not transforms:
        raise NNDError("a robustness run needs at least one suite and one transformation")
    parents = [s if isinstance(s, Suite) else load_suite(s) for s in suites]
    _require_unique([s.name for s in parents], "suite")
    transformations = [make_transformation(spec) for spec in transforms]
    specs = [t.spec for t in transformations]
    _require_unique(specs, "transformation")
    children = {
        (parent.name, t.spec): transform_suite(parent, t)
        for parent in parents
        for t in transformations
    }
    outcomes, evaluation = _evaluate(model, [*parents, *children.values()], evaluate_options)
    cells = []
    for parent in parents:
        for spec in specs:
            child = children[(parent.name, spec)]
            tests = paired_tests(parent, child, outcomes[parent.name], outcomes[child.name])
            cells.append(make_cell(parent.name, spec, child.name, tests, alpha))
    report = RobustnessReport(
        model=str(evaluation.get("model", model)),
        alpha=alpha,
        suites={p.name: _baseline(p, outcomes[p.name]) for p in parents},
        transforms=specs,
        cells=cells,
        evaluation=evaluation,
    )
    if out is not None:
        write_report(report, out)
    return report


def _baseline(suite: Suite, outcomes: dict[str, object]) -> SuiteBaseline:
    passed = sum(did_pass(outcomes[pair.id]) for pair in suite.pairs)
    return SuiteBaseline(
        pairs=len(suite), passed=passed, pass_rate=passed / len(suite) if len(suite) else None
    )


def _require_unique(names: list[str], kind: str) -> None:
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise NNDError(f"{kind} {repeated[0]!r} is given twice; give each {kind} once")


def _evaluate(
    model: Any, suites: list[Suite], options: dict[str, Any]
) -> tuple[dict[str, dict[str, object]], dict[str, Any]]:
    """Per suite name, the outcome of each test id; plus what the evaluator recorded."""
    from nnd_suites.evaluation import evaluate

    report = evaluate(model, suites, **options)
    raise NotImplementedError(report)
