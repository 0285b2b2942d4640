"""The ``# CHECK`` notes ``nnd-suites new-adapter --declarative`` leaves on each guess of its
proposal (a column, the template, the rule's gap, ...) in the source.yaml and the quality map: the
contributor deletes each once decided. The harness names each one left; a build from them warns,
and ``export`` and ``publish`` refuse the suite (a dataset folder is published as it is)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from nnd_suites.builder.adapter import ADAPTERS, Adapter
from nnd_suites.declarative.model import DECLARATION_FILE
from nnd_suites.errors import UnknownItemError
from nnd_suites.quality_map import QualityMap

if TYPE_CHECKING:  # a type only: the suite package imports pyarrow, at every CLI start
    from nnd_suites.suite import SuiteManifest


def check_notes(text: str) -> list[tuple[int, str, str]]:
    """The ``# CHECK`` notes of a proposed source.yaml, one each: (line, CHECK, what to check), a
    note wrapped over comment lines joined (one of its own, or one after a key), a guessed key's
    note after its dotted key and value.
    A ``# TODO`` comment is one too (proposals before the CHECK notes wrote the gap so)."""
    notes: list[tuple[int, str, str]] = []
    keys: list[tuple[int, str]] = []  # (indent, key) of the keys enclosing the line
    wrapped = False
    for number, line in enumerate(text.splitlines(), 1):
        if wrapped and line.lstrip(" ").startswith("#   "):  # at a key's indent too
            notes[-1] = (*notes[-1][:2], f"{notes[-1][2]} {line.lstrip(' ')[4:]}")
            continue
        code, mark, note = [*re.split(r"# (CHECK|TODO):? ", line, maxsplit=1), "", ""][:3]
        wrapped = False  # a note just begun: the comment lines under it continue it
        if note and not code.strip():
            notes.append((number, mark, note))
            wrapped = True
        elif found := re.match(r"( *)([\w.-]+):(.*)", code):
            keys = [k for k in keys if k[0] < len(found[1])] + [(len(found[1]), found[2])]
            value = f" = {found[3].strip()}" if found[3].strip() else ""
            if note:
                notes.append((number, mark, f"{'.'.join(k for _, k in keys)}{value}: {note}"))
                wrapped = True
    return notes


def guess_problems(cls: type[Adapter], map_name: str | None = None) -> list[str]:
    """Each ``# CHECK`` note left in the adapter's source.yaml and its quality map (only when
    ``map_name``, the map a build used, is the adapter's own): at its line, what to decide. A
    note the contributor deletes is a guess confirmed."""
    rule = QualityMap.load(cls.quality_map)
    own = map_name in (None, rule.name)
    paths = [cls.folder() / DECLARATION_FILE] + [Path(rule.origin)] * own
    return [
        f"{path}:{number}: {mark} {what} (decide, then delete the {mark} note)"
        for path in paths
        if path.is_file()
        for number, mark, what in check_notes(path.read_text("utf-8"))
    ]


def built_from_guesses(manifest: SuiteManifest, lines: bool = False) -> str | None:
    """What a suite's build left unconfirmed: the CHECK notes still in the files of the adapter
    that built it, as this nnd-suites loads it (None: none, or an adapter not loaded here); one
    line, or with ``lines`` a note a line."""
    try:
        cls = ADAPTERS.get(manifest.adapter.name)
    except UnknownItemError:  # built elsewhere (a Hub suite): its files are not here
        return None
    notes = guess_problems(cls, manifest.quality_map.name)
    if not notes:
        return None
    return (
        f"suite {manifest.name!r} was built from guesses of `nnd-suites new-adapter "
        f"--declarative` whose notes adapter {cls.name!r} still holds (export and publish refuse "
        "it until each is decided and the suite is built again):"
    ) + ("".join(f"\n  {note}" for note in notes) if lines else " " + "; ".join(notes))
