"""Read a typed suite from a config of an export folder or of a Hub dataset repository.

On the command line a suite exported to the Hub is named ``hub:ORG/NAME/CONFIG[@REVISION]``;
one in a local export folder is named by its config folder, ``FOLDER/CONFIG``. Which of these a
name means is decided above this module, by :func:`nnd_suites.resolve.load_suite`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datasets import config as datasets_config
from huggingface_hub import snapshot_download

from nnd_suites.errors import NNDError, UnknownItemError
from nnd_suites.hub.card_reading import card_config_names
from nnd_suites.hub.configs import read_config
from nnd_suites.hub.folder_check import check_config_in_card
from nnd_suites.hub.layout import CARD_FILE, exported_configs, validate_config_name
from nnd_suites.hub.remote import check_repo_id, hub_errors, offline
from nnd_suites.suite import MANIFEST_FILE, Suite, has_manifest

HUB_PREFIX = "hub:"


@dataclass(frozen=True)
class HubSpec:
    repo_id: str
    config: str
    revision: str | None = None

    def __str__(self) -> str:
        at = f"@{self.revision}" if self.revision else ""
        return f"{HUB_PREFIX}{self.repo_id}/{self.config}{at}"


def is_hub_spec(spec: object) -> bool:
    return isinstance(spec, str) and spec.startswith(HUB_PREFIX)


def parse_hub_spec(spec: str) -> HubSpec:
    """``hub:ORG/NAME/CONFIG`` or ``hub:ORG/NAME/CONFIG@REVISION`` (a tag, branch or commit)."""
    body = spec[len(HUB_PREFIX) :] if is_hub_spec(spec) else spec
    path, at, revision = body.partition("@")
    parts = path.split("/")
    if len(parts) != 3 or not all(parts) or (at and not revision) or "@" in revision:
        raise NNDError(  # "@v1@v2" would reach the Hub as revision "v1@v2"
            f"{spec!r}: a Hub suite is named hub:ORG/NAME/CONFIG[@REVISION] (one '@', then a "
            "tag, branch or commit)"
        )
    return HubSpec(check_repo_id(f"{parts[0]}/{parts[1]}"), parts[2], revision or None)


def load_hub_config(repo_id: str, config: str, revision: str | None = None) -> Suite:
    """The validated suite of ``config`` in the Hub dataset repository ``repo_id``, downloaded
    at ``revision`` (a tag, branch or commit) into the Hugging Face cache."""
    repo_id = check_repo_id(repo_id)
    location = f"{HUB_PREFIX}{repo_id}" + (f"@{revision}" if revision else "")
    return read_exported_config(download_config(repo_id, config, revision), config, location)


_CONFIG_FIX = "name one of the repository's configs (hub:ORG/NAME/CONFIG, or FOLDER/CONFIG)"


def download_config(repo_id: str, config: str, revision: str | None = None) -> Path:
    """Fetch the card (with a ``.huggingface.yaml``) and one config's files (cached by
    huggingface_hub); return the folder."""
    validate_config_name(config, _CONFIG_FIX, "config")
    with hub_errors(f"downloading suite {config!r}", repo_id):
        path = snapshot_download(
            repo_id,
            repo_type="dataset",
            revision=revision,
            # and the metadata file `datasets` lays over the card's: checked as a local one is
            allow_patterns=[f"{config}/*", CARD_FILE, datasets_config.REPOYAML_FILENAME],
        )
    return Path(path)


def read_exported_config(folder: Path, config: str, location: str | None = None) -> Suite:
    """The validated suite of ``config`` in the export folder ``folder``; ``location`` names
    the folder for the user (hub:ORG/NAME for a download; the folder itself by default)."""
    published, location = location, location or str(folder)
    # A config is a name, never a path: "../../x" must not reach outside the export.
    validate_config_name(config, _CONFIG_FIX, "config")
    if not has_manifest(folder / config):
        listed = card_config_names(folder)
        if config in listed:  # not an unknown name: "did you mean" would offer it back
            others = [name for name in exported_configs(folder) or listed if name != config]
            why = "its files were removed, or nnd-suites did not write it"
            if published and offline():  # huggingface_hub hands back the cached snapshot as is
                why = (
                    "HF_HUB_OFFLINE is set, and the cached copy holds only the configs downloaded "
                    f"before (unset it to download {config!r}); or {why}"
                )
            raise NNDError(
                f"{location}: its card lists config {config!r}, but {config}/{MANIFEST_FILE} is "
                f"missing ({why}); name another of its configs: "
                + (", ".join(others) or "it lists none")
            )
        known = exported_configs(folder) or listed
        if not known:
            raise NNDError(
                f"{location}: no exported suite here (a folder written by "
                "`nnd-suites export` holds CONFIG/manifest.json and a README.md)"
            )
        raise UnknownItemError(f"suite config in {location}", config, known)
    suite = read_config(folder / config, published)
    # what `datasets.load_dataset` reads under its name
    check_config_in_card(folder / config, published=published)
    return suite
