"""The command line uses argparse's public API only: a private name (``parser._actions``,
``argparse._SubParsersAction``, ...) may change in any Python release without notice."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import nnd_suites

PACKAGE = Path(nnd_suites.__file__).parent


def argparse_private_names() -> set[str]:
    """Every ``_name`` of the argparse module and of the objects it hands out."""
    parser = argparse.ArgumentParser()
    handed_out = [
        parser,
        parser.add_argument("--option"),
        parser.add_argument_group("group"),
        parser.add_mutually_exclusive_group(),
        parser.add_subparsers(),
        argparse.Namespace(),
        argparse.HelpFormatter("prog"),
    ]
    names = {name for thing in handed_out for name in [*vars(thing), *dir(type(thing))]}
    names |= set(dir(argparse))
    return {name for name in names if name.startswith("_") and "__" not in name}


def private_uses(tree: ast.AST, private: set[str]) -> list[str]:
    """``x._name``, ``getattr(x, "_name")`` and ``from argparse import _name`` in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in private:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "argparse":
            found += [f"{node.lineno}: {a.name}" for a in node.names if a.name.startswith("_")]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in private
        ):
            found.append(f"{node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
    return found


def test_the_check_finds_what_the_cli_used_to_reach_into():
    private = argparse_private_names()
    assert {"_actions", "_option_string_actions", "_choices_actions", "_AppendAction"} <= private
    code = (
        "from argparse import _StoreConstAction\n"
        "isinstance(a, argparse._SubParsersAction)\n"
        "parser._actions\n"
        "getattr(command, '_option_string_actions')\n"
    )
    lines = sorted(use.split(":")[0] for use in private_uses(ast.parse(code), private))
    assert lines == ["1", "2", "3", "4"]


def test_no_module_uses_argparses_private_names():
    private = argparse_private_names()
    uses = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if (found := private_uses(ast.parse(path.read_text("utf-8")), private))
    }
    assert uses == {}
