"""Rows no run writes, in a score cache a real run wrote: a skipped request's row with a sum or a
cut, a log-likelihood above 0. Each is the named damaged-file error, never a skipped test or a
score that decides tests; a reward model's scalars, positive as often as not, still read back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import nnd_suites
from nnd_suites.errors import NNDError
from nnd_suites.evaluation import EvaluationReport
from nnd_suites.evaluation.prepared import first_groups
from nnd_suites.suite import Suite


@pytest.fixture(scope="module")
def quiz_part(quiz_design_suite: Suite) -> Suite:
    return first_groups(quiz_design_suite, 3)


def _run(model: Path, suite: Suite, cache_dir: Path, **options: str) -> EvaluationReport:
    return nnd_suites.evaluate(str(model), suite, cache_dir=cache_dir, progress=False, **options)


def _stored_sums(cache_dir: Path) -> list[float]:
    with sqlite3.connect(cache_dir / "scores.sqlite") as db:
        sums = [total for (total,) in db.execute("SELECT logprob_sum FROM scores")]
    db.close()
    return sums


def _edit_one_row(cache_dir: Path, assignment: str) -> str:
    """Apply ``assignment`` (SQL) to one row the run stored; the row's key."""
    with sqlite3.connect(cache_dir / "scores.sqlite") as db:
        key = db.execute("SELECT key FROM scores ORDER BY key LIMIT 1").fetchone()[0]
        db.execute(f"UPDATE scores SET {assignment} WHERE key = ?", (key,))
    db.close()
    return key


@pytest.mark.parametrize(
    "damage",
    [
        "n_targets = 0",  # its sum kept: a skipped request stores none
        "n_targets = 0, logprob_sum = 0, truncated_tokens = 7",  # a skipped request cuts nothing
        "logprob_sum = -logprob_sum",  # a log-likelihood above 0
    ],
)
def test_a_row_no_run_writes_is_the_named_damaged_file_error(
    tiny_causal_model, quiz_part, tmp_path, damage
):
    _run(tiny_causal_model, quiz_part, tmp_path)
    assert max(_stored_sums(tmp_path)) < 0  # what the run wrote: log-likelihoods
    key = _edit_one_row(tmp_path, damage)
    with pytest.raises(NNDError) as damaged:
        _run(tiny_causal_model, quiz_part, tmp_path)
    said = str(damaged.value)
    path = tmp_path / "scores.sqlite"
    assert said.startswith(f"score cache {path}: cannot read (malformed stored score under key ")
    assert key[:16] in said and "damaged; delete it" in said and "--no-cache" in said


def test_a_reward_models_positive_scalars_read_back_from_the_cache(
    reward_model, quiz_part, tmp_path
):
    first = _run(reward_model, quiz_part, tmp_path, scorers="reward")
    assert max(_stored_sums(tmp_path)) > 0  # a reward is no log-likelihood
    again = _run(reward_model, quiz_part, tmp_path, scorers="reward")
    assert again.requests.scored == 0 and again.requests.cached == first.requests.unique
    assert again.suites == first.suites and again.outcomes == first.outcomes
