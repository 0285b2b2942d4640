"""publish: the huggingface_hub calls are replaced by a fake Hub on disk and asserted."""

from __future__ import annotations

import fnmatch
import shutil
from pathlib import Path

import datasets
import huggingface_hub
import pytest
from huggingface_hub import HfApi
from huggingface_hub.errors import HfHubHTTPError

from nnd_suites import NNDError, load_suite
from nnd_suites.cli import main
from nnd_suites.errors import HubError, SuiteValidationError
from nnd_suites.hub import publish_suites
from nnd_suites.hub.remote import check_tag
from nnd_suites.suite import DATA_FILE

# the built-in names given to `publish` are the session's builds (a build each cost a second)
pytestmark = pytest.mark.usefixtures("builtin_names_give_session_builds")


def _response(status: int):
    import httpx2  # huggingface_hub's HTTP client

    return httpx2.Response(status, request=httpx2.Request("POST", "https://huggingface.co/api"))


def _matches(path: str, patterns) -> bool:
    patterns = [patterns] if isinstance(patterns, str) else list(patterns or [])
    return any(fnmatch.fnmatch(path, p) for p in patterns)


class FakeHub:
    """One dataset repository kept in a folder; records every call the HfApi methods get."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls: list[tuple[str, dict]] = []
        self.tags: list[str] = []
        self.fail: dict[str, int] = {}  # method name -> HTTP status to raise
        self.commits = 0  # the head commit is f"{commits:040x}"

    def _record(self, method: str, **kwargs) -> None:
        self.calls.append((method, kwargs))
        if method in self.fail:
            raise HfHubHTTPError(
                f"{self.fail[method]} error", response=_response(self.fail[method])
            )

    def files(self) -> list[str]:
        return sorted(
            p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file()
        )

    def head(self) -> str:
        return f"{self.commits:040x}"

    def install(self, monkeypatch) -> None:
        hub = self

        def create_repo(self, repo_id, **kwargs):
            hub._record("create_repo", repo_id=repo_id, **kwargs)
            hub.root.mkdir(exist_ok=True)

        def repo_info(self, repo_id, **kwargs):
            hub._record("repo_info", repo_id=repo_id, **kwargs)
            return type("DatasetInfo", (), {"sha": hub.head()})()

        def list_repo_files(self, repo_id, **kwargs):
            hub._record("list_repo_files", repo_id=repo_id, **kwargs)
            return hub.files()

        def snapshot_download(self, repo_id, **kwargs):
            hub._record("snapshot_download", repo_id=repo_id, **kwargs)
            for name in hub.files():
                if _matches(name, kwargs["allow_patterns"]):
                    target = Path(kwargs["local_dir"]) / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(hub.root / name, target)
            return str(kwargs["local_dir"])

        def upload_folder(self, **kwargs):
            hub._record("upload_folder", **kwargs)
            if kwargs.get("parent_commit") not in (None, hub.head()):  # as the Hub refuses it
                raise HfHubHTTPError("412 Precondition Failed", response=_response(412))
            hub.commits += 1
            folder = Path(kwargs["folder_path"])
            sent = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
            sent = [n for n in sent if _matches(n, kwargs["allow_patterns"])]
            for name in hub.files():
                if _matches(name, kwargs["delete_patterns"]) and name not in sent:
                    (hub.root / name).unlink()
            for name in sent:
                (hub.root / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(folder / name, hub.root / name)
            return type("CommitInfo", (), {"commit_url": "https://huggingface.co/c/1"})()

        def create_tag(self, repo_id, **kwargs):
            hub._record("create_tag", repo_id=repo_id, **kwargs)
            hub.tags.append(kwargs["tag"])

        for name, method in [
            ("create_repo", create_repo),
            ("repo_info", repo_info),
            ("list_repo_files", list_repo_files),
            ("snapshot_download", snapshot_download),
            ("upload_folder", upload_folder),
            ("create_tag", create_tag),
        ]:
            monkeypatch.setattr(HfApi, name, method)


@pytest.fixture
def hub(tmp_path, monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", "hf_fake_token_for_tests")
    fake = FakeHub(tmp_path / "remote")
    fake.install(monkeypatch)
    return fake


def _methods(hub: FakeHub) -> list[str]:
    return [method for method, _ in hub.calls]


def test_publish_creates_uploads_and_tags(hub, challenge300_suite, quiz_design_suite, tmp_path):
    result = publish_suites([challenge300_suite], "org/nnd", private=True)
    assert _methods(hub) == ["create_repo", "repo_info", "list_repo_files", "upload_folder"]
    assert hub.calls[0][1] == {
        "repo_id": "org/nnd",
        "repo_type": "dataset",
        "exist_ok": True,
        "private": True,
    }
    upload = hub.calls[3][1]
    assert upload["repo_id"] == "org/nnd" and upload["repo_type"] == "dataset"
    assert upload["delete_patterns"] == ["challenge300/test-*.parquet"]
    assert hub.files() == [
        "README.md",
        "challenge300/candidates.parquet",
        "challenge300/manifest.json",
        "challenge300/test-00000-of-00001.parquet",
    ]
    assert result.files == hub.files() and result.commit_url == "https://huggingface.co/c/1"
    assert not result.folder.exists()  # the temporary staging folder is gone

    # a second suite: the published one is fetched, kept and listed in the new card
    hub.calls.clear()
    result = publish_suites([quiz_design_suite], "org/nnd", tag="v1.0")
    assert _methods(hub) == [
        "create_repo",
        "repo_info",
        "list_repo_files",
        "snapshot_download",
        "upload_folder",
        "create_tag",
    ]
    assert hub.calls[3][1]["allow_patterns"] == ["README.md", "challenge300/*"]
    assert hub.calls[5][1] == {
        "repo_id": "org/nnd",
        "tag": "v1.0",
        "repo_type": "dataset",
        "tag_message": "nnd-suites: publish quiz_design (challenge300, quiz_design)",
    }
    assert result.configs == ["challenge300", "quiz_design"] and hub.tags == ["v1.0"]
    # what reached the "Hub" loads like the original, with both tools
    assert sorted(datasets.get_dataset_config_names(str(hub.root))) == result.configs
    rows = datasets.load_dataset(
        str(hub.root), "challenge300", split="test", cache_dir=str(tmp_path / "cache")
    )
    assert rows["id"] == [p.id for p in challenge300_suite.pairs]
    assert load_suite(hub.root, "quiz_design") == quiz_design_suite


def test_dry_run_builds_the_folder_and_sends_nothing(hub, challenge300_suite, tmp_path, capsys):
    folder = tmp_path / "staging"
    args = [
        "publish",
        "challenge300",
        "--repo",
        "org/nnd",
        "--dry-run",
        "--tag",
        "v2",
        "--folder",
        str(folder),
    ]
    assert main(args) == 0
    assert hub.calls == []
    out = capsys.readouterr().out
    assert "dry run: would upload to https://huggingface.co/datasets/org/nnd" in out
    for name in [
        "README.md",
        "challenge300/candidates.parquet",
        "challenge300/manifest.json",
        "challenge300/test-00000-of-00001.parquet",
    ]:
        assert f"  {name} (" in out
        assert (folder / name).is_file()
    assert "would tag the commit v2" in out
    assert load_suite(folder, "challenge300") == challenge300_suite


def test_a_dataset_folder_publishes_every_config_it_holds(
    hub, challenge300_suite, quiz_design_suite, tmp_path, capsys
):
    built = tmp_path / "built"  # as build --all or build --catalogue leaves it
    for suite in (challenge300_suite, quiz_design_suite):
        suite.save(built / suite.name)
    staging = tmp_path / "staging"
    args = ["publish", str(built), "--repo", "org/nnd", "--dry-run", "--folder", str(staging)]
    assert main(args) == 0
    assert "configs in the card: challenge300, quiz_design" in capsys.readouterr().out
    assert load_suite(staging, "quiz_design") == quiz_design_suite


def test_only_the_configs_files_are_uploaded(hub, challenge300_suite, tmp_path, capsys):
    # a folder a killed export wrote into: a half-written config beside the complete ones,
    # and a user's copy of a shard; neither is a config of the card
    folder = tmp_path / "staging"
    publish_suites([challenge300_suite], "org/nnd", dry_run=True, folder=folder)
    shard = folder / "challenge300" / "test-00000-of-00001.parquet"
    strays = [".sfhot.4242.0a1b2c3d.tmp/test-00000-of-00001.parquet", "backup/manifest.json"]
    for stray in strays:
        (folder / stray).parent.mkdir()
        shutil.copy(shard, folder / stray)
    expected = [
        "README.md",
        "challenge300/candidates.parquet",
        "challenge300/manifest.json",
        "challenge300/test-00000-of-00001.parquet",
    ]
    assert (
        main(["publish", "challenge300", "--repo", "org/nnd", "--dry-run", "--folder", str(folder)])
        == 0
    )
    out = capsys.readouterr().out
    assert all(stray not in out for stray in strays)
    assert all(f"  {name} (" in out for name in expected)
    assert publish_suites([challenge300_suite], "org/nnd", folder=folder).files == expected
    assert hub.files() == expected


def test_cli_publish(hub, capsys):
    assert main(["publish", "challenge300", "--repo", "org/nnd", "--tag", "v1.0"]) == 0
    out = capsys.readouterr().out
    assert "published to https://huggingface.co/datasets/org/nnd" in out
    assert "tagged v1.0" in out
    assert hub.calls[0][1]["private"] is False


def test_missing_token(hub, challenge300_suite, monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    with pytest.raises(NNDError, match="no Hugging Face token found; run `hf auth login`"):
        publish_suites([challenge300_suite], "org/nnd")
    assert hub.calls == []


def test_offline(hub, challenge300_suite, monkeypatch, capsys):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    assert main(["publish", "challenge300", "--repo", "org/nnd"]) == HubError.exit_status
    assert "HF_HUB_OFFLINE is set" in capsys.readouterr().err
    assert hub.calls == []


@pytest.mark.parametrize(
    "method,status,message",
    [
        ("create_repo", 403, "dataset org/nnd is not writable with your token \\(403\\)"),
        ("create_repo", 401, "rejected your token \\(401"),
        ("upload_folder", 403, "uploading the suites: dataset org/nnd is not writable"),
        ("create_tag", 409, "tagging v1.0: conflict on the Hub \\(409\\)"),
    ],
)
def test_hub_refusals_are_explained(hub, challenge300_suite, method, status, message):
    hub.fail[method] = status
    with pytest.raises(NNDError, match=message):
        publish_suites([challenge300_suite], "org/nnd", tag="v1.0")
    assert _methods(hub)[-1] == method  # nothing is attempted after the refusal


def test_invalid_input_fails_before_the_hub_is_contacted(hub, challenge300_suite):
    with pytest.raises(NNDError, match="invalid Hub repository id"):
        publish_suites([challenge300_suite], "not a repo")
    renamed = type(challenge300_suite)(
        challenge300_suite.manifest.model_copy(update={"name": "bad name"}).sealed(
            challenge300_suite.pairs, challenge300_suite.candidates
        ),
        challenge300_suite.pairs,
        challenge300_suite.candidates,
    )
    with pytest.raises(NNDError, match="cannot be a Hub config name"):
        publish_suites([renamed], "org/nnd")
    assert hub.calls == []


def test_a_foreign_card_in_the_repository_is_kept(hub, challenge300_suite):
    hub.root.mkdir()
    (hub.root / "README.md").write_text("---\nlicense: mit\n---\n# someone else's dataset\n")
    with pytest.raises(
        NNDError, match=r"cannot publish to org/nnd: its README\.md was not written by nnd-suites"
    ):
        publish_suites([challenge300_suite], "org/nnd")
    assert "upload_folder" not in _methods(hub)
    assert "someone else's dataset" in (hub.root / "README.md").read_text()


def test_an_unreachable_endpoint_is_a_hub_error(challenge300_suite, monkeypatch, capsys):
    """No fake Hub: the real client talks to a closed port on 127.0.0.1."""
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_TOKEN", "hf_fake_token_for_tests")
    with pytest.raises(HubError, match=f"could not reach the Hub at http://127.0.0.1:{port}"):
        publish_suites(
            [challenge300_suite], "org/nnd", api=HfApi(endpoint=f"http://127.0.0.1:{port}")
        )


@pytest.mark.parametrize("tag", ["v1\n", "v1\nrm -rf", "v 1", "a..b", "-v1", "v1.lock", ""])
def test_a_tag_git_would_refuse_is_refused_in_a_dry_run_too(hub, tag, tmp_path, capsys):
    folder = tmp_path / "staging"
    argv = ["publish", "challenge300", "--repo", "org/nnd", "--dry-run", f"--tag={tag}"]
    assert main([*argv, "--folder", str(folder)]) == HubError.exit_status
    err = capsys.readouterr().err.strip()
    assert f"invalid tag {tag!r}: a tag is a git ref name" in err and "\n" not in err
    assert not folder.exists() and hub.calls == []


def test_a_manifest_field_off_its_pattern_is_one_line_naming_it(
    challenge300_suite, tmp_path, capsys
):
    """pydantic's four-line dump (header, field, message with its type, a URL) is one line."""
    import json

    folder = challenge300_suite.save(tmp_path / "challenge300")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["name"] = "bad name"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    argv = ["publish", str(folder), "--repo", "org/nnd", "--dry-run", "--folder", "x"]
    assert main(argv) == SuiteValidationError.exit_status
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "errors.pydantic.dev" not in err
    assert "invalid manifest: name: String should match pattern" in err
    assert "(got 'bad name'); correct the field, or rebuild the suite" in err


def test_a_tag_no_hub_spec_could_name_is_refused(hub, tmp_path, capsys):
    # --tag v1@2 was published, and publish said to load it as hub:org/nnd/CONFIG@v1@2, a spec
    # the loader refuses (one '@' before the revision): the tag could never be named
    folder = tmp_path / "staging"
    argv = ["publish", "challenge300", "--repo", "org/nnd", "--dry-run", "--tag=v1@2"]
    assert main([*argv, "--folder", str(folder)]) == HubError.exit_status
    assert "invalid tag 'v1@2': a tag is a git ref name" in capsys.readouterr().err
    with pytest.raises(HubError, match="'@'"):
        check_tag("v1@2")
    assert not folder.exists() and hub.calls == []


def test_a_config_uploaded_from_the_given_folder_replaces_its_hub_copy_whole(
    hub, challenge300_suite, quiz_design_suite, tmp_path
):
    # the Hub holds quiz_design with a shard of an earlier version beside the current one; the
    # --folder given holds quiz_design (a dry run made it), so the publish of another suite
    # uploads it from there rather than fetching it: the stale shard must not stay and be read
    publish_suites([quiz_design_suite], "org/nnd")
    current = hub.root / "quiz_design" / "test-00000-of-00001.parquet"
    stale = current.with_name("test-00001-of-00002.parquet")
    shutil.copy(current, stale)
    folder = tmp_path / "staging"
    publish_suites([quiz_design_suite], "org/nnd", dry_run=True, folder=folder)
    publish_suites([challenge300_suite], "org/nnd", folder=folder)
    assert not stale.exists()
    rows = datasets.load_dataset(
        str(hub.root), "quiz_design", split="test", cache_dir=str(tmp_path / "cache")
    )
    assert rows["id"] == [p.id for p in quiz_design_suite.pairs]


def test_a_suite_still_holding_the_scaffolds_todo_is_not_published(
    hub, challenge300_suite, tmp_path
):
    todo = challenge300_suite.derive(challenge300_suite.pairs, license="TODO")
    with pytest.raises(SuiteValidationError, match="its license still holds the TODO"):
        publish_suites([todo], "me/nnd")
    assert hub.calls == []  # refused before the Hub was contacted


@pytest.mark.parametrize("linked", ["config folder", "shard"])
def test_nothing_linked_from_outside_a_dataset_folder_is_published(
    hub, challenge300_suite, quiz_design_suite, tmp_path, capsys, linked
):
    # a dataset folder holding a link to a suite kept elsewhere (a private one), or a config
    # whose shard is a link to a file elsewhere: publishing the folder, or staging in it, sent
    # what lies outside it (upload_folder follows a linked file; a linked config folder it does
    # not follow, so the card listed a config whose files never reached the Hub)
    built, elsewhere = tmp_path / "built", tmp_path / "private"
    challenge300_suite.save(built / "challenge300")
    quiz_design_suite.save(elsewhere / "quiz_design")
    if linked == "config folder":
        link = built / "quiz_design"
        link.symlink_to(elsewhere / "quiz_design")
    else:
        quiz_design_suite.save(built / "quiz_design")
        link = built / "quiz_design" / "test-00000-of-00001.parquet"
        link.unlink()
        link.symlink_to(elsewhere / "quiz_design" / link.name)
    for args in (
        ["publish", str(built), "--repo", "org/nnd"],
        ["publish", str(built), "--repo", "org/nnd", "--dry-run"],
        ["publish", "challenge300", "--repo", "org/nnd", "--folder", str(built)],
        ["export", str(built), "--to", str(tmp_path / "export")],
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert f"{link} is a symbolic link" in err and "copy" in err, err
    assert hub.calls == [] and not (tmp_path / "export").exists()


def test_a_foreign_card_in_the_repository_leaves_the_given_folder_valid(
    hub, challenge300_suite, quiz_design_suite, tmp_path, capsys
):
    # the repository's card was fetched into the --folder given, over the folder's own card,
    # before it was found foreign: the refused publish left a dataset folder that `validate`
    # refused and every later export into it stopped at ("not written by nnd-suites")
    folder = tmp_path / "staging"
    publish_suites([quiz_design_suite], "org/nnd", dry_run=True, folder=folder)
    hub.root.mkdir()
    (hub.root / "README.md").write_text("---\nlicense: mit\n---\n# someone else's dataset\n")
    with pytest.raises(NNDError, match=r"its README\.md was not written by nnd-suites"):
        publish_suites([challenge300_suite], "org/nnd", folder=folder)
    assert "upload_folder" not in _methods(hub)
    assert main(["validate", str(folder)]) == 0, capsys.readouterr().err
    assert "someone else's dataset" not in (folder / "README.md").read_text()


def test_a_publish_landing_meanwhile_is_never_left_out_of_the_card(
    hub, challenge300_suite, quiz_design_suite, monkeypatch, capsys
):
    # another publish (of quiz_design) landed between this one's listing of the repository and
    # its upload: the card uploaded, made from what was listed, did not list quiz_design, whose
    # files stayed on the Hub where `load_dataset(repo, "quiz_design")` could no longer read
    # them; both exited 0. Now the upload is built on the commit read, and the Hub refuses it.
    publish_suites([challenge300_suite], "org/nnd")
    listed = HfApi.list_repo_files

    def list_then_another_publish_lands(self, repo_id, **kwargs):
        files = listed(self, repo_id, **kwargs)
        monkeypatch.setattr(HfApi, "list_repo_files", listed)
        publish_suites([quiz_design_suite], "org/nnd")
        return files

    monkeypatch.setattr(HfApi, "list_repo_files", list_then_another_publish_lands)
    assert main(["publish", "challenge300", "--repo", "org/nnd"]) == HubError.exit_status
    err = capsys.readouterr().err
    assert "dataset org/nnd changed since it was read" in err and "run the command again" in err
    assert sorted(datasets.get_dataset_config_names(str(hub.root))) == [
        "challenge300",
        "quiz_design",
    ]
    assert main(["publish", "challenge300", "--repo", "org/nnd"]) == 0  # run again
    assert sorted(datasets.get_dataset_config_names(str(hub.root))) == [
        "challenge300",
        "quiz_design",
    ]


def test_a_metadata_file_in_the_repository_that_would_override_the_card_is_refused(
    hub, challenge300_suite, quiz_design_suite
):
    # a .huggingface.yaml on the Hub (which `datasets` lays over the card's metadata) stayed
    # beside the card uploaded: the publish said both configs were listed, exit 0, while
    # load_dataset(repo, "quiz_design") followed that file
    publish_suites([challenge300_suite], "org/nnd")
    (hub.root / ".huggingface.yaml").write_text("configs: []\n")
    with pytest.raises(NNDError, match=r"its \.huggingface\.yaml overrides the card's metadata"):
        publish_suites([quiz_design_suite], "org/nnd")
    assert _methods(hub).count("upload_folder") == 1


@pytest.mark.parametrize("damage", ["manifest removed", "manifest edited"])
def test_a_damaged_config_in_the_repository_is_named_never_dropped_from_the_card(
    hub, challenge300_suite, quiz_design_suite, capsys, damage
):
    # a published config that lost its manifest.json was not fetched: the card uploaded left it
    # out, exit 0, its shards still on the Hub; an edited one was named in a temporary folder
    # already gone, with advice for a local folder
    publish_suites([challenge300_suite], "org/nnd")
    manifest = hub.root / "challenge300" / "manifest.json"
    if damage == "manifest removed":
        manifest.unlink()
    else:
        manifest.write_text(manifest.read_text().replace('"pairs": 807', '"pairs": 1'))
    assert main(["publish", "quiz_design", "--repo", "org/nnd"]) == SuiteValidationError.exit_status
    err = capsys.readouterr().err
    assert "cannot publish to org/nnd: its config 'challenge300' is damaged (hub:org/nnd/" in err
    assert "give suite 'challenge300' to this publish too" in err and "nnd-publish-" not in err
    assert _methods(hub).count("upload_folder") == 1
    assert main(["publish", "quiz_design", "challenge300", "--repo", "org/nnd"]) == 0  # as it says
    assert sorted(datasets.get_dataset_config_names(str(hub.root))) == [
        "challenge300",
        "quiz_design",
    ]
    # a folder of shards no card lists is no config: left as it is
    (hub.root / "other").mkdir()
    shutil.copy(hub.root / "challenge300" / DATA_FILE, hub.root / "other" / DATA_FILE)
    assert main(["publish", "quiz_design", "--repo", "org/nnd"]) == 0
    assert (hub.root / "other" / DATA_FILE).is_file()


def test_a_config_of_the_repository_differing_only_in_case_is_named_with_hub_advice(
    hub, quiz_design_suite, capsys
):
    # the repository holds 'quiz_design'; a suite published as 'Quiz_Design' would be a second
    # folder there (one on a case-insensitive file system or a Hub download): refused, but with
    # the advice for a local folder ("rebuild one"), which cannot reach the repository's config
    publish_suites([quiz_design_suite], "org/nnd")
    renamed = quiz_design_suite.derive(quiz_design_suite.pairs, name="Quiz_Design")
    with pytest.raises(NNDError) as refused:
        publish_suites([renamed], "org/nnd")
    message = str(refused.value)
    assert "cannot publish to org/nnd" in message and "'quiz_design'" in message
    assert "Quiz_Design" in message and "differ" in message
    assert "delete quiz_design/ from the repository" in message and "--name" in message
    assert "snapshot_download" not in _methods(hub)[4:]  # refused before fetching anything
    assert _methods(hub).count("upload_folder") == 1
