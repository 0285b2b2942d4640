"""Export to a Hub dataset folder and read it back offline: datasets.load_dataset and load_suite."""

from __future__ import annotations

import hashlib
import shutil

import datasets
import pyarrow.parquet as pq
import pytest
import yaml
from collections_watch import collections_during
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCard

from nnd_suites import NNDError, Suite, SuiteValidationError, build_suite, load_suite
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli import main
from nnd_suites.hub import export_suites, suite_features
from nnd_suites.hub.export import adding_configs, refresh_card
from nnd_suites.hub.layout import CARD_FILE
from nnd_suites.suite import DATA_FILE
from nnd_suites.suite import manifest as suite_manifest

#: Built-in adapters that ship their source: the round trip covers every one of them.
SHIPPED = [n for n in ADAPTERS.names() if ADAPTERS.get(n).default_source_path() is not None]
#: The others (SummEval, FRANK: sources too large or licensed to ship) round-trip their fixture.
FIXTURE_ONLY = [n for n in ADAPTERS.names() if n not in SHIPPED]
# the built-in names given to `export` are the session's builds (a build each cost a second)
pytestmark = pytest.mark.usefixtures("builtin_names_give_session_builds")


@pytest.fixture(scope="module")
def exported(tmp_path_factory, shipped_suite_builds):
    """Every built-in suite, exported into one folder."""
    suites = {name: shipped_suite_builds[name] for name in SHIPPED}
    folder = tmp_path_factory.mktemp("hub") / "nnd"
    export_suites(suites.values(), folder, repo_id="org/nnd")
    return folder, suites


def _card_yaml(folder):
    text = (folder / CARD_FILE).read_text("utf-8")
    head, front, _ = text.split("---\n", 2)
    assert head == ""
    return yaml.safe_load(front)


def test_every_shipped_adapter_is_in_the_round_trip():
    assert {"quiz_design", "challenge300"} <= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_load_dataset_round_trip(exported, name, tmp_path):
    folder, suites = exported
    rows = datasets.load_dataset(str(folder), name, split="test", cache_dir=str(tmp_path))
    suite = suites[name]
    assert rows.num_rows == len(suite)
    assert rows["id"] == [pair.id for pair in suite.pairs]
    assert rows.features == suite_features(suite.manifest)
    first = rows[0]
    assert first["context"] == suite.pairs[0].context
    assert first["high"]["text"] == suite.pairs[0].high.text
    assert first["category_path"] == suite.pairs[0].category_path


@pytest.mark.parametrize("name", SHIPPED)
def test_load_suite_round_trip_equals_original(exported, name):
    folder, suites = exported
    assert load_suite(folder, name) == suites[name]
    assert load_suite(folder / name) == suites[name]  # FOLDER/CONFIG on the command line


@pytest.mark.parametrize("name", FIXTURE_ONLY)
def test_fixture_round_trip_of_adapters_without_a_shipped_source(name, tmp_path):
    from nnd_suites.scaffold.harness import FIXTURES, load_expected

    cls = ADAPTERS.get(name)
    expected = load_expected(cls)
    suite = build_suite(name, cls.folder() / FIXTURES / expected.source, **expected.options)
    export_suites([suite], tmp_path / "nnd")
    rows = datasets.load_dataset(str(tmp_path / "nnd"), name, split="test", cache_dir=str(tmp_path))
    assert rows["id"] == [p.id for p in suite.pairs]
    assert rows["aspect"] == [p.aspect for p in suite.pairs]
    assert load_suite(tmp_path / "nnd", name) == suite


def test_figures_survive_the_round_trip(exported, tmp_path):
    folder, _ = exported
    quiz = datasets.load_dataset(str(folder), "quiz_design", split="test", cache_dir=str(tmp_path))
    qa = datasets.load_dataset(str(folder), "challenge300", split="test", cache_dir=str(tmp_path))
    assert (quiz.num_rows, qa.num_rows) == (2686, 807)
    assert qa.features["breakdown"] == {
        "group": datasets.Value("string"),
        "question_category": datasets.Value("string"),
    }
    # the empty answer Challenge 300 graded as incorrect is kept as an empty string
    empty = [p.id for p in exported[1]["challenge300"].pairs if p.low.text == ""]
    assert len(empty) == 1
    assert [row["id"] for row in qa if row["low"]["text"] == ""] == empty


def test_config_names_list_every_suite(exported):
    folder, suites = exported
    assert sorted(datasets.get_dataset_config_names(str(folder))) == sorted(suites)


def test_card_yaml_matches_the_data(exported):
    folder, suites = exported
    meta = _card_yaml(folder)
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert sorted(configs) == sorted(suites)
    for name, config in configs.items():
        assert config["data_files"] == [{"split": "test", "path": f"{name}/test-*.parquet"}]
    infos = DatasetInfosDict.from_dataset_card_data(DatasetCard.load(folder / CARD_FILE).data)
    assert sorted(infos) == sorted(suites)
    for name, suite in suites.items():
        assert infos[name].splits["test"].num_examples == len(suite)
        assert infos[name].features == suite_features(suite.manifest)
        # in the data files' column order (dict equality alone ignores the order)
        assert list(infos[name].features) == list(suite_features(suite.manifest))
        assert infos[name].download_size == (folder / name / DATA_FILE).stat().st_size
    assert {"bsd-3-clause", "apache-2.0"} <= set(meta["license"])  # SPDX ids as the Hub spells them
    assert meta["language"] == sorted(
        {lang for s in suites.values() for lang in s.manifest.languages}
    )
    assert meta["source_datasets"] == ["extended"]
    assert "nnd-suites" in meta["tags"]
    assert "question-answering" in meta["task_categories"]  # Challenge 300
    assert "text-generation" in meta["task_categories"]  # Quiz Design: question generation
    total = sum(len(s) for s in suites.values())
    assert meta["size_categories"] == ["1K<n<10K" if total < 10_000 else "10K<n<100K"]


def test_card_text_describes_how_the_tests_were_built(exported):
    folder, suites = exported
    text = (folder / CARD_FILE).read_text("utf-8")
    for name, suite in suites.items():
        manifest = suite.manifest
        assert f"### `{name}`" in text
        assert manifest.quality_map.description in text
        for category, count in manifest.counts.breakdowns["category"].items():
            assert f"| {category} | {count:,} |" in text
        for skipped in manifest.skipped:
            assert f"| {skipped.reason} | {skipped.count:,} |" in text
        assert manifest.citation.strip() in text
    assert "@inproceedings{laban2022near" in text
    assert 'load_dataset("org/nnd", ' in text
    assert "nnd-suites evaluate --suite hub:org/nnd/" in text
    assert "credit 0.5 takes no part" in text  # Challenge 300's skipped items, with counts
    assert 'data_files="hf://datasets/org/nnd/' in text and "/candidates.parquet" in text


def test_candidates_load_as_the_card_says(exported):
    from datasets import load_dataset

    folder, suites = exported
    for name, suite in suites.items():
        rows = load_dataset(
            "parquet", data_files=str(folder / name / "candidates.parquet"), split="train"
        )
        assert len(rows) == len(suite.candidates) == suite.manifest.counts.candidates
        assert {"group_id", "text", "systems", "label"} <= set(rows.column_names)


def test_manifest_travels_with_each_config(exported):
    folder, suites = exported
    for name, suite in suites.items():
        assert (folder / name / "manifest.json").read_text("utf-8").strip() == (
            suite.manifest.model_dump_json(indent=2)
        )
        schema = pq.read_schema(folder / name / DATA_FILE)
        assert b"huggingface" in schema.metadata  # datasets reads the features from the file too


def test_exporting_more_suites_keeps_the_others(quiz_design_suite, challenge300_suite, tmp_path):
    folder = tmp_path / "nnd"
    export_suites([challenge300_suite], folder)
    assert _card_yaml(folder)["pretty_name"] == "NND test suites: challenge300"
    before = (folder / "challenge300" / DATA_FILE).read_bytes()
    result = export_suites([quiz_design_suite], folder)
    assert result.written == ["quiz_design"]
    assert result.config_names == ["challenge300", "quiz_design"]
    assert [c["config_name"] for c in _card_yaml(folder)["configs"]] == result.config_names
    assert (folder / "challenge300" / DATA_FILE).read_bytes() == before
    export_suites([challenge300_suite], folder)  # again: replaces its own config only
    assert sorted(datasets.get_dataset_config_names(str(folder))) == result.config_names
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temporary leftovers


def test_transformed_suites_round_trip_with_their_parent_ids(challenge300_suite, tmp_path):
    from nnd_suites.transformations.apply import transform_suite

    child = transform_suite(challenge300_suite, "typos")
    export_suites([challenge300_suite, child], tmp_path)
    rows = datasets.load_dataset(str(tmp_path), child.name, split="test", cache_dir=str(tmp_path))
    assert rows["parent_id"] == [p.parent_id for p in child.pairs]
    assert set(rows["parent_id"]) == {p.id for p in challenge300_suite.pairs}
    assert load_suite(tmp_path, child.name) == child
    text = (tmp_path / CARD_FILE).read_text("utf-8")
    info = child.manifest.transformation
    assert f"Transformation `typos` {info.version} of `challenge300`" in text
    assert f"{info.degenerate:,} degenerate" in text


def test_a_license_the_hub_does_not_list_is_declared_as_other(challenge300_suite, tmp_path):
    relicensed = challenge300_suite.derive(challenge300_suite.pairs, license="Custom Research 1.0")
    export_suites([relicensed], tmp_path)
    meta = _card_yaml(tmp_path)
    assert meta["license"] == "other"
    assert meta["license_name"] == "custom-research-1.0"
    assert meta["license_details"] == "challenge300: Custom Research 1.0"
    assert "License: Custom Research 1.0." in (tmp_path / CARD_FILE).read_text("utf-8")


def test_cli_export(tmp_path, capsys):
    folder = tmp_path / "out"
    assert main(["export", "challenge300", "--to", str(folder), "--repo", "me/suites"]) == 0
    out = capsys.readouterr().out
    assert "challenge300: 807 tests (written)" in out
    assert 'load_suite("me/suites", "challenge300")' in (folder / CARD_FILE).read_text("utf-8")
    assert main(["export", str(folder / "challenge300"), "--to", str(tmp_path / "copy")]) == 0
    assert load_suite(tmp_path / "copy", "challenge300") == load_suite(folder / "challenge300")


def test_export_says_when_it_replaces_a_config_and_what_changed(
    challenge300_suite, tmp_path, capsys
):
    # exit 0 and "(written)" alone, whether the config it replaced held 807 tests or 800
    folder, fewer = tmp_path / "ds", tmp_path / "fewer"
    challenge300_suite.derive(challenge300_suite.pairs[:800]).save(fewer)
    assert main(["export", "challenge300", "--to", str(folder)]) == 0
    assert "challenge300: 807 tests (written)" in capsys.readouterr().out
    assert main(["export", str(fewer), "--to", str(folder)]) == 0
    old, new = challenge300_suite.manifest.content_hash, load_suite(fewer).manifest.content_hash
    assert (
        "challenge300: 800 tests (written, replacing a config of 807 tests whose content hash "
        f"differs: {old[:12]} before, {new[:12]} now)"
    ) in capsys.readouterr().out
    assert main(["export", str(fewer), "--to", str(folder)]) == 0
    again = "challenge300: 800 tests (written again, the same tests as the config it replaced)"
    assert again in capsys.readouterr().out


# ------------------------------------------------------------------------------- bad input
def _renamed(suite: Suite, name: str) -> Suite:
    # sealed(), not derive(): the manifest's own name check would refuse some of these first
    renamed = suite.manifest.model_copy(update={"name": name})
    return Suite(renamed.sealed(suite.pairs, suite.candidates), suite.pairs, suite.candidates)


def test_invalid_suite_is_not_exported_and_nothing_is_written(
    challenge300_suite, quiz_design_suite, tmp_path
):
    folder = tmp_path / "nnd"
    export_suites([challenge300_suite], folder)
    card = (folder / CARD_FILE).read_bytes()
    broken = Suite(
        quiz_design_suite.manifest, quiz_design_suite.pairs[:-1], quiz_design_suite.candidates
    )
    valid = _renamed(challenge300_suite, "c300_copy")
    with pytest.raises(
        SuiteValidationError,
        match=r"cannot export: suite 'quiz_design' is invalid"
        r".*2686 pairs, the data has 2685",
    ):
        export_suites([valid, broken], folder)
    assert (folder / CARD_FILE).read_bytes() == card
    assert sorted(p.name for p in folder.iterdir()) == [CARD_FILE, "challenge300"]


@pytest.mark.parametrize(
    "name,reason",
    [
        ("quiz design", "no spaces"),
        ("org/quiz", "slashes"),
        ("quiz:design", "<>:/"),
        ("README.md", "reserved"),
        ("default", "reserved"),
        ("quiz..design", "inner dots"),
        ("x" * 97, "at most 96"),
    ],
)
def test_config_names_the_hub_rejects(challenge300_suite, tmp_path, name, reason):
    with pytest.raises(NNDError, match=rf"cannot be a Hub config name.*{reason}"):
        export_suites([_renamed(challenge300_suite, name)], tmp_path / "nnd")
    assert not (tmp_path / "nnd").exists()


def test_config_names_must_differ_ignoring_case(challenge300_suite, tmp_path):
    export_suites([challenge300_suite], tmp_path)
    with pytest.raises(NNDError, match="'challenge300' and 'Challenge300'"):
        export_suites([_renamed(challenge300_suite, "Challenge300")], tmp_path)


def test_a_card_refreshed_over_two_config_folders_differing_in_case_says_move_one_out(
    challenge300_suite, tmp_path
):
    # both folders are there (copied in by hand): "rebuild one with --name" would leave both
    export_suites([challenge300_suite], tmp_path)
    export_suites([_renamed(challenge300_suite, "Challenge300")], tmp_path / "other")
    shutil.copytree(tmp_path / "other" / "Challenge300", tmp_path / "Challenge300")
    with pytest.raises(NNDError, match="'Challenge300' and 'challenge300'") as refused:
        refresh_card(tmp_path)
    assert f"move {tmp_path / 'Challenge300'} out of {tmp_path}" in str(refused.value)


def test_a_suite_given_twice_is_refused_as_a_repeat_not_sent_to_rebuild(tmp_path, capsys):
    # the same tests twice, by name and by builtin:NAME: --name would make a second config of them
    out = tmp_path / "ds"
    assert main(["export", "challenge300", "builtin:challenge300", "--to", str(out)]) == 2
    assert "suite 'challenge300' is given twice (the same tests); give it once" in (
        capsys.readouterr().err
    )
    assert not out.exists()


def test_the_same_suite_object_given_twice_is_refused_as_a_repeat(challenge300_suite, tmp_path):
    # it was sent to `nnd-suites build --name`, as two suites whose names differ only in case
    with pytest.raises(NNDError, match=r"^suite 'challenge300' is given twice \(the same tests"):
        export_suites([challenge300_suite, challenge300_suite], tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


def test_mismatched_schema_is_reported(challenge300_suite, quiz_design_suite, tmp_path):
    folder = tmp_path / "nnd"
    export_suites([challenge300_suite, quiz_design_suite], folder)
    shutil.copy(folder / "quiz_design" / DATA_FILE, folder / "challenge300" / DATA_FILE)
    pattern = (
        r"challenge300/test-00000-of-00001.parquet: schema does not match the manifest of "
        r"suite 'challenge300'.*context: struct<answer"
    )
    with pytest.raises(SuiteValidationError, match=pattern):
        load_suite(folder, "challenge300")
    with pytest.raises(SuiteValidationError, match=pattern):  # re-exporting another suite
        export_suites([quiz_design_suite], folder)


def test_tampered_rows_fail_the_content_hash(challenge300_suite, tmp_path):
    export_suites([challenge300_suite], tmp_path)
    path = tmp_path / "challenge300" / DATA_FILE
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[3]["low"]["text"] = "edited"
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), path)
    with pytest.raises(SuiteValidationError, match="edited after it was written: the pairs"):
        load_suite(tmp_path / "challenge300")


def test_a_card_not_written_by_nnd_suites_is_never_overwritten(challenge300_suite, tmp_path):
    card = "---\nlicense: mit\n---\n# my dataset\n"
    (tmp_path / CARD_FILE).write_text(card)
    with pytest.raises(NNDError, match="not written by nnd-suites"):
        export_suites([challenge300_suite], tmp_path)
    assert (tmp_path / CARD_FILE).read_text() == card
    assert not (tmp_path / "challenge300").exists()


def test_cli_export_errors_exit_2(tmp_path, capsys):
    (tmp_path / CARD_FILE).write_text("---\ntags: [other]\n---\n")
    assert main(["export", "challenge300", "--to", str(tmp_path)]) == 2
    assert "nnd-suites export: error:" in capsys.readouterr().err


@pytest.mark.parametrize(
    "repo",
    ['a/b")\nimport os; os.system("id")\n#', "org/name with space", "a/b/c", "../x", "org/"],
)
def test_an_invalid_repo_id_never_reaches_the_card(challenge300_suite, tmp_path, capsys, repo):
    with pytest.raises(NNDError, match="invalid Hub repository id"):
        export_suites([challenge300_suite], tmp_path / "out", repo_id=repo)
    assert not (tmp_path / "out").exists()  # refused before anything is written
    args = ["export", str(tmp_path / "missing"), "--to", str(tmp_path / "cli"), "--repo", repo]
    suite_folder = challenge300_suite.save(tmp_path / "suite")
    args[1] = str(suite_folder)
    assert main(args) != 0 and "invalid Hub repository id" in capsys.readouterr().err
    assert not (tmp_path / "cli").exists()


def test_a_valid_repo_id_fills_the_snippets(challenge300_suite, tmp_path):
    export_suites([challenge300_suite], tmp_path / "out", repo_id="my-org/nnd.suites_v1")
    card = (tmp_path / "out" / CARD_FILE).read_text("utf-8")
    assert 'load_dataset("my-org/nnd.suites_v1"' in card and "ORG/NAME" not in card


def test_a_local_source_is_recorded_by_name_and_hash_not_by_path(tmp_path):
    private = tmp_path / "home" / "alice" / "private"
    private.mkdir(parents=True)
    source = private / "challenge300-outputs.tsv"
    shutil.copy(ADAPTERS.get("challenge300").default_source_path(), source)
    suite = build_suite("challenge300", source)
    export_suites([suite], tmp_path / "out")
    published = "".join(p.read_text("utf-8") for p in (tmp_path / "out").rglob("*.json"))
    published += (tmp_path / "out" / CARD_FILE).read_text("utf-8")
    assert "alice" not in published and str(tmp_path) not in published
    (recorded,) = suite.manifest.sources
    assert recorded.path == "challenge300-outputs.tsv"
    assert recorded.sha256 == hashlib.sha256(source.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "front, message",
    [
        ("tags: " + "[" * 5_000 + "]" * 5_000, "nested deeper than"),
        ("size: " + "7" * 5_000, "an integer of 5,000 digits"),
    ],
)
def test_a_hostile_card_is_a_named_error(challenge300_suite, tmp_path, front, message):
    out = tmp_path / "out"
    out.mkdir()
    (out / CARD_FILE).write_text(f"---\n{front}\n---\n\n# card\n", encoding="utf-8")
    with pytest.raises(NNDError, match=message):
        export_suites([challenge300_suite], out)
    assert sorted(p.name for p in out.iterdir()) == [CARD_FILE]


def test_a_card_that_is_not_a_file_is_a_named_error(challenge300_suite, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / CARD_FILE).symlink_to("/dev/zero")
    with pytest.raises(NNDError, match="is a device"):
        export_suites([challenge300_suite], out)


def test_source_text_in_the_card_stays_on_its_line_and_renders_as_text(quiz_design_suite):
    """Category names, descriptions and the quality map's description are pasted into the card:
    their line breaks would break its list and tables, a '<!--' would hide the rest of the card
    on the Hub, a leading '#' would make a heading."""
    from nnd_suites.hub.card import build_card
    from nnd_suites.hub.configs import ConfigInfo

    m = quiz_design_suite.manifest
    categories = {"off\ntarget": 5, "x|y": 2, "<b>bold</b>": 1}
    manifest = m.model_copy(
        update={
            "description": "# not a heading\nsecond line",
            "quality_map": m.quality_map.model_copy(
                update={"description": "first\nsecond\r\nthird\u2028fourth <!-- hides the rest"}
            ),
            "counts": m.counts.model_copy(
                update={"breakdowns": {**m.counts.breakdowns, "category": categories}}
            ),
        }
    )
    info = ConfigInfo("quiz_design", manifest, 8, 1, 1, datasets.Features())
    card = build_card([info])
    lines = card.splitlines()
    assert "\\# not a heading second line" in lines
    assert "- Quality map `quiz_design`: first second third fourth &lt;!-- hides the rest" in lines
    assert "| off target | 5 |" in lines and "| x\\|y | 2 |" in lines
    assert "| &lt;b&gt;bold&lt;/b&gt; | 1 |" in lines
    assert "<!--" not in card.replace("<!-- generated by nnd-suites", "")
    assert card.rstrip().endswith("```")  # the rest of the card is there


@pytest.mark.parametrize("repo_id", [None, "org/nnd-tests"])
def test_the_card_is_the_text_huggingface_hub_gives(
    quiz_design_suite, challenge300_suite, tmp_path, repo_id
):
    """The card is rendered as ``DatasetCard.from_template`` renders it, without parsing it
    back: the same text, for configs with and without raters' votes."""
    from nnd_suites.hub.card import build_card, card_template, card_values
    from nnd_suites.hub.configs import describe_config

    rated = build_suite("gpt3_summ")
    result = export_suites([quiz_design_suite, challenge300_suite, rated], tmp_path)
    configs = [describe_config(tmp_path / name) for name in result.written]
    assert any(c.agreement is not None for c in configs)
    data, values = card_values(configs, repo_id)
    expected = DatasetCard.from_template(data, template_str=card_template(), **values)
    assert build_card(configs, repo_id) == str(expected)


def _with_placeholders(suite: Suite, **fields: str) -> Suite:
    """``suite`` as a build of a scaffolded adapter whose ``fields`` still hold its TODO."""
    updates: dict = {k: v for k, v in fields.items() if k != "map_description"}
    if "map_description" in fields:
        updates["quality_map"] = suite.manifest.quality_map.model_copy(
            update={"description": fields["map_description"]}
        )
    return suite.derive(suite.pairs, **updates)


def test_a_suite_still_holding_the_scaffolds_todo_is_not_exported(
    quiz_design_suite, tmp_path, capsys
):
    # what `nnd-suites new-adapter` writes where only the contributor knows the answer
    todo = _with_placeholders(quiz_design_suite, license="TODO", citation="TODO: BibTeX")
    assert todo.manifest.placeholders() == ["license", "citation"]
    with pytest.raises(SuiteValidationError, match=r"its license, citation still hold the TODO"):
        export_suites([quiz_design_suite, todo.derive(todo.pairs, name="qd_todo")], tmp_path / "ds")
    assert not (tmp_path / "ds").exists()  # checked before anything is written
    todo.save(tmp_path / "qd")
    assert main(["export", str(tmp_path / "qd"), "--to", str(tmp_path / "ds")]) == 5
    err = capsys.readouterr().err
    assert "metadata of adapter 'quiz_design'" in err and "quality map" not in err
    assert not (tmp_path / "ds").exists()
    # only the rule's description: the quality map is named, not the adapter
    rule = _with_placeholders(quiz_design_suite, map_description="TODO the rule in words.")
    with pytest.raises(SuiteValidationError, match="its quality map description still holds") as e:
        export_suites([rule], tmp_path / "ds")
    assert "description of quality map 'quiz_design'" in str(e.value)
    assert "adapter" not in str(e.value).split("fill in")[1]
    # `build --catalogue` (or --all) writes config after config: one found later with a TODO
    # said "nothing was written" beside the configs it had written
    folder = adding_configs(tmp_path / "cat", ["quiz_design", "qd_todo"])
    with pytest.raises(SuiteValidationError, match="the suite was not written") as e, folder as ds:
        ds.add(quiz_design_suite)
        ds.add(todo.derive(todo.pairs, name="qd_todo"))
    assert "nothing was written" not in str(e.value)
    assert load_suite(str(tmp_path / "cat" / "quiz_design")).name == "quiz_design"
    # a word that merely contains it is no placeholder
    assert _with_placeholders(quiz_design_suite, task="TODOS, a task").manifest.placeholders() == []


@pytest.mark.parametrize("operation", ["build", "export"])
def test_building_or_exporting_sets_off_no_garbage_collection(
    quiz_design_suite, tmp_path, operation
):
    """As a suite's save and load (tests/suite/test_suite_io.py): a build of quiz_design made 66
    collections, an export of wmt_mqm 322, each walking every object the process held."""
    run = {
        "build": lambda: build_suite("quiz_design", out=tmp_path / "quiz_design"),
        "export": lambda: export_suites([quiz_design_suite], tmp_path / "export"),
    }
    assert len(collections_during(run[operation])) <= 1


@pytest.mark.parametrize("operation", ["build", "export"])
def test_a_suite_is_hashed_once_per_build_or_export(
    quiz_design_suite, tmp_path, monkeypatch, operation
):
    """An export validated each suite, then its save validated it again, and a build with an
    out folder hashed the suite it had just sealed again to save it: every pair and candidate
    was serialised and hashed twice. Once now (pairs and candidates: two hashes)."""
    hashed, rows_hash = [], suite_manifest.rows_hash
    monkeypatch.setattr(
        suite_manifest, "rows_hash", lambda rows: hashed.append(1) or rows_hash(rows)
    )
    run = {
        "build": lambda: build_suite("quiz_design", out=tmp_path / "quiz_design"),
        "export": lambda: export_suites([quiz_design_suite], tmp_path / "export"),
    }
    run[operation]()
    assert len(hashed) == 2
