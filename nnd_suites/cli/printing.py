"""What the commands print. Labels, system names, categories and file names come from the data,
and a source can hold terminal escape sequences: every line passes through
:func:`nnd_suites.errors.printable` (JSON through its JSON-safe form, the same value)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

from nnd_suites.errors import printable
from nnd_suites.infra.formatting import count, plural, rate_with_interval

if TYPE_CHECKING:
    from nnd_suites.statistics.outcomes import Rate
    from nnd_suites.suite import SuiteManifest

#: why a test is left out of a pass rate (the one outcome rule's two kinds)
LEFT_OUT_WHY = {
    "degenerate": "the same text twice",
    "skipped": "a candidate longer than the window",
}


def say(*values: object, sep: str = " ", end: str = "\n", file: IO[str] | None = None) -> None:
    """``print`` with terminal controls escaped."""
    print(printable(sep.join(str(value) for value in values)), end=end, file=file)


def say_json(document: str) -> None:
    """Print a JSON document with terminal controls written as JSON escapes."""
    print(printable(document, json=True))


def left_out(rate: Rate, why: bool = True) -> str:
    """The tests a pass rate leaves out, ``19 degenerate (the same text twice), 22 skipped
    (...)`` ('' when none)."""
    parts = []
    for kind, reason in LEFT_OUT_WHY.items():
        if number := getattr(rate, kind):
            parts.append(f"{count(number)} {kind}" + (f" ({reason})" if why else ""))
    return ", ".join(parts)


def rate_summary(rate: Rate) -> str:
    """A pass rate with what it is over: the rated tests (pass, fail, tie), the degenerate and
    skipped ones named as left out, so that no count beside the rate reads as its denominator."""
    line = (
        f"{rate_with_interval(rate.pass_rate, rate.ci)} of {plural(rate.n, 'rated test')} "
        f"({count(rate.passed)} passed, {count(rate.failed)} failed, {plural(rate.ties, 'tie')})"
    )
    missing = left_out(rate)
    return f"{line}; left out: {missing}" if missing else line


def say_cleaned(folder: Path, removed: list[str]) -> None:
    """Name what killed writes had left in ``folder`` and a command removed (nothing if none)."""
    if removed:
        say(f"removed what killed nnd-suites writes left in {folder}: {', '.join(removed)}")


def say_not_publishable(manifest: SuiteManifest) -> None:
    """Say why ``export`` and ``publish`` would refuse a suite that is valid (``build`` and
    ``validate`` say it now, not at the end of the work): metadata that still holds the TODO of
    ``new-adapter``, or guesses its adapter's files still mark ``# CHECK``."""
    # lazy: it reads the adapter's files and quality maps, which --help and list do not need
    from nnd_suites.declarative.notes import built_from_guesses

    placeholders = manifest.placeholders()
    if placeholders:
        say(
            f"note: its {', '.join(placeholders)} still "
            f"{'hold' if len(placeholders) > 1 else 'holds'} the TODO of `nnd-suites "
            "new-adapter`: export and publish refuse the suite until that is filled in"
        )
    guesses = built_from_guesses(manifest, lines=True)
    if guesses:  # not an error: building to look at the result is how one decides
        say(f"warning: {guesses}", file=sys.stderr)
