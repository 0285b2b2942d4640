"""Publish suites to a Hub dataset repository with huggingface_hub (create, upload, tag).

The suites are exported into a staging folder first (so every check runs before the Hub is
contacted); the configs already in the repository are fetched into it, so the regenerated card
lists them all; then the folder is uploaded in one commit and the commit optionally tagged.
"""

from __future__ import annotations

import contextlib
import fnmatch
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from datasets.config import REPOYAML_FILENAME
from huggingface_hub import HfApi, get_token

from nnd_suites.errors import HubError, NNDError, SuiteValidationError
from nnd_suites.hub.card_reading import card_config_names
from nnd_suites.hub.configs import read_config
from nnd_suites.hub.export import export_suites, is_nnd_card, refresh_card
from nnd_suites.hub.layout import CARD_FILE
from nnd_suites.hub.remote import LOGIN_HINT, check_repo_id, check_tag, hub_errors, offline
from nnd_suites.suite import CANDIDATES_FILE, DATA_GLOB, MANIFEST_FILE, Suite, has_manifest
from nnd_suites.suite.storage import data_files

#: The files of one config an upload sends (beside the card), with its ``test-*.parquet`` shards.
CONFIG_FILES = [MANIFEST_FILE, CANDIDATES_FILE]


@dataclass
class PublishResult:
    repo_id: str
    folder: Path  # the staging folder (removed after a real publish unless given)
    files: list[str]  # uploaded (or, in a dry run, to be uploaded), relative to the folder
    written: list[str]  # configs of the suites given
    configs: list[str] = field(default_factory=list)  # every config the card lists
    dry_run: bool = False
    commit_url: str | None = None
    tag: str | None = None

    @property
    def url(self) -> str:
        return f"https://huggingface.co/datasets/{self.repo_id}"


def publish_suites(
    suites: Iterable[Suite],
    repo_id: str,
    *,
    private: bool = False,
    tag: str | None = None,
    dry_run: bool = False,
    folder: str | Path | None = None,
    commit_message: str | None = None,
    api: HfApi | None = None,
) -> PublishResult:
    """Export ``suites`` and push them to the dataset repository ``repo_id``.

    ``dry_run`` only builds the folder (``folder``, or a new temporary one that is kept) and
    reports what would be uploaded; it never contacts the Hub, so the configs already in the
    repository are not in its card. The token comes from the standard resolution (HF_TOKEN,
    then the token saved by `hf auth login`).
    """
    check_repo_id(repo_id)
    if tag is not None:
        check_tag(tag)
    suites = list(suites)
    if dry_run:
        staging = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="nnd-publish-"))
        export = export_suites(suites, staging, repo_id)
        return PublishResult(
            repo_id,
            staging,
            _files(staging, export.config_names),
            export.written,
            export.config_names,
            dry_run=True,
            tag=tag,
        )
    if offline():
        raise HubError(
            f"cannot publish to {repo_id}: HF_HUB_OFFLINE is set; unset it (or use "
            "--dry-run to build the folder without the Hub)"
        )
    if get_token() is None:
        raise HubError(
            f"cannot publish to {repo_id}: no Hugging Face token found; "
            f"{LOGIN_HINT} (a token with write access)"
        )
    api = api or HfApi()
    with _staging(folder) as staging:
        export = export_suites(suites, staging, repo_id)
        with hub_errors("creating the dataset repository", repo_id):
            api.create_repo(repo_id, repo_type="dataset", exist_ok=True, private=private)
        # one commit read throughout and built on: another publish landing meanwhile makes the
        # upload fail, where its configs would have gone unlisted by the card uploaded
        with hub_errors("reading the repository", repo_id):
            head = api.repo_info(repo_id, repo_type="dataset").sha
        _fetch_other_configs(api, repo_id, staging, export.written, head)
        configs = [c.name for c in refresh_card(staging, repo_id)]
        message = commit_message or f"nnd-suites: publish {', '.join(export.written)}"
        files = _files(staging, configs)
        with hub_errors("uploading the suites", repo_id):
            commit = api.upload_folder(
                repo_id=repo_id,
                repo_type="dataset",
                folder_path=staging,
                allow_patterns=files,  # exact paths: config names hold no * ? [
                # a config is replaced as a whole: shards of an earlier version go, for the
                # configs written and those the given folder held (uploaded from it, not fetched)
                delete_patterns=[f"{name}/{DATA_GLOB}" for name in configs],
                commit_message=message,
                parent_commit=head,
            )
        if tag:
            with hub_errors(f"tagging {tag}", repo_id):
                api.create_tag(
                    repo_id,
                    tag=tag,
                    repo_type="dataset",
                    tag_message=f"{message} ({', '.join(configs)})",
                )
        return PublishResult(
            repo_id,
            staging,
            files,
            export.written,
            configs,
            commit_url=getattr(commit, "commit_url", None),
            tag=tag,
        )


def _fetch_other_configs(
    api: HfApi, repo_id: str, staging: Path, written: list[str], head: str | None
) -> None:
    """Download the card and the configs published at commit ``head`` that this publish does
    not replace."""
    with hub_errors("listing the repository", repo_id):
        remote = api.list_repo_files(repo_id, repo_type="dataset", revision=head)
    if REPOYAML_FILENAME in remote:  # never deleted: it is not ours
        raise NNDError(
            f"cannot publish to {repo_id}: its {REPOYAML_FILENAME} overrides the card's "
            "metadata when `datasets` reads the repository, so its configs would not be the ones "
            "the card lists; remove that file from the repository first"
        )
    present = {p.name for p in staging.iterdir() if p.is_dir()}
    # a folder holding any file of a config may be one: one the card lists that lost its
    # manifest is named below, never dropped from the card unsaid
    configs = {
        folder
        for folder, _, name in (path.partition("/") for path in remote)
        if name in CONFIG_FILES or fnmatch.fnmatch(name, DATA_GLOB)
    }
    others = sorted(configs - set(written) - present)
    ours = {name.lower(): name for name in present}
    twin = next((name for name in others if name.lower() in ours), None)
    if twin is not None:  # fetched beside it, it would be a second config of the same name
        raise NNDError(
            f"cannot publish to {repo_id}: its config {twin!r} and config "
            f"{ours[twin.lower()]!r} of this publish differ only in case (config names must "
            "differ ignoring case: they collide on case-insensitive file systems); publish the "
            "suite under another name (build or transform it again with --name), give suite "
            f"{twin!r} to this publish instead, or delete {twin}/ from the repository first"
        )
    if not others and CARD_FILE not in remote:
        return
    # fetched beside the staging folder, not into it: a card that is not ours must not replace
    # the card of a --folder given (whose next export would then refuse the folder)
    with tempfile.TemporaryDirectory(prefix="nnd-fetch-") as tmp:
        with hub_errors("fetching the configs already published", repo_id):
            api.snapshot_download(
                repo_id,
                repo_type="dataset",
                local_dir=tmp,
                revision=head,
                allow_patterns=[CARD_FILE, *[f"{n}/*" for n in others]],
            )
        card = Path(tmp) / CARD_FILE
        if card.is_file() and not is_nnd_card(card):
            raise NNDError(
                f"cannot publish to {repo_id}: its {CARD_FILE} was not written by "
                "nnd-suites and would be replaced; publish to another repository, or "
                "remove that card from the repository first"
            )
        listed = card_config_names(Path(tmp))
        for name in others:
            if name not in listed and not has_manifest(Path(tmp) / name):
                continue  # no config, nor listed as one: not ours to fetch
            try:
                read_config(Path(tmp) / name)
            except SuiteValidationError as exc:
                raise SuiteValidationError(
                    f"cannot publish to {repo_id}: its config {name!r} is damaged ("
                    + str(exc).replace(tmp, f"hub:{repo_id}")
                    + f"); give suite {name!r} to this publish too (its config is then "
                    f"replaced whole), or delete {name}/ from the repository"
                ) from None
            shutil.move(Path(tmp) / name, staging / name)


def _files(staging: Path, configs: list[str]) -> list[str]:
    """What an upload sends: the card and the files of each config it lists, never anything else
    in the folder (a killed export's ``.NAME.*.tmp`` folder, a user's backup of a shard)."""
    files = [CARD_FILE]
    for name in configs:
        files += [f"{name}/{f}" for f in CONFIG_FILES if (staging / name / f).is_file()]
        files += [f"{name}/{shard.name}" for shard in data_files(staging / name)]
    return sorted(files)


@contextlib.contextmanager
def _staging(folder: str | Path | None) -> Iterator[Path]:
    if folder is not None:
        yield Path(folder)
        return
    with tempfile.TemporaryDirectory(prefix="nnd-publish-") as tmp:
        yield Path(tmp)
