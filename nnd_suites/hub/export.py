"""Export suites to a Hub-ready dataset folder: one config per suite, parquet, manifest, card."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from datasets import config as datasets_config

from nnd_suites.declarative.notes import built_from_guesses
from nnd_suites.errors import NNDError, OutputFolderError, SuiteValidationError
from nnd_suites.hub.card import build_card
from nnd_suites.hub.card_reading import card_config_names, card_has_tag, unreadable_card
from nnd_suites.hub.configs import ConfigInfo, describe_config, read_config
from nnd_suites.hub.layout import (
    CARD_FILE,
    CARD_TAG,
    check_configs_unique,
    check_unique,
    exported_configs,
    is_exported_config,
    validate_config_name,
)
from nnd_suites.hub.remote import check_repo_id
from nnd_suites.infra.atomic import atomic_write_text, folder_lock
from nnd_suites.infra.collector import collector_paused
from nnd_suites.infra.formatting import plural
from nnd_suites.infra.output_folder import check_output_folder, first_five, shown_name
from nnd_suites.suite import CANDIDATES_FILE, MANIFEST_FILE, Suite, SuiteManifest
from nnd_suites.suite.manifest import MAP_PLACEHOLDER, config_name_problem
from nnd_suites.suite.storage import data_files, has_manifest

logger = logging.getLogger(__name__)


@dataclass
class ExportResult:
    folder: Path
    written: list[str]  # configs written by this export
    configs: list[ConfigInfo] = field(default_factory=list)  # every config the card lists
    #: what killed writes had left in the folder, removed first (see :func:`adding_configs`)
    cleaned: list[str] = field(default_factory=list)
    #: configs this export replaced: name -> the manifest of the config that was there before
    replaced: dict[str, SuiteManifest] = field(default_factory=dict)

    @property
    def config_names(self) -> list[str]:
        return [c.name for c in self.configs]


@collector_paused()
def export_suites(
    suites: Iterable[Suite], folder: str | Path, repo_id: str | None = None
) -> ExportResult:
    """Write each suite as a config of the dataset folder and regenerate its card.

    Configs already in ``folder`` are kept (a suite of the same name replaces its config), each
    one fully validated first (data, candidates, content hash): a damaged config is an error, never
    listed. A sub-folder that is not a config, and a card nnd-suites did not write, are never
    replaced. Writers of one folder take turns (:func:`nnd_suites.infra.atomic.folder_lock`)
    and the card is computed under the lock, so concurrent exports all end up in it. Each config
    folder is swapped in atomically, then the card. ``repo_id`` only fills the card's examples.
    """
    suites = list(suites)
    if not suites:
        raise NNDError("nothing to export: give at least one suite")
    firsts: dict[str, Suite] = {}
    for suite in suites:
        try:
            suite.validate()
        except SuiteValidationError as exc:
            raise SuiteValidationError(f"cannot export: {exc}; rebuild the suite") from exc
        check_no_placeholders(suite)
        first = firsts.get(suite.name)  # the same object again, or a copy of it
        if first is not None and first.manifest.content_hash == suite.manifest.content_hash:
            raise NNDError(f"suite {suite.name!r} is given twice (the same tests); give it once")
        firsts.setdefault(suite.name, suite)
    with adding_configs(folder, [s.name for s in suites], repo_id) as dataset:
        for suite in suites:
            dataset.add(suite, validated=True)  # just now, above
    return ExportResult(
        folder=dataset.folder,
        written=dataset.written,
        configs=sorted(dataset.configs, key=lambda c: c.name),
        cleaned=dataset.cleaned,
        replaced=dataset.replaced,
    )


@dataclass
class DatasetFolder:
    """A dataset folder checked and held under its lock (see :func:`adding_configs`)."""

    folder: Path
    names: list[str]  # the configs this writer may write
    cleaned: list[str] = field(default_factory=list)  # leftovers of killed writes, removed
    kept: list[ConfigInfo] = field(default_factory=list)  # configs not replaced, validated
    #: suite folders left out of the card: folder name -> the suite it holds (named otherwise)
    left_out: dict[str, str] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)
    configs: list[ConfigInfo] = field(default_factory=list)  # what the card lists, once written
    replaced: dict[str, SuiteManifest] = field(default_factory=dict)  # name -> its former manifest

    def check(self, kind: str, leave_out_misnamed: bool) -> None:
        """Under the lock: :func:`check_takes`, and the configs kept valid (see adding_configs)."""
        folder = self.folder
        check_takes(folder, self.names, kind)
        misnamed = {n: s for n, s in misnamed_suites(folder).items() if n not in self.names}
        if misnamed and not leave_out_misnamed:  # not "damaged": a build left it there
            name, suite_name = next(iter(misnamed.items()))
            raise SuiteValidationError(
                f"{folder / name}: config {name!r} holds suite {suite_name!r}, and a config is "
                f"named after its suite; an export folder is published as it is, so rebuild it "
                f"with --name {name} (build, or transform for a transformed suite) or move it "
                f"out of {folder}"
            )
        self.left_out = misnamed
        self.kept = [
            validated_config(folder / n)
            for n in present_configs(folder)
            if n not in self.names and n not in misnamed
        ]
        check_configs_unique(folder, [c.name for c in self.kept] + self.names)

    def add(self, suite: Suite, *, validated: bool = False) -> Path:
        """Write ``suite`` as its config (swapped in atomically): the suite's folder as ``build``
        writes it (:mod:`nnd_suites.suite.storage`), under the suite's name; an existing folder
        is replaced only when it is a config or a suite. ``validated``: as :meth:`Suite.save`."""
        if suite.name not in self.names:  # the checks ran for these names only
            raise NNDError(f"suite {suite.name!r} is not one of {self.names} this writer checked")
        check_no_placeholders(suite)
        before = former_manifest(self.folder / suite.name)
        if before is not None:
            self.replaced[suite.name] = before
        path = suite.save(self.folder / suite.name, kind="export-config", validated=validated)
        self.written.append(suite.name)
        return path

    def write_card(self, repo_id: str | None) -> None:
        """The card of every config present: those kept, those written, and those this writer
        was to replace but never reached (an interrupted ``build --all``), still there whole."""
        written = [describe_config(self.folder / n) for n in self.written]
        self.configs = self.kept + written + self._not_reached()
        atomic_write_text(self.folder / CARD_FILE, build_card(self.configs, repo_id))

    def _not_reached(self) -> list[ConfigInfo]:
        found = []
        for name in self.names:
            if name in self.written or not is_exported_config(self.folder / name):
                continue
            try:
                found.append(validated_config(self.folder / name))
            except NNDError as exc:  # never raised over the error that stopped the writer
                logger.warning("%s left out of the card: %s", self.folder / name, exc)
        return found


def former_manifest(folder: Path) -> SuiteManifest | None:
    """The manifest of the suite a write to ``folder`` replaces (None: no manifest, or a damaged
    one: nothing to compare)."""
    with contextlib.suppress(NNDError):
        return SuiteManifest.from_directory(folder)
    return None


@contextlib.contextmanager
def adding_configs(
    folder: str | Path,
    names: list[str],
    repo_id: str | None = None,
    *,
    leave_out_misnamed: bool = False,
    kind: str = "export-config",
) -> Iterator[DatasetFolder]:
    """Check that ``folder`` can take configs ``names``, before its lock and again under it
    (:meth:`DatasetFolder.check`), keep holding it while the caller adds the suites (``export``,
    ``build --all``, a build into a dataset folder), and write the card of
    every config present at the end: after an error too, once a config was written, so the card
    always lists what the folder holds. What killed writers left in the folder (their temporary
    copies and locks) is cleaned first. Nothing is written when a check fails: a name that is no
    config name, a target sub-folder or a card nnd-suites did not write, a damaged config kept.
    A config is named after its suite: a suite folder named otherwise (``build --out
    suites/c300``, ``transform --out``) is an error, or with ``leave_out_misnamed`` (a build's
    own folder, not one being exported) left as it is, out of the card, in ``left_out``; ``kind``
    names the targets in a refusal."""
    if repo_id is not None:  # before anything is written: it goes into the card's snippets
        check_repo_id(repo_id)
    folder = Path(folder)
    names = [validate_config_name(name) for name in names]
    check_unique(names, "suite")
    # before the lock creates the folder, so that a refusal writes nothing (a path that is not
    # UTF-8, a folder inside a report); all again under the lock, as another writer may change
    # the folder until it is held. A killed export of another config left its temporary copy
    # and lock: only the next write of that config would clean them; cleaned first, since a
    # killed swap's config comes back
    check_takes(folder, names, kind)
    with folder_lock(folder, recover=True) as cleaned:
        if cleaned:  # never silent: the names are the folder's, and a user may wonder
            logger.warning(
                "removed what killed nnd-suites writes left in %s (their temporary copies and "
                "locks): %s",
                folder,
                ", ".join(cleaned),
            )
        dataset = DatasetFolder(folder, names, cleaned=cleaned)
        dataset.check(kind, leave_out_misnamed)
        try:
            yield dataset
        finally:
            if dataset.written:
                dataset.write_card(repo_id)


def check_takes(folder: Path, names: list[str], kind: str) -> None:
    """Whether ``folder`` may take configs ``names``: its metadata ours, each target a config or
    a suite (``kind`` names them in a refusal), nothing else there without our card."""
    check_metadata_is_ours(folder)
    for name in names:
        check_output_folder(folder / name, kind)
    check_only_suites_without_card(folder, names)


def present_configs(folder: Path) -> list[str]:
    """The configs ``folder`` holds: its config folders, and those its card lists whose folder
    is still there though a file is gone (a missing shard or manifest would otherwise drop the
    config from the next card, or from what the folder stands for, without a word; reading it
    names what is missing). A config folder or file that is a link is refused: the folder is
    published as it is, and a link would send what lies outside it (a linked folder, which an
    upload does not follow, a card listing a config whose files never reach the Hub)."""
    listed = [
        name
        for name in card_config_names(folder)
        if config_name_problem(name) is None and os.path.lexists(folder / name)
    ]
    names = sorted(set(exported_configs(folder)) | set(listed))
    for config in (folder / name for name in names):
        files = [config, config / MANIFEST_FILE, config / CANDIDATES_FILE, *data_files(config)]
        link = next((path for path in files if path.is_symlink()), None)
        if link is not None:
            raise NNDError(
                f"{link} is a symbolic link (to {os.readlink(link)}): a dataset folder is "
                "published as it is, never with what lies outside it; copy the files into "
                f"{config}, or give that suite by its own folder"
            )
    return names


def misnamed_suites(folder: str | Path) -> dict[str, str]:
    """The suite folders of ``folder`` that hold a suite of another name (folder name -> suite
    name): no config of its card, though each loads as a suite folder of its own."""
    found = {}
    for name in exported_configs(Path(folder)):
        try:
            suite_name = SuiteManifest.from_directory(Path(folder) / name).name
        except NNDError:  # a damaged manifest: reported by the config checks, not here
            continue
        if suite_name != name:
            found[name] = suite_name
    return found


def holds_nnd_card(folder: str | Path) -> bool:
    """Whether ``folder`` is a dataset folder nnd-suites wrote: its README.md is our card (a
    user's README, even an unreadable one (with a warning), is not)."""
    card_path = Path(folder) / CARD_FILE
    try:
        return card_path.is_file() and card_has_tag(card_path, CARD_TAG)
    except NNDError as exc:  # not a word would say why its configs are read unchecked
        unreadable_card(str(exc))
        return False


def refresh_card(folder: str | Path, repo_id: str | None = None) -> list[ConfigInfo]:
    """Regenerate the card of an export folder from every config present; return them."""
    folder = Path(folder)
    check_metadata_is_ours(folder)
    if not folder.is_dir():
        raise NNDError(f"{folder}: no such folder; give an export folder")
    with folder_lock(folder):
        check_only_suites_without_card(folder, [])
        configs = [validated_config(folder / name) for name in present_configs(folder)]
        check_configs_unique(folder, [c.name for c in configs])
        if not configs:
            raise NNDError(f"{folder}: no exported suite config to describe")
        atomic_write_text(folder / CARD_FILE, build_card(configs, repo_id))
    return configs


def validated_config(config_dir: Path) -> ConfigInfo:
    """A config of an export folder, read whole and validated (a truncated file, edited rows or
    missing candidates are errors), then described for the card."""
    try:
        read_config(config_dir)
    except SuiteValidationError as exc:
        raise SuiteValidationError(
            f"config {config_dir.name!r} in {config_dir.parent} is damaged ({exc}); "
            "export that suite again, or move the folder away"
        ) from exc
    return describe_config(config_dir)


def check_no_placeholders(suite: Suite) -> None:
    """Stop before a suite whose metadata still holds the scaffold's ``TODO`` becomes a config
    (the folder's card would publish "License: TODO"), or one built from guesses its adapter's
    files still mark ``# CHECK``."""
    fields = suite.manifest.placeholders()
    guesses = None if fields else built_from_guesses(suite.manifest)
    if guesses:
        raise SuiteValidationError(
            f"{guesses}; a dataset folder is published as it is: the suite was not written"
        )
    if not fields:
        return
    manifest = suite.manifest
    to_fill = []
    if any(field != MAP_PLACEHOLDER for field in fields):
        to_fill.append(
            f"the metadata of adapter {manifest.adapter.name!r} (source.yaml or adapter.py)"
        )
    if MAP_PLACEHOLDER in fields:
        to_fill.append(f"the description of quality map {manifest.quality_map.name!r}")
    raise SuiteValidationError(
        f"suite {suite.name!r}: its {', '.join(fields)} still "
        f"{'hold' if len(fields) > 1 else 'holds'} the TODO that `nnd-suites new-adapter` "
        f"wrote, and a dataset folder is published as it is; the suite was not written: fill in "
        f"{' and '.join(to_fill)}, then build the suite again"
    )


def is_nnd_card(card_path: Path) -> bool:
    """Whether the card at ``card_path`` was generated by nnd-suites: its YAML front matter has
    a ``tags`` list holding our tag (a string that merely contains it is not ours)."""
    try:
        return card_has_tag(card_path, CARD_TAG)
    except NNDError as exc:
        raise NNDError(f"{exc}; {_FOREIGN_CARD_HINT}") from None


_FOREIGN_CARD_HINT = "write the suites into a new or empty folder, or move the file away"


def check_card_is_ours(folder: Path) -> None:
    """Stop when ``folder`` holds a README.md nnd-suites did not write: it is never replaced."""
    card_path = folder / CARD_FILE
    # anything there (a folder, a link to a device) is read as a card, and refused if not ours
    if (card_path.exists() or card_path.is_symlink()) and not is_nnd_card(card_path):
        raise OutputFolderError(
            f"{card_path}: this card was not written by nnd-suites (no {CARD_TAG!r} tag) and "
            f"the folder's dataset card goes there; nothing was written: {_FOREIGN_CARD_HINT}"
        )


def standalone_metadata(folder: Path) -> Path | None:
    """The ``.huggingface.yaml`` in ``folder``, if any: `datasets.load_dataset` lays its keys
    over the card's metadata, so its ``configs`` would read other files than the card names."""
    path = folder / datasets_config.REPOYAML_FILENAME
    return path if path.exists() or path.is_symlink() else None


def check_metadata_is_ours(folder: Path) -> None:
    """Stop when ``folder`` holds metadata nnd-suites did not write: a card of its own (never
    replaced), or a ``.huggingface.yaml`` that would override the card (never deleted)."""
    standalone = standalone_metadata(folder)
    if standalone is not None:
        raise OutputFolderError(
            f"{standalone}: `datasets.load_dataset` reads this file over the dataset card, so "
            "its configs would not be the ones the card lists; nothing was written: move it "
            "away, or write the suites into another folder"
        )
    check_card_is_ours(folder)


def check_only_suites_without_card(folder: Path, names: list[str]) -> None:
    """A folder without our card takes configs ``names`` only when it shows nothing else but
    suite folders (``build --out DIR/NAME`` before ``build --all --out DIR``): a model folder or
    a project's would be published with the card and configs put into it. Hidden entries (our
    writers' locks and temporary copies, a user's dot-files) are left to their own checks:
    `datasets` reads no hidden file."""
    if not folder.is_dir() or holds_nnd_card(folder):
        return
    foreign = [
        shown_name(entry.name)
        for entry in sorted(folder.iterdir())
        if not entry.name.startswith(".")
        and entry.name not in names  # checked as the configs' own folders
        # a linked suite folder is a suite's: present_configs refuses the link by its name
        and not (entry.is_dir() and has_manifest(entry))
    ]
    if foreign:
        raise OutputFolderError(
            f"{folder}: holds {plural(len(foreign), 'entry', 'entries')} nnd-suites did not "
            f"write there ({first_five(foreign)}) and no dataset card of nnd-suites; a dataset "
            "folder is published as it is, so nothing was written: write the suites into a new "
            "or empty folder, or move those entries out of it"
        )
