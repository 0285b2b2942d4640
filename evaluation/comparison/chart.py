"""``compare``'s chart: A - B differences per suite and category (Matplotlib's object API only,
like :mod:`nnd_suites.evaluation.plots`)."""

from __future__ import annotations

from pathlib import Path

from nnd_suites.evaluation.comparison.paired import Comparison
from nnd_suites.evaluation.plots import chart_title, save, short_name
from nnd_suites.infra.formatting import count
from nnd_suites.statistics.outcomes import rows_of
from nnd_suites.statistics.paired import PairedResult


def write_differences(comparison: Comparison, path: str | Path, alpha: float = 0.05) -> Path:
    """What ``compare`` computed: A's pass rate minus B's per suite and category, in points,
    with its Newcombe 95% interval; ``*`` marks p < ``alpha`` (a category's p after Holm's
    correction across its suite's categories, the overall row's exact McNemar p)."""
    # lazy: matplotlib loads only when a chart is drawn
    from matplotlib.figure import Figure

    panels = []
    for name, suite in comparison.suites.items():
        rows = [
            (row, r, p)
            for row, (r, p) in rows_of(
                (suite.overall, suite.overall.p_value),
                {c: (r, r.p_holm) for c, r in suite.by_category.items()},
            ).items()
        ]
        panels.append((name, rows))
    heights = [0.7 + 0.4 * len(rows) for _, rows in panels]
    figure = Figure(figsize=(8, sum(heights) + 1.4), layout="constrained")
    axes = figure.subplots(len(panels), 1, squeeze=False, height_ratios=heights, sharex=True)[:, 0]
    for axis, (name, rows) in zip(axes, panels, strict=True):
        for y, (_, result, p) in enumerate(rows):
            _difference_point(axis, y, result, p is not None and p < alpha)
        labels = [
            f"{label} (n={count(r.n)})" + (" *" if p is not None and p < alpha else "")
            for label, r, p in rows
        ]
        axis.set_yticks(range(len(rows)), labels)
        axis.set_ylim(len(rows) - 0.5, -0.5)
        axis.axvline(0, color="grey", linewidth=0.8)
        axis.set_title(name, loc="left", fontsize=10)
        axis.grid(axis="x", alpha=0.3)
        axis.tick_params(labelbottom=True)
    axes[-1].set_xlabel(
        "A - B pass rate (points), Newcombe 95% interval\n"
        f"* and red: p < {alpha} (categories: Holm-adjusted per suite; overall: exact McNemar);\n"
        "an interval can exclude 0 without a mark (the corrected exact test decides)"
    )
    chart_title(
        figure,
        f"A = {short_name(comparison.model_a)} ({comparison.mode_a}) minus "
        f"B = {short_name(comparison.model_b)} ({comparison.mode_b})",
        comparison.random_weights,
    )
    return save(figure, path)


def _difference_point(axis, y: int, result: PairedResult, marked: bool) -> None:  # type: ignore[no-untyped-def]
    if result.difference is None:
        axis.text(0, y, "n/a", ha="center", va="center", fontsize=8)
        return
    value = 100 * result.difference
    low, high = (
        (100 * result.difference_ci[0], 100 * result.difference_ci[1])
        if (result.difference_ci)
        else (value, value)
    )
    axis.errorbar(
        [value],
        [y],
        xerr=[[value - low], [high - value]],
        fmt="D" if marked else "o",
        color="#c44e52" if marked else "#4c72b0",
        capsize=4,
    )
    axis.annotate(
        f"{value:+.1f}",
        (value, y),
        textcoords="offset points",
        xytext=(0, 7),
        ha="center",
        fontsize=8,
    )
