"""Building suites into a dataset folder: a suite built (or transformed) with ``out`` named after
it in a folder that holds nnd-suites' card is written as one of that folder's configs and the card
lists it (``build --out``, ``build --all``, ``transform --out``). Building itself is
:mod:`nnd_suites.builder.suites`, which never reaches the Hub."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nnd_suites.builder import suites as building
from nnd_suites.builder.adapter import Adapter, get_adapter, shipping_their_source
from nnd_suites.errors import OutputFolderError
from nnd_suites.hub.card_reading import card_config_names
from nnd_suites.hub.export import DatasetFolder, adding_configs, holds_nnd_card
from nnd_suites.infra.output_folder import check_output_folder
from nnd_suites.suite import Suite


def build_suite(
    adapter: str | Adapter,
    source: str | Path | None = None,
    out: str | Path | None = None,
    *,
    name: str | None = None,
    **options: Any,
) -> Suite:
    """:func:`nnd_suites.builder.suites.build_suite` (same arguments), where an ``out`` named after
    the suite in a dataset folder (one holding the card of ``build --all`` or ``export``) is
    written as one of its configs, and the card then lists it too."""
    if out is None:
        return building.build_suite(adapter, source, name=name, **options)
    if name is not None:  # before the build: the manifest would refuse it at the end
        building.check_suite_name(name)
    suite_name = name or (get_adapter(adapter) if isinstance(adapter, str) else adapter).name
    # out is checked (a dataset folder locked) before the source is read: a refusal costs nothing
    with claimed_suite_folder(out, suite_name) as folder:
        suite = building.build_suite(adapter, source, name=name, **options)
        folder.add(suite, validated=True)  # built just now
    return suite


@dataclass(frozen=True)
class SuiteFolder:
    """A suite folder :func:`check_output_folder` let through; ``add`` writes it as a whole."""

    path: Path

    def add(self, suite: Suite, *, validated: bool = False) -> Path:
        return suite.save(self.path, validated=validated)


@contextlib.contextmanager
def claimed_suite_folder(out: str | Path, name: str) -> Iterator[SuiteFolder | DatasetFolder]:
    """Where suite ``name`` is written (``add``), ``out`` checked once, here. Named after the
    suite in a folder holding the card nnd-suites writes (``build --all``, ``export``), it is a
    config of that dataset folder: held under its lock, its leftovers cleaned and configs
    checked, its card rewritten (:func:`adding_configs`). Else it is a suite folder of its own
    (a parent without a card, or with a project's README.md, is left as it is; a folder named
    otherwise stays out of the card), but never a config the card lists: the card would name
    that config, and `datasets` read this suite's rows under it."""
    out = Path(out)
    ours = holds_nnd_card(out.parent)
    if ours and out.name == name:
        with adding_configs(out.parent, [name], leave_out_misnamed=True, kind="suite") as dataset:
            yield dataset
        return
    # ignoring case: on macOS and Windows file systems the folders are one
    listed = {config.lower(): config for config in card_config_names(out.parent)} if ours else {}
    if out.name.lower() in listed:
        raise OutputFolderError(
            f"{out}: config {listed[out.name.lower()]!r} of the dataset folder {out.parent} "
            f"(its card lists it; config names differ ignoring case), and suite {name!r} "
            f"written there would be read as that config; nothing was written: write it "
            f"to {out.parent / name}, or move {out} away first"
        )
    check_output_folder(out, "suite")
    yield SuiteFolder(out)


def build_shipped_suites(parent: str | Path, **options: Any) -> Iterator[tuple[str, Suite | None]]:
    """Build every built-in adapter whose source ships with nnd-suites into ``parent/NAME`` with
    ``options`` of :func:`build_suite` (skip_malformed, max_pairs, ...), yielding ``(name,
    suite)`` as each is written, and ``(name, None)`` for an adapter that ships no source (it
    needs one given). ``parent`` is a dataset folder: its card (README.md)
    lists every config there, those built and any other (``datasets.load_dataset(parent,
    NAME)`` reads each; a suite folder not named after its suite is left out,
    :func:`nnd_suites.hub.export.misnamed_suites`), and a README.md nnd-suites did not write
    stops the build. Every target folder, the card and the configs kept are checked before the
    first build."""
    shipped = shipping_their_source()
    names = [name for name, has_source in shipped.items() if has_source]
    with adding_configs(parent, names, leave_out_misnamed=True) as dataset:
        for name, has_source in shipped.items():
            if not has_source:
                yield name, None
                continue
            suite = building.build_suite(name, **options)
            dataset.add(suite, validated=True)  # built just now
            yield name, suite
