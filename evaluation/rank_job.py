"""A library call run in data-parallel ranks: what crosses the process boundary, as JSON.

``evaluate(..., data_parallel=N)``, ``evaluate_models(...)`` and ``verify_suite(...)`` in a
process that is not already a rank turn their own call into a :class:`RankJob` (arguments as
JSON: paths as strings; an already-loaded backend, an in-memory model, ``Suite`` or
``PreparedSuites`` objects are refused with a named error: each rank loads its own copy) and
hand it to :func:`run_in_ranks`. It writes the job into a private temporary folder, starts N
ranks of ``python -m nnd_suites.evaluation.rank FOLDER`` (:func:`parallel.launch`), and each
rank makes the same call. Rank 0 writes its result there as JSON (never pickle), which is read
back and returned, so the caller gets the typed result a single process gives. An error on bad
input raised in a rank (an :class:`NNDError` or an ``OSError``) is raised again here with its
class and message; a rank that dies otherwise is a :class:`parallel.RankFailedError`. The
folder is removed after (it is the tool's own, never the user's); one a launcher killed with -9
left is removed by the next launcher (:func:`remove_killed_launchers_folders`).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path, PurePath
from typing import Any, Literal, TypeVar

from filelock import FileLock, Timeout
from pydantic import BaseModel, Field, JsonValue

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.errors import NNDError
from nnd_suites.evaluation.backend import backend_name
from nnd_suites.evaluation.catalogue_suites import catalogue_spec
from nnd_suites.evaluation.leaderboard import Leaderboard
from nnd_suites.evaluation.parallel import RankFailedError, current_rank, launch
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.evaluation.samples import Sample
from nnd_suites.infra.atomic import atomic_write_text
from nnd_suites.infra.validation import StrictModel
from nnd_suites.resolve import (
    BUILTIN_PREFIX,
    HUB_PREFIX,
    expand_suite_specs,
    load_suite,
    refuse_ambiguous,
)
from nnd_suites.statistics.outcomes import TestOutcome
from nnd_suites.suite import MANIFEST_FILE

JOB_FILE = "job.json"
RESULT_FILE = "result.json"
#: a rank's traceback of an error that is no error on bad input: ``crash.RANK.txt``
CRASH_FILE = "crash.{rank}.txt"
#: the exit status of a rank that wrote its :data:`CRASH_FILE`
CRASH_STATUS = 1
LAUNCHER_LOCK = "launcher.lock"
#: a job folder in the temporary folder: this prefix, its launcher's process id, then
#: ``tempfile.mkdtemp``'s 8 random characters
JOB_FOLDER = re.compile(r"^nnd-suites-ranks-(\d{1,9})-[a-z0-9_]{8}$")
logger = logging.getLogger(__name__)
SERVED_REFUSAL = (
    "--data-parallel runs local copies of a Hugging Face model; a served model is sharded by its "
    "engine, so send it more requests at once with --concurrency N instead"
)
Entry = Literal["evaluate", "evaluate_models", "verify_suite"]
Result = TypeVar("Result", bound=BaseModel)


class RankJob(StrictModel):
    """One library call, as each rank makes it."""

    entry: Entry
    arguments: dict[str, JsonValue]
    log_level: int = logging.WARNING


class RankFailure(StrictModel):
    """An error on bad input that a rank raised, to be raised again by the launcher."""

    rank: int
    module: str
    name: str
    message: str
    attributes: dict[str, JsonValue] = Field(default_factory=dict)
    os_error: tuple[int | None, str | None, str | None] | None = None  # errno, strerror, file


class ReportResult(BaseModel):
    """An evaluation report with what its own JSON leaves out (per-test outcomes, samples)."""

    report: EvaluationReport
    outcomes: dict[str, list[TestOutcome]] = {}
    samples: dict[str, list[Sample]] = {}

    @classmethod
    def of(cls, report: EvaluationReport) -> ReportResult:
        return cls(report=report, outcomes=report.outcomes, samples=report.samples)

    def restore(self) -> EvaluationReport:
        self.report.outcomes.update(self.outcomes)
        self.report.samples.update(self.samples)
        return self.report


class LeaderboardResult(BaseModel):
    board: Leaderboard
    reports: list[ReportResult]

    @classmethod
    def of(cls, board: Leaderboard) -> LeaderboardResult:
        return cls(board=board, reports=[ReportResult.of(r) for r in board.reports])

    def restore(self) -> Leaderboard:
        self.board.reports.extend(one.restore() for one in self.reports)
        return self.board


#: The results whose JSON leaves out what a caller reads (private attributes), and their carriers.
CARRIERS: dict[type[BaseModel], type[ReportResult | LeaderboardResult]] = {
    EvaluationReport: ReportResult,
    Leaderboard: LeaderboardResult,
}


def dump_result(result: BaseModel) -> str:
    """A result as JSON, with what its own JSON leaves out (an evaluation's outcomes...)."""
    carrier = CARRIERS.get(type(result))
    return (result if carrier is None else carrier.of(result)).model_dump_json()  # type: ignore[arg-type]


def load_result(result_type: type[Result], text: str) -> Result:
    carrier = CARRIERS.get(result_type)
    if carrier is None:
        return result_type.model_validate_json(text)
    return carrier.model_validate_json(text).restore()  # type: ignore[return-value]


def wants_ranks(data_parallel: int | None) -> bool:
    """``data_parallel`` N > 1 in a process that is not already a rank (1 is this process; a
    rank started by accelerate, torchrun or :func:`run_in_ranks` never starts ranks)."""
    if data_parallel is None:
        return False
    if isinstance(data_parallel, bool) or not isinstance(data_parallel, int) or data_parallel < 1:
        raise NNDError(
            f"data_parallel={data_parallel!r}: give a number of processes >= 1 (1: this one)"
        )
    return data_parallel > 1 and current_rank() is None


def rank_job(function: Callable[..., Any], frame: Mapping[str, Any]) -> RankJob:
    """``function``'s call as a job, from its ``locals()`` taken before any parameter was
    reassigned (``**options`` spread out; ``data_parallel`` left out: a rank starts no ranks)."""
    arguments: dict[str, Any] = {}
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            arguments.update(frame[name])
        elif name != "data_parallel":
            arguments[name] = frame[name]
    return RankJob(
        entry=function.__name__,  # type: ignore[arg-type]
        arguments={name: _portable(name, value) for name, value in arguments.items()},
        log_level=logging.getLogger("nnd_suites").getEffectiveLevel(),
    )


def _portable(name: str, value: Any) -> JsonValue:
    """``value`` as JSON for another process; what only lives in this one is refused."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, PurePath):
        # a Path is a folder: a bare one-part name would read as a built-in suite name there
        return str(value) if len(value.parts) != 1 or value.is_absolute() else f"./{value}"
    if isinstance(value, list | tuple):
        return [_portable(name, item) for item in value]
    if isinstance(value, Mapping) and all(isinstance(key, str) for key in value):
        return {key: _portable(name, item) for key, item in value.items()}
    raise NNDError(
        f"data parallel: argument {name!r} holds a {type(value).__name__} object, which cannot "
        "be sent to another process; give models by Hub id or folder and suites by folder, "
        "built-in name or hub:ORG/NAME/CONFIG (each rank loads its own copy), or score in this "
        "process (data_parallel=None)"
    )


def refuse_before_ranks(
    suites: object, backend: str | None, backend_options: Mapping[str, Any] | None
) -> None:
    """Bad input that would fail in every rank fails here, before any rank starts: a served
    model (its engine shards it), a suite spec that names nothing loadable (an unknown name, a
    missing folder, a bare built-in name that a folder here shadows). Specs that build or
    download are left to the ranks."""
    if backend_name("", backend, **(backend_options or {})) == "served":
        raise NNDError(SERVED_REFUSAL)
    specs = [suites] if isinstance(suites, str | PurePath) else list(suites)  # type: ignore[call-overload]
    if catalogue_spec(specs) is not None:
        return  # each rank builds the catalogue's suites, as it builds a built-in one by name
    for spec in expand_suite_specs(specs):
        text = str(spec)
        if isinstance(spec, str):
            refuse_ambiguous(text)
        loadable = text.startswith(HUB_PREFIX) or (Path(text) / MANIFEST_FILE).is_file()
        if not (loadable or text.removeprefix(BUILTIN_PREFIX) in ADAPTERS.names()):
            load_suite(text)  # names nothing loadable: raises the resolver's own error


def run_in_ranks(job: RankJob, processes: int, result_type: type[Result]) -> Result:
    """Run ``job`` in ``processes`` local ranks and return rank 0's result, a ``result_type``."""
    remove_killed_launchers_folders()
    # private (mode 0700), named after this process: a kill -9 leaves it to the next launcher
    folder = Path(tempfile.mkdtemp(prefix=f"nnd-suites-ranks-{os.getpid()}-"))
    # held until this process ends, however it ends: the lock, not the process id, says the
    # launcher lives (a process id means nothing to a launcher in another PID namespace that
    # shares this temporary folder)
    alive = FileLock(folder / LAUNCHER_LOCK)
    alive.acquire()
    try:
        atomic_write_text(folder / JOB_FILE, job.model_dump_json())
        # the job's own cache switch: under --no-cache no finished round is kept anywhere
        cached = job.arguments.get("cache", True) is not False
        failed = launch(folder, processes, cached=cached)
        if failed is not None:
            raise _failure_of(folder) or _rank_failed(folder, failed, processes, cached)
        result = folder / RESULT_FILE
        if not result.is_file():  # a bug, never an input problem
            raise RuntimeError("every data-parallel rank ended well, but rank 0 left no result")
        return load_result(result_type, result.read_text("utf-8"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        alive.release()


def remove_killed_launchers_folders() -> None:
    """Remove the job folders that killed launchers (kill -9: no ``finally`` ran) left in the
    temporary folder: only folders named as :data:`JOB_FOLDER`, owned by this user, whose lock
    no process holds. The lock, not the process id, says a launcher lives: the id is given to
    another process once the launcher is gone, and means nothing to a launcher in another PID
    namespace sharing this temporary folder. A launcher takes its lock before it writes its job,
    so only a folder without both (a launcher still starting) is left to its process id."""
    if os.name != "posix":  # a user's own temporary folder there; no process ids to ask
        return
    for entry in Path(tempfile.gettempdir()).iterdir():
        match = JOB_FOLDER.match(entry.name)
        try:
            if match is None or entry.lstat().st_uid != os.getuid() or entry.is_symlink():
                continue
            lock = entry / LAUNCHER_LOCK
            if _locked(lock):  # a live launcher
                continue
            if not (lock.is_file() and (entry / JOB_FILE).is_file()):
                os.kill(int(match.group(1)), 0)
                continue  # a launcher still starting lives: kept
        except ProcessLookupError:
            pass
        except OSError:  # gone meanwhile, or a process of another user
            continue
        logger.warning("removing %s, left by a data-parallel launcher that was killed", entry)
        shutil.rmtree(entry, ignore_errors=True)


def _locked(lock: Path) -> bool:
    """Whether a process holds ``lock`` (a launcher killed before making it holds none)."""
    if not lock.is_file():
        return False
    try:
        with FileLock(lock, timeout=0):
            return False
    except Timeout:
        return True


def read_job(folder: Path) -> RankJob:
    return RankJob.model_validate_json((folder / JOB_FILE).read_text("utf-8"))


def write_result(folder: Path, result: BaseModel) -> None:
    """Rank 0's result, atomically (the launcher reads it once every rank has ended)."""
    atomic_write_text(folder / RESULT_FILE, dump_result(result))


def write_failure(folder: Path, rank: int, error: NNDError | OSError) -> None:
    """``error`` (raised on bad input in ``rank``) for the launcher to raise again."""
    attributes = {}
    for key, value in vars(error).items():
        try:  # what survives JSON goes (the file of a SourceFormatError, a name...)
            attributes[key] = json.loads(json.dumps(value))
        except (TypeError, ValueError):
            continue
    failure = RankFailure(
        rank=rank,
        module=type(error).__module__,
        name=type(error).__qualname__,
        message=str(error),
        attributes=attributes,
        os_error=None
        if isinstance(error, NNDError)
        else (error.errno, error.strerror, None if error.filename is None else str(error.filename)),
    )
    atomic_write_text(folder / f"failure.{rank}.json", failure.model_dump_json())


def write_crash(folder: Path, rank: int, text: str) -> None:
    """The traceback of an error ``rank`` raised that is no error on bad input (a bug, or a
    collective that failed because a peer died), for the launcher to show or keep to debug."""
    atomic_write_text(folder / CRASH_FILE.format(rank=rank), text)


def _rank_failed(
    folder: Path, failed: tuple[int, int], processes: int, cached: bool
) -> RankFailedError:
    """The error for ``failed`` (rank, exit status), after the ranks' tracebacks. A rank killed
    by a signal left none; the tracebacks of its peers, whose collectives failed when it died
    (gloo's "Connection closed by peer"), say nothing more: debug logging only. A rank that
    failed with a traceback of its own: the first traceback written is the cause (its peers
    failed after it), shown at error level and named; the others are debug logging."""
    rank, status = failed
    crashes = sorted(folder.glob(CRASH_FILE.format(rank="*")), key=lambda p: p.stat().st_mtime_ns)
    for number, crash in enumerate(crashes):
        crashed = int(crash.name.split(".")[1])
        text = crash.read_text("utf-8").rstrip()
        if number == 0 and status >= 0:
            rank, status = crashed, CRASH_STATUS
            logger.error("data-parallel rank %d of %d failed:\n%s", rank, processes, text)
        else:
            logger.debug("data-parallel rank %d of %d failed:\n%s", crashed, processes, text)
    return RankFailedError(rank, processes, status, cached)


def _failure_of(folder: Path) -> NNDError | OSError | None:
    """The error of the lowest rank that wrote one (rank 0's when it did), as raised there."""
    files = sorted(folder.glob("failure.*.json"), key=lambda p: int(p.stem.split(".")[1]))
    if not files:
        return None
    failure = RankFailure.model_validate_json(files[0].read_text("utf-8"))
    if failure.os_error is not None:
        number, text, filename = failure.os_error
        return OSError(number, text, filename) if number is not None else OSError(text)
    return revive(failure.module, failure.name, failure.message, failure.attributes)


def revive(module: str, name: str, message: str, attributes: Mapping[str, Any]) -> NNDError:
    """An error of class ``module.name`` (an NNDError; the base class otherwise) with ``message``
    and ``attributes``, made without its own ``__init__`` (whose arguments differ by class).
    Only nnd-suites' own modules are looked up: a job folder's file never chooses what is
    imported."""
    cls: object = NNDError
    if module == "nnd_suites" or module.startswith("nnd_suites."):
        try:
            cls = functools.reduce(getattr, name.split("."), importlib.import_module(module))
        except (ImportError, AttributeError):
            cls = NNDError
    if not (isinstance(cls, type) and issubclass(cls, NNDError)):
        cls = NNDError
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    for key, value in attributes.items():
        setattr(error, key, value)
    return error
