"""The robustness heat map: delta pass rates per suite x transformation (Matplotlib's object API
only, like :mod:`nnd_suites.evaluation.plots`)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from nnd_suites.evaluation.plots import chart_title, save, short_name
from nnd_suites.evaluation.report_markdown import pipeline_check
from nnd_suites.evaluation.robustness.models import CellKey, RobustnessReport
from nnd_suites.infra.formatting import count
from nnd_suites.statistics.paired import PairedResult


def write_heatmap(
    report: RobustnessReport, path: str | Path, p_holm: Mapping[CellKey, float | None]
) -> Path:
    """Delta in points (transformed - parent) per suite x transformation, then one panel per
    suite with its categories; a cell is marked (``*``, framed) when its Holm-adjusted p
    (``p_holm``, adjusted across the cells of its panel) is below the report's alpha."""
    # lazy: matplotlib loads only when a chart is drawn
    from matplotlib.figure import Figure

    suites, transforms = list(report.suites), report.transforms
    panels: list[tuple[str, list[tuple[str, str | None]]]] = [
        ("all tests of each suite", [(s, None) for s in suites])
    ]
    for suite in suites:
        categories = dict.fromkeys(
            k for c in report.cells if c.suite == suite for k in c.by_category
        )
        if len(categories) > 1:
            panels.append((f"{suite}: per category", [(suite, k) for k in categories]))
    found = {(c.suite, c.transform, None): c for c in report.cells}
    found |= {(c.suite, c.transform, k): v for c in report.cells for k, v in c.by_category.items()}
    limit = colour_limit(found.values())
    heights = [0.9 * len(rows) + 0.8 for _, rows in panels]
    width = max(6.0, 1.3 * len(transforms) + 3.5)
    figure = Figure(figsize=(width, sum(heights) + 2.0), layout="constrained")
    axes = figure.subplots(len(panels), 1, squeeze=False, height_ratios=heights)[:, 0]
    for axis, (title, rows) in zip(axes, panels, strict=True):
        labels = [suite if category is None else category for suite, category in rows]
        keys = [[(suite, t, category) for t in transforms] for suite, category in rows]
        image = _delta_panel(axis, keys, found, p_holm, report.alpha, limit)
        axis.set_xticks(range(len(transforms)), labels=transforms, rotation=30, ha="right")
        axis.set_yticks(range(len(labels)), labels=labels)
        axis.set_title(title, loc="left", fontsize=10)
    figure.colorbar(image, ax=list(axes), label="delta pass rate (points)", shrink=0.8)
    chart_title(
        figure,
        f"{short_name(report.model)}: transformed - untouched pass rate (points)",
        pipeline_check(report.model, report.random_weights),
        fontsize=11,
    )
    caption = (
        f"* and a frame: exact McNemar p < {report.alpha} after Holm's correction across the "
        "cells of each panel. The Newcombe 95% interval of a delta (in robustness.md) can "
        "exclude 0 without a mark: the two answer different questions. n: the tests rated on "
        f"both sides; a hatched grey cell has n < {MIN_COLOURED_N}: too few tests to colour or "
        "to set the colour scale. 'degen.': tests whose two candidates became the same text, "
        "left out."
    )
    figure.supxlabel(textwrap.fill(caption, int(width * 14)), fontsize=8)
    return save(figure, path, dpi=120)


#: a heat-map cell over fewer tests is hatched grey and left out of the colour scale: a 3-test
#: category's +33 points would wash every real effect out to white
MIN_COLOURED_N = 20


def colour_limit(cells: Iterable[PairedResult]) -> float:
    """The heat map's colour scale: the largest |delta| in points of the cells over at least
    :data:`MIN_COLOURED_N` tests, and at least 5 (noise stays pale)."""
    deltas = [
        100 * abs(c.difference) for c in cells if c.difference is not None and c.n >= MIN_COLOURED_N
    ]
    return max(max(deltas, default=0.0), 5.0)


def cell_text(cell: PairedResult, marked: bool) -> str:
    """A heat-map cell's text: the delta in points (``*``: marked), its n, degenerate tests."""
    text = "n/a" if cell.difference is None else f"{100 * cell.difference:+.1f}" + "*" * marked
    text += f"\nn={count(cell.n)}"
    if cell.degenerate:
        text += f"\n{count(cell.degenerate)} degen."
    return text


def _delta_panel(axis, keys, found, p_holm, alpha, limit):  # type: ignore[no-untyped-def]
    """One grid of deltas: colour and text per cell, marked cells framed."""
    # lazy: matplotlib loads only when a chart is drawn
    from matplotlib.patches import Rectangle

    grid = np.full((len(keys), len(keys[0]) if keys else 0), np.nan)
    for row, line in enumerate(keys):
        for col, key in enumerate(line):
            cell = found.get(key)
            if cell is None:
                continue
            coloured = cell.difference is not None and cell.n >= MIN_COLOURED_N
            if coloured:
                grid[row, col] = 100 * cell.difference
            elif cell.difference is not None:  # too few tests: hatched grey, no colour
                axis.add_patch(
                    Rectangle((col - 0.5, row - 0.5), 1, 1, facecolor="0.88", hatch="///", lw=0)
                )
            p = p_holm.get(key)
            marked = p is not None and p < alpha
            if marked:
                axis.add_patch(Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, lw=2.5))
            text = cell_text(cell, marked)
            dark = coloured and abs(100 * cell.difference) > 0.6 * limit
            axis.text(
                col,
                row,
                text,
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else "black",
            )
    return axis.imshow(grid, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
