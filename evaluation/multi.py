"""Score several models in one run: a report per model and one leaderboard.

The suites are prepared once (templates, normalisations, ``limit``) and each model is loaded,
scored and released in turn. The output folder holds each model's report folder (as a
single-model run writes it) under the model's label, and beside them::

    leaderboard.json         Leaderboard (+ leaderboard.schema.json, and the folder's marker)
    leaderboard.md           a table per suite: a row per model (best first) and per bias baseline
    leaderboard.png          pass rates per suite and category, a bar per model (suites from
                             the catalogue: a panel per task type, a row per suite)
    scaling.png              pass rate against parameter count, when the models form a family

The whole folder is swapped in at once, like a single report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.arguments import check_models, check_preparation
from nnd_suites.evaluation.catalogue_suites import catalogue_suites
from nnd_suites.evaluation.leaderboard import TIE_RULE, Leaderboard, leaderboard, model_labels
from nnd_suites.evaluation.leaderboard_agreement import ceiling_row, human_sections, rate_cell
from nnd_suites.evaluation.outputs import write_report_files
from nnd_suites.evaluation.parallel import current_rank
from nnd_suites.evaluation.plots import write_leaderboard, write_scaling
from nnd_suites.evaluation.rank_job import rank_job, refuse_before_ranks, run_in_ranks, wants_ranks
from nnd_suites.evaluation.report_markdown import kept_tests, limit_note
from nnd_suites.evaluation.shared_runs import share_runs
from nnd_suites.evaluation.task_charts import write_task_rates
from nnd_suites.evaluation.task_grouping import BASELINE_COLUMNS, task_table
from nnd_suites.infra.formatting import count, percent, plural, row
from nnd_suites.infra.output_folder import check_output_folder, write_report_folder


def evaluate_models(
    models: Sequence[str | Path],
    suites: Any,
    *,
    out: str | Path | None = None,
    template: str | None = None,
    normalize: Sequence[str] = (),
    limit: int | float | None = None,
    data_parallel: int | None = None,
    **options: Any,
) -> Leaderboard:
    """Score each of ``models`` on ``suites`` (see :func:`nnd_suites.evaluate` for the options)
    and return their leaderboard; ``out`` receives every report and the leaderboard files.
    ``data_parallel=N``: each model is scored in N local processes (the same leaderboard)."""
    check_models("evaluate_models", models)  # before any work, as the CLI checks while parsing
    check_preparation("evaluate_models", template, normalize, limit)
    # taken before any parameter is reassigned: this call, as each rank will make it
    job = rank_job(evaluate_models, locals()) if wants_ranks(data_parallel) else None
    # lazy: hf_loading imports torch; `import nnd_suites.evaluation` stays torch-free
    from nnd_suites.evaluation.backends.hf_loading import check_model_references

    if len(models) < 1:
        raise NNDError("give at least one model")
    repeated = sorted({str(m) for m in models if [str(x) for x in models].count(str(m)) > 1})
    if repeated:
        raise NNDError(
            f"model {', '.join(repeated)} given more than once: each --model is scored once; "
            "drop the repeat"
        )
    rank = current_rank()
    main = rank is None or rank.main
    if out is not None and main:
        # before any scoring: a bad --out must not cost a run
        check_output_folder(out, "leaderboard")
    check_model_references(
        models, options.get("backend"), options.get("backend_options"), options.get("revision")
    )
    if job is not None:  # N local ranks make this call; what would fail in each fails here
        refuse_before_ranks(suites, options.get("backend"), options.get("backend_options"))
        return run_in_ranks(job, data_parallel, Leaderboard)  # type: ignore[arg-type]
    labels = model_labels([str(m) for m in models])
    # `catalogue` or a `build --catalogue` folder: its suites, and the task grouping of the board
    suites, by_task = catalogue_suites(suites)
    runs = share_runs(suites, template=template, normalize=normalize, limit=limit)
    reports = [runs.evaluate(model, **options) for model in models]
    for report in reports:  # each model's report, and so the leaderboard, carries the grouping
        report.by_task = by_task
    board = leaderboard(reports, labels)
    if out is not None and main:
        write_leaderboard_folder(board, out)
    return board


def write_leaderboard_folder(board: Leaderboard, out: str | Path) -> dict[str, Path]:
    """Every model's report in its sub-folder, and the leaderboard files, swapped in at once
    (:mod:`nnd_suites.infra.output_folder`)."""

    def write_reports(folder: Path) -> dict[str, Path]:
        return {
            f"report:{entry.label}": write_report_files(report, folder / entry.label)["json"]
            for entry, report in zip(board.models, board.reports, strict=True)
        }

    labels = [m.label for m in board.models]
    grouping = board.by_task
    charts = {
        "chart": (
            "leaderboard.png",
            # catalogue suites: a panel per task type, a row per suite
            lambda path: (
                write_leaderboard(path, board.reports, labels, board.baselines)
                if grouping is None
                else write_task_rates(path, board.reports, labels, grouping, board.baselines)
            ),
        )
    }
    if board.family:
        charts["scaling"] = ("scaling.png", lambda path: write_scaling(path, board))
    return write_report_folder(
        out, "leaderboard", board, leaderboard_markdown(board), charts, write_reports
    )


def leaderboard_markdown(board: Leaderboard) -> str:
    """A table per suite: a row per model, best overall first, then one per bias baseline."""
    sizes = {m.label: m for m in board.models}
    lines = [
        f"# NND leaderboard ({plural(len(board.models), 'model')})",
        "",
        f"Pass rate [Wilson 95% interval]; {TIE_RULE}. n: the tests rated (passed, failed or "
        "tied; degenerate and skipped tests are left out), the most any model rated; a model "
        "that rated fewer (a candidate did not fit its window) gives its own n beside its rate. "
        "Bias baselines score without a model, on the tests every model rated; where that is "
        "fewer than a column's n, the baseline gives its own n beside its rate."
        + limit_note(board.limit, kept_tests(board.reports[0].suites) if board.reports else None)
        + (" scaling.png plots pass rate against size." if board.family else ""),
    ]
    if board.by_task is not None:  # suites from the catalogue: by task, beside the baselines
        heading = [*(m.label for m in board.models), *(f"baseline: {b}" for b in BASELINE_COLUMNS)]
        lines += task_table(board.by_task, heading, lambda suite: _task_cells(board, suite))
    for suite, rows in board.suites.items():
        columns = list(rows)
        overall = rows["overall"]
        order = sorted(sizes, key=lambda m: -(overall[m].pass_rate or 0.0))
        n = {c: max(r.n for r in rows[c].values()) for c in columns}
        lines += [
            "",
            f"## {suite}",
            "",
            row(["model", "parameters", *(f"{c} (n={count(n[c])})" for c in columns)]),
            "|---|---:|" + "---:|" * len(columns),
        ]
        for label in order:
            size = sizes[label].parameters
            cells = [rate_cell(rows[c].get(label), n[c]) for c in columns]
            lines.append(row([label, count(size) if size else "n/a", *cells]))
        for baseline, figures in board.baselines.get(suite, {}).items():
            cells = [_baseline_cell(board, suite, figures, c, n[c]) for c in columns]
            lines.append(row([f"*baseline: {baseline}*", "", *cells]))
        lines += ceiling_row(board, suite, len(columns))  # the table's last row
        lines += human_sections(board, suite, order)
    return "\n".join(lines) + "\n"


def _task_cells(board: Leaderboard, suite: str) -> list[str]:
    """One suite's row of the grouped table: each model's overall rate, each baseline's."""
    overall = board.suites[suite]["overall"]
    n = max(rate.n for rate in overall.values())
    baselines = board.baselines.get(suite, {})
    return [rate_cell(overall.get(m.label), n) for m in board.models] + [
        _baseline_cell(board, suite, baselines[b], "overall", n) if b in baselines else "n/a"
        for b in BASELINE_COLUMNS
    ]


def _baseline_cell(
    board: Leaderboard, suite: str, figures: dict[str, float | None], column: str, n: int
) -> str:
    """A baseline's rate in ``column``, with the tests it counts (those every model rated) when
    they are fewer than the column's ``n``, as a model that rated fewer shows its own."""
    tests = board.baseline_tests.get(suite, {}).get(column)
    shown = percent(figures.get(column))
    return shown if tests is None or tests == n else f"{shown} (n={count(tests)})"
