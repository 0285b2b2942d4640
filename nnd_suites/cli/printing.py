"""What the commands print. Labels, system names, categories and file names come from the data,
and a source can hold terminal escape sequences: every line passes through
:func:`nnd_suites.errors.printable` (JSON through its JSON-safe form, the same value)."""

from __future__ import annotations

from typing import IO

from nnd_suites.errors import printable


def say(*values: object, sep: str = " ", end: str = "\n", file: IO[str] | None = None) -> None:
    """``print`` with terminal controls escaped."""
    print(printable(sep.join(str(value) for value in values)), end=end, file=file)


def say_json(document: str) -> None:
    """Print a JSON document with terminal controls written as JSON escapes."""
    print(printable(document, json=True))
