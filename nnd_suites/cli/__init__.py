"""The ``nnd-suites`` command line. Each sub-command is a module in ``commands/`` with a
``register(subparsers)`` function; new commands need no edit here."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import sys

from nnd_suites import __version__
from nnd_suites.cli import commands, habits
from nnd_suites.cli.parser import Commands, Parser
from nnd_suites.errors import NNDError, UnknownItemError, printable

LOG_LEVELS = ["debug", "info", "warning", "error"]


def build_parser() -> Parser:
    parser = Parser(
        prog="nnd-suites",
        description="Build Near-Negative Distinction test suites from human evaluations, "
        "score language models on them, and publish them.",
    )
    parser.add_argument("--version", action="version", version=f"nnd-suites {__version__}")
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="say more on stderr (-v: info, -vv: debug)",
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        help="level of the messages on stderr (default: warning; overrides -v)",
    )
    sub_commands = Commands(parser)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"{commands.__name__}.{info.name}").register(sub_commands)
    # --config is read by expand_config before parsing: added here for --help
    for command in parser.commands.values():
        command.add_argument("--config", metavar="FILE", help=habits.config_help(command))
    return parser


def configure_output(args: argparse.Namespace) -> None:
    """Log nnd-suites' own lines to stderr at the chosen level; one progress bar (ours), and
    plain progress lines instead when stderr is not a terminal, so that logs of a batch job hold
    no escape codes."""
    level = args.log_level or ("debug" if args.verbose > 1 else "info" if args.verbose else None)
    # -v and -vv are about nnd-suites' own lines: other libraries keep to their warnings (and
    # transformers, whose info level dumps every model config, to its errors).
    logging.basicConfig(
        level=logging.WARNING,
        format="nnd-suites %(levelname)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
    logging.getLogger("nnd_suites").setLevel(getattr(logging, (level or "warning").upper()))
    # The libraries below read these when first imported (the CLI imports them lazily).
    for variable in ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(variable, "1")
    verbosity = os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    # transformers reads the variable once, when first imported: a process that imported it
    # earlier (a notebook, a test, a caller of main()) keeps its level, and under CI=1 its
    # logger propagates to the root handler above, so its warnings would reach stderr as ours.
    transformers_level = logging.getLevelName(verbosity.upper())
    if isinstance(transformers_level, int):
        logging.getLogger("transformers").setLevel(transformers_level)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    habits.unknown_command(parser, argv)
    argv = habits.expand_config(parser, argv)
    habits.refuse_unknown_options(parser, argv)
    args, extras = parser.parse_known_args(argv)
    command = parser.commands[args.command]
    if extras:  # with a suggestion for each option known by another name here
        command.error(habits.unrecognized(command, extras))
    if hasattr(args, "model_args"):
        habits.apply_model_args(command, args)
    configure_output(args)
    try:
        status = int(args.func(args) or 0)
        # written now, not at exit: a buffered stdout (no PYTHONUNBUFFERED) whose reader left
        # would fail in the interpreter's last flush, printing a traceback and exiting 120
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # `nnd-suites list | head`: the reader left; stop quietly like other Unix tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except NNDError as exc:
        hint = _catalogue_hint(exc)
        print(f"nnd-suites {args.command}: error: {exc}{hint}", file=sys.stderr)
        return exc.exit_status
    except OSError as exc:  # a file the command reads or writes, named (never a traceback)
        where = f" {printable(str(exc.filename))}" if exc.filename else ""
        print(
            f"nnd-suites {args.command}: error: cannot use{where}: {exc.strerror or exc}; check "
            "the path and its permissions",
            file=sys.stderr,
        )
        return NNDError.exit_status
    except KeyboardInterrupt:
        # under --no-cache no score was written anywhere: saying it is kept would mislead
        kept = (
            "no score was kept (--no-cache)"
            if getattr(args, "no_cache", False)
            else ("completed work is kept in the cache")
        )
        print(f"interrupted; {kept}", file=sys.stderr)
        return 130


def _catalogue_hint(exc: NNDError) -> str:
    """A catalogue suite's name given as an adapter or a suite (README's catalogue table
    lists gpt3_summ_bbc; `build gpt3_summ_bbc` only said "did you mean 'gpt3_summ'")."""
    if not (isinstance(exc, UnknownItemError) and exc.kind in ("adapter", "suite")):
        return ""
    from nnd_suites.catalogue.entries import how_to_build  # lazy: only for this error

    try:
        hint = how_to_build(str(exc.name))
    except NNDError:  # a broken catalogue must not hide the error being reported
        return ""
    return f"; {hint}" if hint else ""


if __name__ == "__main__":
    sys.exit(main())
