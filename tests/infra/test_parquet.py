"""Parquet files from elsewhere are read within bounds (nnd_suites/infra/parquet.py): a suite's
pairs or candidates, or a run's outcomes, a few kB on disk whose texts expand to far more
(compressed, or one dictionary-encoded text on every row), are refused with an error naming the
file and ``$NND_SUITES_MAX_PARQUET_BYTES`` before they are decoded; a raised limit reads them."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nnd_suites import Suite, SuiteValidationError
from nnd_suites.cli import main
from nnd_suites.evaluation.outputs import OUTCOME_SCHEMA, read_outcomes
from nnd_suites.infra.parquet import (
    MAX_PARQUET_BYTES_ENV,
    ParquetTooLargeError,
    parquet_buffer,
    read_bounded_table,
)
from nnd_suites.suite import CANDIDATES_FILE, DATA_FILE

TEXT = "a" * 2**20  # one long text, on every row


def bomb(path, table: pa.Table, column: str, dictionary: bool) -> None:
    """40 rows of ``table``, every text of ``column`` (a struct with a text, or a text) made
    ``TEXT``, written zstd-compressed (``dictionary``: the text stored once, as a dictionary):
    smaller on disk than one such text, 40 MiB once read."""
    table = table.slice(0, 40)
    values = table.column(column).to_pylist()
    long = [{**v, "text": TEXT} if isinstance(v, dict) else TEXT for v in values]
    table = table.set_column(
        table.schema.get_field_index(column),
        table.schema.field(column),
        pa.array(long, type=table.schema.field(column).type),
    )
    pq.write_table(
        table,
        path,
        compression="zstd",
        use_dictionary=dictionary,
        dictionary_pagesize_limit=2 * len(TEXT),
    )
    assert path.stat().st_size < len(TEXT)  # smaller than one of its texts


@pytest.mark.parametrize("dictionary", [True, False], ids=["dictionary", "compressed"])
@pytest.mark.parametrize(("name", "column"), [(DATA_FILE, "high"), (CANDIDATES_FILE, "text")])
def test_a_parquet_bomb_in_a_suite_folder_is_refused(
    quiz_design_suite, tmp_path, monkeypatch, capsys, name, column, dictionary
):
    folder = quiz_design_suite.save(tmp_path / "quiz_design")
    path = folder / name
    bomb(path, pq.read_table(path), column, dictionary)
    rows = pq.read_metadata(path).num_rows
    assert (
        rows > 16
    )  # decoded: over 16 MiB; declared by its metadata: over 16 MiB unless a dictionary
    monkeypatch.setenv(MAX_PARQUET_BYTES_ENV, str(16 * 2**20))
    what = "its texts decode to" if dictionary else "its metadata declares"
    expected = rf"^{path}: {what} [\d,]+ bytes, over the 16,777,216 .*{MAX_PARQUET_BYTES_ENV}=BYTES"
    with pytest.raises(SuiteValidationError, match=expected):
        Suite.load(folder)
    assert main(["validate", str(folder)]) != 0
    assert MAX_PARQUET_BYTES_ENV in capsys.readouterr().err
    # raised, the limit lets the file be read: the suite's hash then finds the texts changed
    monkeypatch.setenv(MAX_PARQUET_BYTES_ENV, str(2**30))
    with pytest.raises(SuiteValidationError, match="hash") as raised:
        Suite.load(folder)
    assert MAX_PARQUET_BYTES_ENV not in str(raised.value)


def test_a_file_over_the_limit_is_not_read(quiz_design_suite, tmp_path, monkeypatch):
    folder = quiz_design_suite.save(tmp_path / "quiz_design")
    size = (folder / DATA_FILE).stat().st_size
    monkeypatch.setenv(MAX_PARQUET_BYTES_ENV, str(size - 1))
    with pytest.raises(SuiteValidationError, match=rf"^{folder / DATA_FILE}: it is {size:,} bytes"):
        Suite.load(folder)


def test_an_outcomes_bomb_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "outcomes.parquet"
    row = {"pair_id": "p", "parent_id": None, "group_id": "g", "category": "c", "label": "l"}
    row |= {"ll_high": -1.0, "ll_low": -2.0, "n_high": 3, "n_low": 3, "truncated": False}
    row["outcome"] = "pass"
    table = pa.Table.from_pylist([row] * 50, schema=OUTCOME_SCHEMA)
    bomb(path, table, "label", dictionary=True)
    monkeypatch.setenv(MAX_PARQUET_BYTES_ENV, str(16 * 2**20))
    with pytest.raises(ParquetTooLargeError, match=rf"^{path}: its texts decode to 4[\d,]+ bytes"):
        read_outcomes(path)
    monkeypatch.setenv(MAX_PARQUET_BYTES_ENV, str(2**30))
    assert [o.label for o in read_outcomes(path)] == [TEXT] * 40


def test_a_file_within_the_bounds_is_read_as_pyarrow_reads_it(quiz_design_suite, tmp_path):
    # the card's num_bytes is the table's in-memory size: a cast of the dictionary-encoded
    # reading (other buffers) would change it on every export
    folder = quiz_design_suite.save(tmp_path / "quiz_design")
    for name in (DATA_FILE, CANDIDATES_FILE):
        path = folder / name
        table = read_bounded_table(parquet_buffer(path, "pairs"), path)
        assert table.equals(pq.read_table(path))
        assert table.nbytes == pq.read_table(path).nbytes


def test_a_raised_limit_costs_no_memory(quiz_design_suite, tmp_path, monkeypatch):
    # the file was read with read(limit + 1), which allocates the limit first: 4 GiB for every
    # file read (a MemoryError under `ulimit -v`), the whole of a raised limit
    folder = quiz_design_suite.save(tmp_path / "quiz_design")
    monkeypatch.setenv(MAX_PARQUET_BYTES_ENV, str(2**60))
    assert Suite.load(folder) == quiz_design_suite
