"""Export suites to a Hub-ready dataset folder: one config per suite, parquet, manifest, card."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nnd_suites.errors import NNDError, SuiteValidationError
from nnd_suites.hub.card import build_card, load_card
from nnd_suites.hub.configs import ConfigInfo, describe_config, read_config
from nnd_suites.hub.layout import CARD_FILE, CARD_TAG, exported_configs, validate_config_name
from nnd_suites.hub.remote import check_repo_id
from nnd_suites.io import atomic_write_text
from nnd_suites.output_folder import check_output_folder, folder_lock
from nnd_suites.suite import Suite


@dataclass
class ExportResult:
    folder: Path
    written: list[str]  # configs written by this export
    configs: list[ConfigInfo] = field(default_factory=list)  # every config the card lists

    @property
    def config_names(self) -> list[str]:
        return [c.name for c in self.configs]


def export_suites(
    suites: Iterable[Suite], folder: str | Path, repo_id: str | None = None
) -> ExportResult:
    """Write each suite as a config of the dataset folder and regenerate its card.

    Configs already in ``folder`` are kept (a suite of the same name replaces its config), each
    one fully validated first (data, candidates, content hash): a damaged config is an error, never
    listed. A sub-folder that is not a config, and a card nnd-suites did not write, are never
    replaced. Writers of one folder take turns (:func:`nnd_suites.output_folder.folder_lock`) and
    the card is computed under the lock, so concurrent exports all end up in it. Each config
    folder is swapped in atomically, then the card. ``repo_id`` only fills the card's examples.
    """
    suites = list(suites)
    if not suites:
        raise NNDError("nothing to export: give at least one suite")
    if repo_id is not None:  # before anything is written: it goes into the card's snippets
        check_repo_id(repo_id)
    folder = Path(folder)
    names = [validate_config_name(s.name) for s in suites]
    _check_unique(names, "suite")
    for suite in suites:
        try:
            suite.validate()
        except SuiteValidationError as exc:
            raise SuiteValidationError(f"cannot export: {exc}; rebuild the suite") from exc
    _check_card_is_ours(folder)  # before the lock creates the folder: fail fast
    for name in names:
        check_output_folder(folder / name, "export-config")
    with folder_lock(folder):
        _check_card_is_ours(folder)
        kept = [_kept_config(folder / n) for n in exported_configs(folder) if n not in names]
        _check_unique([c.name for c in kept] + names, "config")
        for suite in suites:
            write_config(suite, folder / suite.name)
        configs = kept + [describe_config(folder / n) for n in names]
        _write_card(folder, configs, repo_id)
    return ExportResult(folder=folder, written=names, configs=sorted(configs, key=lambda c: c.name))


def refresh_card(folder: str | Path, repo_id: str | None = None) -> list[ConfigInfo]:
    """Regenerate the card of an export folder from every config present; return them."""
    folder = Path(folder)
    _check_card_is_ours(folder)
    if not folder.is_dir():
        raise NNDError(f"{folder}: no such folder; give an export folder")
    with folder_lock(folder):
        configs = [_kept_config(folder / name) for name in exported_configs(folder)]
        _check_unique([c.name for c in configs], "config")
        if not configs:
            raise NNDError(f"{folder}: no exported suite config to describe")
        _write_card(folder, configs, repo_id)
    return configs


def _kept_config(config_dir: Path) -> ConfigInfo:
    """A config already in the folder, read whole and validated (a truncated file, edited rows or
    missing candidates are errors), then described for the card."""
    try:
        read_config(config_dir)
    except SuiteValidationError as exc:
        raise SuiteValidationError(
            f"config {config_dir.name!r} already in {config_dir.parent} is damaged ({exc}); "
            "export that suite again, or move the folder away"
        ) from exc
    return describe_config(config_dir)


def _write_card(folder: Path, configs: list[ConfigInfo], repo_id: str | None) -> None:
    atomic_write_text(folder / CARD_FILE, str(build_card(configs, repo_id)))


def write_config(suite: Suite, config_dir: Path) -> Path:
    """The suite's folder as ``build`` writes it (:mod:`nnd_suites.suite.storage`), under the
    suite's name; an existing folder is replaced only when it is a config or a suite."""
    return suite.save(config_dir, kind="export-config")


def _check_unique(names: list[str], what: str) -> None:
    # Case-insensitive: the folders would collide on Windows and macOS file systems.
    seen: dict[str, str] = {}
    for name in names:
        if name.lower() in seen:
            raise NNDError(
                f"two {what}s named {seen[name.lower()]!r} and {name!r}: config names "
                "must differ (ignoring case); rebuild one with `nnd-suites build "
                "--name`"
            )
        seen[name.lower()] = name


def is_nnd_card(card_path: Path) -> bool:
    """Whether the card at ``card_path`` was generated by nnd-suites: its YAML front matter has
    a ``tags`` list holding our tag (a string that merely contains it is not ours)."""
    try:
        tags = load_card(card_path).data.get("tags")
    except NNDError as exc:
        raise NNDError(f"{exc}; export into an empty folder or remove the file") from None
    return isinstance(tags, list) and CARD_TAG in tags


def _check_card_is_ours(folder: Path) -> None:
    card_path = folder / CARD_FILE
    # anything there (a folder, a link to a device) is read as a card, and refused if not ours
    if (card_path.exists() or card_path.is_symlink()) and not is_nnd_card(card_path):
        raise NNDError(
            f"{card_path}: this card was not written by nnd-suites (no {CARD_TAG!r} "
            "tag); export into an empty folder or move the file away"
        )
