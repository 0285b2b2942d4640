"""The PNG charts of one or several runs (pass rates, verification and placement scatters,
leaderboards, scaling), written atomically; the charts of paired comparisons (``compare``,
robustness) are in their packages' ``chart`` modules.

Matplotlib's object API (``Figure``) only, no global state and no display backend, so
charts can be drawn from threads, tests and headless machines alike.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.leaderboard import (
    COMMON_ROW,
    Leaderboard,
    SuiteRanking,
    baseline_pass_rates,
    leaderboard_rates,
)
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.evaluation.report_markdown import pipeline_check
from nnd_suites.infra.formatting import count
from nnd_suites.statistics.outcomes import Rate, rows_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def save(figure: Figure, path: str | Path, dpi: int = 110) -> Path:
    """Write a chart into a report folder not yet swapped in (output_folder's temporary one)."""
    from matplotlib.text import Text  # lazy: matplotlib loads only when a chart is drawn

    for text in figure.findobj(Text):  # a model or category named "a$\\frac$b" is text, not
        text.set_parse_math(False)  # TeX that fails the draw (and the report folder with it)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png", dpi=dpi)
    return path


BASELINE_MARKERS = {"shorter": "<", "longer": ">", "overlap": "x"}
#: the line a chart of a pipeline check (a model with random weights) adds to its title
PIPELINE_CHECK = "PIPELINE CHECK: random weights, the figures mean nothing"


def chart_title(
    figure: Figure, title: str, check: bool, fontsize: float = 10, **style: object
) -> None:
    """The figure's title; a pipeline check's (:func:`pipeline_check`) says so in red, so that a
    chart shared alone does not present random weights' figures as results."""
    lines = [title] if title else []
    if check:
        lines.append(PIPELINE_CHECK)
    if lines:
        colour = style.pop("color", "black")
        figure.suptitle(
            "\n".join(lines), fontsize=fontsize, color="#c44e52" if check else colour, **style
        )


def write_pass_rates(report: EvaluationReport, path: str | Path) -> Path:
    """Horizontal bars per suite: overall and per category pass rates with 95% intervals, and
    a marker per bias baseline (shorter, longer, overlap: no model) on the same tests."""
    # lazy: matplotlib loads only when a chart is drawn
    from matplotlib.figure import Figure

    panels = [
        (
            name,
            list(rows_of(result.overall, result.by_category).items()),
        )
        for name, result in report.suites.items()
    ]
    heights = [0.6 + 0.35 * len(bars) for _, bars in panels]
    figure = Figure(figsize=(8, sum(heights) + 1.0), layout="constrained")
    axes = figure.subplots(len(panels), 1, squeeze=False, height_ratios=heights)[:, 0]
    for axis, (name, bars) in zip(axes, panels, strict=True):
        labels = [f"{label} (n={count(r.n)})" for label, r in bars]
        values = [100 * (r.pass_rate or 0.0) for _, r in bars]
        errors = interval_errors([r for _, r in bars])
        colours = ["#4c72b0"] + ["#8da0cb"] * (len(bars) - 1)
        axis.barh(range(len(bars)), values, xerr=errors, color=colours, capsize=3)
        baseline_marks(axis, report_baselines(report).get(name, {}), [label for label, _ in bars])
        axis.set_yticks(range(len(bars)), labels)
        axis.invert_yaxis()
        axis.axvline(50, color="grey", linewidth=0.8, linestyle="--")
        axis.set_xlim(0, 100)
        axis.set_title(name, loc="left", fontsize=10)
    handles, names = axes[0].get_legend_handles_labels()
    if handles:
        figure.legend(handles, names, loc="outside lower center", ncols=3, fontsize=8)
    axes[-1].set_xlabel("pass rate (%), Wilson 95% interval; red marks: bias baselines (no model)")
    chart_title(
        figure,
        f"NND pass rates: {short_name(report.model)} ({report.mode}, scorer {report.scorer})",
        pipeline_check(report.model, report.random_weights),
    )
    return save(figure, path)


def interval_errors(rates: Sequence[Rate]) -> list[list[float]]:
    """Error-bar lengths (points) below and above each rate, from its Wilson interval."""
    return [
        [100 * ((r.pass_rate or 0.0) - r.ci[0]) if r.ci else 0.0 for r in rates],
        [100 * (r.ci[1] - (r.pass_rate or 0.0)) if r.ci else 0.0 for r in rates],
    ]


def short_name(model: str, width: int = 48) -> str:
    """A model as a title shows it: a local path by its last two folders, cut to ``width``."""
    if "/" in model and (model.startswith(("/", ".", "~")) or model.count("/") > 1):
        model = "/".join(Path(model).parts[-2:])
    return model if len(model) <= width else "..." + model[-(width - 3) :]


def write_scatter(
    path: str | Path,
    pass_rates: Mapping[str, float],
    human_scores: Mapping[str, float],
    *,
    title: str = "NND pass rate against human score",
    human_label: str = "human score",
    new: tuple[str, float, float, tuple[float, float] | None] | None = None,
    intervals: Mapping[str, tuple[float, float]] | None = None,
    note: str = "",
    warning: str = "",
    check: bool = False,
) -> Path:
    """One labelled point per system: pass rate (x, %) against human score (y), the
    least-squares line the placement of new models uses; ``new``: (name, pass rate,
    predicted human score, prediction interval or None), a placed model drawn apart, the line
    dashed where it extends beyond the systems; ``intervals``: each system's pass-rate interval
    (drawn as horizontal bars); ``note``: statistics printed in a box (tau, r); ``warning``:
    printed in red under the title (a poor fit); ``check``: the systems or the placed model are a
    pipeline check (random weights), said there too."""
    # lazy: matplotlib loads only when a chart is drawn
    from matplotlib.figure import Figure

    names = sorted(human_scores)
    if set(pass_rates) != set(names) or not names:
        raise NNDError(
            f"a scatter needs a pass rate and a human score for the same systems; got pass rates "
            f"for {sorted(pass_rates)} and human scores for {names}"
        )
    x = [100 * pass_rates[n] for n in names]
    y = [human_scores[n] for n in names]
    figure = Figure(figsize=(6.4, 4.8), layout="constrained")
    axis = figure.subplots()
    if intervals:
        errors = [
            [xi - 100 * intervals[n][0] for n, xi in zip(names, x, strict=True)],
            [100 * intervals[n][1] - xi for n, xi in zip(names, x, strict=True)],
        ]
        axis.errorbar(x, y, xerr=errors, fmt="none", ecolor="#4c72b0", alpha=0.5, capsize=3)
    axis.scatter(x, y, color="#4c72b0", zorder=3)
    for name, xi, yi in zip(names, x, y, strict=True):
        axis.annotate(name, (xi, yi), textcoords="offset points", xytext=(5, 4), fontsize=8)
    if len(set(x)) > 1:
        # lazy: scipy.stats only when a scaling fit is drawn
        from scipy.stats import linregress

        line = linregress(x, y)
        ends = [min(x), max(x)]
        axis.plot(ends, [line.intercept + line.slope * e for e in ends], color="grey", lw=0.8)
        if new is not None and not min(x) <= 100 * new[1] <= max(x):
            edge = min(ends, key=lambda e: abs(e - 100 * new[1]))
            reach = [edge, 100 * new[1]]
            axis.plot(reach, [line.intercept + line.slope * e for e in reach], "--", color="grey")
    if new is not None:
        name, rate, predicted, interval = new
        low, high = interval if interval is not None else (predicted, predicted)
        axis.errorbar(
            [100 * rate],
            [predicted],
            yerr=[[predicted - low], [high - predicted]],
            fmt="D",
            color="#dd8452",
            capsize=4,
            zorder=4,
        )
        axis.annotate(name, (100 * rate, predicted), textcoords="offset points", xytext=(5, -10))
        axis.margins(x=0.15)  # room for the placed model's name
    axis.set_xlabel("NND pass rate (%)" + (", Wilson 95% interval" if intervals else ""))
    axis.set_ylabel(human_label)
    axis.set_title(f"{title} ({len(names)} systems)", fontsize=10)
    if note:
        axis.text(
            0.02,
            0.98,
            note,
            transform=axis.transAxes,
            va="top",
            fontsize=8,
            bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.85},
        )
    warned = textwrap.fill(warning, 64) if warning else ""
    chart_title(figure, warned, check, fontsize=9, fontweight="bold", color="#c44e52")
    axis.grid(alpha=0.3)
    return save(figure, path)


def mark_baseline(  # type: ignore[no-untyped-def]
    axis,
    baseline: str,
    marker: str,
    points: Sequence[tuple[float, float]],
) -> None:
    """One bias baseline's red markers at (pass rate in points, row) on a bar panel."""
    if points:
        axis.scatter(
            *zip(*points, strict=True),
            clip_on=False,
            marker=marker,
            color="#c44e52",
            zorder=3,
            label=f"baseline: {baseline}",
        )


def finish_rate_panel(axis, rows: Sequence[str], sizes: Sequence[int], title: str) -> None:  # type: ignore[no-untyped-def]
    """A panel of horizontal pass-rate bars: a row label with its test count, top row first, the
    50% line, a 0-100 axis and the panel's title."""
    axis.set_yticks(
        range(len(rows)), [f"{r} (n={count(n)})" for r, n in zip(rows, sizes, strict=True)]
    )
    axis.invert_yaxis()
    axis.axvline(50, color="grey", linewidth=0.8, linestyle="--")
    axis.set_xlim(0, 100)
    axis.set_title(title, loc="left", fontsize=10)


def finish_rate_figure(figure, axes) -> None:  # type: ignore[no-untyped-def]
    """The legend of a figure of rate panels (models and baselines) and its axis label."""
    handles, names = axes[0].get_legend_handles_labels()
    figure.legend(handles, names, loc="outside lower center", ncols=min(4, len(names)), fontsize=8)
    axes[-1].set_xlabel("pass rate (%), Wilson 95% interval; red marks: bias baselines (no model)")


#: suite -> bias baseline -> row (overall, then each category) -> pass rate (Leaderboard.baselines)
SuiteBaselines = Mapping[str, Mapping[str, Mapping[str, float | None]]]


def report_baselines(report: EvaluationReport) -> dict[str, dict[str, dict[str, float | None]]]:
    """One report's bias baselines as :data:`SuiteBaselines` (on the tests that model rated)."""
    return {suite: baseline_pass_rates(result.baselines) for suite, result in report.suites.items()}


def baseline_marks(
    axis, baselines: Mapping[str, Mapping[str, float | None]], rows: Sequence[str]
) -> None:  # type: ignore[no-untyped-def]
    """A red marker per bias baseline (``baselines``: baseline -> row -> pass rate) on each of
    ``rows``: what a heuristic without a model achieves on the same tests."""
    for baseline, marker in BASELINE_MARKERS.items():
        rates = baselines.get(baseline, {})
        points = [
            (100 * rate, y) for y, row in enumerate(rows) if (rate := rates.get(row)) is not None
        ]
        mark_baseline(axis, baseline, marker, points)


def write_leaderboard(
    path: str | Path,
    reports: Sequence[EvaluationReport],
    labels: Sequence[str] | None = None,
    baselines: SuiteBaselines | None = None,
    ranking: Mapping[str, SuiteRanking] | None = None,
) -> Path:
    """Grouped horizontal bars, one panel per suite: a bar per model for the overall pass rate
    and each category, with Wilson 95% intervals; the bias baselines are ``baselines`` (a
    leaderboard's, on the tests every model rated), else the first report's. A suite in
    ``ranking`` (its models rated different tests) gets a first row: each model's rate on the
    tests every model rated, what leaderboard.md ranks by; a bar over fewer tests than its row's
    n says its own."""
    # lazy: matplotlib loads only when a chart is drawn
    from matplotlib.figure import Figure

    if not reports:
        raise NNDError("a leaderboard needs at least one report")
    table = leaderboard_rates(reports, labels)
    marks = report_baselines(reports[0]) if baselines is None else baselines
    for suite, ranked in (ranking or {}).items():
        table[suite] = {COMMON_ROW: ranked.rates, **table[suite]}
        marks = {
            **marks,
            suite: {
                b: {COMMON_ROW: r.get("overall"), **r} for b, r in marks.get(suite, {}).items()
            },
        }
    models = list(dict.fromkeys(m for rows in table.values() for r in rows.values() for m in r))
    width = 0.8 / len(models)
    heights = [0.6 + 0.3 * len(rows) * max(1, len(models) / 2) for rows in table.values()]
    figure = Figure(figsize=(8.5, sum(heights) + 0.8), layout="constrained")
    axes = figure.subplots(len(table), 1, squeeze=False, height_ratios=heights)[:, 0]
    colours = [f"C{i % 10}" for i in range(len(models))]
    for axis, (suite, rows) in zip(axes, table.items(), strict=True):
        sizes = [max(r.n for r in rates.values()) for rates in rows.values()]
        for m, model in enumerate(models):
            ys, shown, row_sizes = [], [], []
            for row, rates in enumerate(rows.values()):
                rate = rates.get(model)
                if rate is None or rate.pass_rate is None or rate.ci is None:
                    continue
                ys.append(row - 0.4 + width * (m + 0.5))
                shown.append(rate)
                row_sizes.append(sizes[row])
            axis.barh(
                ys,
                [100 * rate.pass_rate for rate in shown],  # type: ignore[operator]
                height=width,
                xerr=interval_errors(shown),
                color=colours[m],
                label=model,
                capsize=2,
            )
            own_sizes(axis, ys, shown, row_sizes)
        baseline_marks(axis, marks.get(suite, {}), list(rows))
        finish_rate_panel(axis, list(rows), sizes, suite)
    finish_rate_figure(figure, axes)
    chart_title(
        figure,
        "NND leaderboard",
        any(pipeline_check(r.model, r.random_weights) for r in reports),
        fontsize=11,
    )
    return save(figure, path)


def own_sizes(axis, ys: Sequence[float], rates: Sequence[Rate], sizes: Sequence[int]) -> None:  # type: ignore[no-untyped-def]
    """At the foot of each bar whose rate counts fewer tests than its row's n (``sizes``: the
    most any model rated, which the row's label gives), that bar's own n: its model skipped
    the others."""
    for y, rate, n in zip(ys, rates, sizes, strict=True):
        if rate.n != n:
            axis.text(1, y, f"n={count(rate.n)}", va="center", fontsize=7)


def parameters(size: float) -> str:
    """A parameter count as an axis reads it: ``230K``, ``1.5M``, ``7B``."""
    for unit, scale in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if size >= scale:
            return f"{size / scale:.3g}{unit}"
    return f"{size:.0f}"


def write_scaling(path: str | Path, board: Leaderboard) -> Path:
    """Pass rate against parameter count, one panel per suite: a line for the overall pass rate
    and one per category, each point with its Wilson 95% interval. A log axis only when the
    sizes span more than a factor 10; ticks read as parameters (K, M, B)."""
    # lazy: matplotlib loads only when a chart is drawn
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    sized = sorted((m.parameters, m.label) for m in board.models if m.parameters is not None)
    if len({size for size, _ in sized}) < 2:
        raise NNDError("a scaling plot needs models of at least two known parameter counts")
    sizes = [size for size, _ in sized]
    logarithmic = max(sizes) > 10 * min(sizes)
    figure = Figure(figsize=(8, 4.2 * len(board.suites) + 1.0), layout="constrained")
    axes = figure.subplots(len(board.suites), 1, squeeze=False)[:, 0]
    for axis, (suite, rows) in zip(axes, board.suites.items(), strict=True):
        for index, (row, rates) in enumerate(rows.items()):
            points = [(size, rates[label]) for size, label in sized if label in rates]
            points = [(s, r) for s, r in points if r.pass_rate is not None]
            if not points:
                continue
            overall = row == "overall"
            n = max(r.n for _, r in points)
            axis.errorbar(
                [s for s, _ in points],
                [100 * (r.pass_rate or 0.0) for _, r in points],
                yerr=interval_errors([r for _, r in points]),
                marker="o",
                capsize=3,
                linewidth=2.4 if overall else 1.0,
                alpha=1.0 if overall else 0.75,
                color="black" if overall else f"C{index % 10}",
                label=f"{row} (n={count(n)})",
            )
        if logarithmic:
            axis.set_xscale("log")
        axis.set_xticks(sizes)
        axis.xaxis.set_major_formatter(FuncFormatter(lambda x, _: parameters(x)))
        axis.xaxis.set_minor_formatter(FuncFormatter(lambda x, _: ""))
        axis.set_ylim(0, 100)
        axis.axhline(50, color="grey", linewidth=0.8, linestyle="--")
        axis.set_title(suite, loc="left", fontsize=10)
        axis.set_ylabel("pass rate (%)")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    axes[-1].set_xlabel(
        "parameters" + (" (log scale)" if logarithmic else "") + "; bars: Wilson 95% intervals"
    )
    models = ", ".join(f"{label} ({parameters(size)})" for size, label in sized)
    figure.suptitle(f"NND pass rate against model size: {models}", fontsize=9)
    return save(figure, path)
