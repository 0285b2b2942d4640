"""load_suite on exported folders and Hub repositories (hub:ORG/NAME/CONFIG), up to the download."""

from __future__ import annotations

import fnmatch
import shutil

import huggingface_hub
import pytest
from huggingface_hub.errors import LocalEntryNotFoundError, RepositoryNotFoundError

from nnd_suites import NNDError, UnknownItemError, load_suite
from nnd_suites.cli import main
from nnd_suites.errors import AmbiguousSuiteError, HubError
from nnd_suites.hub import HubSpec, export_suites, parse_hub_spec
from nnd_suites.hub import load as hub_load
from nnd_suites.resolve import resolve_suites, suite_origins


@pytest.fixture(scope="module")
def export_folder(tmp_path_factory, quiz_design_suite, challenge300_suite):
    folder = tmp_path_factory.mktemp("export") / "nnd"
    export_suites([quiz_design_suite, challenge300_suite], folder, repo_id="org/nnd")
    return folder


def snapshot(repository, target, allow_patterns) -> str:
    """``target`` holding the files of ``repository`` that ``allow_patterns`` match."""
    for path in repository.rglob("*"):
        relative = path.relative_to(repository).as_posix()
        if path.is_file() and any(fnmatch.fnmatch(relative, p) for p in allow_patterns):
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target / relative)
    target.mkdir(parents=True, exist_ok=True)
    return str(target)


@pytest.fixture
def fake_download(export_folder, tmp_path, monkeypatch):
    """snapshot_download replaced by a copy of the files it was asked for; records each call."""
    calls = []

    def snapshot_download(repo_id, **kwargs):
        calls.append({"repo_id": repo_id, **kwargs})
        target = tmp_path / "snapshot" / str(len(calls))
        return snapshot(export_folder, target, kwargs["allow_patterns"])

    monkeypatch.setattr(hub_load, "snapshot_download", snapshot_download)
    return calls


@pytest.mark.parametrize(
    "spec,expected",
    [
        ("hub:org/nnd/quiz_design", HubSpec("org/nnd", "quiz_design")),
        ("hub:org/nnd/quiz_design@v1.0", HubSpec("org/nnd", "quiz_design", "v1.0")),
        ("hub:org/nnd/quiz_design@refs/pr/3", HubSpec("org/nnd", "quiz_design", "refs/pr/3")),
    ],
)
def test_parse_hub_spec(spec, expected):
    assert parse_hub_spec(spec) == expected
    assert str(expected) == spec


@pytest.mark.parametrize(
    "spec",
    [
        "hub:org/nnd",
        "hub:nnd/quiz_design/x/y",
        "hub:org/nnd/quiz@",
        "hub:org//quiz",
        "hub:o rg/nnd/quiz",
    ],
)
def test_bad_hub_specs(spec):
    with pytest.raises(NNDError, match=r"hub:ORG/NAME/CONFIG|invalid Hub repository id"):
        parse_hub_spec(spec)


@pytest.mark.parametrize(
    "spec", ["hub:org/nnd/quiz_design@v1@v2", "hub:org/nnd/quiz_design@@v1", "hub:org/nnd@"]
)
def test_a_spec_with_two_revisions_or_none_never_reaches_the_hub(spec, fake_download, capsys):
    # hub:ORG/NAME/CONFIG@v1@v2 was downloaded at revision "v1@v2": the Hub was asked for a
    # revision nobody wrote, and its "no such revision" blamed the name after the first '@'
    with pytest.raises(NNDError, match=r"hub:ORG/NAME/CONFIG\[@REVISION\]"):
        load_suite(spec)
    assert main(["stats", spec]) == 2
    assert (
        f"{spec!r}: a Hub suite is named hub:ORG/NAME/CONFIG[@REVISION]" in capsys.readouterr().err
    )
    assert fake_download == []


def test_hub_spec_downloads_one_config_and_validates(fake_download, challenge300_suite):
    suite = load_suite("hub:org/nnd/challenge300@v1.0")
    assert suite == challenge300_suite
    assert fake_download == [
        {
            "repo_id": "org/nnd",
            "repo_type": "dataset",
            "revision": "v1.0",
            "allow_patterns": ["challenge300/*", "README.md", ".huggingface.yaml"],
        }
    ]


def test_repo_id_with_name_and_revision(fake_download, quiz_design_suite):
    assert load_suite("org/nnd", "quiz_design", revision="main") == quiz_design_suite
    assert fake_download[0]["revision"] == "main"
    assert fake_download[0]["allow_patterns"] == [
        "quiz_design/*",
        "README.md",
        ".huggingface.yaml",
    ]


def test_unknown_config_on_the_hub_lists_the_card_configs(fake_download):
    with pytest.raises(
        UnknownItemError,
        match=r"unknown suite config in hub:org/nnd 'nope' "
        r"\(known: challenge300, quiz_design\)",
    ):
        load_suite("hub:org/nnd/nope")


def test_conflicting_name_or_revision(fake_download):
    with pytest.raises(NNDError, match="names config 'quiz_design'"):
        load_suite("hub:org/nnd/quiz_design", "challenge300")
    with pytest.raises(NNDError, match="pins revision 'v1'"):
        load_suite("hub:org/nnd/quiz_design@v1", revision="v2")
    assert fake_download == []


def test_repository_not_found_is_explained(monkeypatch):
    def snapshot_download(repo_id, **kwargs):
        raise RepositoryNotFoundError("404", response=_response(404))

    monkeypatch.setattr(hub_load, "snapshot_download", snapshot_download)
    with pytest.raises(NNDError, match="no dataset repository org/missing is visible"):
        load_suite("hub:org/missing/quiz_design")


def test_offline_without_a_cached_copy(monkeypatch, tmp_path):
    # the real snapshot_download: offline, an empty cache, nothing can be fetched
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(NNDError, match="HF_HUB_OFFLINE is set and no copy of dataset org/nnd"):
        load_suite("hub:org/nnd/quiz_design")
    assert main(["stats", "hub:org/nnd/quiz_design"]) == HubError.exit_status


def test_where_several_suites_are_taken_a_dataset_folder_is_every_config(
    export_folder, quiz_design_suite, challenge300_suite, tmp_path, monkeypatch, capsys
):
    # evaluate, robustness (resolve_suites), export, export-lm-eval and publish
    assert resolve_suites([export_folder]) == [challenge300_suite, quiz_design_suite]
    assert suite_origins([export_folder, "quiz_design"]) == [
        str((export_folder / "challenge300").resolve()),
        str((export_folder / "quiz_design").resolve()),
        "builtin:quiz_design",
    ]
    assert main(["export", str(export_folder), "--to", str(tmp_path / "copy")]) == 0
    assert "(2 configs;" in capsys.readouterr().out
    assert load_suite(tmp_path / "copy", "challenge300") == challenge300_suite
    # a bare name that is both a built-in suite and a folder stays ambiguous, never expanded
    shutil.copytree(export_folder, tmp_path / "here" / "quiz_design")
    monkeypatch.chdir(tmp_path / "here")
    with pytest.raises(AmbiguousSuiteError):
        resolve_suites(["quiz_design"])
    # where one suite is taken, the folder is still refused, saying where it stands for all
    assert main(["stats", str(export_folder)]) == NNDError.exit_status
    assert "the folder stands for every config" in capsys.readouterr().err


def test_where_one_suite_is_taken_a_folder_lists_its_configs_as_validate_does(
    export_folder, challenge300_suite, tmp_path, capsys
):
    """stats/baselines listed c300 (a folder holding challenge300) as a config, and advised
    load_suite(FOLDER, 'c300'), which refuses it: validate says it is left out of the card."""
    folder = tmp_path / "nnd"
    shutil.copytree(export_folder, folder)
    challenge300_suite.save(folder / "c300")
    assert main(["validate", str(folder)]) == 0
    assert "c300: holds suite 'challenge300', left out of the card" in capsys.readouterr().out
    for command in ("stats", "baselines"):
        assert main([command, str(folder)]) == NNDError.exit_status
        err = " ".join(capsys.readouterr().err.split())
        assert (
            f"{folder} is an export folder with configs ['challenge300', 'quiz_design'] and " in err
        )
        assert "suite folders that are no config (c300 holds suite 'challenge300')" in err
        assert f"name one: {folder / 'challenge300'} (or load_suite(" in err


@pytest.mark.parametrize("removed", ["test-00000-of-00001.parquet", "manifest.json"])
def test_a_damaged_config_of_a_dataset_folder_is_named_not_left_out(
    export_folder, tmp_path, capsys, removed
):
    # a config its card lists, without its shard (or manifest): `export D --to E` and `publish D
    # --dry-run` wrote the other configs alone (exit 0), as `evaluate --suite D` scored them
    folder = tmp_path / "nnd"
    shutil.copytree(export_folder, folder)
    (folder / "quiz_design" / removed).unlink()
    with pytest.raises(NNDError) as raised:
        resolve_suites([folder])
    assert str(folder / "quiz_design") in str(raised.value)
    for argv in (
        ["export", "--to", str(tmp_path / "e")],
        ["publish", "--repo", "o/n", "--dry-run"],
    ):
        assert main([argv[0], str(folder), *argv[1:]]) != 0
        assert str(folder / "quiz_design") in capsys.readouterr().err
    assert not (tmp_path / "e").exists()


def test_local_export_forms(export_folder, quiz_design_suite, capsys):
    assert load_suite(export_folder / "quiz_design", "quiz_design") == quiz_design_suite
    with pytest.raises(
        NNDError,
        match=r"export folder with configs \['challenge300', "
        r"'quiz_design'\]; name one",
    ):
        load_suite(export_folder)
    with pytest.raises(UnknownItemError, match="known: challenge300, quiz_design"):
        load_suite(export_folder, "nope")
    with pytest.raises(NNDError, match="a revision applies to Hub repositories"):
        load_suite(export_folder, "quiz_design", revision="v1")
    with pytest.raises(NNDError, match="holds suite 'quiz_design', not 'challenge300'"):
        load_suite(export_folder / "quiz_design", "challenge300")
    assert main(["stats", str(export_folder / "challenge300")]) == 0
    assert "807 pairs" in capsys.readouterr().out


def test_built_in_names_and_unknown_suites_still_resolve(capsys):
    assert len(load_suite("challenge300")) == 807
    with pytest.raises(UnknownItemError, match=r"unknown suite 'nope'.*hub:ORG/NAME/CONFIG"):
        load_suite("nope")


def test_a_folder_without_exports_is_not_a_suite(tmp_path):
    with pytest.raises(NNDError, match="no exported suite here"):
        load_suite(tmp_path, "quiz_design")


def _response(status: int):
    import httpx2

    return httpx2.Response(status, request=httpx2.Request("GET", "https://huggingface.co/api"))


@pytest.mark.parametrize(
    "config", ["../../../../tmp/x/quiz_design", "..", "quiz_design/../x", ".q"]
)
def test_a_config_is_a_name_never_a_path(fake_download, config):
    with pytest.raises(NNDError, match="cannot be a Hub config name") as refused:
        load_suite("org/nnd", config)
    assert fake_download == []  # refused before anything is downloaded
    # a config of someone's repository: naming another is the fix, not rebuilding a suite
    assert "name one of the repository's configs" in str(refused.value)
    assert "build" not in str(refused.value)


def test_a_dot_folder_left_by_an_interrupted_export_is_not_a_config(export_folder, tmp_path):
    copy = tmp_path / "export"
    shutil.copytree(export_folder, copy)
    shutil.copytree(copy / "quiz_design", copy / ".quiz_design.abc123.tmp")
    assert hub_load.exported_configs(copy) == ["challenge300", "quiz_design"]


def test_a_config_the_card_lists_without_its_files_is_named_so(
    export_folder, tmp_path, monkeypatch
):
    # a card listing config 'gone' whose folder is missing (edited by hand, files deleted on the
    # Hub) gave "unknown suite config 'gone'; did you mean 'gone'?"
    copy = tmp_path / "export"
    shutil.copytree(export_folder, copy)
    card = (copy / "README.md").read_text("utf-8")
    listed = "configs:\n- config_name: gone\n  data_files:\n  - split: test\n    path: gone/*\n"
    (copy / "README.md").write_text(card.replace("configs:\n", listed, 1), "utf-8")
    monkeypatch.setattr(hub_load, "snapshot_download", lambda repo_id, **kwargs: str(copy))
    for spec in ([copy, "gone"], ["hub:org/nnd/gone"]):
        with pytest.raises(NNDError, match="its card lists config 'gone', but") as refused:
            load_suite(*spec)
        assert "gone/manifest.json" in str(refused.value)
        assert "did you mean" not in str(refused.value)


@pytest.mark.parametrize(
    "read",
    [
        lambda copy: [load_suite(copy / "quiz_design")],  # whose card: holds_nnd_card
        lambda copy: [load_suite(copy, "quiz_design")],
        lambda copy: resolve_suites([str(copy)]),  # its configs: card_config_names
    ],
    ids=["config folder", "folder and config", "folder"],
)
def test_a_card_that_cannot_be_parsed_is_named_when_its_configs_are_read(
    export_folder, quiz_design_suite, tmp_path, caplog, read
):
    # the configs were read as plain suite folders without a word (the card unchecked)
    copy = tmp_path / "export"
    shutil.copytree(export_folder, copy)
    card = (copy / "README.md").read_text("utf-8")
    (copy / "README.md").write_text(card.replace("---\n", "---\nlicense: [mit\n", 1), "utf-8")
    suites = read(copy)
    hashes = {suite.manifest.content_hash for suite in suites if suite.name == "quiz_design"}
    assert hashes == {quiz_design_suite.manifest.content_hash}
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1, warned
    assert warned[0].startswith(f"{copy / 'README.md'}:")
    assert "cannot parse the YAML" in warned[0] and "read as plain suites" in warned[0]


def test_unreachable_hub_without_a_cached_copy_does_not_blame_offline_mode(monkeypatch, tmp_path):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)

    def snapshot_download(repo_id, **kwargs):
        raise LocalEntryNotFoundError("connection refused and nothing in the cache")

    monkeypatch.setattr(hub_load, "snapshot_download", snapshot_download)
    with pytest.raises(NNDError, match="could not be reached") as raised:
        load_suite("hub:org/nnd/quiz_design")
    assert "HF_HUB_OFFLINE" not in str(raised.value)


def _swapped(folder, swap_card):
    """``folder`` with quiz_design and challenge300 swapped by hand: their folders, or the
    folders their card's data_files name."""
    if not swap_card:
        (folder / "quiz_design").rename(folder / "swap")
        (folder / "challenge300").rename(folder / "quiz_design")
        (folder / "swap").rename(folder / "challenge300")
        return
    card = (folder / "README.md").read_text("utf-8")
    for old, new in [("quiz_design/", "swap/"), ("challenge300/", "quiz_design/")]:
        card = card.replace(f"path: {old}", f"path: {new}")
    (folder / "README.md").write_text(card.replace("path: swap/", "path: challenge300/"), "utf-8")


@pytest.mark.parametrize("swap_card", [False, True])
def test_configs_swapped_by_hand_get_advice_for_where_they_are(
    export_folder, tmp_path, monkeypatch, swap_card
):
    # a Hub repository's swapped configs were met with "name the folder ..., then run
    # `nnd-suites validate CACHE`" or "regenerate the card with `nnd-suites export CACHE/...`":
    # edits inside the Hugging Face cache; two local folders swapped were told to take the name
    # the other folder holds
    copy = tmp_path / "export"
    shutil.copytree(export_folder, copy)
    _swapped(copy, swap_card)
    monkeypatch.setattr(hub_load, "snapshot_download", lambda repo_id, **kwargs: str(copy))
    with pytest.raises(NNDError) as refused:
        load_suite("hub:org/nnd/quiz_design@v1")
    advice = str(refused.value).rpartition("reads under that name: " if not swap_card else "; ")[2]
    assert advice.startswith("hub:org/nnd@v1 was published so (never edit its copy in the")
    assert "tell the dataset's owner (https://huggingface.co/datasets/org/nnd)" in advice
    assert "`nnd-suites publish SUITE... --repo org/nnd` rewrites their configs" in advice
    assert str(copy) not in advice
    with pytest.raises(NNDError) as refused:
        load_suite(copy, "quiz_design")
    if not swap_card:
        assert str(refused.value).endswith(
            "challenge300/ holds suite 'quiz_design': swap the two folders' names back, then "
            f"run `nnd-suites validate {copy}`"
        )
        return
    fix = f"regenerate the card with `nnd-suites export {copy / 'quiz_design'} --to {copy}`"
    assert str(refused.value).endswith(fix)
    assert main(["export", str(copy / "quiz_design"), "--to", str(copy)]) == 0  # as it says
    assert load_suite(copy, "quiz_design").name == "quiz_design"


def test_a_hub_metadata_file_overriding_the_card_is_named(export_folder, tmp_path, monkeypatch):
    # a repository's .huggingface.yaml, which `datasets` lays over the card's metadata, was not
    # downloaded: hub:ORG/NAME/CONFIG loaded the config's files, exit 0, where
    # load_dataset(ORG/NAME, CONFIG) reads the files that file names instead (here the other
    # config's); the same folder on disk was refused
    hub = tmp_path / "hub"
    shutil.copytree(export_folder, hub)
    (hub / ".huggingface.yaml").write_text(
        "configs:\n- config_name: quiz_design\n  data_files:\n  - split: test\n"
        "    path: challenge300/test-*.parquet\n"
    )
    target = tmp_path / "snapshot"
    monkeypatch.setattr(
        hub_load, "snapshot_download", lambda _, **kw: snapshot(hub, target, kw["allow_patterns"])
    )
    expected = r"\.huggingface\.yaml overrides the card's metadata.*hub:org/nnd was published so"
    with pytest.raises(NNDError, match=expected):
        load_suite("hub:org/nnd/quiz_design")
    with pytest.raises(NNDError, match=r"\.huggingface\.yaml overrides the card's metadata"):
        load_suite(hub, "quiz_design")


def test_a_config_never_downloaded_offline_is_not_blamed_on_the_repository(
    export_folder, tmp_path, monkeypatch
):
    # offline, huggingface_hub hands back the cached snapshot as it is: only the configs
    # downloaded before. The config asked for was said to be "missing (its files were removed,
    # or nnd-suites did not write it)", a fault of the repository, which may well hold it
    commit = "0123456789abcdef0123456789abcdef01234567"
    repository = tmp_path / "hub" / "datasets--org--nnd"
    snapshot(export_folder, repository / "snapshots" / commit, ["README.md", "challenge300/*"])
    (repository / "refs").mkdir()
    (repository / "refs" / "main").write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    assert load_suite("hub:org/nnd/challenge300").name == "challenge300"
    with pytest.raises(NNDError) as refused:
        load_suite("hub:org/nnd/quiz_design")
    assert str(refused.value) == (
        "hub:org/nnd: its card lists config 'quiz_design', but quiz_design/manifest.json is "
        "missing (HF_HUB_OFFLINE is set, and the cached copy holds only the configs downloaded "
        "before (unset it to download 'quiz_design'); or its files were removed, or nnd-suites "
        "did not write it); name another of its configs: challenge300"
    )
