"""One suite on disk (issue 20 §5): `build` writes the exported-config layout, one reader reads a
suite folder whoever wrote it, and suites written the old way (``pairs.parquet``, before the
votes, margin and raters columns) still load, with the hashes they were written with."""

from __future__ import annotations

import hashlib
import os
import shutil

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nnd_suites import NNDError, Suite, SuiteValidationError, load_suite
from nnd_suites.cli import main
from nnd_suites.hub import export_suites, refresh_card
from nnd_suites.records.votes import Vote
from nnd_suites.suite import (
    CANDIDATES_FILE,
    DATA_FILE,
    LEGACY_PAIRS_FILE,
    MANIFEST_FILE,
    pair_rows,
    pairs_arrow_schema,
    suite_features,
)
from nnd_suites.suite.candidates import candidates_to_table
from nnd_suites.suite.manifest import BuildCounts, rows_hash
from nnd_suites.suite.storage import dataset_split_files, read_parquet
from nnd_suites.suite.suite import COMPUTED

SUITE_FILES = sorted([CANDIDATES_FILE, DATA_FILE, MANIFEST_FILE])


def as_older_release(suite: Suite) -> Suite:
    """The suite as a release before format 2.3 built it: no votes, margins or raters."""
    pairs = [p.model_copy(update={"votes": [], "margin": None}) for p in suite.pairs]
    candidates = [c.model_copy(update={"raters": None}) for c in suite.candidates]
    fields = suite.manifest.model_dump(exclude=set(COMPUTED))
    fields.update(format_version="2.2", margin_kind=None)
    build = BuildCounts(**suite.manifest.counts.model_dump(include=set(BuildCounts.model_fields)))
    return Suite.from_pairs(pairs, counts=build, candidates=candidates, **fields)


def write_old_layout(suite: Suite, folder):
    """The folder a release before the one layout wrote, made with pyarrow: the pairs in
    pairs.parquet without Features nor votes/margin columns, candidates without raters, and a
    manifest without margin_kind."""
    folder.mkdir(parents=True)
    manifest = suite.manifest
    schema = pairs_arrow_schema(manifest.context_fields, manifest.breakdown_fields)
    pairs = pa.Table.from_pylist(pair_rows(suite.pairs), schema=schema)
    pq.write_table(pairs.drop_columns(["votes", "margin"]), folder / LEGACY_PAIRS_FILE)
    candidates = candidates_to_table(suite.candidates).drop_columns(["raters"])
    pq.write_table(candidates, folder / CANDIDATES_FILE)
    text = manifest.model_dump_json(indent=2, exclude={"margin_kind"})
    (folder / MANIFEST_FILE).write_text(text + "\n")
    return folder


def old_rows_hash(rows, later_fields):
    """The rows hash as releases before the later fields computed it (they had no such fields)."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(row.model_dump_json(exclude=set(later_fields)).encode() + b"\n")
    return digest.hexdigest()


@pytest.fixture(scope="module")
def built_and_exported(challenge300_suite, tmp_path_factory):
    root = tmp_path_factory.mktemp("one-layout")
    built = challenge300_suite.save(root / "built")
    export_suites([challenge300_suite], root / "export")
    return built, root / "export" / "challenge300"


def test_build_writes_an_exported_config_file_for_file(built_and_exported):
    built, config = built_and_exported
    assert sorted(p.name for p in built.iterdir()) == SUITE_FILES
    assert sorted(p.name for p in config.iterdir()) == SUITE_FILES
    for name in SUITE_FILES:
        assert (built / name).read_bytes() == (config / name).read_bytes(), name
    assert b"huggingface" in pq.read_schema(built / DATA_FILE).metadata  # the Features


def test_datasets_reads_a_built_suite_folder(built_and_exported, challenge300_suite, tmp_path):
    built, _ = built_and_exported
    rows = datasets.load_dataset(str(built), split="test", cache_dir=str(tmp_path))
    assert rows.features == suite_features(challenge300_suite.manifest)
    assert rows["id"] == [pair.id for pair in challenge300_suite.pairs]  # candidates: not a split


def test_one_reader_for_what_build_and_export_wrote(built_and_exported, challenge300_suite, capsys):
    built, config = built_and_exported
    assert Suite.load(built) == Suite.load(config) == challenge300_suite
    assert load_suite(built) == load_suite(config) == challenge300_suite
    assert main(["validate", str(config)]) == 0  # `validate` reads an exported config too
    assert "807 pairs" in capsys.readouterr().out


@pytest.fixture(scope="module")
def older(challenge300_suite):
    """Challenge 300 as a release before format 2.3 built it."""
    return as_older_release(challenge300_suite)


def test_a_suite_written_the_old_way_still_loads(older, tmp_path, capsys):
    old = write_old_layout(older, tmp_path / "old")
    assert Suite.load(old) == older
    assert load_suite(old) == older
    assert main(["validate", str(old)]) == 0
    assert "807 pairs" in capsys.readouterr().out
    assert main(["stats", str(old)]) == 0


def test_rows_are_hashed_as_older_releases_hashed_them(older):
    """No hash depends on a file name, and the fields format 2.3 added (votes, margin, raters)
    leave the hash of a row that does not use them as releases before them computed it."""
    hashes = older.manifest.section_hashes
    assert hashes["pairs"] == old_rows_hash(older.pairs, ["votes", "margin"])
    assert hashes["candidates"] == old_rows_hash(older.candidates, ["raters"])
    # a pair that has votes is hashed whole: dropping them is an edit
    plain = older.pairs[0]
    voted = plain.model_copy(update={"votes": [Vote(prefers="high")], "margin": 1.0})
    assert rows_hash([voted]) == old_rows_hash([voted], []) != rows_hash([plain])


def test_an_export_folder_of_an_older_release_takes_new_suites(older, quiz_design_suite, tmp_path):
    """A config exported before the votes and margin columns is kept, validated, and described
    in the regenerated card by the Features its file holds, so `datasets` still reads it."""
    folder = tmp_path / "nnd"
    export_suites([older], folder)
    path = folder / "challenge300" / DATA_FILE
    table = pq.read_table(path).drop_columns(["votes", "margin"])
    features = datasets.Features.from_arrow_schema(table.schema.remove_metadata())
    pq.write_table(table.replace_schema_metadata(features.arrow_schema.metadata), path)
    refresh_card(folder)  # the card that release wrote: the Features of its files
    assert load_suite(folder, "challenge300") == older
    result = export_suites([quiz_design_suite], folder)
    assert result.config_names == ["challenge300", "quiz_design"]
    kept = next(c for c in result.configs if c.name == "challenge300")
    assert kept.features == features and "votes" not in kept.features
    rows = datasets.load_dataset(str(folder), "challenge300", split="test", cache_dir=str(tmp_path))
    assert rows["id"] == [pair.id for pair in older.pairs]


def test_saving_an_old_suite_writes_the_one_layout(older, tmp_path):
    old = write_old_layout(older, tmp_path / "old")
    Suite.load(old).save(old)  # replaced as a whole, atomically
    assert sorted(p.name for p in old.iterdir()) == SUITE_FILES
    assert Suite.load(old) == older


def test_an_edited_old_suite_is_refused(older, tmp_path):
    old = write_old_layout(older, tmp_path / "old")
    table = pq.read_table(old / LEGACY_PAIRS_FILE)
    rows = table.to_pylist()
    rows[5]["low"]["text"] = "edited"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), old / LEGACY_PAIRS_FILE)
    with pytest.raises(SuiteValidationError, match="edited after it was written: the pairs"):
        Suite.load(old)


def test_both_layouts_or_no_pairs_are_named(built_and_exported, older, tmp_path):
    built, _ = built_and_exported
    both = write_old_layout(older, tmp_path / "both")
    shutil.copy(built / DATA_FILE, both / DATA_FILE)
    with pytest.raises(SuiteValidationError, match=f"holds both {DATA_FILE} and pairs.parquet"):
        Suite.load(both)
    (both / DATA_FILE).unlink()
    (both / LEGACY_PAIRS_FILE).unlink()
    with pytest.raises(SuiteValidationError, match=f"no pairs beside manifest.json.*{DATA_FILE}"):
        Suite.load(both)


def test_a_schema_mismatch_names_only_the_columns_that_differ(older, quiz_design_suite, tmp_path):
    old = write_old_layout(older, tmp_path / "old")
    other = write_old_layout(as_older_release(quiz_design_suite), tmp_path / "other")
    shutil.copy(other / LEGACY_PAIRS_FILE, old / LEGACY_PAIRS_FILE)
    with pytest.raises(SuiteValidationError) as raised:
        Suite.load(old)
    message = str(raised.value)
    assert f"{old / LEGACY_PAIRS_FILE}: schema does not match" in message
    assert "context: struct<answer" in message and "breakdown:" in message
    # list columns read back as list<element: ...>: the same type, never reported
    assert "high:" not in message and "category_path:" not in message


def test_a_folder_of_built_suites_is_an_export_folder(
    challenge300_suite, quiz_design_suite, tmp_path
):
    for suite in (challenge300_suite, quiz_design_suite):
        suite.save(tmp_path / "suites" / suite.name)
    folder = tmp_path / "suites"
    with pytest.raises(NNDError, match=r"export folder with configs \['challenge300', 'quiz"):
        load_suite(folder)
    assert load_suite(folder, "quiz_design") == quiz_design_suite
    assert [c.name for c in refresh_card(folder)] == ["challenge300", "quiz_design"]
    rows = datasets.load_dataset(str(folder), "challenge300", split="test", cache_dir=str(tmp_path))
    assert rows.num_rows == 807


def test_a_config_is_named_after_its_suite_a_build_folder_need_not_be(challenge300_suite, tmp_path):
    challenge300_suite.save(tmp_path / "c300")
    assert load_suite(tmp_path / "c300") == challenge300_suite
    with pytest.raises(SuiteValidationError, match="config 'c300' holds suite 'challenge300'"):
        load_suite(tmp_path, "c300")


def test_the_resolver_spells_hub_names_as_the_hub_package():
    from nnd_suites import hub, resolve

    assert resolve.HUB_PREFIX == hub.HUB_PREFIX


@pytest.mark.parametrize("stray", ["test.parquet", f"backup/{DATA_FILE}"])
def test_a_file_datasets_would_read_beside_the_pairs_is_refused(
    built_and_exported, challenge300_suite, tmp_path, capsys, stray
):
    """A copy of the pairs that `datasets` reads as more of split 'test' would make
    `load_dataset(FOLDER, split="test")` twice the suite that `validate` and `evaluate` see."""
    built, _ = built_and_exported
    folder = tmp_path / "suite"
    shutil.copytree(built, folder)
    (folder / stray).parent.mkdir(exist_ok=True)
    shutil.copy(built / DATA_FILE, folder / stray)
    rows = datasets.load_dataset(str(folder), split="test", cache_dir=str(tmp_path / "cache"))
    assert rows.num_rows == 2 * len(challenge300_suite)  # what the refusal prevents
    named = rf"^{folder / stray} \(split 'test'\): `datasets.load_dataset.*move it out of the suite"
    with pytest.raises(SuiteValidationError, match=named):
        Suite.load(folder)
    assert main(["validate", str(folder)]) == SuiteValidationError.exit_status
    assert f"{folder / stray} (split 'test')" in capsys.readouterr().err
    (folder / stray).unlink()
    assert Suite.load(folder) == challenge300_suite


def test_files_datasets_does_not_read_are_left_alone(
    built_and_exported, challenge300_suite, tmp_path
):
    built, _ = built_and_exported
    folder = tmp_path / "suite"
    shutil.copytree(built, folder)
    assert dataset_split_files(folder) == {"test": [DATA_FILE]}  # the suite's files alone
    (folder / "notes.txt").write_text("built for the paper\n")
    (folder / "README.md").write_text("# my suite\n")
    (folder / ".cache").mkdir()
    (folder / ".cache" / DATA_FILE).write_bytes((built / DATA_FILE).read_bytes())  # hidden
    assert dataset_split_files(folder) == {"test": [DATA_FILE]}
    assert Suite.load(folder) == challenge300_suite
    old = write_old_layout(as_older_release(challenge300_suite), tmp_path / "old")
    (old / "notes.txt").write_text("an older release wrote this\n")
    Suite.load(old)  # datasets reads pairs.parquet and candidates.parquet as one split: its own


@pytest.mark.parametrize(
    "name, content, message",
    [
        # a card's data_files: the candidates would be read as a split
        ("README.md", '---\nconfigs:\n- config_name: x\n  data_files: "*.parquet"\n---\n', "the"),
        ("train.csv", "a,b\n1,2\n", "cannot read"),  # datasets' own refusal, named
        (".huggingface.yaml", None, "fifo"),  # datasets would wait on it forever
    ],
)
def test_what_else_datasets_would_make_of_a_suite_folder_is_named(
    built_and_exported, tmp_path, name, content, message
):
    built, _ = built_and_exported
    folder = tmp_path / "suite"
    shutil.copytree(built, folder)
    if content is None:
        os.mkfifo(folder / name)
    else:
        (folder / name).write_text(content)
    expected = {
        "the": rf"^{folder / CANDIDATES_FILE} \(split 'train'\): .*move the dataset card",
        "cannot read": rf"^{folder}: `datasets` cannot read this suite folder \(Couldn't infer",
        "fifo": rf"^{folder / name}: is a fifo",
    }[message]
    with pytest.raises(SuiteValidationError, match=expected):
        Suite.load(folder)


def test_pyarrow_reads_a_suites_files_from_memory(challenge300_suite, tmp_path):
    # handed a Python file object, pyarrow's threads went on calling it after the read returned:
    # `stats` of a suite folder without candidates.parquet printed its error, then aborted at
    # exit ("terminate called without an active exception", exit status 134, not 5) one run in
    # two (pyarrow 26; apache/arrow#33975), as any command ending just after a read could
    folder = challenge300_suite.save(tmp_path / "c300")
    for name in (DATA_FILE, CANDIDATES_FILE):
        given = read_parquet(folder / name, "pairs", lambda file: file)
        assert isinstance(given, pa.BufferReader), type(given)


@pytest.mark.parametrize("layout", ["built", "older"])
def test_load_reads_each_file_of_a_suite_once(built_and_exported, older, layout, tmp_path):
    # every byte of a suite's parquet files comes through parquet_buffer, of its manifest
    # through read_json_file: a second read of a file (a schema checked apart from its rows)
    # doubles what a load of a large suite costs
    import nnd_suites.suite.manifest as manifest_module
    import nnd_suites.suite.storage as storage

    folder = built_and_exported[0] if layout == "built" else write_old_layout(older, tmp_path / "o")
    reads: list[str] = []

    def counted(read):
        def reading(path, *args, **kwargs):
            reads.append(os.path.basename(path))
            return read(path, *args, **kwargs)

        return reading

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(storage, "parquet_buffer", counted(storage.parquet_buffer))
        patch.setattr(manifest_module, "read_json_file", counted(manifest_module.read_json_file))
        suite = Suite.load(folder)
    pairs = DATA_FILE if layout == "built" else LEGACY_PAIRS_FILE
    assert sorted(reads) == sorted([pairs, CANDIDATES_FILE, MANIFEST_FILE])
    assert len(suite) == suite.manifest.counts.pairs > 0
