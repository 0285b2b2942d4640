"""nnd-suites chat-prompts SUITE --tokenizer MODEL: a suite whose conversations a chat model sees
through its own chat template (then ``evaluate --template chat``)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from nnd_suites.cli.dataset_cards import wrote
from nnd_suites.cli.options import SUITE_HELP
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.suites import load_suite
from nnd_suites.infra.formatting import plural


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "chat-prompts",
        help="render a conversation suite's contexts with a tokenizer's chat template "
        "(template 'chat'; score with evaluate --template chat)",
        description="Write a copy of SUITE (a suite whose default template renders a "
        "conversation, e.g. hh_rlhf) where every context is also rendered by MODEL's "
        "tokenizer chat template, ending with the opening of the assistant's turn, in the "
        "context field chat_prompt and the template 'chat'. The tests and their ids are "
        "unchanged; score it with: nnd-suites evaluate --suite OUT --template chat --model MODEL",
    )
    parser.add_argument("suite", help=SUITE_HELP)
    parser.add_argument(
        "--tokenizer",
        required=True,
        metavar="MODEL",
        help="model (Hub id or folder) whose tokenizer holds the chat template",
    )
    parser.add_argument("--revision", help="revision of the model on the Hub")
    parser.add_argument("--out", type=Path, help="suite folder (default: suites/SUITE.chat)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: hf_loading imports torch; `nnd-suites list` must not
    from nnd_suites.evaluation.backends.hf_loading import load_tokenizer
    from nnd_suites.evaluation.chat_prompts import chat_source_field, with_chat_prompts
    from nnd_suites.hub.building import claimed_suite_folder
    from nnd_suites.hub.export import former_manifest
    from nnd_suites.infra.output_folder import refuse_replacing_an_input

    suite = load_suite(args.suite)
    chat_source_field(suite)  # refused before the tokenizer loads (slow; may download)
    out = Path(args.out or Path("suites") / f"{suite.name}.chat")
    refuse_replacing_an_input(
        out,
        args.suite,
        f"the input suite {suite.name!r}",
        "write the chat suite to another folder with --out",
    )
    # out is checked before the tokenizer loads; a config of a dataset folder stays one (its
    # card follows the files)
    with claimed_suite_folder(out, suite.name) as folder:
        chat = with_chat_prompts(suite, load_tokenizer(args.tokenizer, revision=args.revision))
        before = former_manifest(out)  # a config it replaces is named, as export names it
        folder.add(chat)
    wrote(
        out,
        f"{plural(len(chat), 'test')}, contexts rendered by the chat template of {args.tokenizer}",
        before,
        chat.manifest,
        f"; score it with: nnd-suites evaluate --suite {shlex.quote(str(out))} "
        f"--template chat --model {shlex.quote(args.tokenizer)}",  # quoted: a line to paste
    )
    return 0
