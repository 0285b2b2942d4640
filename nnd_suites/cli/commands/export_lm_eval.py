"""nnd-suites export-lm-eval SUITE ... --to FOLDER --tokenizer MODEL: an lm-evaluation-harness
task folder whose per-test verdicts equal nnd-suites' own under the same scorer."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from nnd_suites.cli.options import add_suites_argument
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say
from nnd_suites.cli.suites import load_suites
from nnd_suites.infra.formatting import plural

SCORERS = ("sum", "per_char", "per_byte")


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "export-lm-eval",
        help="write suites as an lm-evaluation-harness task folder (YAML + utils.py + data)",
        description="Write each suite as an lm-eval task (and a group of per-category tasks) "
        "whose verdicts equal `nnd-suites evaluate --scorer SCORER` test by test, for the "
        "model whose tokenizer is given (its EOS text ends every choice). Run it with "
        "`lm_eval --model hf --model_args pretrained=MODEL --include_path FOLDER --tasks "
        "nnd_SUITE`; the metrics are pass and tie (apart) and degenerate.",
    )
    add_suites_argument(parser)
    parser.add_argument(
        "--to",
        type=Path,
        required=True,
        metavar="FOLDER",
        help="task folder to write (new, empty, or an earlier export, replaced as a whole); "
        "its YAML files name the data by absolute path: export again after moving it",
    )
    parser.add_argument(
        "--tokenizer",
        required=True,
        metavar="MODEL",
        help="the model (Hub id, folder or nnd-suites:tiny-random) whose tokenizer the task is "
        "made for (byte-level BPE, e.g. gpt2)",
    )
    parser.add_argument(
        "--scorer",
        default="per_byte",
        metavar="SCORER",
        help=f"what each test compares: {', '.join(SCORERS)} (default per_byte); mean, pmi, "
        "ratio and reward cannot be expressed in lm-eval and are refused",
    )
    parser.add_argument(
        "--template",
        metavar="NAME",
        help="the suite's template that renders contexts (default: the suite's default, as "
        "`evaluate` uses)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the Hub layer imports datasets and huggingface_hub; `nnd-suites list` must not
    from nnd_suites.evaluation.lm_eval_task import check_scorer, export_lm_eval
    from nnd_suites.evaluation.tiny import resolve_embedded

    check_scorer(args.scorer)  # before any suite is loaded or built
    # nnd-suites:tiny-random (made on the spot) names its folder, which lm-eval then loads
    (tokenizer,), _ = resolve_embedded([args.tokenizer])
    suites = load_suites(args.suites)
    result = export_lm_eval(suites, args.to, tokenizer, scorer=args.scorer, template=args.template)
    for name, task in result.suites.items():
        say(
            f"  {name}: task {task} ({plural(result.tasks[task], 'test')}), "
            f"group {task}_by_category"
        )
    say(f"wrote {args.to} (scorer {result.scorer}, tokenizer {result.tokenizer})")
    tasks = ",".join(result.suites.values())
    say(  # quoted: a line to paste into a shell, whatever the folder's name holds
        "run with: lm_eval --model hf --model_args "
        f"{shlex.quote(f'pretrained={result.tokenizer}')} "
        f"--include_path {shlex.quote(str(args.to))} --tasks {shlex.quote(tasks)}"
    )
    return 0
