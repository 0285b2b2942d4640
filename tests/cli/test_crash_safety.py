"""Crash safety: `build`, `export`, `compare` and `evaluate` SIGKILLed at random moments, then
run again.

Each command runs in a child forked by ``crash_worker.py`` (which imports nnd-suites and torch
once, so a kill costs milliseconds) and is killed after a delay drawn with a fixed seed over the
command's measured duration. After every kill the target must hold the old or the new version
(loaded and validated, content hash compared), never nothing or a mix; the same command run again
must succeed, and `evaluate` must resume from its score cache with the uninterrupted figures.
"""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nnd_suites.evaluation.cache import FILE_NAME
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.hub.configs import read_config
from nnd_suites.suite import Suite

pytestmark = pytest.mark.crash

SEED = 1234
KILLS = 20  # per command, landed kills (a child that finished first does not count)
WORKER = Path(__file__).with_name("crash_worker.py")


class Worker:
    """The fork server: ``run(argv, kill_after)`` -> (exit status, seconds)."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert json.loads(self._read()) == {"ready": True}

    def _read(self) -> str:
        line = self.process.stdout.readline()
        assert line, f"crash worker ended; see {self.log}"
        return line

    def run(
        self, argv: list[str], kill_after: float | None = None, kill_at_rows: list | None = None
    ) -> tuple[int, float]:
        request = {
            "argv": argv,
            "log": str(self.log),
            "kill_after": kill_after,
            "kill_at_rows": kill_at_rows,
        }
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self._read())
        return answer["rc"], answer["seconds"]

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:  # still running a command: never leave it behind
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def worker(tmp_path_factory) -> Iterator[Worker]:
    started = Worker(tmp_path_factory.mktemp("crash_worker") / "commands.log")
    yield started
    started.close()


def subset(suite: Suite, n: int) -> Suite:
    """The first ``n`` tests of ``suite`` under the same name, counts and hash recomputed."""
    return suite.derive(suite.pairs[:n])


def kill_runs(
    worker: Worker,
    argv_for: Callable[[int], list[str]],
    after_kill: Callable[[int], None],
    after_rerun: Callable[[int], None],
) -> dict[str, float]:
    """Kill ``argv_for(i)`` at seeded random moments until KILLS kills landed.

    ``after_kill(i)`` checks the target right after kill ``i``; the same command is then run to
    completion and ``after_rerun(i)`` checks the result.
    """
    rng = random.Random(SEED)
    started = time.perf_counter()
    rc, duration = worker.run(argv_for(-1))  # measured uninterrupted
    assert rc == 0, f"see {worker.log}"
    landed = attempts = 0
    while landed < KILLS:
        attempts += 1
        assert attempts <= 3 * KILLS, "the kills keep missing the command"
        rc, _ = worker.run(argv_for(landed), kill_after=rng.uniform(0.0, duration))
        if rc != -9:
            assert rc == 0, f"see {worker.log}"
            continue
        after_kill(landed)
        rc, _ = worker.run(argv_for(landed))
        assert rc == 0, f"the run after kill {landed} failed; see {worker.log}"
        after_rerun(landed)
        landed += 1
    return {"kills": landed, "attempts": attempts, "seconds": time.perf_counter() - started}


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_killed_build_leaves_the_old_or_the_new_suite(worker, challenge300_suite, tmp_path):
    # Two versions of the same suite: the shipped source and the same file with fewer rows.
    from nnd_suites.builder.adapter import ADAPTERS

    shipped = ADAPTERS.get("challenge300").default_source_path()
    lines = Path(shipped).read_text("utf-8").splitlines(keepends=True)
    shorter = tmp_path / "shorter.tsv"
    shorter.write_text("".join(lines[: len(lines) // 2]), "utf-8")
    out = tmp_path / "suites" / "challenge300"
    sources = [str(shipped), str(shorter)]
    versions: set[str] = set()

    def argv(i: int) -> list[str]:
        return ["build", "challenge300", "--source", sources[i % 2], "--out", str(out)]

    def after_kill(i: int) -> None:
        versions.add(Suite.load(out).manifest.section_hashes["pairs"])  # never missing or mixed
        assert len(versions) <= 2

    def after_rerun(i: int) -> None:
        suite = Suite.load(out)
        assert suite.manifest.sources[0].path == Path(sources[i % 2]).name  # name, not path
        assert leftovers(out.parent) == []

    result = kill_runs(worker, argv, after_kill, after_rerun)
    assert challenge300_suite.manifest.section_hashes["pairs"] in versions
    print(f"build: {result}")


def test_killed_export_leaves_the_old_or_the_new_config(worker, challenge300_suite, tmp_path):
    small = subset(challenge300_suite, 100)
    folders = [challenge300_suite.save(tmp_path / "full"), small.save(tmp_path / "small")]
    hashes = {challenge300_suite.manifest.content_hash, small.manifest.content_hash}
    export = tmp_path / "export"

    def argv(i: int) -> list[str]:
        return ["export", str(folders[i % 2]), "--to", str(export)]

    def after_kill(i: int) -> None:
        assert read_config(export / "challenge300").manifest.content_hash in hashes

    def after_rerun(i: int) -> None:
        suite = read_config(export / "challenge300")
        assert len(suite) == (807 if i % 2 == 0 else 100)
        assert leftovers(export) == []
        card = (export / "README.md").read_text("utf-8")
        assert f"num_examples: {len(suite)}" in card

    print(f"export: {kill_runs(worker, argv, after_kill, after_rerun)}")


def test_killed_compare_leaves_the_old_or_the_new_report_folder(
    worker, heuristic_report, challenge300_suite, tmp_path
):
    """A report folder (here a comparison: JSON, schema, Markdown, chart, marker) killed while
    written holds one run's files, never a mix of two (its Markdown names its JSON's model)."""
    from nnd_suites.evaluation.comparison import Comparison
    from nnd_suites.evaluation.outputs import write_report
    from nnd_suites.infra.output_folder import holds_kind

    for name, score in {"longer": len, "shorter": lambda text: -len(text)}.items():
        write_report(heuristic_report([challenge300_suite], name, score), tmp_path / name)
    orders = [("longer", "shorter"), ("shorter", "longer")]
    out = tmp_path / "comparison"

    def argv(i: int) -> list[str]:
        a, b = orders[i % 2]
        return ["compare", str(tmp_path / a), str(tmp_path / b), "--out", str(out)]

    def whole() -> str:
        assert holds_kind(out, "comparison")
        written = Comparison.model_validate_json((out / "comparison.json").read_text("utf-8"))
        markdown = (out / "comparison.md").read_text("utf-8")
        assert markdown.startswith(f"# Paired comparison: A = `{written.model_a}`")
        assert (out / "differences.png").read_bytes()[:4] == b"\x89PNG"
        json.loads((out / "comparison.schema.json").read_text("utf-8"))
        return written.model_a

    def after_kill(i: int) -> None:
        whole()  # the first, uninterrupted run wrote it: never missing, never mixed

    def after_rerun(i: int) -> None:
        assert whole() == orders[i % 2][0]
        assert leftovers(tmp_path) == []

    print(f"compare: {kill_runs(worker, argv, after_kill, after_rerun)}")


@pytest.fixture(scope="module")
def small_model_and_suite(tmp_path_factory, challenge300_suite) -> tuple[Path, Path]:
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    folder = tmp_path_factory.mktemp("crash_eval")
    suite = subset(challenge300_suite, 120)
    suite.save(folder / "suite")
    model = tiny_causal_lm(
        folder / "model",
        suite_texts([suite]),
        vocab_size=512,
        n_layer=1,
        n_embd=32,
        n_head=2,
        n_positions=512,
    )
    return Path(model), folder / "suite"


def test_killed_evaluate_resumes_from_the_cache(worker, small_model_and_suite, tmp_path):
    model, suite = small_model_and_suite
    out = tmp_path / "report"

    def argv(i: int) -> list[str]:
        return [
            "evaluate", "--suite", str(suite), "--model", str(model), "--quiet",
            "--batch-size", "2", "--strategy", "naive",
            "--cache-dir", str(tmp_path / f"cache{i}"), "--out", str(out),
        ]  # fmt: skip

    def figures(report: EvaluationReport) -> dict:
        return {name: result.model_dump() for name, result in report.suites.items()}

    reference: dict = {}
    resumed: list[int] = []  # scores found in the cache by each run after a kill
    cached_rows: dict[int, int] = {}

    def after_kill(i: int) -> None:
        for path in out.glob("*.json") if out.is_dir() else []:
            json.loads(path.read_text("utf-8"))  # every file present is complete
        if (out / "report.json").is_file():  # an earlier run's (same figures) or this one's
            report = EvaluationReport.model_validate_json((out / "report.json").read_text())
            assert figures(report) == reference
        cache = tmp_path / f"cache{i}" / FILE_NAME
        cached_rows[i] = 0
        if cache.is_file():  # killed before the table was created: nothing cached
            with sqlite3.connect(cache) as db:
                tables = db.execute("SELECT name FROM sqlite_master WHERE name = 'scores'")
                if tables.fetchone():
                    cached_rows[i] = db.execute("SELECT COUNT(*) FROM scores").fetchone()[0]

    def after_rerun(i: int) -> None:
        report = EvaluationReport.model_validate_json((out / "report.json").read_text())
        assert figures(report) == reference
        assert report.requests.cached == cached_rows[i]  # everything the killed run kept
        assert report.requests.cached + report.requests.scored == report.requests.unique
        resumed.append(report.requests.cached)

    worker.run(argv(-2))  # the uninterrupted figures
    reference.update(
        figures(EvaluationReport.model_validate_json((out / "report.json").read_text()))
    )
    result = kill_runs(worker, argv, after_kill, after_rerun)
    # Random kills may all miss the scoring window (the first batch can take most of a run on a
    # loaded machine): also kill once right after the first batch reached the cache.
    i = KILLS
    cache = str(tmp_path / f"cache{i}" / FILE_NAME)
    assert worker.run(argv(i), kill_at_rows=[cache, 1])[0] == -9
    after_kill(i)
    assert worker.run(argv(i))[0] == 0
    after_rerun(i)
    partial = [n for n in resumed if 0 < n < report_unique(out)]
    assert partial, f"no kill landed mid-scoring: scores resumed per kill {resumed}"
    print(f"evaluate: {result}, scores resumed from the cache per kill: {resumed}")


def report_unique(out: Path) -> int:
    report = EvaluationReport.model_validate_json((out / "report.json").read_text())
    return report.requests.unique


# The swap itself, killed after each of its steps: random kills rarely land in that window.
STEP_SCRIPT = """
import os, signal, sys
from pathlib import Path
import nnd_suites.infra.atomic as io

step, exchange = int(sys.argv[2]), sys.argv[3] == "1"
if not exchange:
    io._renameat2 = None
calls = 0

def killing(function):
    def wrapped(*args, **kwargs):
        global calls
        result = function(*args, **kwargs)
        calls += 1
        if calls == step:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return wrapped

os.rename, os.replace = killing(os.rename), killing(os.replace)
if hasattr(io, "exchange_paths"):
    io.exchange_paths = killing(io.exchange_paths)
with io.atomic_directory(sys.argv[1]) as tmp:
    (tmp / "version").write_text("new")
"""


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_swap_killed_after_each_step_keeps_a_whole_folder(tmp_path, exchange):
    from leftovers import recover_leftovers

    from nnd_suites.infra.atomic import _renameat2

    if exchange and _renameat2 is None:
        pytest.skip("no renameat2 on this system")
    target = tmp_path / "suite"
    for step in range(1, 4):
        target.mkdir(exist_ok=True)
        (target / "version").write_text("old")
        run = subprocess.run(
            [sys.executable, "-c", STEP_SCRIPT, str(target), str(step), str(int(exchange))],
            capture_output=True,
            text=True,
        )
        assert run.returncode in (0, -9), run.stderr
        if exchange:  # readers never see the target missing
            assert (target / "version").read_text() in ("old", "new")
        recover_leftovers(target)  # what the next write does first
        assert (target / "version").read_text() in ("old", "new")
        assert leftovers(tmp_path) == []
