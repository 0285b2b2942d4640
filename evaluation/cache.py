"""The score cache: SQLite (the embedded default), one row per scored (context, candidate).

A key is the sha256 of the backend's content identity (the model by its revision or a hash of its
files, dtype, backend, scoring mode, scoring version: :mod:`nnd_suites.evaluation.identity`), the
template, and the two texts. Writes are incremental, one transaction per batch, so an interrupted
run keeps what it finished and resumes; SQLite's journal makes every write atomic, so a killed run
never leaves a corrupt cache behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.backend import ABOVE_ZERO, TOO_LONG, Score
from nnd_suites.evaluation.identity import content_identity
from nnd_suites.infra.paths import cache_root

FILE_NAME = "scores.sqlite"
SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    key TEXT PRIMARY KEY,
    logprob_sum REAL NOT NULL,
    n_targets INTEGER NOT NULL,
    truncated_tokens INTEGER NOT NULL,
    created REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS scopes (
    scope TEXT PRIMARY KEY,
    identity TEXT NOT NULL
);
"""
#: SQLite's default limit on host parameters per statement is 999 in old builds.
LOOKUP_CHUNK = 900
#: Seconds to wait for another process's write lock before giving up with a named error.
LOCK_TIMEOUT = 60.0
#: What to do about each kind of SQLite failure (matched in its message).
ADVICE = (
    ("locked", "another process has held the cache's lock for over {timeout:g} s; wait for it"),
    ("malformed", "the cache file is damaged; delete it (its scores are recomputed)"),
    ("not a database", "the cache file is damaged; delete it (its scores are recomputed)"),
    ("full", "the disk is full; free some space"),
    ("readonly", "the cache file cannot be written"),
)


#: The score cache lives under the one cache root (``$NND_SUITES_CACHE``).
default_cache_dir = cache_root


def scope_of(identity: Mapping[str, str]) -> str:
    """The cache scope of a backend's identity: its content identity, so the same files found by
    another path share their scores and other files at the same path never do."""
    return hashlib.sha256(
        json.dumps(content_identity(identity), sort_keys=True).encode()
    ).hexdigest()


def _row_problem(
    total: object, n_targets: object, truncated: object, highest_per_target: float
) -> str:
    """Why a stored row is no score a run writes ("" when it is one): a run stores finite numbers,
    counts >= 0, a skipped request as :meth:`Score.skip`'s row (no sum, no targets, nothing cut)
    and a sum no higher than ``highest_per_target`` per target. Such a row means the file was
    edited or damaged outside SQLite's journal: like a damaged page it is the named
    damaged-file error (delete the cache), never a score or a skip that would decide tests."""
    if not (
        isinstance(total, (int, float))
        and isinstance(n_targets, int)
        and isinstance(truncated, int)
    ):
        return "a value that is not a number"
    if not math.isfinite(total):
        return "a sum that is not finite"
    if n_targets < 0 or truncated < 0:
        return "a negative count"
    if not n_targets and (total or truncated):
        return "no targets (a skipped request) with a sum or a cut, which a skip never has"
    if total > highest_per_target * n_targets:
        return (
            "a log-likelihood above 0 (a backend whose sums are other numbers, such as a reward "
            "model's, declares log_likelihoods = False)"
        )
    return ""


def score_key(scope: str, template: str, context: str, candidate: str) -> str:
    payload = json.dumps([scope, template, context, candidate], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ScoreCache:
    """``get_many`` / ``put_many`` over one SQLite file (WAL mode, safe for concurrent readers)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        with self._named_errors("cannot open"):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)

    @contextlib.contextmanager
    def _named_errors(self, doing: str) -> Iterator[None]:
        """Any SQLite or file-system failure (a damaged page, a lock held too long, a full disk)
        becomes an error naming the cache file and what to do, not a raw sqlite3 traceback."""
        try:
            yield
        except (OSError, sqlite3.Error) as exc:
            raise self._named_error(doing, f"{type(exc).__name__}: {exc}") from None

    def _named_error(self, doing: str, problem: str) -> NNDError:
        """The error naming the cache file, ``problem`` and the advice its words call for."""
        advice = next((a for key, a in ADVICE if key in problem.lower()), "")
        advice = advice.format(timeout=LOCK_TIMEOUT)
        return NNDError(
            f"score cache {self.path}: {doing} ({problem}); "
            f"{advice + ', or ' if advice else ''}pass another --cache-dir or --no-cache"
        )

    @classmethod
    def in_folder(cls, folder: str | os.PathLike | None = None) -> ScoreCache:
        """The cache file ``scores.sqlite`` in ``folder`` (default: :func:`default_cache_dir`)."""
        return cls((Path(folder) if folder is not None else default_cache_dir()) / FILE_NAME)

    def register_scope(self, scope: str, identity: Mapping[str, str]) -> None:
        with self._named_errors("cannot write"), self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO scopes VALUES (?, ?)",
                (scope, json.dumps(dict(identity), sort_keys=True)),
            )

    def get_many(self, keys: Iterable[str], *, log_likelihoods: bool = True) -> dict[str, Score]:
        """The stored scores of ``keys`` (those found). ``log_likelihoods``: the backend's
        (:attr:`Backend.log_likelihoods`); a row of such a backend with a sum above 0 is damage."""
        keys = list(dict.fromkeys(keys))
        highest_per_target = ABOVE_ZERO if log_likelihoods else math.inf
        found: dict[str, Score] = {}
        for start in range(0, len(keys), LOOKUP_CHUNK):
            part = keys[start : start + LOOKUP_CHUNK]
            marks = ",".join("?" * len(part))
            with self._named_errors("cannot read"):
                rows = self._db.execute(
                    f"SELECT key, logprob_sum, n_targets, truncated_tokens FROM scores "
                    f"WHERE key IN ({marks})",
                    part,
                ).fetchall()
            for key, total, n_targets, truncated in rows:
                problem = _row_problem(total, n_targets, truncated, highest_per_target)
                if problem:
                    raise self._named_error(
                        "cannot read",
                        f"malformed stored score under key {key[:16]}...: logprob_sum={total!r}, "
                        f"n_targets={n_targets!r}, truncated_tokens={truncated!r}: {problem}",
                    )
                # no targets: stored for a request that cannot fit (the run is not redone)
                found[key] = (
                    Score(total, n_targets, truncated) if n_targets else Score.skip(TOO_LONG)
                )
        return found

    def put_many(self, items: Iterable[tuple[str, Score]]) -> None:
        """Write one batch in one transaction (all of it or none of it)."""
        now = time.time()
        rows = [(key, s.logprob_sum, s.n_targets, s.truncated_tokens, now) for key, s in items]
        with self._named_errors("cannot write"), self._db:
            self._db.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?)", rows)

    def __len__(self) -> int:
        with self._named_errors("cannot read"):
            return self._db.execute("SELECT COUNT(*) FROM scores").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ScoreCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
