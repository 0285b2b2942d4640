"""The robustness report written: JSON (+ schema), Markdown and a heatmap, as one folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.outputs import write_report_files
from nnd_suites.evaluation.report_markdown import embedded_heading_note, limit_note, pipeline_check
from nnd_suites.evaluation.robustness.chart import write_heatmap
from nnd_suites.evaluation.robustness.models import (
    RobustnessReport,
    computed_from,
    holm_p_values,
    kept_of,
)
from nnd_suites.evaluation.saved import load_report
from nnd_suites.infra.formatting import code, count, difference_with_interval, p_value, percent
from nnd_suites.infra.markdown import render
from nnd_suites.infra.output_folder import holds_kind, write_report_folder
from nnd_suites.statistics.paired import PairedResult

if TYPE_CHECKING:
    from nnd_suites.evaluation.report import EvaluationReport

JSON_FILE, MARKDOWN_FILE, HEATMAP_FILE = "robustness.json", "robustness.md", "robustness.png"
EVALUATION_FOLDER = "evaluation"
#: what a robustness folder may already hold when its report is written: the evaluator's report
CARRIED = {EVALUATION_FOLDER: "report"}
TEMPLATE = Path(__file__).parents[1] / "report_templates" / "robustness.md.j2"


# ------------------------------------------------------------------ writers
def _cells(
    first: list[str], c: PairedResult, p_holm: float | None, alpha: float, changed: str = ""
) -> list[str]:
    mark = " *" if p_holm is not None and p_holm < alpha else ""
    return [
        *first,
        count(c.n),
        count(c.degenerate),
        count(c.skipped),
        *([changed] if changed else []),
        percent(c.pass_rate_b),
        percent(c.pass_rate_a),
        difference_with_interval(c.difference, c.difference_ci) + mark,
        count(c.b_only),
        count(c.a_only),
        p_value(c.p_value),
        p_value(p_holm),
    ]


def scoring_line(evaluation: dict[str, Any]) -> str:
    """What made the pass rates below: the scorer, the scoring mode and each suite's template
    (a pass rate under ``pmi`` or ``--template chat`` is not the paper's figure)."""
    if not evaluation.get("scorer"):
        return "Scoring: not recorded (a report written before scorers were recorded)."
    templates = evaluation.get("templates") or {}
    used = sorted(set(templates.values()))
    named = (
        f"template {code(used[0])}"
        if len(used) == 1
        else "templates " + ", ".join(f"{suite}: {code(name)}" for suite, name in templates.items())
    )
    scorer, mode = code(evaluation["scorer"]), code(evaluation.get("mode"))
    return f"Scored with scorer {scorer}, mode {mode}, {named}."


def parameters_line(report: RobustnessReport) -> str:
    """Each transformation with every parameter, defaults and seed included: ``typos`` alone
    does not say which seed and rate made its suite."""
    if not report.transform_params:
        return ""
    described = "; ".join(
        f"{code(spec)}: " + ", ".join(f"{key}={value}" for key, value in params.items())
        for spec, params in report.transform_params.items()
    )
    return f"\n\nTransformations with every parameter (defaults and seeds included): {described}."


def to_markdown(report: RobustnessReport, per_category: bool = True) -> str:
    """The report in Markdown: the overall table, then (``per_category``) a table per cell;
    the overall table alone (the command line's) ends without a line break."""
    p_holm = holm_p_values(report)
    rows = [
        _cells(
            [cell.suite, cell.transform],
            cell,
            p_holm.get((cell.suite, cell.transform, None)),
            report.alpha,
            count(cell.changed),
        )
        for cell in report.cells
    ]
    category_rows = [
        [
            _cells([category], c, p_holm.get((cell.suite, cell.transform, category)), report.alpha)
            for category, c in cell.by_category.items()
        ]
        for cell in report.cells
    ]
    return render(
        TEMPLATE,
        report=report,
        embedded_note=embedded_heading_note([pipeline_check(report.model, report.random_weights)]),
        scoring_line=scoring_line(report.evaluation) + parameters_line(report),
        limit_note=limit_note(report.evaluation.get("limit"), kept_of(report)),
        per_category=per_category,
        rows=rows,
        kept_lines=[
            f"{code(cell.suite)} / {code(cell.transform)}: {reason}: {count(n)}"
            for cell in report.cells
            for reason, n in (cell.kept_unchanged or {}).items()
        ],
        category_rows=category_rows,
    )


def write_report(
    report: RobustnessReport, folder: str | Path, evaluation: EvaluationReport | None = None
) -> dict[str, Path]:
    """Write robustness.json (+ schema), robustness.md and robustness.png into ``folder`` as a
    whole (:mod:`nnd_suites.infra.output_folder`), with the evaluator's report under evaluation/:
    ``evaluation`` when given, else the one already in ``folder``/evaluation when ``report`` was
    computed from it (:func:`computed_from`: same model, scoring, limit and untouched rates).
    Any other evaluation/ (another model's, another run's) is left out: one folder, one run's
    figures."""

    def write_evaluation(tmp: Path) -> dict[str, Path]:
        if evaluation is None:
            return {}
        return write_report_files(evaluation, tmp / EVALUATION_FOLDER)

    charts = {
        "heatmap": (HEATMAP_FILE, lambda path: write_heatmap(report, path, holm_p_values(report)))
    }
    carried = evaluation is None and _earlier_evaluation_matches(report, Path(folder))
    return write_report_folder(
        folder,
        "robustness",
        report,
        to_markdown(report),
        charts,
        extra=write_evaluation,
        carry=CARRIED if carried else None,
    )


def _earlier_evaluation_matches(report: RobustnessReport, folder: Path) -> bool:
    """Whether ``folder``/evaluation holds the evaluator's report ``report`` was computed from
    (a damaged or foreign one does not)."""
    earlier = folder / EVALUATION_FOLDER
    if not holds_kind(earlier, CARRIED[EVALUATION_FOLDER]):
        return False
    try:
        return computed_from(report, load_report(earlier))
    except NNDError:  # damaged outcome files: not carried
        return False
