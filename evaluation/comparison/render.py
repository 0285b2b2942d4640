"""Markdown and folder of a paired comparison: comparison.json (+ schema), comparison.md, and
differences.png (what the comparison computed)."""

from __future__ import annotations

from pathlib import Path

from nnd_suites.evaluation.comparison.chart import write_differences
from nnd_suites.evaluation.comparison.paired import Comparison
from nnd_suites.evaluation.report_markdown import embedded_heading_note, limit_note
from nnd_suites.infra.formatting import count, difference_with_interval, p_value, percent
from nnd_suites.infra.markdown import render
from nnd_suites.infra.output_folder import write_report_folder
from nnd_suites.statistics.paired import PairedResult

TEMPLATE = Path(__file__).parents[1] / "report_templates" / "comparison.md.j2"


def _cells(label: str, r: PairedResult) -> list[str]:
    return [
        label,
        count(r.n),
        percent(r.pass_rate_a),
        percent(r.pass_rate_b),
        difference_with_interval(r.difference, r.difference_ci),
        count(r.a_only),
        count(r.b_only),
        count(r.ties_a),
        count(r.ties_b),
        p_value(r.p_value),
        "" if r.p_holm is None else p_value(r.p_holm),
    ]


def _tests(result: PairedResult) -> int:
    """The tests the two runs share: rated in both, degenerate, or skipped in either."""
    return result.n + result.degenerate + result.skipped


def comparison_markdown(comparison: Comparison) -> str:
    rows = {
        name: [
            _cells("**overall**", suite.overall),
            *(_cells(c, r) for c, r in suite.by_category.items()),
        ]
        for name, suite in comparison.suites.items()
    }
    kept = {name: (_tests(s.overall), s.limited) for name, s in comparison.suites.items()}
    return render(
        TEMPLATE,
        comparison=comparison,
        embedded_note=embedded_heading_note([comparison.random_weights]),
        rows=rows,
        limit_note=limit_note(comparison.limit, kept),
    )


def write_comparison(comparison: Comparison, out: str | Path) -> dict[str, Path]:
    """Write comparison.json, comparison.schema.json, comparison.md and differences.png (A - B
    per suite and category with intervals and Holm-adjusted marks) as one folder
    (:mod:`nnd_suites.infra.output_folder`: an existing folder of another kind is refused)."""
    charts = {"chart": ("differences.png", lambda path: write_differences(comparison, path))}
    return write_report_folder(
        out, "comparison", comparison, comparison_markdown(comparison), charts
    )
