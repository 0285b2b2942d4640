"""`nnd-suites validate` of an export folder: every config, and the card's metadata that
`datasets.load_dataset` follows, checked against the configs present."""

from __future__ import annotations

import json
import re
import shutil

import datasets
import pytest

from nnd_suites import SuiteValidationError, load_suite
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli import main
from nnd_suites.hub import export_suites
from nnd_suites.hub.layout import CARD_FILE
from nnd_suites.resolve import resolve_suites
from nnd_suites.transformations.apply import transform_suite

LOWERCASE = "quiz_design.lowercase"


def _twins(suite):
    """``suite`` and its lowercase child: the same Features and row count, other pairs."""
    return suite, transform_suite(suite, "lowercase")


@pytest.fixture(scope="module")
def twins(quiz_design_suite):
    """The twins of quiz_design's first 200 tests (a config of them reads in a tenth of the
    time), for the checks whose outcome does not depend on how many tests a config holds."""
    return _twins(quiz_design_suite.derive(quiz_design_suite.pairs[:200]))


@pytest.fixture(scope="module")
def exported_once(twins, quiz_design_suite, tmp_path_factory):
    """The export folders of the twins and of the whole quiz_design's twins."""
    folders = {"part": twins, "whole": _twins(quiz_design_suite)}
    for size, suites in folders.items():
        folders[size] = tmp_path_factory.mktemp(size) / "nnd"
        export_suites(suites, folders[size])
    return folders


@pytest.fixture
def exported(exported_once, tmp_path):
    """The twins' export folder, a copy of its own per test (the tests edit it)."""
    return shutil.copytree(exported_once["part"], tmp_path / "nnd")


@pytest.fixture
def whole_exported(exported_once, tmp_path):
    """The whole quiz_design's twins' export folder, a copy of its own per test."""
    return shutil.copytree(exported_once["whole"], tmp_path / "nnd")


def _ids(folder, config, cache):
    return datasets.load_dataset(str(folder), config, split="test", cache_dir=str(cache))["id"]


def _swap(text: str, first: str, second: str) -> str:
    return text.replace(first, "\0").replace(second, first).replace("\0", second)


def test_validate_accepts_an_export_folder(whole_exported, capsys):
    assert main(["validate", str(whole_exported)]) == 0
    out = capsys.readouterr().out
    assert "valid export folder, 2 configs" in out
    assert "quiz_design: valid suite, 2,686 pairs" in out
    assert f"{LOWERCASE}: valid suite, 2,686 pairs" in out
    assert main(["validate", str(whole_exported / "quiz_design")]) == 0
    assert "the card of" in capsys.readouterr().out


def _swap_data_files(folder):
    card = folder / CARD_FILE
    card.write_text(
        _swap(card.read_text("utf-8"), "path: quiz_design/", f"path: {LOWERCASE}/"), "utf-8"
    )


def _swap_config_folders(folder):
    (folder / "quiz_design").rename(folder / "swapping")
    (folder / LOWERCASE).rename(folder / "quiz_design")
    (folder / "swapping").rename(folder / LOWERCASE)


def test_swapped_data_files_in_the_card_are_named(twins, exported, tmp_path, capsys):
    card = exported / CARD_FILE
    _swap_data_files(exported)
    qd, lowercase = twins
    # what a user of the folder meets: the child's pairs under the parent's name, no error
    assert _ids(exported, "quiz_design", tmp_path / "c1") == [p.id for p in lowercase.pairs]
    assert main(["validate", str(exported)]) == SuiteValidationError.exit_status
    err = capsys.readouterr().err
    assert f"{card}: the card does not describe the configs" in err
    assert f"config 'quiz_design' reads data_files [{{'split': 'test', 'path': '{LOWERCASE}/" in err
    assert f"config '{LOWERCASE}' reads data_files" in err
    assert f"nnd-suites export {exported / 'quiz_design'} --to {exported}" in err
    assert main(["validate", str(exported / "quiz_design")]) == SuiteValidationError.exit_status
    assert "config 'quiz_design' reads data_files" in capsys.readouterr().err
    # the repair the message gives
    assert main(["export", str(exported / "quiz_design"), "--to", str(exported)]) == 0
    assert main(["validate", str(exported)]) == 0
    assert _ids(exported, "quiz_design", tmp_path / "c2") == [p.id for p in qd.pairs]


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (_swap_data_files, "config 'quiz_design' reads data_files [{'split': 'test', 'path': "),
        (_swap_config_folders, f"the folder of config 'quiz_design' holds suite '{LOWERCASE}'"),
    ],
    ids=["data-files", "folders"],
)
def test_a_config_the_card_reads_from_other_files_is_not_read(exported, edit, named, capsys):
    """stats and baselines of FOLDER/CONFIG (and evaluate, through the resolver) read the
    config's folder and exited 0 while `datasets.load_dataset(FOLDER, CONFIG)` read other files,
    and validate named swapped folders as configs "the folder does not hold"."""
    edit(exported)
    config = exported / "quiz_design"
    for command in ("stats", "baselines", "validate"):
        assert main([command, str(config)]) == SuiteValidationError.exit_status
        assert named in capsys.readouterr().err
    assert main(["validate", str(exported)]) == SuiteValidationError.exit_status
    assert named in capsys.readouterr().err
    loads = [
        lambda: load_suite(config),
        lambda: load_suite(exported, "quiz_design"),
        lambda: resolve_suites([exported]),
    ]
    for load in loads:
        with pytest.raises(SuiteValidationError, match=re.escape(named)):
            load()


def test_the_card_is_read_only_where_nnd_suites_wrote_it(quiz_design_suite, tmp_path, capsys):
    folder = quiz_design_suite.save(tmp_path / "project" / "quiz_design")
    assert main(["stats", str(folder)]) == 0  # a plain suite folder, no card above it
    (folder.parent / CARD_FILE).write_text(f"# My project\n\nconfigs: {LOWERCASE}/\n")
    assert main(["stats", str(folder)]) == 0
    assert load_suite(folder).manifest == quiz_design_suite.manifest


def test_a_suite_copied_into_a_dataset_folder_is_read_as_a_suite(exported, twins, capsys):
    """A suite folder the card does not list is no config `load_dataset` reads: its readers take
    it as a plain suite folder (validate still says the card leaves it out)."""
    child = transform_suite(twins[0], "whitespace")
    copied = child.save(exported / child.name)  # as `cp -r` would put it there
    assert main(["stats", str(copied)]) == 0
    assert f"suite {child.name}" in capsys.readouterr().out
    assert load_suite(copied).manifest == child.manifest
    assert main(["validate", str(copied)]) == SuiteValidationError.exit_status


def test_an_edited_suite_name_in_a_config_is_named(exported, capsys):
    """validate named a config whose manifest's name was edited as one "the folder does not
    hold", when the manifest no longer matches its content hash."""
    manifest = exported / "quiz_design" / "manifest.json"
    fields = json.loads(manifest.read_text("utf-8"))
    manifest.write_text(json.dumps({**fields, "name": "quiz"}), "utf-8")
    assert main(["validate", str(exported)]) == SuiteValidationError.exit_status
    err = capsys.readouterr().err
    assert "config 'quiz_design' in" in err
    assert "edited after it was written: manifest field 'name'" in err
    assert "which the folder does not hold" not in err


def _list_quiz_design_twice(folder):
    card = folder / CARD_FILE
    head, configs = card.read_text("utf-8").split("\nconfigs:\n")
    wrong = (
        "- config_name: quiz_design\n  data_files:\n  - split: test\n"
        f"    path: {LOWERCASE}/test-*.parquet\n"
    )
    # appended to the list, the wrong entry is the one `datasets` keeps
    configs = configs.replace("---\n", wrong + "---\n", 1)
    card.write_text(f"{head}\nconfigs:\n{configs}", "utf-8")


def _edit_card(old, new):
    def edit(folder):
        card = folder / CARD_FILE
        text = card.read_text("utf-8")
        assert old in text
        card.write_text(text.replace(old, new), "utf-8")

    return edit


def _standalone_yaml(folder):
    (folder / ".huggingface.yaml").write_text(
        f"configs:\n- config_name: quiz_design\n  data_files: {LOWERCASE}/test-*.parquet\n"
    )


def _rename_config(folder):
    (folder / LOWERCASE).rename(folder / "qd_lower")


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (_list_quiz_design_twice, "its configs lists config 'quiz_design' 2 times"),
        (
            _edit_card("num_examples: 2686", "num_examples: 2600"),
            "gives config 'quiz_design' the splits {'test': 2600}, its files hold {'test': 2686}",
        ),
        (_edit_card("split: test", "split: train"), "'split': 'train'"),
        (_standalone_yaml, ".huggingface.yaml overrides the card's metadata"),
        (_rename_config, f"it lists config '{LOWERCASE}', which the folder does not hold"),
        (lambda folder: (folder / CARD_FILE).unlink(), "cannot read the dataset card"),
    ],
    ids=["listed-twice", "num-examples", "split-renamed", "huggingface-yaml", "renamed", "no-card"],
)
def test_a_card_that_does_not_describe_the_folder_is_named(whole_exported, edit, named, capsys):
    edit(whole_exported)
    assert main(["validate", str(whole_exported)]) == SuiteValidationError.exit_status
    assert named in capsys.readouterr().err


def test_a_damaged_config_of_an_export_folder_is_named(exported, twins, capsys):
    shard = exported / "quiz_design" / "test-00000-of-00001.parquet"
    shutil.copy(exported / LOWERCASE / shard.name, shard)  # same schema and rows, other pairs
    assert main(["validate", str(exported)]) == SuiteValidationError.exit_status
    err = capsys.readouterr().err
    assert "config 'quiz_design' in" in err
    assert "edited after it was written: the pairs" in err


def test_a_folder_whose_card_is_not_ours_is_named_with_advice_for_validate(exported, capsys):
    """validate said "nothing was written: write the suites into a new or empty folder", a
    writer's advice, for an export folder whose README.md is a project's own."""
    (exported / CARD_FILE).write_text("# My project\n")
    assert main(["validate", str(exported)]) == SuiteValidationError.exit_status
    err = capsys.readouterr().err
    assert f"{exported / CARD_FILE}: not the card nnd-suites writes" in err
    assert "Validate each suite folder (FOLDER/CONFIG)" in err
    assert "write the suites into a new" not in err
    assert main(["validate", str(exported / "quiz_design")]) == 0


def test_a_folder_of_configs_parses_its_card_once_and_still_sees_an_edit(exported, monkeypatch):
    """Resolving an export folder checked each config against the card, reading and parsing
    README.md three times per config (whose card, its configs, its metadata): the YAML parse of
    a card of many configs took most of `stats` and `evaluate`'s reading time. Each text is now
    parsed once; a card edited since is parsed anew, and its fault still named."""
    from nnd_suites.hub import card_reading
    from nnd_suites.infra import reading  # the card's front matter is read and parsed there

    parsed = []
    real_parse, real_card = reading.parse_yaml, card_reading.DatasetCard
    monkeypatch.setattr(reading, "parse_yaml", lambda *a: parsed.append(1) or real_parse(*a))
    monkeypatch.setattr(card_reading, "DatasetCard", lambda t: parsed.append(2) or real_card(t))
    assert [s.name for s in resolve_suites(exported)] == ["quiz_design", LOWERCASE]
    assert parsed == [1, 2]  # our bounded parse, then huggingface_hub's: once each, not per config
    _swap_data_files(exported)
    with pytest.raises(SuiteValidationError, match="config 'quiz_design' reads data_files"):
        resolve_suites(exported)
    assert parsed == [1, 2, 1, 2]


def _copy_in_a_case_twin(exported, tmp_path) -> None:
    """Config 'Quiz_design' (60 lines of the source) copied into ``exported``, which holds
    'quiz_design': a folder no export would write."""
    from nnd_suites import build_suite

    source = tmp_path / "part.jsonl"
    source.write_text(
        "".join(ADAPTERS.get("quiz_design").default_source_path().open().readlines()[:60])
    )
    twin = build_suite("quiz_design", source, name="Quiz_design")
    export_suites([twin], tmp_path / "other")
    shutil.copytree(tmp_path / "other" / "Quiz_design", exported / "Quiz_design")


def test_a_card_listing_configs_that_differ_only_in_case_is_refused_with_advice_that_works(
    exported, tmp_path, capsys
):
    """validate accepted a card made by hand for configs 'quiz_design' and 'Quiz_design'
    (exit 0), which collide on case-insensitive file systems and on the Hub; export and build
    refuse such names, and validate now names them."""
    from nnd_suites.hub.card import build_card
    from nnd_suites.hub.configs import describe_config

    _copy_in_a_case_twin(exported, tmp_path)
    configs = [describe_config(exported / n) for n in ("quiz_design", LOWERCASE, "Quiz_design")]
    (exported / CARD_FILE).write_text(build_card(configs, None), "utf-8")
    assert main(["validate", str(exported)]) == SuiteValidationError.exit_status
    err = capsys.readouterr().err
    assert "two configs named 'Quiz_design' and 'quiz_design'" in err
    assert "collide on case-insensitive file systems and on the Hub" in err
    # the advice works: it was "regenerate the card with `nnd-suites export NND/Quiz_design --to
    # NND`", which export refuses while the folder holds both configs (exit 2)
    advice = re.search(
        r"; move (\S+) out of \S+ \(.*\), then regenerate .* `nnd-suites (.*)`$", err
    )
    assert advice, err
    shutil.move(advice[1], tmp_path / "aside")
    assert main(advice[2].split()) == 0
    assert main(["validate", str(exported)]) == 0


def test_export_into_a_folder_holding_configs_that_differ_only_in_case_says_what_works(
    exported, tmp_path, capsys
):
    """`export NND/quiz_design --to NND` beside a copied-in 'Quiz_design' said "rebuild one with
    `nnd-suites build --name`", and an export of the rebuilt suite was refused the same (exit 2):
    both folders stay. It names the folder to move out first; followed, the export works."""
    _copy_in_a_case_twin(exported, tmp_path)
    argv = ["export", str(exported / "quiz_design"), "--to", str(exported)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "two configs named 'Quiz_design' and 'quiz_design'" in err
    moved = exported / "Quiz_design"  # the one kept, not the one exported
    assert f"; move {moved} out of {exported} (to keep its suite in the folder, build or " in err
    shutil.move(moved, tmp_path / "aside")
    assert main(argv) == 0
    assert main(["validate", str(exported)]) == 0
