"""nnd-suites slices SUITE: a suite's subpopulations (slice plugins), and their GEM export."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nnd_suites.cli.options import SUITE_HELP
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import left_out, say, say_json
from nnd_suites.infra.formatting import count, plural, rate_with_interval


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "slices",
        help="a suite's slices (length relation, context length, worse system, breakdowns...)",
        description="Cut a suite's tests into the subpopulations every slice plugin declares "
        "(see `nnd-suites list`), and export them in GEM-metrics' contrast-set format "
        "{set: {subset: [test ids]}}. With --run, the token-length slice (from the run's scored "
        "token counts) and each subset's pass rate are added.",
    )
    parser.add_argument("suite", help=SUITE_HELP)
    parser.add_argument(
        "--run",
        type=Path,
        help="folder of an `nnd-suites evaluate --out` run on this suite: pass rates per subset",
    )
    parser.add_argument(
        "--slice",
        action="append",
        metavar="NAME[:param=value,...]",
        help="only this slice plugin, with its parameters (repeatable; context_length:bins=10)",
    )
    parser.add_argument(
        "--gem-out", type=Path, metavar="FILE", help="write the contrast sets there (JSON)"
    )
    parser.add_argument("--json", action="store_true", help="print the contrast sets as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the evaluator package is slow to import; `nnd-suites list` stays < 1 s
    from nnd_suites.evaluation.report_markdown import pipeline_check
    from nnd_suites.evaluation.saved import load_report, outcomes_for
    from nnd_suites.evaluation.slicing import (
        GEM_TITLE,
        gem_contrast_sets,
        is_gem_file,
        slice_rates,
        write_gem_file,
    )
    from nnd_suites.evaluation.tiny import EMBEDDED_NOTE
    from nnd_suites.infra.output_file import check_output_file
    from nnd_suites.resolve import load_suite

    if args.gem_out:  # before loading the suite: anyone else's file costs nothing
        check_output_file(args.gem_out, GEM_TITLE, is_gem_file)
    suite = load_suite(args.suite)
    run = load_report(args.run) if args.run else None
    outcomes = outcomes_for(args.run, suite, run) if run else None
    if run and pipeline_check(run.model, run.random_weights):  # as evaluate says it
        say(EMBEDDED_NOTE, file=sys.stderr if args.json else sys.stdout)
    sets = gem_contrast_sets(suite, outcomes, args.slice)
    if args.gem_out:
        write_gem_file(args.gem_out, sets)
    if args.json:
        say_json(json.dumps(sets, ensure_ascii=False))
        return 0
    rates = slice_rates(suite, outcomes, args.slice) if outcomes else {}
    how = f"; pass rate [Wilson 95% interval] in run {args.run}" if rates else ""
    say(f"slices of {suite.name} ({plural(len(suite.pairs), 'test')}{how})")
    # one width per column over every slice, so the pass rates line up as n changes width
    names = [subset for subsets in sets.values() for subset in subsets]
    wide, digits = max([32, *map(len, names)]), len(f"{len(suite.pairs):,}")
    for name, subsets in sets.items():
        say(name)
        for subset, ids in subsets.items():
            line = f"  {subset:<{wide}} n={len(ids):>{digits},}"
            if name in rates:
                rate = rates[name][subset]
                line += f"  pass {rate_with_interval(rate.pass_rate, rate.ci)}"
                if rate.n != len(ids):  # the rate is over the rated tests only: say which
                    line += f" of {count(rate.n)} rated (left out: {left_out(rate, why=False)})"
            say(line)
        filed = {test for ids in subsets.values() for test in ids}
        if len(filed) < len(suite.pairs):  # e.g. tests the model skipped have no token count
            say(f"  {'in no subset':<{wide}} n={len(suite.pairs) - len(filed):>{digits},}")
    if args.gem_out:
        say(f"wrote {args.gem_out}")
    return 0
