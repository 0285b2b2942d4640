"""The command line's parser: argparse has no public way to list a parser's options or its
sub-commands, which ``--config``, ``--model_args`` and the suggestions in
:mod:`nnd_suites.cli.habits` need, so :class:`Parser` keeps them as they are added; and the
lm-evaluation-harness spellings every command takes beside its own."""

from __future__ import annotations

import argparse
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: lm-evaluation-harness's spellings of our options -> ours, one table for the command line
#: (each command that has ours takes its spelling too) and ``--config`` keys alike.
OPTION_ALIASES = {
    "--output_path": "--out",
    "--batch_size": "--batch-size",
    "--log_samples": "--log-samples",
    "--write_out": "--log-samples",
}


class _StoreOnce(argparse.Action):
    """argparse's ``store``, refusing an option given twice in one command line (``--repo a/b
    --repo c/d``, ``--out a --output_path b``): argparse keeps the last value without a word."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._given: weakref.WeakValueDictionary[int, argparse.Namespace] = (
            weakref.WeakValueDictionary()
        )

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        if self._given.get(id(namespace)) is namespace:
            before = getattr(namespace, self.dest)
            parser.error(
                f"{'/'.join(self.option_strings)} is given twice ({before} and {values}), and "
                "only one would be used; give it once"
            )
        self._given[id(namespace)] = namespace
        setattr(namespace, self.dest, values)


def given_path(text: str) -> Path:
    """``type=Path``, refusing an empty path: ``Path("")`` is the current folder, so ``--out
    "$OUT"`` with ``OUT`` unset would write there."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"an empty path ({text!r}: an unset variable?); give a path ('.' for this folder)"
        )
    return Path(text)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that keeps its options and sub-commands, and gives each option
    that :data:`OPTION_ALIASES` names its lm-eval spelling too (shown in
    --help, named in its usage errors: ``--batch-size/--batch_size: 0 is below 1``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        #: its options in the order added -> the ``action=`` each was added with ("store", ...)
        self.options: dict[argparse.Action, str] = {}
        #: its sub-commands by name, once :meth:`add_subparsers` is called
        self.commands: dict[str, Parser] = {}
        super().__init__(*args, **kwargs)

    def add_argument(self, *names: Any, **kwargs: Any) -> argparse.Action:
        return self._kept(super().add_argument, names, kwargs)

    def add_argument_group(self, *args: Any, **kwargs: Any) -> Any:
        return self._keeping(super().add_argument_group(*args, **kwargs))

    def add_mutually_exclusive_group(self, **kwargs: Any) -> Any:
        return self._keeping(super().add_mutually_exclusive_group(**kwargs))

    def _keeping(self, group: Any) -> Any:
        add_to_group = group.add_argument  # a group's options are its parser's too
        group.add_argument = lambda *names, **kw: self._kept(add_to_group, names, kw)
        return group

    def _kept(self, add: Callable[..., argparse.Action], names: tuple, kwargs: dict) -> Any:
        names += tuple(alias for alias, ours in OPTION_ALIASES.items() if ours in names)
        kind = kwargs.get("action", "store")
        if kind == "store" and any(str(name).startswith("-") for name in names):
            kwargs["action"] = _StoreOnce
        if kwargs.get("type") is Path:
            kwargs["type"] = given_path
        action = add(*names, **kwargs)
        if action.option_strings:
            self.options[action] = kind
        return action

    def add_subparsers(self, **kwargs: Any) -> Any:
        subparsers = super().add_subparsers(parser_class=Parser, **kwargs)
        self.commands = subparsers.choices
        return subparsers

    def option(self, dest: str) -> argparse.Action | None:
        """The option that sets ``dest`` (its first, where several do)."""
        return next((action for action in self.options if action.dest == dest), None)

    @property
    def option_strings(self) -> list[str]:
        return [name for action in self.options for name in action.option_strings]


class Commands:
    """What each command module's ``register`` is given: argparse's sub-parsers, each command's
    description (``COMMAND --help``'s first line) by default its help in ``nnd-suites -h``."""

    def __init__(self, parser: Parser) -> None:
        self.subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add_parser(self, name: str, *, help: str, **kwargs: Any) -> Parser:
        kwargs.setdefault("description", help[0].upper() + help[1:] + ".")
        return self.subparsers.add_parser(name, help=help, **kwargs)
