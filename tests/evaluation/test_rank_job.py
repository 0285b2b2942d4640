"""A library call in data-parallel ranks: what crosses the process boundary, what is refused
before any rank starts, and how a rank's error reaches the caller."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from filelock import FileLock

from nnd_suites.errors import (
    AmbiguousSuiteError,
    ModelLoadError,
    NNDError,
    OutputFolderError,
    SourceFormatError,
    UnknownItemError,
)
from nnd_suites.evaluation import Backend, EvaluationReport, Score, ScoreRequest, evaluate
from nnd_suites.evaluation import rank_job as jobs
from nnd_suites.evaluation.multi import evaluate_models
from nnd_suites.evaluation.parallel import RankFailedError, StoppedError
from nnd_suites.evaluation.rank_job import RankJob, dump_result, load_result, run_in_ranks
from nnd_suites.evaluation.verify.run import verify_suite


class LengthBackend(Backend):
    """Scores a candidate by its length: a real report without a model."""

    name = "test_length"
    description = "test double"

    @classmethod
    def load(cls, model, **options):  # pragma: no cover - never loaded by name
        raise NotImplementedError

    @property
    def identity(self) -> dict[str, str]:
        return {"backend": self.name}

    def score(self, requests: Sequence[ScoreRequest], *, sink=None, progress=None):
        scores = [Score(-len(r.candidate), len(r.candidate) % 3 + 1) for r in requests]
        if sink is not None:
            sink(list(range(len(requests))), scores)
        return scores


@pytest.fixture
def no_ranks(monkeypatch):
    """Fail the test if a rank would start: what is checked here must fail before."""

    def launch(job, processes, cached):
        raise AssertionError("a rank was started")

    monkeypatch.setattr(jobs, "launch", launch)


def test_bad_input_is_refused_before_any_rank_starts(no_ranks, tmp_path, quiz_design_suite):
    with pytest.raises(UnknownItemError, match="did you mean 'quiz_design'"):
        evaluate("gpt2", "quiz_desing", data_parallel=2)
    with pytest.raises(NNDError, match=r"no such folder"):
        evaluate("gpt2", str(tmp_path / "missing"), data_parallel=2)
    with pytest.raises(NNDError, match="sharded by its engine.*--concurrency N"):
        evaluate(
            "m",
            "challenge300",
            backend_options={"base_url": "http://127.0.0.1:9/v1"},
            data_parallel=2,
        )
    with pytest.raises(UnknownItemError, match="unknown scorer 'meen'"):
        evaluate("gpt2", "challenge300", scorers="meen", data_parallel=2)
    with pytest.raises(ModelLoadError):
        evaluate(str(tmp_path / "no" / "model"), "challenge300", data_parallel=2)
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    with pytest.raises(OutputFolderError):
        evaluate("gpt2", "challenge300", out=taken, data_parallel=2)
    with pytest.raises(NNDError, match="give each --model once|given more than once"):
        evaluate_models(["gpt2", "gpt2"], "challenge300", data_parallel=2)
    with pytest.raises(ModelLoadError):
        verify_suite(
            "quiz_design", {"mixqg": str(tmp_path / "no" / "a"), "b": "gpt2"}, data_parallel=2
        )
    with pytest.raises(NNDError, match="data_parallel=0"):
        evaluate("gpt2", "challenge300", data_parallel=0)


def test_a_shadowed_built_in_name_is_refused_before_any_rank_starts(
    no_ranks, tmp_path, monkeypatch, challenge300_suite
):
    """A bare built-in name that is also a folder here fails in the launcher, as in one
    process; builtin:NAME is checked by name, without building the suite in the launcher."""
    monkeypatch.chdir(tmp_path)
    challenge300_suite.save(tmp_path / "quiz_design")
    with pytest.raises(AmbiguousSuiteError, match="builtin:quiz_design"):
        evaluate("gpt2", "quiz_design", data_parallel=2)
    monkeypatch.setattr(jobs, "load_suite", lambda spec: pytest.fail(f"built {spec}"))
    jobs.refuse_before_ranks(["builtin:quiz_design", "./quiz_design"], None, None)


@pytest.mark.parametrize(
    ("model", "suites", "held"),
    [
        (LengthBackend(), "challenge300", "LengthBackend"),
        ((object(), object()), "challenge300", "object"),
        ("gpt2", "QUIZ", "Suite"),
    ],
    ids=["backend", "in-memory model", "suite object"],
)
def test_what_lives_in_this_process_only_is_refused(
    no_ranks, quiz_design_suite, model, suites, held
):
    suites = quiz_design_suite if suites == "QUIZ" else suites
    with pytest.raises(NNDError, match=f"holds a {held} object, which cannot be sent"):
        evaluate(model, suites, data_parallel=2)


def test_a_one_part_path_goes_to_the_ranks_as_a_folder():
    """Path("quiz_design") is the folder; sent as the bare string it would name the built-in."""

    def evaluate(model, suites, *, data_parallel=None):  # a stand-in
        return jobs.rank_job(evaluate, locals())

    job = evaluate("m", [Path("quiz_design"), "quiz_design", Path("/abs/x"), Path("a/b")])
    assert job.arguments["suites"] == ["./quiz_design", "quiz_design", "/abs/x", "a/b"]


def test_a_job_holds_the_call_as_json_with_paths_as_strings(tmp_path):
    def evaluate(model, suites, *, out=None, data_parallel=None, **options):  # a stand-in
        return jobs.rank_job(evaluate, locals())

    job = evaluate(tmp_path / "m", ["a", tmp_path / "s"], out=tmp_path, normalize=("lowercase",))
    assert job.arguments == {
        "model": str(tmp_path / "m"),
        "suites": ["a", str(tmp_path / "s")],
        "out": str(tmp_path),
        "normalize": ["lowercase"],
    }
    assert RankJob.model_validate_json(job.model_dump_json()) == job


def test_a_report_comes_back_from_json_with_its_outcomes(challenge300_suite):
    report = evaluate(LengthBackend(), "challenge300", cache=False, progress=False, limit=6)
    back = load_result(EvaluationReport, dump_result(report))
    assert back == report
    assert back.outcomes == report.outcomes and len(back.outcomes["challenge300"]) > 0


def test_a_rank_error_is_raised_again_as_its_class_with_its_message(tmp_path):
    error = SourceFormatError(tmp_path / "a.csv", 3, "column 'x' is missing", hint="add it")
    jobs.write_failure(tmp_path, 1, error)
    back = jobs._failure_of(tmp_path)
    assert type(back) is SourceFormatError and str(back) == str(error)
    assert (back.path, back.line, back.exit_status) == (error.path, 3, 3)
    jobs.write_failure(tmp_path, 0, FileNotFoundError(2, "No such file or directory", "/x/y"))
    back = jobs._failure_of(tmp_path)  # rank 0's error comes first
    assert type(back) is FileNotFoundError and back.filename == "/x/y"


def test_a_failure_file_never_chooses_what_is_imported(tmp_path, monkeypatch):
    """The error's class is looked up in nnd-suites' own modules only: a failure file naming
    another module gives a plain NNDError with the message, and imports nothing."""
    imported = []
    real = jobs.importlib.import_module
    monkeypatch.setattr(jobs.importlib, "import_module", lambda m: imported.append(m) or real(m))
    error = jobs.revive("antigravity", "Fly", "a rank said this", {})
    assert type(error) is NNDError and str(error) == "a rank said this"
    assert imported == []
    assert type(jobs.revive("nnd_suites.errors", "UnknownItemError", "x", {})).__name__ == (
        "UnknownItemError"
    )


def test_a_rank_that_dies_is_named_with_its_status(monkeypatch):
    monkeypatch.setattr(jobs, "launch", lambda job, processes, cached: (1, -9))
    job = RankJob(entry="evaluate", arguments={})
    with pytest.raises(RankFailedError, match="rank 1 of 2 was killed by SIGKILL") as died:
        run_in_ranks(job, 2, EvaluationReport)
    assert "finished rounds are in the score cache" in str(died.value)
    assert StoppedError(15).exit_status == 143


def test_a_run_stopped_under_no_cache_does_not_say_its_rounds_are_in_the_cache(monkeypatch):
    """--no-cache writes no round anywhere: the message says a rerun scores everything again."""
    monkeypatch.setattr(jobs, "launch", lambda job, processes, cached: (1, -9))
    job = RankJob(entry="evaluate", arguments={"cache": False})
    with pytest.raises(RankFailedError, match="rank 1 of 2 was killed by SIGKILL") as died:
        run_in_ranks(job, 2, EvaluationReport)
    message = str(died.value)
    assert "in the score cache" not in message and "no score cache (--no-cache)" in message
    stopped = str(StoppedError(15, cached=False))
    assert "in the score cache" not in stopped and "scores every request again" in stopped


def test_an_error_raised_inside_the_ranks_reaches_the_caller_as_itself(tmp_path, monkeypatch):
    """Two real ranks (python -m nnd_suites.evaluation.rank): both refuse the scorer name, rank
    0's error comes back with its class, message and attributes; the job folder is removed."""
    import tempfile

    # the job's folder in a temporary folder of this test's own: other tests' ranks (other
    # pytest workers) come and go in the system's one meanwhile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    job = RankJob(
        entry="evaluate",
        arguments={"model": "m", "suites": "challenge300", "scorers": "meen", "cache": False},
    )
    with pytest.raises(UnknownItemError) as raised:
        run_in_ranks(job, 2, EvaluationReport)
    assert str(raised.value).startswith("unknown scorer 'meen'; did you mean 'mean'?")
    assert raised.value.name == "meen" and raised.value.exit_status == 6
    assert list(tmp_path.iterdir()) == []


def test_a_rank_that_fails_on_a_bug_shows_its_traceback(tmp_path, monkeypatch, caplog, capfd):
    """A bug in the ranks (here evaluate() called with a keyword it has not: a TypeError in each)
    is no peer's death: the first traceback written is shown at error level, its rank named,
    the other rank's kept to debug logging; nothing from the ranks reaches stderr itself."""
    import logging
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    job = RankJob(entry="evaluate", arguments={"model": "m", "suites": "x", "no_such": 1})
    debug = caplog.at_level(logging.DEBUG, "nnd_suites")
    with debug, pytest.raises(RankFailedError, match="of 2 ended with exit status 1") as failed:
        run_in_ranks(job, 2, EvaluationReport)
    shown = [r for r in caplog.records if r.name == jobs.__name__ and r.levelno == logging.ERROR]
    assert len(shown) == 1, caplog.text
    rank = shown[0].args[0]
    assert f"data-parallel rank {rank} of 2 ended" in str(failed.value)
    assert "Traceback" in shown[0].getMessage() and "'no_such'" in shown[0].getMessage()
    # a rank's own uncaught traceback starts in runpy (python -m); the one logged, in rank.main
    assert "<frozen runpy>" not in capfd.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_next_launcher_removes_what_a_killed_launcher_left(tmp_path, monkeypatch):
    """A launcher killed with -9 left its job folder (job.json) in the temporary folder for
    good; the next launcher removes it: only folders named as ours whose launcher is gone."""
    import os
    import tempfile

    killed = (
        "import os, sys\n"
        "from nnd_suites.evaluation import EvaluationReport, rank_job\n"
        "rank_job.launch = lambda *args, **kwargs: os.kill(os.getpid(), 9)\n"
        "rank_job.run_in_ranks(rank_job.RankJob(entry='evaluate', arguments={}), 2, "
        "EvaluationReport)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    assert subprocess.run([sys.executable, "-c", killed], env=env).returncode == -9
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 1 and (tmp_path / left[0] / "job.json").is_file(), left
    kept = [
        f"nnd-suites-ranks-{os.getpid()}-abcd1234",  # a live launcher's
        "nnd-suites-ranks-abcd1234",  # not named as ours now: its launcher is unknown
        f"nnd-suites-ranks-{left[0].split('-')[3]}-abcd123",  # not mkdtemp's name
        f"other-ranks-{left[0].split('-')[3]}-abcd1234",
    ]
    for name in kept:
        (tmp_path / name).mkdir()
    # a launcher whose process id means nothing here (another PID namespace sharing /tmp) but
    # which holds its lock: it lives, and its folder is kept
    elsewhere = f"nnd-suites-ranks-{left[0].split('-')[3]}-efgh5678"
    (tmp_path / elsewhere).mkdir()
    kept.append(elsewhere)
    held = FileLock(tmp_path / elsewhere / "launcher.lock")
    held.acquire()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(jobs, "launch", lambda job, processes, cached: (1, -9))
    with pytest.raises(RankFailedError):
        run_in_ranks(RankJob(entry="evaluate", arguments={}), 2, EvaluationReport)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)
    held.release()


def test_a_killed_launchers_folder_goes_even_when_its_process_id_was_given_again(
    tmp_path, monkeypatch
):
    """The lock tells whether a launcher lives, not its process id, which the system gives to
    the next process once the launcher is killed: a folder with its job written and its lock
    free is a killed launcher's, removed; one whose lock is held, or one whose launcher is still
    starting (no job written yet), is kept."""
    import os
    import tempfile

    reused = f"nnd-suites-ranks-{os.getpid()}-abcd1234"  # this test's own process id: alive
    held, starting = (f"nnd-suites-ranks-{os.getpid()}-{tail}" for tail in ("efgh5678", "ijkl9012"))
    for name in (reused, held, starting):
        (tmp_path / name).mkdir()
        (tmp_path / name / "launcher.lock").touch()
    for name in (reused, held):
        (tmp_path / name / "job.json").write_text("{}")
    lock = FileLock(tmp_path / held / "launcher.lock")
    lock.acquire()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(jobs, "launch", lambda job, processes, cached: (1, -9))
    try:
        with pytest.raises(RankFailedError):
            run_in_ranks(RankJob(entry="evaluate", arguments={}), 2, EvaluationReport)
    finally:
        lock.release()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([held, starting])


def test_the_rank_module_does_not_load_the_cli():
    code = (
        "import sys, nnd_suites.evaluation.rank\n"
        "print(sorted(m for m in sys.modules if m.startswith('nnd_suites.cli')))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]"
