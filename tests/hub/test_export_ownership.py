"""Export replaces only what it wrote: a user's folder or card is kept, a damaged config is not
listed, and concurrent exports into one folder all end up in its card."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

import datasets
import pyarrow.parquet as pq
import pytest
import yaml

from nnd_suites import NNDError, SuiteValidationError, build_suite
from nnd_suites.cli import main
from nnd_suites.errors import OutputFolderError
from nnd_suites.hub import export_suites
from nnd_suites.hub.export import refresh_card
from nnd_suites.hub.layout import CARD_FILE
from nnd_suites.suite import CANDIDATES_FILE, DATA_FILE

#: exporters started together: enough to race for the card (each export validates every config
#: already there under its lock, so the time grows with the square of the count)
CONCURRENT = 10


def _card_configs(folder) -> list[str]:
    front = (folder / CARD_FILE).read_text("utf-8").split("---\n", 2)[1]
    return [c["config_name"] for c in yaml.safe_load(front)["configs"]]


def test_a_user_folder_named_like_the_suite_is_never_replaced(challenge300_suite, tmp_path):
    mine = tmp_path / "challenge300"
    mine.mkdir()
    (mine / "raw.tsv").write_text("system\toutput\n")
    with pytest.raises(OutputFolderError, match=r"raw\.tsv.*not an exported suite config"):
        export_suites([challenge300_suite], tmp_path)
    assert [p.name for p in mine.iterdir()] == ["raw.tsv"]
    assert (mine / "raw.tsv").read_text() == "system\toutput\n"
    assert not (tmp_path / CARD_FILE).exists()


@pytest.mark.parametrize(
    ("tags", "ours"),
    [
        ('"not-nnd-suites-at-all"', False),  # a string that contains our tag
        ("[nnd-suites-fork, other]", False),
        ("{nnd-suites: 1}", False),
        ("[other, nnd-suites]", True),
    ],
)
def test_the_card_is_ours_only_when_its_tags_list_holds_our_tag(
    challenge300_suite, tmp_path, tags, ours
):
    card = f"---\ntags: {tags}\n---\n# my dataset\n"
    (tmp_path / CARD_FILE).write_text(card)
    if ours:
        export_suites([challenge300_suite], tmp_path)
        assert _card_configs(tmp_path) == ["challenge300"]
        return
    with pytest.raises(NNDError, match="not written by nnd-suites"):
        export_suites([challenge300_suite], tmp_path)
    assert (tmp_path / CARD_FILE).read_text() == card
    assert not (tmp_path / "challenge300").exists()


def test_a_kept_config_with_truncated_candidates_is_an_error(
    challenge300_suite, quiz_design_suite, tmp_path
):
    export_suites([challenge300_suite], tmp_path)
    candidates = tmp_path / "challenge300" / CANDIDATES_FILE
    data = candidates.read_bytes()
    candidates.write_bytes(data[: len(data) // 2])
    card = (tmp_path / CARD_FILE).read_bytes()
    with pytest.raises(SuiteValidationError, match=r"config 'challenge300'.*damaged"):
        export_suites([quiz_design_suite], tmp_path)
    assert (tmp_path / CARD_FILE).read_bytes() == card  # the card lists no damaged config
    assert not (tmp_path / "quiz_design").exists()
    with pytest.raises(SuiteValidationError, match="candidates"):
        refresh_card(tmp_path)
    export_suites([challenge300_suite], tmp_path)  # exporting it again repairs it
    assert pq.read_table(candidates).num_rows == len(challenge300_suite.candidates)


def test_a_listed_config_whose_pairs_are_gone_is_an_error_not_dropped(
    challenge300_suite, quiz_design_suite, tmp_path
):
    export_suites([challenge300_suite, quiz_design_suite], tmp_path)
    (tmp_path / "quiz_design" / DATA_FILE).unlink()  # manifest and candidates still there
    card = (tmp_path / CARD_FILE).read_bytes()
    with pytest.raises(SuiteValidationError, match=r"config 'quiz_design'.*damaged.*no pairs"):
        export_suites([challenge300_suite], tmp_path)
    assert (tmp_path / CARD_FILE).read_bytes() == card  # still lists quiz_design
    assert _card_configs(tmp_path) == ["challenge300", "quiz_design"]
    with pytest.raises(SuiteValidationError, match="no pairs"):
        refresh_card(tmp_path)
    export_suites([quiz_design_suite], tmp_path)  # exporting it again repairs it
    assert _card_configs(tmp_path) == ["challenge300", "quiz_design"]


def test_a_folder_without_our_card_takes_configs_only_beside_suites(
    challenge300_suite, quiz_design_suite, tmp_path, capsys
):
    """export --to MODEL_FOLDER (config.json and weights, no README) added a card and a config
    folder to the model (exit 0): a folder without our card holding anything but suite folders
    (hidden files aside: our writers' locks and temporary copies) is refused, its entries
    named."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"weights")
    suite = tmp_path / "suites" / "quiz_design"
    quiz_design_suite.save(suite)
    assert main(["export", str(suite), "--to", str(model)]) == 2
    error = capsys.readouterr().err
    assert f"{model}: holds 2 entries nnd-suites did not write there" in error
    assert "(config.json, model.safetensors)" in error and "nothing was written" in error
    assert sorted(p.name for p in model.iterdir()) == ["config.json", "model.safetensors"]
    # a folder of suite folders (and hidden files: a killed writer's lock) still becomes a
    # dataset folder
    (suite.parent / ".x.nnd-suites.lock").write_text("")
    export_suites([challenge300_suite], suite.parent)
    assert _card_configs(suite.parent) == ["challenge300", "quiz_design"]


def test_a_standalone_metadata_file_is_refused_and_kept(challenge300_suite, tmp_path, capsys):
    # `datasets` lays .huggingface.yaml over the card: these configs would read other files
    standalone = tmp_path / ".huggingface.yaml"
    text = "configs:\n- config_name: challenge300\n  data_files: elsewhere/*.parquet\n"
    standalone.write_text(text)
    with pytest.raises(OutputFolderError, match=r"\.huggingface\.yaml: `datasets.load_dataset`"):
        export_suites([challenge300_suite], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".huggingface.yaml"]
    assert standalone.read_text() == text
    args = ["publish", "challenge300", "--repo", "org/nnd", "--dry-run", "--folder", str(tmp_path)]
    assert main(args) == OutputFolderError.exit_status
    assert "nothing was written" in capsys.readouterr().err


EXPORT_ALL = """
import multiprocessing, sys
from nnd_suites.hub import export_suites
from nnd_suites.suite import Suite

folder, parts = sys.argv[1], sys.argv[2:]
# Each exporter is a process of its own, forked once nnd-suites is imported (ten imports
# would cost more than the exports); each loads its suite, then all start writing together.
fork = multiprocessing.get_context("fork")
start = fork.Barrier(len(parts))


def export_one(part):
    suite = Suite.load(part)
    start.wait(timeout=600)
    export_suites([suite], folder)


exporters = [fork.Process(target=export_one, args=(part,)) for part in parts]
for exporter in exporters:
    exporter.start()
for exporter in exporters:
    exporter.join()
    print(exporter.exitcode)
"""


@pytest.mark.slow  # starts an exporter process per config
def test_concurrent_exports_into_one_folder_all_reach_the_card(tmp_path):
    # gpt3_summ: each config keeps its suite's annotated candidates (300 here), and every export
    # validates the configs already in the folder under its lock
    whole = build_suite("gpt3_summ")
    names = [f"part{i:02d}" for i in range(CONCURRENT)]
    for i, name in enumerate(names):
        part = whole.pairs[10 * i : 10 * i + 10]
        whole.derive(part, name=name).save(tmp_path / "suites" / name)
    folder = tmp_path / "export"
    parts = [str(tmp_path / "suites" / n) for n in names]
    # a session of its own: the exporters it forks are stopped with it
    launcher = subprocess.Popen(
        [sys.executable, "-c", EXPORT_ALL, str(folder), *parts],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        # communicate, not wait: a child filling its stderr pipe would block forever
        exit_codes, errors = launcher.communicate(timeout=900)
    finally:  # no exporter outlives a failed or timed-out test
        if launcher.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
    assert launcher.returncode == 0, errors
    assert exit_codes.split() == ["0"] * CONCURRENT, errors
    assert _card_configs(folder) == names
    assert sorted(datasets.get_dataset_config_names(str(folder))) == names
    # datasets caches under cache_dir/<folder name>/<config>: not tmp_path, where that is the
    # exported folder itself
    cache = tmp_path / "datasets-cache"
    for i, name in enumerate(names):
        rows = datasets.load_dataset(str(folder), name, split="test", cache_dir=str(cache))
        assert rows["id"] == [p.id for p in whole.pairs[10 * i : 10 * i + 10]]
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no lock file, no tmp


def test_refreshing_the_card_of_a_card_less_folder_with_foreign_files_is_refused(
    challenge300_suite, tmp_path
):
    """refresh_card wrote a dataset card into a folder without one that held a config and a
    user's files, which would then be published with it; it is refused as export refuses it."""
    export_suites([challenge300_suite], tmp_path)
    (tmp_path / CARD_FILE).unlink()
    (tmp_path / "notes.txt").write_text("mine\n")
    with pytest.raises(OutputFolderError, match=r"1 entry nnd-suites did not write there \(notes"):
        refresh_card(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["challenge300", "notes.txt"]
    (tmp_path / "notes.txt").unlink()
    assert [c.name for c in refresh_card(tmp_path)] == ["challenge300"]
    assert _card_configs(tmp_path) == ["challenge300"]
