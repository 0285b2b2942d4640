"""Markdown and folder of a paired comparison: comparison.json (+ schema), comparison.md, and
differences.png (what the comparison computed)."""

from __future__ import annotations

from pathlib import Path

from nnd_suites.evaluation.comparison.paired import Comparison
from nnd_suites.evaluation.paired_charts import write_differences
from nnd_suites.evaluation.report_markdown import limit_note
from nnd_suites.infra.formatting import (
    count,
    difference_with_interval,
    p_value,
    percent,
    row,
)
from nnd_suites.infra.output_folder import write_report_folder
from nnd_suites.statistics.paired import PairedResult


def _row(label: str, r: PairedResult) -> str:
    return row(
        [
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
    )


def _tests(result: PairedResult) -> int:
    """The tests the two runs share: rated in both, degenerate, or skipped in either."""
    return result.n + result.degenerate + result.skipped


def comparison_markdown(comparison: Comparison) -> str:
    lines = [
        f"# Paired comparison: A = `{comparison.model_a}` ({comparison.mode_a}), "
        f"B = `{comparison.model_b}` ({comparison.mode_b})",
        "",
        "Difference = A's pass rate - B's, in points, with its Newcombe 95% interval. "
        f"Ties: {comparison.tie_rule}. "
        f"p: {comparison.test}. p Holm: {comparison.correction}."
        + limit_note(
            comparison.limit,
            {name: (_tests(s.overall), s.limited) for name, s in comparison.suites.items()},
        ),
    ]
    if comparison.scoring_differences:
        lines += ["", "**Scored differently (compared on purpose):**", ""]
        lines += [f"- {difference}" for difference in comparison.scoring_differences]
    for name, suite in comparison.suites.items():
        lines += ["", f"## {name}", ""]
        if suite.template_a != suite.template_b:
            lines += [f"Templates differ: A `{suite.template_a}`, B `{suite.template_b}`.", ""]
        if suite.overall.degenerate:
            lines += [f"{suite.overall.degenerate} degenerate test(s) left out.", ""]
        if suite.overall.skipped:
            lines += [
                f"{suite.overall.skipped} test(s) left out: a candidate did not fit a model's "
                "window (skipped in A, in B or in both).",
                "",
            ]
        lines += [
            "| category | n | A | B | difference [95% CI] | only A passes | only B passes "
            "| ties A | ties B | p (McNemar) | p Holm |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            _row("**overall**", suite.overall),
            *(_row(c, r) for c, r in suite.by_category.items()),
        ]
    return "\n".join(lines) + "\n"


def write_comparison(comparison: Comparison, out: str | Path) -> dict[str, Path]:
    """Write comparison.json, comparison.schema.json, comparison.md and differences.png (A - B
    per suite and category with intervals and Holm-adjusted marks) as one folder
    (:mod:`nnd_suites.infra.output_folder`: an existing folder of another kind is refused)."""
    charts = {"chart": ("differences.png", lambda path: write_differences(comparison, path))}
    return write_report_folder(
        out, "comparison", comparison, comparison_markdown(comparison), charts
    )
