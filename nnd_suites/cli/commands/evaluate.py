"""nnd-suites evaluate: score a model on one or more suites and report pass rates."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nnd_suites.cli.options import (
    SUITE_HELP,
    add_data_parallel_option,
    add_scoring_options,
    rank_zero,
    scoring_options,
)
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import rate_summary, say, say_json
from nnd_suites.errors import NNDError
from nnd_suites.infra.formatting import plural, rate_with_interval

if TYPE_CHECKING:
    from nnd_suites.evaluation.report import SuiteResult
    from nnd_suites.evaluation.task_grouping import TaskGrouping


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="score a model on suites (log-likelihood NND tests) and report",
        description="Score a model (Hub id, local folder, .gguf file or a built-in model) on NND "
        "suites: a test passes when the better candidate gets the higher mean log-probability "
        "(or the higher score of --scorer).",
    )
    parser.add_argument(
        "--suite",
        action="append",
        required=True,
        metavar="SUITE",
        help=SUITE_HELP + ", all, or a dataset folder (every config) (repeatable); or, "
        "alone, catalogue (every catalogue suite "
        "whose source ships) or a folder written by `build --catalogue`: one row per suite, "
        "grouped by task type, the skipped ones listed with why",
    )
    add_scoring_options(parser, several_models=True)
    parser.add_argument(
        "--normalize",
        action="append",
        default=[],
        metavar="TRANSFORM",
        help="transformation spec applied to every suite before scoring (repeatable)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="write report.json, report.md, pass_rates.png and per-test outcomes there (several "
        "models: each model's report in a sub-folder, and leaderboard.json/.md/.png beside them)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object (progress goes to stderr)"
    )
    parser.add_argument(
        "--log-samples",
        action="store_true",
        help="also write samples/SUITE.jsonl into --out, one line per test: the rendered context "
        "exactly as the model received it, both candidates (and, for in-process models, their "
        "scored tokens + EOS decoded), each side's scores and the verdict; joins "
        "outcomes/SUITE.parquet on pair_id (lm-eval's --log_samples / --write_out)",
    )
    add_data_parallel_option(parser, "evaluate")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the evaluator package is slow to import; `nnd-suites list` stays < 1 s
    from nnd_suites.evaluation import evaluate
    from nnd_suites.evaluation.agreement_markdown import ceiling_summary
    from nnd_suites.evaluation.report_markdown import (
        flips_line,
        kept_tests,
        left_out_note,
        limit_note,
        requests_note,
    )
    from nnd_suites.evaluation.tiny import EMBEDDED_NOTE, resolve_embedded

    if args.log_samples and args.out is None:
        raise NNDError(
            "--log-samples writes samples/SUITE.jsonl into the report folder: give --out DIR"
        )
    args.model, embedded = resolve_embedded(args.model)
    # said once, before the scoring: with one model's figures on stdout, which a user keeps of
    # the run, or beside --json's summary on stderr; several models' leaderboard says it itself
    if embedded and rank_zero() and (args.json or len(args.model) == 1):
        say(EMBEDDED_NOTE, file=sys.stderr if args.json else sys.stdout)
    if len(args.model) > 1:
        return _run_several(args)
    # `catalogue` or a `build --catalogue` folder: the evaluator groups its suites by task type
    report = evaluate(args.model[0], args.suite, **_options(args))
    if not rank_zero():
        return 0  # rank 0 prints (and wrote the report)
    if args.json:
        say_json(json.dumps(report.summary(), ensure_ascii=False))
        return 0
    backend, dtype = report.backend.get("backend"), report.backend.get("dtype")
    how = [backend, f"{report.mode} scoring", f"scorer {report.scorer}", dtype]
    say(
        f"model {report.model} ({', '.join(str(h) for h in how if h)}): "
        f"{requests_note(report.requests, report.reference_model, report.reference_requests)}, "
        f"{report.seconds:.1f} s"
    )
    if report.limit:  # a smoke test must not read as the suite's figures
        say(limit_note(report.limit, kept_tests(report.suites)).strip())
    if report.left_out_of_all:
        say(left_out_note(report.left_out_of_all))
    say("pass rate [Wilson 95% interval] of the rated tests, per suite and category:")
    for name, result in report.suites.items():
        say(f"{name}: {rate_summary(result.overall)}")
        for category, rate in result.by_category.items():
            say(f"  {category:<24} {rate_with_interval(rate.pass_rate, rate.ci)}  n={rate.n:,}")
        if result.truncated_tests:
            say(f"  contexts cut to fit the window: {plural(result.truncated_tests, 'test')}")
        ceiling = ceiling_summary(result)
        if ceiling:  # the raters' own agreement on these tests: how high a pass rate can go
            say(f"  {ceiling}")
        if name in report.sensitivity:  # several --scorer: report.md's sensitivity table, in short
            table = " (report.md: Scorer sensitivity)" if args.out else ""
            say(f"  {flips_line(report.sensitivity[name])}{table}")
    if report.by_task is not None:
        _say_by_task(report.by_task, report.suites)
    if args.out:
        samples = ", samples/" if args.log_samples else ""
        say(f"wrote {args.out}/report.json, report.md, pass_rates.png, outcomes/{samples}")
    return 0


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The evaluator's keyword arguments, for one model or several."""
    return {
        "out": args.out,
        "normalize": args.normalize,
        "log_samples": args.log_samples,
        "data_parallel": args.data_parallel,
        **scoring_options(args),
    }


def _say_by_task(grouping: TaskGrouping, results: Mapping[str, SuiteResult]) -> None:
    """Each suite's overall pass rate under its task type, beside the bias baselines, then what
    was skipped and why."""
    # lazy: the evaluator package is slow to import; `nnd-suites list` stays < 1 s
    from nnd_suites.evaluation.report_markdown import report_cells
    from nnd_suites.evaluation.task_grouping import BASELINE_COLUMNS

    say(f"by task type (overall pass rate; baselines {' / '.join(BASELINE_COLUMNS)}):")
    for task_type, suites in grouping.task_types.items():
        say(f"  {task_type}")
        for suite in suites:
            _, rated, rate, *baselines = report_cells(results[suite])
            say(f"    {suite:<22} {rate}  n={rated}  baselines {' / '.join(baselines)}")
    for name, skipped in grouping.skipped.items():
        say(f"skipped {name} ({skipped.task_type}): {skipped.reason}")


def _run_several(args: argparse.Namespace) -> int:
    # lazy: the evaluator package is slow to import; `nnd-suites list` stays < 1 s
    from nnd_suites.evaluation.multi import evaluate_models, leaderboard_markdown

    board = evaluate_models(args.model, args.suite, **_options(args))
    if not rank_zero():
        return 0  # rank 0 prints (and wrote the leaderboard)
    if args.json:
        say_json(json.dumps(board.summary(), ensure_ascii=False))
        return 0
    say(leaderboard_markdown(board), end="")
    if args.out:
        extra = ", scaling.png" if board.family else ""
        say(f"\nwrote {args.out}/leaderboard.json, leaderboard.md, leaderboard.png{extra}, and")
        say("  a report folder per model: " + ", ".join(m.label for m in board.models))
    return 0
