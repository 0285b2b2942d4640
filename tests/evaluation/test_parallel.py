"""Data-parallel scoring: shards by context, the same outcomes as one process, resumable."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time

import pyarrow.parquet as pq

from nnd_suites.cli import main
from nnd_suites.evaluation.backend import ScoreRequest
from nnd_suites.evaluation.parallel import shard_by_context


def test_shards_keep_each_context_on_one_rank_and_balance_the_load(quiz_design_suite):
    requests = [
        ScoreRequest(f"{p.context['answer']} \n {p.context['paragraph']}", text)
        for p in quiz_design_suite.pairs
        for text in (p.high.text, p.low.text)
    ]
    requests = list(dict.fromkeys(requests))
    shards = shard_by_context(requests, 3)
    indices = [i for shard in shards for context in shard for i in context]
    assert sorted(indices) == list(range(len(requests)))
    owner = {}
    for rank, shard in enumerate(shards):
        for context in shard:
            for i in context:
                assert owner.setdefault(requests[i].context, rank) == rank
    loads = [sum(len(requests[c[0]].context) for c in shard) for shard in shards]
    assert max(loads) < 1.1 * min(loads)


def _outcomes(folder):
    return {
        path.stem: pq.read_table(path).to_pylist()
        for path in sorted((folder / "outcomes").glob("*.parquet"))
    }


def test_two_processes_give_the_single_process_outcomes(tiny_causal_model, tmp_path, capsys):
    base = ["evaluate", "--suite", "quiz_design", "--suite", "challenge300"]
    base += ["--model", str(tiny_causal_model), "--quiet", "--no-cache", "--batch-size", "8"]
    assert main([*base, "--out", str(tmp_path / "one")]) == 0
    capsys.readouterr()
    assert main([*base, "--out", str(tmp_path / "two"), "--data-parallel", "2", "--json"]) == 0
    one, two = _outcomes(tmp_path / "one"), _outcomes(tmp_path / "two")
    assert set(one) == {"quiz_design", "challenge300"}
    for suite in one:
        assert [r["outcome"] for r in one[suite]] == [r["outcome"] for r in two[suite]]
        for a, b in zip(one[suite], two[suite], strict=True):
            assert abs(a["ll_high"] - b["ll_high"]) < 1e-5 and abs(a["ll_low"] - b["ll_low"]) < 1e-5


def test_a_killed_rank_leaves_a_cache_the_rerun_resumes_from(tiny_causal_model, tmp_path):
    cache = tmp_path / "cache"
    argv = ["evaluate", "--suite", "quiz_design", "--model", str(tiny_causal_model), "--quiet"]
    argv += ["--cache-dir", str(cache), "--strategy", "naive", "--json"]
    env = {**os.environ, "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29517"}
    ranks = [
        subprocess.Popen(
            [sys.executable, "-m", "nnd_suites", *argv],
            env={**env, "RANK": str(rank), "LOCAL_RANK": str(rank)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for rank in range(2)
    ]
    database = cache / "scores.sqlite"
    deadline = time.monotonic() + 120
    rows = 0
    while rows == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
        if database.exists():
            with sqlite3.connect(database) as connection:
                try:
                    rows = connection.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
                except sqlite3.OperationalError:
                    rows = 0
    assert rows > 0, "rank 0 never wrote a round to the cache"
    ranks[1].kill()
    assert ranks[0].wait(timeout=120) != 0  # rank 0 cannot finish without its peer
    ranks[1].wait()
    done = subprocess.run(
        [sys.executable, "-m", "nnd_suites", *argv], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    resumed = json.loads(done.stdout)
    assert resumed["suites"]["quiz_design"]["pairs"] == 2686
    # the rerun took every round rank 0 had gathered from the cache
    assert resumed["requests"]["cached"] >= rows > 0
    clean = subprocess.run(
        [sys.executable, "-m", "nnd_suites", *argv, "--no-cache"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert json.loads(clean.stdout)["suites"] == resumed["suites"]


def test_local_ranks_share_the_cores_unless_told_otherwise(monkeypatch):
    """--data-parallel N on one machine: each rank gets cores // N threads (on 2 cores, two
    ranks with 2 threads each took 13.6 s against 8.7 s with 1: benchmarks/bench_data_parallel)."""
    from nnd_suites.evaluation import parallel

    seen: list[dict] = []

    class Finished:
        def __init__(self, command, env, stdout):
            seen.append(env)

        def poll(self):
            return 0

    monkeypatch.setattr(parallel.subprocess, "Popen", Finished)
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 8)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert parallel.launch(["evaluate"], 4) == 0
    assert [e["OMP_NUM_THREADS"] for e in seen] == ["2"] * 4
    assert [e["RANK"] for e in seen] == ["0", "1", "2", "3"]
    seen.clear()
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    parallel.launch(["evaluate"], 2)
    assert [e["OMP_NUM_THREADS"] for e in seen] == ["3", "3"]


def test_verify_in_two_processes_equals_one_and_rank_0_alone_writes(
    tiny_causal_model, tmp_path, capfd
):
    other = tmp_path / "other"
    shutil.copytree(tiny_causal_model, other)  # a second "system" (same weights: same rates)
    argv = ["verify", "quiz_design", "--system", f"mixqg={tiny_causal_model}", "--system"]
    argv += [f"dgpt2_sup={other}", "--limit", "6", "--quiet", "--no-cache", "--resamples", "50"]
    assert main([*argv, "--out", str(tmp_path / "one")]) == 0
    capfd.readouterr()
    assert main([*argv, "--out", str(tmp_path / "two"), "--data-parallel", "2"]) == 0
    assert capfd.readouterr().out.count("# Verification of quiz_design") == 1  # rank 0 prints
    one, two = (json.loads((tmp_path / d / "verify.json").read_text()) for d in ("one", "two"))
    for report in (one, two):
        report.pop("created")
    assert one == two


def test_several_models_in_two_processes_give_the_one_process_leaderboard(
    tiny_causal_model, tmp_path
):
    other = tmp_path / "other"
    shutil.copytree(tiny_causal_model, other)
    argv = ["evaluate", "--suite", "challenge300", "--model", str(tiny_causal_model), "--model"]
    argv += [str(other), "--limit", "8", "--quiet", "--no-cache"]
    assert main([*argv, "--out", str(tmp_path / "one")]) == 0
    assert main([*argv, "--out", str(tmp_path / "two"), "--data-parallel", "2"]) == 0
    one, two = (json.loads((tmp_path / d / "leaderboard.json").read_text()) for d in ("one", "two"))
    assert one["suites"] == two["suites"] and one["models"] == two["models"]
