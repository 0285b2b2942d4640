"""Property-based fuzzing of the suite reader (``Suite.load``: manifest.json and the parquet files
of a suite folder) on damaged copies of a suite built from quiz_design's fixture.

Each example damages one file of the folder: manifest.json's bytes (truncation, byte flips, bad
bytes) or its JSON (a value anywhere replaced by another type, a huge number, deep nesting, a
repeated key), or a parquet file's bytes or its table (a column dropped, nulled or of another
type, rows dropped or repeated). Loading must end in a :class:`NNDError` naming the damaged file
or its folder, or in a suite whose manifest counts its pairs and candidates. Any other exception
fails. CI runs the ``ci`` profile with 100 examples per file; ``HYPOTHESIS_PROFILE=thorough``
runs 2,500.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from data_damage import change_json, change_table, flip_byte
from hypothesis import event, given, settings
from hypothesis import strategies as st
from yaml_damage import PROFILE, bad_bytes, truncate

from nnd_suites import NNDError, Suite, SuiteValidationError, build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.suite import CANDIDATES_FILE, DATA_FILE, MANIFEST_FILE


@pytest.fixture(scope="module")
def suite_folder(tmp_path_factory) -> Path:
    fixtures = get_adapter("quiz_design").folder() / "fixtures"
    source = json.loads((fixtures / "expected_stats.json").read_text("utf-8"))["source"]
    folder = tmp_path_factory.mktemp("suite") / "quiz_design"
    build_suite("quiz_design", fixtures / source).save(folder)
    return folder


MUTATIONS = {
    MANIFEST_FILE: [truncate, bad_bytes, flip_byte, change_json],
    DATA_FILE: [truncate, flip_byte, change_table],
    CANDIDATES_FILE: [truncate, flip_byte, change_table],
}


@pytest.mark.parametrize("file", sorted(MUTATIONS))
@settings(PROFILE, max_examples=PROFILE.max_examples // 2)
@given(data=st.data())
def test_damaged_suite_folder_loads_or_gives_a_named_error(suite_folder, file, data):
    folder = Path(tempfile.mkdtemp()) / suite_folder.name
    try:
        shutil.copytree(suite_folder, folder)
        path = folder / file
        mutation = data.draw(st.sampled_from(MUTATIONS[file]))
        path.write_bytes(mutation(data, path.read_bytes()))
        try:
            suite = Suite.load(folder)
        except NNDError as error:
            assert str(folder) in str(error), str(error)
            event(f"refused with a named error ({mutation.__name__})")
            return
        counts = suite.manifest.counts
        assert counts.pairs == len(suite.pairs) and counts.candidates == len(suite.candidates)
        event(f"loaded ({mutation.__name__})")
    finally:
        shutil.rmtree(folder.parent)


# ------------------------------------------------------------- what the fuzzing found, kept


def _damaged_copy(suite_folder: Path, tmp_path: Path) -> Path:
    folder = tmp_path / suite_folder.name
    shutil.copytree(suite_folder, folder)
    return folder


def test_a_text_of_invalid_utf8_in_a_parquet_file_is_named(suite_folder, tmp_path):
    """A damaged byte inside a text was a UnicodeDecodeError from pyarrow's to_pylist."""
    folder = _damaged_copy(suite_folder, tmp_path)
    path = folder / CANDIDATES_FILE
    table = pq.read_table(path)
    pq.write_table(table, path, compression="none")
    text = table.column("text")[0].as_py().encode()
    raw = path.read_bytes()
    assert text in raw
    path.write_bytes(raw.replace(text, b"\x80" + text[1:], 1))
    with pytest.raises(SuiteValidationError, match=f"{path}: unreadable candidates: .*utf-8"):
        Suite.load(folder)


@pytest.mark.parametrize("file,what", [(DATA_FILE, "pairs"), (CANDIDATES_FILE, "candidates")])
def test_a_truncated_parquet_file_is_named_with_what_to_do(suite_folder, tmp_path, file, what):
    """It named the file and pyarrow's fault, not what to do about it."""
    folder = _damaged_copy(suite_folder, tmp_path)
    path = folder / file
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(SuiteValidationError) as raised:
        Suite.load(folder)
    assert str(raised.value).startswith(f"{path}: unreadable {what}: ")
    assert str(raised.value).endswith(
        "not a parquet file; write the suite again (`nnd-suites build`, or `nnd-suites export`)"
    )


def test_an_invalid_pair_row_is_named_by_its_row_test_and_field(suite_folder, tmp_path):
    """A pair row the model refuses was told by pydantic's dump ('1 validation error for Pair',
    the type, a URL, over four lines); a candidate row was already told in one line."""
    folder = _damaged_copy(suite_folder, tmp_path)
    path = folder / DATA_FILE
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[3]["category"] = None
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    with pytest.raises(SuiteValidationError) as raised:
        Suite.load(folder)
    assert str(raised.value) == (
        f"{path}: row 3 (test {rows[3]['id']!r}): invalid pair: category: Input should be a "
        "valid string (got None); rebuild the suite (nnd-suites build)"
    )


def test_an_invalid_suite_names_its_folder(suite_folder, tmp_path):
    """A suite whose files read but do not agree was named only by its suite name."""
    folder = _damaged_copy(suite_folder, tmp_path)
    path = folder / CANDIDATES_FILE
    pq.write_table(pq.read_table(path).slice(0, 3), path)
    with pytest.raises(SuiteValidationError, match=f"^{folder}: suite 'quiz_design' is invalid"):
        Suite.load(folder)


@pytest.mark.parametrize("edit", ["surrogate", "repeated key"])
def test_a_manifest_field_no_file_can_hold_or_given_twice_is_refused(suite_folder, tmp_path, edit):
    """A context field "\\ud800" was a UnicodeEncodeError from pyarrow; a key written twice was
    read as its last value, the other dropped."""
    folder = _damaged_copy(suite_folder, tmp_path)
    path = folder / MANIFEST_FILE
    text = path.read_text("utf-8")
    if edit == "surrogate":
        text = text.replace('"context_fields": [', '"context_fields": ["\\ud800", ', 1)
    else:
        text = text.replace("{", '{"name": "other", ', 1)
    path.write_text(text, "utf-8")
    reason = "lone UTF-16 surrogate" if edit == "surrogate" else r"\['name'\] appear twice"
    with pytest.raises(SuiteValidationError, match=f"{path}.*{reason}"):
        Suite.load(folder)


def test_damaged_chunk_statistics_are_a_named_error_not_an_aborted_process(suite_folder, tmp_path):
    """One byte of candidates.parquet's footer changed (a column chunk's definition-level
    histogram one entry too long) made pyarrow abort the process from the bounds check, which
    read each column chunk's metadata: std::terminate, no exception to catch. Reading the file
    raises; the check reads only the row groups' totals. A child process, so an abort fails
    this test instead of ending the run."""
    folder = _damaged_copy(suite_folder, tmp_path)
    path = folder / CANDIDATES_FILE
    raw = bytearray(path.read_bytes())
    assert raw[-1853] == 2  # the histogram's length, 2 + 1 levels: the footer as pyarrow writes it
    raw[-1853] = 34
    path.write_bytes(bytes(raw))
    with pytest.raises(OSError, match="histogram size mismatch"):  # the damage this test is about
        pq.read_table(path)
    load = "from nnd_suites import Suite, NNDError\ntry:\n Suite.load(__import__('sys').argv[1])\n"
    load += "except NNDError as error:\n print(error)"
    done = subprocess.run([sys.executable, "-c", load, str(folder)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-500:]
    assert f"{path}: unreadable candidates" in done.stdout and "histogram" in done.stdout
