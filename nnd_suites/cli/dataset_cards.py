"""What `build` and `transform` say after writing into a dataset folder (one holding the card of
``build --all`` or ``export``): whether its card lists the suite, why not, and how to load it.
The Hub layer (datasets) is imported when a command says it, never at start-up."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import TYPE_CHECKING

from nnd_suites.cli.printing import say
from nnd_suites.infra.formatting import plural

if TYPE_CHECKING:
    from nnd_suites.suite.manifest import SuiteManifest


def card_of(out: Path, suite_name: str) -> dict[str, object] | None:
    """After a suite was written to ``out`` (:mod:`nnd_suites.hub.building`): None when ``out``
    is in no dataset folder, else its card and whether it now lists the suite (a folder not
    named after its suite is left out)."""
    from nnd_suites.hub.export import holds_nnd_card  # Hub layer: not at start-up
    from nnd_suites.hub.layout import CARD_FILE  # Hub layer: not at start-up

    if not holds_nnd_card(out.parent):
        return None
    return {"file": str(out.parent / CARD_FILE), "lists_suite": out.name == suite_name}


def replacing(before: SuiteManifest | None, now: SuiteManifest) -> str | None:
    """How a config written over one whose manifest was ``before`` compares with it (None: it
    replaced none): never unsaid, since another build's config is gone."""
    if before is None:
        return None
    if before.content_hash == now.content_hash:
        return "written again, the same tests as the config it replaced"
    return (
        f"written, replacing a config of {plural(before.counts.pairs, 'test')} whose content "
        f"hash differs: {before.content_hash[:12]} before, {now.content_hash[:12]} now"
    )


def formers(parent: Path) -> dict[str, SuiteManifest | None]:
    """The manifest of each config in ``parent`` before a build of several suites into it
    (``--all``, ``--catalogue``), for what :func:`wrote` says of the one replacing it."""
    from nnd_suites.hub.export import former_manifest  # Hub layer: not at start-up
    from nnd_suites.hub.layout import exported_configs  # Hub layer: not at start-up

    return {name: former_manifest(parent / name) for name in exported_configs(parent)}


def config_replacing(out: Path, before: SuiteManifest | None, now: SuiteManifest) -> str | None:
    """:func:`replacing` when ``out`` was written as a config of a dataset folder (``before``:
    the manifest there before the write), else None."""
    card = card_of(out, now.name)
    return replacing(before, now) if card and card["lists_suite"] else None


def wrote(
    out: Path, what: str, before: SuiteManifest | None, now: SuiteManifest, then: str = ""
) -> None:
    """'wrote OUT (WHAT)THEN', and what it replaced (:func:`config_replacing`)."""
    state = config_replacing(out, before, now)
    say(f"wrote {out} ({what}{f'; {state}' if state else ''}){then}")


def say_card_of(out: Path, suite_name: str, fix: str | None = None) -> None:
    """:func:`card_of` said: whether the card lists the suite, or why not and how to ``fix`` it
    (default: rebuild it under the folder's name)."""
    card = card_of(out, suite_name)
    if card is None:
        return
    if card["lists_suite"]:  # written as a config of a dataset folder
        say(f"updated {card['file']}, the card of the configs beside it")
        say_how_to_load(out.parent, suite_name)
    else:
        _say_left_out(out.parent, {out.name: suite_name}, fix)


def say_card(parent: Path) -> None:
    """After `build --all` or `build --catalogue` wrote ``parent``: the configs its card lists."""
    from nnd_suites.hub.export import misnamed_suites  # Hub layer: not at start-up
    from nnd_suites.hub.layout import CARD_FILE, exported_configs

    left_out = misnamed_suites(parent)
    configs = [name for name in exported_configs(parent) if name not in left_out]
    say(f"wrote {parent / CARD_FILE}, the dataset card of {plural(len(configs), 'config')}:")
    say(f"  {', '.join(configs)}")
    _say_left_out(parent, left_out)
    say_how_to_load(parent, configs[0])


def _say_left_out(folder: Path, left_out: dict[str, str], fix: str | None = None) -> None:
    from nnd_suites.hub.layout import CARD_FILE  # Hub layer: not at start-up

    for name, suite_name in left_out.items():
        say(
            f"not in {folder / CARD_FILE}: {folder / name} holds suite {suite_name!r}, and a "
            f"config is named after its suite ({fix or _remake(folder, name)}, or move it away)"
        )


def _remake(folder: Path, name: str) -> str:
    """How to write the suite of ``folder/name`` again under the folder's name: `build`, or for
    a transformed suite (its manifest records the transformation) `transform`."""
    from nnd_suites.suite.manifest import SuiteManifest  # pydantic: not at start-up

    made = SuiteManifest.from_directory(folder / name).transformation
    if made is None:
        return f"build it with --name {name}"
    return f"transform its parent {made.parent_suite} again ({made.name}) with --name {name}"


def say_how_to_load(folder: Path, config: str) -> None:
    """The call that reads ``config`` of the dataset folder ``folder``: by folder and config, or,
    where the folder's path holds ``[``, ``*`` or ``?`` (which `datasets` reads as a glob, finding
    no file), by the config's data files, the path escaped."""
    from nnd_suites.suite.storage import DATA_GLOB, SPLIT  # pyarrow: not at start-up

    where = str(folder.resolve())
    if glob.has_magic(where):
        files = {SPLIT: f"{glob.escape(where)}/{config}/{DATA_GLOB}"}
        given = f'"parquet", data_files={_text(files)}'
    else:
        given = f"{_text(folder)}, {_text(config)}"
    say(f"load one with datasets.load_dataset({given}, split={_text(SPLIT)})")
    if glob.has_magic(where):
        say(f"  (by its data files: datasets would read the path {_text(folder)} as a glob)")


def _text(value: object) -> str:
    """``value`` as a Python literal in double quotes (what the printed calls are written in)."""
    return json.dumps(value if isinstance(value, dict) else str(value), ensure_ascii=False)
