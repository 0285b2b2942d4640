"""Write a report to a folder: JSON (+ its JSON Schema), Markdown, a PNG chart, outcome parquets
(and, asked for, samples).

The folder is written by the one output-folder writer (:mod:`nnd_suites.infra.output_folder`:
guarded,
swapped in as a whole)::

    report.json             EvaluationReport
    report.schema.json      its JSON Schema
    report.md               tables per suite (report_markdown.py)
    pass_rates.png          pass rate per suite and category, with Wilson 95% intervals,
                            beside the bias baselines (suites from the catalogue: a panel
                            per task type, a row per suite)
    outcomes/SUITE.parquet  one row per test: scores and outcome, to compare runs test by test
    samples/SUITE.jsonl     with log_samples: one line per test, what the model saw (its rendered
                            context, both candidates as scored, every score the scorers read;
                            joins the outcomes on pair_id; evaluation/samples.py); report.json
                            names it (SuiteResult.samples_file)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.plots import short_name, write_pass_rates
from nnd_suites.evaluation.report import EvaluationReport, TestOutcome
from nnd_suites.evaluation.report_markdown import markdown
from nnd_suites.evaluation.samples import samples_file, write_samples
from nnd_suites.evaluation.task_charts import write_task_rates
from nnd_suites.infra.output_folder import Charts, write_report_folder
from nnd_suites.infra.output_folder import write_report_files as write_report_files_of_kind
from nnd_suites.infra.parquet import parquet_buffer, read_bounded_table
from nnd_suites.infra.validation import validated_rows

__all__ = ["read_outcomes", "write_report", "write_report_files"]

OUTCOME_SCHEMA = pa.schema(
    [
        ("pair_id", pa.string()),
        ("parent_id", pa.string()),
        ("group_id", pa.string()),
        ("category", pa.string()),
        ("label", pa.string()),
        ("ll_high", pa.float64()),
        ("ll_low", pa.float64()),
        ("n_high", pa.int32()),
        ("n_low", pa.int32()),
        ("truncated", pa.bool_()),
        ("outcome", pa.string()),
    ]
)


def write_outcomes(path: Path, outcomes: list[TestOutcome]) -> None:
    """Write one suite's outcome file into a report folder not yet swapped in."""
    table = pa.Table.from_pylist([o.model_dump() for o in outcomes], schema=OUTCOME_SCHEMA)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def read_outcomes(path: str | Path, what: str = "per-test outcomes") -> list[TestOutcome]:
    """The rows of an outcomes file, read within the bounds of :mod:`nnd_suites.infra.parquet`;
    a row that is not one (an outcome "PASS", a missing column) is an NNDError naming the file,
    ``what`` it should hold, the row, its test and field."""
    table = read_bounded_table(parquet_buffer(path, "outcomes file"), path)
    return validated_rows(
        TestOutcome,
        table.to_pylist(),
        lambda index, row, problems: NNDError(
            f"{path}: not the {what}: row {index} (test {row.get('pair_id')!r}): {problems}; "
            "re-run the evaluation"
        ),
    )


def write_report(report: EvaluationReport, out: str | Path) -> dict[str, Path]:
    """Write the whole report folder at once: readers see the old or the new report, never a mix
    (and no outcome file of an earlier run is left beside a new report)."""
    _name_samples(report)
    return write_report_folder(
        out, "report", report, markdown(report), _charts(report), _outcome_writer(report)
    )


def write_report_files(report: EvaluationReport, folder: Path) -> dict[str, Path]:
    """Write a report's files into ``folder`` (a report inside a folder being written, such as a
    leaderboard's per-model sub-folder)."""
    _name_samples(report)
    written = dict(_outcome_writer(report)(folder))
    return written | write_report_files_of_kind(
        folder, "report", report, markdown(report), _charts(report)
    )


def _name_samples(report: EvaluationReport) -> None:
    """Name in each suite's result the samples file the folder will hold (None: no samples),
    before report.md is made (it names them too)."""
    for name, result in report.suites.items():
        result.samples_file = samples_file(name).as_posix() if name in report.samples else None


def _charts(report: EvaluationReport) -> Charts:
    grouping = report.by_task
    if grouping is not None:  # catalogue suites: a panel per task type, a row per suite
        label = short_name(report.model)
        return {
            "chart": (
                "pass_rates.png",
                lambda path: write_task_rates(path, [report], [label], grouping),
            )
        }
    return {"chart": ("pass_rates.png", lambda path: write_pass_rates(report, path))}


def _outcome_writer(report: EvaluationReport) -> Callable[[Path], dict[str, Path]]:
    """Writes each suite's outcome file and records its place in the report."""

    def write(folder: Path) -> dict[str, Path]:
        written = {}
        for name, outcomes in report.outcomes.items():
            relative = Path("outcomes") / f"{name}.parquet"
            write_outcomes(folder / relative, outcomes)
            report.suites[name].outcomes_file = relative.as_posix()
            written[f"outcomes:{name}"] = folder / relative
        for name, samples in report.samples.items():  # with log_samples: what the model saw
            relative = samples_file(name)
            write_samples(folder / relative, samples)
            written[f"samples:{name}"] = folder / relative
        return written

    return write
