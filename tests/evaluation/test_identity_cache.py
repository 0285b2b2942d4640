"""The score cache under trouble (issue 21): a damaged file, a lock held by another process too
long and a full disk are errors naming the cache file and what to do, never sqlite3 tracebacks."""

from __future__ import annotations

import sqlite3

import pytest

from nnd_suites.errors import NNDError
from nnd_suites.evaluation import cache as cache_module
from nnd_suites.evaluation.backend import Score
from nnd_suites.evaluation.cache import ScoreCache, score_key

ROWS = [(score_key("scope", "t", f"context {i}", "candidate"), Score(-1.5, 3)) for i in range(3000)]


def _filled(path) -> ScoreCache:
    cache = ScoreCache(path)
    cache.put_many(ROWS)
    cache._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    return cache


def test_a_damaged_page_is_a_named_error(tmp_path):
    path = tmp_path / "scores.sqlite"
    _filled(path).close()
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    data[2 * page : len(data) - page] = b"\x5a" * (len(data) - 3 * page)  # all but 2 pages
    path.write_bytes(bytes(data))
    with pytest.raises(NNDError) as damaged:
        cache = ScoreCache(path)
        cache.get_many([key for key, _ in ROWS])
    said = str(damaged.value)
    assert str(path) in said and "damaged; delete it" in said and "--no-cache" in said


def test_a_file_that_is_not_a_database_is_a_named_error(tmp_path):
    path = tmp_path / "scores.sqlite"
    path.write_bytes(b"this is not SQLite" * 1000)
    with pytest.raises(NNDError, match=r"cannot open .*damaged; delete it"):
        ScoreCache(path)


def test_a_lock_held_too_long_is_a_named_error(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "LOCK_TIMEOUT", 0.2)
    path = tmp_path / "scores.sqlite"
    cache = ScoreCache(path)
    other = sqlite3.connect(path)
    other.execute("BEGIN IMMEDIATE")  # another process writing, and not finishing
    try:
        with pytest.raises(NNDError, match=r"cannot write .*held the cache's lock for over 0.2 s"):
            cache.put_many(ROWS[:10])
    finally:
        other.rollback()
        other.close()
    cache.put_many(ROWS[:10])  # the lock released: the same cache writes again
    assert len(cache) == 10


def test_a_full_disk_is_a_named_error_and_keeps_what_was_written(tmp_path):
    cache = _filled(tmp_path / "scores.sqlite")
    pages = cache._db.execute("PRAGMA page_count").fetchone()[0]
    cache._db.execute(f"PRAGMA max_page_count={pages}")  # what a full disk looks like to SQLite
    more = [(score_key("other", "t", f"c {i}", "x"), Score(-2.0, 4)) for i in range(5000)]
    with pytest.raises(NNDError, match=r"cannot write .*the disk is full; free some space"):
        cache.put_many(more)
    assert len(cache) == len(ROWS)  # the failed batch is rolled back whole


@pytest.mark.parametrize(
    "damage",
    [
        "logprob_sum = 9e999",  # stored as inf: Score refuses it
        "logprob_sum = 'not a number'",  # SQLite keeps text that does not read as a number
        "n_targets = -3",
        "truncated_tokens = 'x'",
    ],
)
def test_a_damaged_stored_value_is_a_named_error(tmp_path, damage):
    path = tmp_path / "scores.sqlite"
    _filled(path).close()
    other = sqlite3.connect(path)
    with other:
        other.execute(f"UPDATE scores SET {damage} WHERE key = ?", (ROWS[7][0],))
    other.close()
    cache = ScoreCache(path)
    with pytest.raises(NNDError) as damaged:
        cache.get_many([key for key, _ in ROWS])
    said = str(damaged.value)
    assert said.startswith(f"score cache {path}: cannot read (malformed stored score")
    assert ROWS[7][0][:16] in said and "damaged; delete it" in said and "--no-cache" in said
    assert cache.get_many([key for key, _ in ROWS[:7]]) == dict(ROWS[:7])  # the others still read
