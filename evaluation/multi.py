"""Score several models in one run: a report per model and one leaderboard.

The suites are prepared once (templates, normalisations, ``limit``) and each model is loaded,
scored and released in turn. The output folder holds each model's report folder (as a
single-model run writes it) under the model's label, and beside them::

    leaderboard.json         Leaderboard (+ leaderboard.schema.json, and the folder's marker)
    leaderboard.md           a table per suite: a row per model (best first; on the tests every
                             model rated when a model skipped some) and per bias baseline
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
from nnd_suites.evaluation.arguments import (
    check_cache_outside_out,
    check_models,
    check_preparation,
)
from nnd_suites.evaluation.catalogue_suites import catalogue_suites, reported_grouping
from nnd_suites.evaluation.leaderboard import (
    COMMON_ROW,
    TIE_RULE,
    Leaderboard,
    SuiteRanking,
    leaderboard,
    model_labels,
)
from nnd_suites.evaluation.leaderboard_agreement import human_tables, rate_cell, reference_rows
from nnd_suites.evaluation.outputs import write_report_files
from nnd_suites.evaluation.parallel import current_rank
from nnd_suites.evaluation.plots import write_leaderboard, write_scaling
from nnd_suites.evaluation.rank_job import rank_job, refuse_before_ranks, run_in_ranks, wants_ranks
from nnd_suites.evaluation.report_markdown import (
    embedded_heading_note,
    flips_cells,
    kept_tests,
    left_out_note,
    limit_note,
    pipeline_check,
)
from nnd_suites.evaluation.shared_runs import share_runs
from nnd_suites.evaluation.task_charts import write_task_rates
from nnd_suites.evaluation.task_grouping import BASELINE_COLUMNS, task_rows
from nnd_suites.evaluation.tiny import EMBEDDED, embedded_folder
from nnd_suites.infra.formatting import code, count, percent, rate_with_interval
from nnd_suites.infra.markdown import render
from nnd_suites.infra.output_folder import check_output_folder, write_report_folder

TEMPLATE = Path(__file__).parent / "report_templates" / "leaderboard.md.j2"


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
    check_cache_outside_out("evaluate_models", {**options, "out": out})
    # taken before any parameter is reassigned: this call, as each rank will make it
    job = rank_job(evaluate_models, locals()) if wants_ranks(data_parallel) else None
    # lazy: hf_loading imports torch; `import nnd_suites.evaluation` stays torch-free
    from nnd_suites.evaluation.backends.hf_loading import check_model_references

    if len(models) < 1:
        raise NNDError("give at least one model")
    _refuse_repeated_models(models)
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
    by_task = reported_grouping(by_task, runs.tests.plans)
    reports = [runs.evaluate(model, **options) for model in models]
    for report in reports:  # each model's report, and so the leaderboard, carries the grouping
        report.by_task = by_task
    board = leaderboard(reports, labels)
    if out is not None and main:
        write_leaderboard_folder(board, out)
    return board


def _refuse_repeated_models(models: Sequence[str | Path]) -> None:
    """A model given twice would be scored twice and ranked against itself (``m1``, ``m1_2``);
    a local folder or file is the same model however its path is written (``m1``, ``./m1/``), and
    the embedded model's name is its folder."""
    seen: dict[str, str] = {}
    for model in map(str, models):
        path = (embedded_folder() if model == EMBEDDED else Path(model)).expanduser()
        key = str(path.resolve()) if path.exists() else model
        if key in seen:
            spelt = "" if seen[key] == model else f" (as {seen[key]!r} and {model!r})"
            raise NNDError(
                f"model {seen[key]} given more than once{spelt}: each --model is scored once; "
                "drop the repeat"
            )
        seen[key] = model


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
                write_leaderboard(path, board.reports, labels, board.baselines, board.ranking)
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
    grouping = board.by_task
    return render(
        TEMPLATE,
        board=board,
        embedded_note=embedded_heading_note(
            pipeline_check(m.model, m.random_weights) for m in board.models
        ),
        tie_rule=TIE_RULE,
        limit_note=limit_note(
            board.limit, kept_tests(board.reports[0].suites) if board.reports else None
        ),
        # the same suite specs for every model: the first report says what `all` left out
        left_out_note=left_out_note(board.reports[0].left_out_of_all) if board.reports else "",
        # suites from the catalogue: by task, beside the baselines
        task_heading=[
            "n",
            *(m.label for m in board.models),
            *(f"baseline: {b}" for b in BASELINE_COLUMNS),
        ],
        task_rows=[] if grouping is None else task_rows(grouping, lambda s: _task_cells(board, s)),
        suites=[_suite_table(board, suite) for suite in board.suites],
    )


def _suite_table(board: Leaderboard, suite: str) -> dict[str, Any]:
    """One suite's table (a row per model, best first, per baseline, the raters' reference) and
    its human tables. When the models rated different tests, the first rate column is each
    model's rate on the tests every model rated, which orders the rows (a model that skipped
    the hard tests would otherwise rank above one that beats it on the tests both rated)."""
    sizes = {m.label: m.parameters for m in board.models}
    rows = board.suites[suite]
    columns = list(rows)
    ranking = board.ranking.get(suite)
    order = (
        ranking.order
        if ranking is not None
        else sorted(sizes, key=lambda m: -(rows["overall"][m].pass_rate or 0.0))
    )
    n = {c: max(r.n for r in rows[c].values()) for c in columns}
    ranked = [] if ranking is None else [f"{COMMON_ROW} (n={count(ranking.tests)})"]
    models = [
        [label, count(sizes[label]) if sizes[label] else "n/a"]
        + ([] if ranking is None else [rate_cell(ranking.rates[label], ranking.tests)])
        + [rate_cell(rows[c].get(label), n[c]) for c in columns]
        for label in order
    ]
    baselines = [
        [
            f"*baseline: {baseline}*",
            "",
            # the baselines count the tests every model rated: the ranking's tests
            *([] if ranking is None else [percent(figures.get("overall"))]),
            *(_baseline_cell(board, suite, figures, c, n[c]) for c in columns),
        ]
        for baseline, figures in board.baselines.get(suite, {}).items()
    ]
    reference = [
        row[:2] + [""] * len(ranked) + row[2:] for row in reference_rows(board, suite, len(columns))
    ]
    return {
        "name": suite,
        "header": ["model", "parameters", *ranked, *(f"{c} (n={count(n[c])})" for c in columns)],
        "rows": models + baselines + reference,
        "ranking_note": None if ranking is None else ranking_note(ranking),
        **human_tables(board, suite, order),
        **_scorer_rows(board, suite, order),
    }


def _scorer_rows(board: Leaderboard, suite: str, order: list[str]) -> dict[str, Any]:
    """Several --scorer: each model's pass rate under every scorer after the first (whose rates
    the table gives) and its verdict flips against the first, as each report.md lists them."""
    found = board.sensitivity.get(suite)
    if not found:
        return {"scorers": None}
    rows = [
        [
            label,
            code(name),
            rate_with_interval(result.overall.pass_rate, result.overall.ci),
            *flips_cells(result.flips),
        ]
        for label in order
        if label in found
        for name, result in found[label].scorers.items()
        if result.flips is not None  # the first scorer: the table above
    ]
    return {"scorers": {"primary": next(iter(found.values())).primary, "rows": rows}}


def ranking_note(ranking: SuiteRanking) -> str:
    """Why a suite's rows are ranked on fewer tests than the models rated: the tests left out and
    which model skipped how many."""
    skipped = ", ".join(
        f"{label} skipped {count(tests)}" for label, tests in ranking.skipped.items() if tests
    )
    return (
        f"Ranked on the {count(ranking.tests)} tests every model rated (first rate column): "
        f"{count(ranking.left_out)} tests left out of the ranking because some model skipped "
        f"them, a candidate did not fit its window ({skipped}); each model's own rate and n "
        "follow."
    )


def _task_cells(board: Leaderboard, suite: str) -> list[str]:
    """One suite's row of the grouped table: its n (the most tests a model rated), each model's
    overall rate, each baseline's."""
    overall = board.suites[suite]["overall"]
    n = max(rate.n for rate in overall.values())
    baselines = board.baselines.get(suite, {})
    return (
        [count(n)]
        + [rate_cell(overall.get(m.label), n) for m in board.models]
        + [
            _baseline_cell(board, suite, baselines[b], "overall", n) if b in baselines else "n/a"
            for b in BASELINE_COLUMNS
        ]
    )


def _baseline_cell(
    board: Leaderboard, suite: str, figures: dict[str, float | None], column: str, n: int
) -> str:
    """A baseline's rate in ``column``, with the tests it counts (those every model rated) when
    they are fewer than the column's ``n``, as a model that rated fewer shows its own."""
    tests = board.baseline_tests.get(suite, {}).get(column)
    shown = percent(figures.get(column))
    return shown if tests is None or tests == n else f"{shown} (n={count(tests)})"
