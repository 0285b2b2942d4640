"""Data-parallel scoring: shards by context, the same outcomes as one process, resumable."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from nnd_suites.cli import main
from nnd_suites.evaluation.backend import ScoreRequest
from nnd_suites.evaluation.parallel import free_port, shard_by_context


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


def _strategy_probe(printed: dict) -> dict[str, float]:
    """Take the backend's strategy probe out of a printed report: a float diagnostic (the
    largest difference a strategy made on a probe batch, 4.77e-07 in one process and 9.54e-07 in
    two) that tells how the strategy was chosen, not what was scored."""
    probe = printed["backend"].pop("strategy_probe")
    return {name: float(text.removeprefix("max difference ")) for name, text in probe.items()}


@pytest.mark.slow
def test_two_processes_give_the_single_process_outcomes(tiny_causal_model, tmp_path, capsys):
    base = ["evaluate", "--suite", "quiz_design", "--suite", "challenge300"]
    base += ["--model", str(tiny_causal_model), "--quiet", "--no-cache", "--batch-size", "8"]
    assert main([*base, "--out", str(tmp_path / "one"), "--json"]) == 0
    printed_one = json.loads(capsys.readouterr().out)
    assert main([*base, "--out", str(tmp_path / "two"), "--data-parallel", "2", "--json"]) == 0
    printed_two = json.loads(capsys.readouterr().out)  # the launcher prints rank 0's report
    for printed in (printed_one, printed_two):
        printed.pop("seconds"), printed.pop("created")  # when and how long: not a figure
        printed.pop("run_id")  # which run: two runs never share it
    probes = [_strategy_probe(printed) for printed in (printed_one, printed_two)]
    assert printed_two == printed_one  # every figure, count and the strategy chosen
    assert probes[0].keys() == probes[1].keys() and probes[0]
    assert all(difference <= 1e-3 for probe in probes for difference in probe.values())
    one, two = _outcomes(tmp_path / "one"), _outcomes(tmp_path / "two")
    assert set(one) == {"quiz_design", "challenge300"}
    for suite in one:
        assert [r["outcome"] for r in one[suite]] == [r["outcome"] for r in two[suite]]
        for a, b in zip(one[suite], two[suite], strict=True):
            assert abs(a["ll_high"] - b["ll_high"]) < 1e-5 and abs(a["ll_low"] - b["ll_low"]) < 1e-5


@pytest.mark.slow
def test_the_python_api_in_two_processes_returns_the_one_process_report(tiny_causal_model):
    """``evaluate(..., data_parallel=2)`` returns the typed report one process gives: the same
    results, counts and per-test outcomes (rank 0's, read back from JSON)."""
    from nnd_suites.evaluation import evaluate

    options = {"limit": 40, "cache": False, "progress": False, "batch_size": 8}
    one = evaluate(str(tiny_causal_model), "quiz_design", **options)
    two = evaluate(str(tiny_causal_model), "quiz_design", data_parallel=2, **options)
    assert two.suites == one.suites and two.requests == one.requests
    assert one.requests.scored > 0 and one.suites["quiz_design"].pairs > 0
    assert [t.outcome for t in two.outcomes["quiz_design"]] == [
        t.outcome for t in one.outcomes["quiz_design"]
    ]
    for a, b in zip(one.outcomes["quiz_design"], two.outcomes["quiz_design"], strict=True):
        assert a.pair_id == b.pair_id and abs(a.ll_high - b.ll_high) < 1e-5


#: Seconds a step of a multi-process test may take: generous, so that a loaded 2-core machine
#: (another test run beside this one) does not fail it; a run that ends early fails at once.
PATIENCE = 900.0


def _children_of(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper that is not us counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _cache_rows(database: Path) -> int:
    if not database.exists():
        return 0
    with contextlib.closing(sqlite3.connect(database)) as connection:
        try:
            return connection.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
        except sqlite3.OperationalError:  # not created yet, or locked by the writer
            return 0


def _wait_for_rows(database: Path, processes: list[subprocess.Popen], logs: Path) -> int:
    """Block until the cache holds a round of scores; fail at once if a process ends first."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        rows = _cache_rows(database)
        if rows:
            return rows
        ended = [p.args for p in processes if p.poll() is not None]
        assert not ended, f"ended before the first round: {ended}; see {logs}"
        time.sleep(0.2)
    raise AssertionError(f"no round reached the cache in {PATIENCE} s; see {logs}")


@pytest.mark.slow
def test_a_killed_rank_leaves_a_cache_the_rerun_resumes_from(tiny_causal_model, tmp_path):
    cache = tmp_path / "cache"
    argv = ["evaluate", "--suite", "quiz_design", "--model", str(tiny_causal_model), "--quiet"]
    argv += ["--cache-dir", str(cache), "--strategy", "naive", "--json"]
    env = {**os.environ, "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1"}
    env["MASTER_PORT"] = str(free_port())
    ranks: list[subprocess.Popen] = []
    try:
        for rank in range(2):
            with open(tmp_path / f"rank{rank}.log", "wb") as log:
                ranks.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "nnd_suites", *argv],
                        env={**env, "RANK": str(rank), "LOCAL_RANK": str(rank)},
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        rows = _wait_for_rows(cache / "scores.sqlite", ranks, tmp_path)
        ranks[1].kill()
        assert ranks[0].wait(timeout=PATIENCE) != 0  # rank 0 cannot finish without its peer
        ranks[1].wait()
    finally:  # never leave a rank behind, whatever failed above
        _kill_all([rank.pid for rank in ranks])
        for rank in ranks:
            rank.wait()
    done = subprocess.run(
        [sys.executable, "-m", "nnd_suites", *argv],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
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
        timeout=PATIENCE,
    )
    assert json.loads(clean.stdout)["suites"] == resumed["suites"]


@contextlib.contextmanager
def _launched(argv: list[str], tmp_path: Path) -> Iterator[tuple[subprocess.Popen, list[int]]]:
    """``nnd-suites ARGV`` started as a data-parallel launcher (its output in
    tmp_path/launcher.log), once its ranks wrote a round of scores into tmp_path/cache:
    (the launcher, its two ranks' process ids). Every one of them is killed afterwards."""
    log = tmp_path / "launcher.log"
    ranks: list[int] = []
    with open(log, "wb") as sink:
        launcher = subprocess.Popen(
            [sys.executable, "-m", "nnd_suites", *argv],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for_rows(tmp_path / "cache" / "scores.sqlite", [launcher], log)
        ranks = _children_of(launcher.pid)
        assert len(ranks) == 2, ranks
        yield launcher, ranks
    finally:
        _kill_all(ranks)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(launcher.pid, signal.SIGKILL)
        launcher.wait()


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_no_rank_outlives_a_killed_launcher_and_out_stays_untouched(
    tiny_causal_model, tmp_path, stop
):
    """``timeout``, a batch scheduler or a closed SSH session stops the launcher: its ranks stop
    too, instead of scoring on and writing report.json into --out later."""
    out = tmp_path / "run"
    argv = ["evaluate", "--suite", "quiz_design", "--model", str(tiny_causal_model), "--quiet"]
    argv += ["--cache-dir", str(tmp_path / "cache"), "--strategy", "naive", "--out", str(out)]
    with _launched([*argv, "--data-parallel", "2"], tmp_path) as (launcher, ranks):
        launcher.send_signal(stop)
        code = launcher.wait(timeout=PATIENCE)
        assert code == (128 + signal.SIGTERM if stop == signal.SIGTERM else -signal.SIGKILL)
        deadline = time.monotonic() + 60
        while any(map(_alive, ranks)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(_alive, ranks)), "a rank outlived its launcher"
        time.sleep(1)  # a rank that escaped would write here now
        assert not out.exists()


def _rank_of(pid: int) -> int:
    """The RANK a launched rank was started with (Linux /proc)."""
    environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return int(next(v for v in environment if v.startswith(b"RANK=")).removeprefix(b"RANK="))


def _wait_until_blocked(pid: int) -> None:
    """Until ``pid`` has used no CPU time for a second (waiting in a collective)."""

    def used() -> int:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime

    deadline, last, still = time.monotonic() + PATIENCE, -1, 0
    while time.monotonic() < deadline:
        now = used()
        still, last = (still + 1 if now == last else 0), now
        if still >= 4:
            return
        time.sleep(0.25)
    raise AssertionError(f"process {pid} kept running for {PATIENCE} s")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("level", ["warning", "debug"])
def test_a_killed_rank_is_one_named_line_its_peers_tracebacks_are_debug(
    tiny_causal_model, tmp_path, level
):
    """Rank 1 killed: rank 0's collective fails for want of its peer (torch's "[rank0]:"
    traceback of gloo's "Connection closed by peer"), which is the kill's consequence, not news:
    stderr holds the named line alone, the traceback only under --log-level debug."""
    argv = ["--log-level", level, "evaluate", "--suite", "quiz_design", "--quiet"]
    argv += ["--model", str(tiny_causal_model), "--cache-dir", str(tmp_path / "cache")]
    argv += ["--strategy", "naive", "--data-parallel", "2"]
    with _launched(argv, tmp_path) as (launcher, ranks):
        rank0, rank1 = sorted(ranks, key=_rank_of)
        # rank 0 waiting for rank 1 in a gather when rank 1 dies, and done failing before the
        # launcher looks: what a kill at any other moment gives, without the race
        os.kill(rank1, signal.SIGSTOP)
        _wait_until_blocked(rank0)
        launcher.send_signal(signal.SIGSTOP)
        os.kill(rank1, signal.SIGKILL)
        deadline = time.monotonic() + PATIENCE
        while _alive(rank0) and time.monotonic() < deadline:
            time.sleep(0.1)
        launcher.send_signal(signal.SIGCONT)
        assert launcher.wait(timeout=PATIENCE) == 11
    printed = (tmp_path / "launcher.log").read_text()
    named = "nnd-suites evaluate: error: data-parallel rank 1 of 2 was killed by SIGKILL;"
    assert named in printed, printed
    if level == "warning":
        assert "Traceback" not in printed and "[rank0]" not in printed, printed
        assert printed.splitlines()[-1].startswith(named), printed
    else:
        assert "Traceback" in printed and "all_gather" in printed, printed


def test_local_ranks_share_the_cores_unless_told_otherwise(monkeypatch, tmp_path):
    """--data-parallel N on one machine: each rank gets cores // N threads (on 2 cores, two
    ranks with 2 threads each took 13.6 s against 8.7 s with 1: benchmarks/bench_data_parallel).
    Every rank runs the library's rank module on the job folder: no rank parses a command line."""
    from nnd_suites.evaluation import parallel

    seen: list[dict] = []
    commands: list[list[str]] = []

    class Finished:
        pid = 0

        def __init__(self, command, env, stdout, start_new_session):
            seen.append(env)
            commands.append(command)

        def poll(self):
            return 0

        def wait(self, timeout=None):
            return 0

    monkeypatch.setattr(parallel.subprocess, "Popen", Finished)
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 8)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert parallel.launch(tmp_path, 4) is None
    assert [e["OMP_NUM_THREADS"] for e in seen] == ["2"] * 4
    assert [e["RANK"] for e in seen] == ["0", "1", "2", "3"]
    assert commands == [[sys.executable, "-m", "nnd_suites.evaluation.rank", str(tmp_path)]] * 4
    seen.clear()
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    parallel.launch(tmp_path, 2)
    assert [e["OMP_NUM_THREADS"] for e in seen] == ["3", "3"]


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_catalogue_in_two_processes_gives_the_single_process_outcomes(
    tiny_causal_model, tmp_path, capsys
):
    """`--suite catalogue` crosses to the ranks as its name, and each rank builds the shipped
    suites as it builds a built-in suite: the same tests, outcomes and task grouping."""
    base = ["evaluate", "--suite", "catalogue", "--model", str(tiny_causal_model), "--limit", "1"]
    base += ["--quiet", "--no-cache", "--batch-size", "8", "--json"]
    assert main([*base, "--out", str(tmp_path / "one")]) == 0
    assert main([*base, "--out", str(tmp_path / "two"), "--data-parallel", "2"]) == 0
    printed_one, printed_two = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert printed_two["by_task"] == printed_one["by_task"]
    one, two = _outcomes(tmp_path / "one"), _outcomes(tmp_path / "two")
    task_types = printed_one["by_task"]["task_types"]
    grouped = [suite for suites in task_types.values() for suite in suites]
    assert set(one) == set(grouped) and len(grouped) > 2
    for suite in one:
        assert [(r["pair_id"], r["outcome"]) for r in two[suite]] == [
            (r["pair_id"], r["outcome"]) for r in one[suite]
        ]


def test_robustness_in_data_parallel_is_refused_saying_how_to_run_it_in_ranks(tmp_path):
    """robustness makes its transformed suites in memory, which no other process can be sent:
    the refusal says so and how to run it in ranks, not to give suites by folder (they were)."""
    from nnd_suites.errors import ArgumentError
    from nnd_suites.evaluation.robustness import robustness

    with pytest.raises(ArgumentError, match=r"robustness\(data_parallel=2\).*accelerate launch"):
        robustness(str(tmp_path), ["challenge300"], ["lowercase"], data_parallel=2)


@pytest.mark.slow
def test_robustness_under_accelerate_launch_prints_and_writes_on_rank_0_alone(
    tiny_causal_model, tmp_path
):
    argv = ["robustness", "--suite", "challenge300", "--transform", "lowercase", "--limit", "8"]
    argv += ["--model", str(tiny_causal_model), "--quiet", "--no-cache", "--json"]
    env = {**os.environ, "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1"}
    env["MASTER_PORT"] = str(free_port())
    ranks = [
        subprocess.Popen(
            [sys.executable, "-m", "nnd_suites", *argv, "--out", str(tmp_path / "two")],
            env={**env, "RANK": str(rank), "LOCAL_RANK": str(rank)},
            stdout=subprocess.PIPE,
            text=True,
        )
        for rank in range(2)
    ]
    try:
        printed = [rank.communicate(timeout=PATIENCE)[0] for rank in ranks]
    finally:
        _kill_all([rank.pid for rank in ranks])
    assert [rank.returncode for rank in ranks] == [0, 0]
    assert printed[1] == ""  # rank 1 neither prints nor writes
    one = subprocess.run(
        [sys.executable, "-m", "nnd_suites", *argv, "--out", str(tmp_path / "one")],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert json.loads(printed[0])["cells"] == json.loads(one.stdout)["cells"]  # as one process
    assert (tmp_path / "two" / "robustness.json").is_file()
