"""An export folder checked as ``datasets.load_dataset`` reads it (``nnd-suites validate``).

`load_dataset(FOLDER, CONFIG)` never looks at a config's manifest: it reads the files that the
card's metadata names for that config (``configs: data_files``) and casts them to the card's
Features (``dataset_info``). A card edited after the export (two configs' ``data_files``
swapped, a config listed twice, a ``.huggingface.yaml`` beside it overriding its metadata) then
reads one config's pairs under another's name, without an error. So each config is validated
whole (data, candidates, content hash), and the card's metadata, parsed as `datasets` parses
it, must be what an export writes for exactly the configs present.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCardData

from nnd_suites.errors import NNDError, SuiteValidationError
from nnd_suites.hub.card import card_data
from nnd_suites.hub.card_reading import card_config_names, load_card
from nnd_suites.hub.configs import ConfigInfo, describe_config, republish
from nnd_suites.hub.export import (
    check_card_is_ours,
    holds_nnd_card,
    misnamed_suites,
    present_configs,
    standalone_metadata,
    validated_config,
)
from nnd_suites.hub.layout import (
    CARD_FILE,
    CARD_TAG,
    case_twins,
    check_unique,
    exported_configs,
    move_out,
)

#: the card's metadata fields `load_dataset` reads, and what each one says about a config
CONFIGS_FIELD, INFOS_FIELD = "configs", "dataset_info"


@dataclass(frozen=True)
class ExportFolderCheck:
    """An export folder whose configs and card agree."""

    folder: Path
    configs: list[ConfigInfo]
    #: suite folders not named after their suite: out of the card, as ``build`` leaves them
    left_out: dict[str, str] = field(default_factory=dict)


def check_export_folder(folder: str | Path) -> ExportFolderCheck:
    """Validate every config of the export folder ``folder`` and its card's metadata against
    them; any fault is a :class:`SuiteValidationError` that names the config and the card."""
    folder = Path(folder)
    try:
        check_card_is_ours(folder)
    except NNDError:  # its advice is for a writer: here nothing is written
        raise SuiteValidationError(
            f"{folder / CARD_FILE}: not the card nnd-suites writes for its configs (no readable "
            f"{CARD_TAG!r} tag), so `datasets.load_dataset` does not read them as nnd-suites "
            "declares them. "
            "Validate each suite folder (FOLDER/CONFIG), or move the README.md away and write "
            "the card with `nnd-suites export`"
        ) from None
    left_out, listed = misnamed_suites(folder), card_config_names(folder)
    configs = [  # a misnamed folder the card lists is read, and its fault named
        validated_config(folder / name)
        for name in present_configs(folder)
        if name not in left_out or name in listed
    ]
    if not configs:
        raise SuiteValidationError(
            f"{folder}: no exported suite config here (a folder written by `nnd-suites export` "
            "holds CONFIG/manifest.json and a README.md)"
        )
    problems = card_problems(folder, configs, every_config=True)
    if problems:
        raise SuiteValidationError(_card_fault(folder, problems, configs[0].name))
    return ExportFolderCheck(folder, configs, left_out)


def check_config_in_card(
    config_dir: Path, *, listed_only: bool = False, published: str | None = None
) -> bool:
    """When ``config_dir`` is a config of an export folder (its parent holds nnd-suites' card,
    which lists it or it is named after its suite), check the card's metadata for it, as
    `load_dataset(FOLDER, CONFIG)` follows it; return whether it was checked. ``listed_only``
    (a reader of the suite): a folder the card does not list is a suite folder like any other,
    as `load_dataset` reads no config under its name. ``published``: the folder was downloaded
    from there (hub:ORG/NAME), so the fault is the repository's, not a card to regenerate here."""
    folder = config_dir.parent
    if not holds_nnd_card(folder):  # no card, or a project's README: no card of ours to check
        return False
    name, listed = config_dir.name, card_config_names(folder)
    if name not in listed and (listed_only or name in misnamed_suites(folder)):
        return False  # a suite folder a build left out of the card, or copied in by hand
    problems = card_problems(folder, [describe_config(config_dir)], every_config=False)
    if problems:
        raise SuiteValidationError(_card_fault(folder, problems, config_dir.name, published))
    return True


def card_problems(folder: Path, configs: list[ConfigInfo], *, every_config: bool) -> list[str]:
    """How the card's metadata in ``folder`` differs from what an export writes for ``configs``
    (``every_config``: they are all the folder's configs, so the card lists no other)."""
    standalone = standalone_metadata(folder)
    problems = []
    if standalone is not None:
        problems.append(
            f"{standalone} overrides the card's metadata when `datasets` reads the folder; "
            "remove it"
        )
    try:
        found = load_card(folder / CARD_FILE).data
    except NNDError as exc:
        return [*problems, str(exc)]
    problems += _listed_twice(found)
    try:
        found_configs = MetadataConfigs.from_dataset_card_data(found)
        found_infos = DatasetInfosDict.from_dataset_card_data(found)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        return [*problems, f"its metadata is not what `datasets` reads ({exc})"]
    try:  # a card made by hand: export refuses such names
        check_unique(list(found_configs), "config", fix="")  # _card_fault says what to do
    except NNDError as exc:
        problems.append(str(exc))
    expected = card_data(configs)
    expected_configs = MetadataConfigs.from_dataset_card_data(expected)
    expected_infos = DatasetInfosDict.from_dataset_card_data(expected)
    for config in configs:
        problems += _config_problems(
            config,
            found_configs.get(config.name),
            expected_configs[config.name],
            found_infos.get(config.name),
            expected_infos[config.name],
        )
    if every_config:
        present = {c.name for c in configs}
        problems += [
            f"it lists config {name!r}, which the folder does not hold"
            for name in sorted((set(found_configs) | set(found_infos)) - present)
        ]
    return problems


def _listed_twice(data: DatasetCardData) -> list[str]:
    """Configs named twice in a metadata list: `datasets` keeps the last entry, unsaid."""
    problems = []
    for field_name in (CONFIGS_FIELD, INFOS_FIELD):
        entries = data.get(field_name)
        if not isinstance(entries, list):
            continue
        names = Counter(e.get("config_name") for e in entries if isinstance(e, dict))
        problems += [
            f"its {field_name} lists config {name!r} {times} times"
            for name, times in sorted(names.items(), key=str)
            if times > 1
        ]
    return problems


def _config_problems(
    config: ConfigInfo,
    found: dict[str, Any] | None,
    expected: dict[str, Any],
    found_info: DatasetInfo | None,
    expected_info: DatasetInfo,
) -> list[str]:
    name = config.name
    if found is None:
        return [f"it does not list config {name!r}, so `load_dataset` cannot read it"]
    problems = []
    if found != expected:
        problems.append(
            f"config {name!r} reads {_shown(found)}, not {_shown(expected)} (the files of "
            f"{name}/, content hash {config.manifest.content_hash[:12]})"
        )
    if found_info is None:
        problems.append(f"its {INFOS_FIELD} does not describe config {name!r}")
        return problems
    if found_info.features != expected_info.features:
        problems.append(
            f"its {INFOS_FIELD} gives config {name!r} other Features than its files hold"
        )
    if _split_rows(found_info) != _split_rows(expected_info):
        problems.append(
            f"its {INFOS_FIELD} gives config {name!r} the splits {_split_rows(found_info)}, "
            f"its files hold {_split_rows(expected_info)}"
        )
    return problems


def _split_rows(info: DatasetInfo) -> dict[str, int]:
    return {name: split.num_examples for name, split in (info.splits or {}).items()}


def _shown(entry: dict[str, Any]) -> str:
    data_files = entry.get("data_files")
    extra = {k: v for k, v in entry.items() if k != "data_files"}
    return f"data_files {data_files}" + (f" with {extra}" if extra else "")


def _card_fault(folder: Path, problems: list[str], first: str, published: str | None = None) -> str:
    fix = f"regenerate the card with `nnd-suites export {folder / first} --to {folder}`"
    twins = case_twins(exported_configs(folder))
    if twins is not None:  # export refuses a folder holding both: one goes first
        fix = f"{move_out(folder, twins[1] if first != twins[1] else twins[0])}, then {fix}"
    return (
        f"{folder / CARD_FILE}: the card does not describe the configs of {folder}, and "
        f"`datasets.load_dataset` follows the card: {'; '.join(problems)}; "
        + (republish(published) if published else fix)
    )
