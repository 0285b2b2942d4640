"""The chart of a run over catalogue suites: a panel per task type, a row per suite (its overall
pass rate), a bar per model with its Wilson 95% interval and a red mark per bias baseline.

What ``pass_rates.png`` and ``leaderboard.png`` show when the report or leaderboard carries a
:class:`~nnd_suites.evaluation.task_grouping.TaskGrouping`: a panel per suite and category, as
without one, would stack a dozen panels where the reader compares suites of a task.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.plots import (
    BASELINE_MARKERS,
    SuiteBaselines,
    baseline_marks,
    chart_title,
    finish_rate_figure,
    finish_rate_panel,
    interval_errors,
    own_sizes,
    report_baselines,
    save,
    short_name,
)
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.evaluation.report_markdown import pipeline_check
from nnd_suites.evaluation.task_grouping import TaskGrouping


def write_task_rates(
    path: str | Path,
    reports: Sequence[EvaluationReport],
    labels: Sequence[str],
    grouping: TaskGrouping,
    baselines: SuiteBaselines | None = None,
) -> Path:
    """Draw the grouped chart of ``reports`` (one per model, labelled ``labels``, over the same
    suites) at ``path``; the bias baselines (their overall rates) are ``baselines`` (a
    leaderboard's, on the tests every model rated), else the first report's."""
    # lazy: matplotlib loads only when a chart is drawn
    from matplotlib.figure import Figure

    if not reports or not grouping.task_types:
        raise NNDError("a chart by task type needs at least one report and one suite")
    marks = report_baselines(reports[0]) if baselines is None else baselines
    width = 0.8 / len(reports)
    heights = [0.7 + 0.3 * len(s) * max(1, len(reports) / 2) for s in grouping.task_types.values()]
    figure = Figure(figsize=(8.5, sum(heights) + 1.0), layout="constrained")
    axes = figure.subplots(len(heights), 1, squeeze=False, height_ratios=heights)[:, 0]
    for axis, (task_type, suites) in zip(axes, grouping.task_types.items(), strict=True):
        sizes = [max(r.suites[suite].overall.n for r in reports) for suite in suites]
        for m, (label, report) in enumerate(zip(labels, reports, strict=True)):
            rates = [report.suites[suite].overall for suite in suites]
            ys = [y - 0.4 + width * (m + 0.5) for y in range(len(suites))]
            axis.barh(
                ys,
                [100 * (r.pass_rate or 0.0) for r in rates],
                height=width,
                xerr=interval_errors(rates),
                color=f"C{m % 10}",
                label=label,
                capsize=2,
            )
            own_sizes(axis, ys, rates, sizes)
        overall = {
            baseline: {
                suite: marks.get(suite, {}).get(baseline, {}).get("overall") for suite in suites
            }
            for baseline in BASELINE_MARKERS
        }
        baseline_marks(axis, overall, suites)
        finish_rate_panel(axis, suites, sizes, task_type)
    finish_rate_figure(figure, axes)
    skipped = (
        f"; {len(grouping.skipped)} skipped (source not available)" if grouping.skipped else ""
    )
    title = (
        f"NND pass rates by task type: {short_name(reports[0].model)}{skipped}"
        if len(reports) == 1
        else f"NND leaderboard by task type ({len(reports)} models){skipped}"
    )
    chart_title(figure, title, any(pipeline_check(r.model, r.random_weights) for r in reports))
    return save(figure, path)
