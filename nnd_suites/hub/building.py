"""Building suites into a dataset folder: a suite built (or transformed) with ``out`` named after
it in a folder that holds nnd-suites' card is written as one of that folder's configs and the card
lists it (``build --out``, ``build --all``, ``transform --out``). Building itself is
:mod:`nnd_suites.builder.suites`, which never reaches the Hub."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nnd_suites.builder import suites as building
from nnd_suites.builder.adapter import ADAPTERS, Adapter, get_adapter
from nnd_suites.errors import OutputFolderError
from nnd_suites.hub.card_reading import card_config_names
from nnd_suites.hub.export import adding_configs, holds_nnd_card
from nnd_suites.hub.layout import validate_config_name
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
    if not _joins_dataset_folder(Path(out), suite_name):
        return building.build_suite(adapter, source, out, name=name, **options)
    check_output_folder(out, "suite")  # before reading the source: a foreign folder costs nothing
    suite = building.build_suite(adapter, source, name=name, **options)
    _add_config(suite, Path(out), validated=True)  # built just now
    return suite


def save_suite(suite: Suite, out: str | Path, *, validated: bool = False) -> Path:
    """``suite.save(out)``, where an ``out`` named after the suite in a dataset folder is written
    as one of its configs and the card lists it (``build --out``, ``transform --out``);
    ``validated``: as :meth:`Suite.save`."""
    if not _joins_dataset_folder(Path(out), suite.name):
        return suite.save(out, validated=validated)
    return _add_config(suite, Path(out), validated=validated)


def _add_config(suite: Suite, out: Path, *, validated: bool = False) -> Path:
    """Write ``suite`` as config ``out`` of the dataset folder ``out.parent`` (which
    :func:`_joins_dataset_folder` found), under its lock, and rewrite its card (``validated``:
    as :meth:`Suite.save`)."""
    with adding_configs(out.parent, [suite.name], leave_out_misnamed=True) as dataset:
        return dataset.add(suite, validated=validated)


def _joins_dataset_folder(out: Path, name: str) -> bool:
    """Whether ``out`` is a config of a dataset folder: its parent holds the card nnd-suites
    writes (``build --all``, ``export``), and it is named after the suite (configs are; a suite
    folder named otherwise stays out of the card). The suite is then written as a config and
    the card rewritten. A parent without a card, or with a README.md of its own (a project's),
    is left as it is. A suite of another name never replaces a config the card lists: the card
    would name that config, and `datasets` read this suite's rows under it."""
    if not holds_nnd_card(out.parent):
        return False
    if out.name != name:
        # ignoring case: on macOS and Windows file systems the folders are one
        listed = {config.lower(): config for config in card_config_names(out.parent)}
        if out.name.lower() in listed:
            raise OutputFolderError(
                f"{out}: config {listed[out.name.lower()]!r} of the dataset folder {out.parent} "
                f"(its card lists it; config names differ ignoring case), and suite {name!r} "
                f"written there would be read as that config; nothing was written: write it "
                f"to {out.parent / name}, or move {out} away first"
            )
        return False
    validate_config_name(name)
    return True


def build_shipped_suites(
    parent: str | Path, *, skip_malformed: bool = False
) -> Iterator[tuple[str, Suite | None]]:
    """Build every built-in adapter whose source ships with nnd-suites into ``parent/NAME``,
    yielding ``(name, suite)`` as each is written, and ``(name, None)`` for an adapter that
    ships no source (it needs one given). ``parent`` is a dataset folder: its card (README.md)
    lists every config there, those built and any other (``datasets.load_dataset(parent,
    NAME)`` reads each; a suite folder not named after its suite is left out,
    :func:`nnd_suites.hub.export.misnamed_suites`), and a README.md nnd-suites did not write
    stops the build. Every target folder, the card and the configs kept are checked before the
    first build."""
    shipped = {name: cls.default_source_path() is not None for name, cls in ADAPTERS.items()}
    names = [name for name, has_source in shipped.items() if has_source]
    with adding_configs(parent, names, leave_out_misnamed=True) as dataset:
        for name, has_source in shipped.items():
            if not has_source:
                yield name, None
                continue
            suite = building.build_suite(name, skip_malformed=skip_malformed)
            dataset.add(suite, validated=True)  # built just now
            yield name, suite
