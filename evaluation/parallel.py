"""Data-parallel scoring: one model copy per process, requests sharded by context.

Every process of a group runs the same evaluation. The group is started either by
``accelerate launch -m nnd_suites evaluate ...`` (or ``torchrun``), whose ranks run the command
line, or by the library itself: ``evaluate(..., data_parallel=N)`` (and ``evaluate_models``,
``verify_suite``; the CLI's ``--data-parallel N``) hands its own call to :func:`launch` through
:mod:`nnd_suites.evaluation.rank_job`, which starts N local ranks of the library module
``python -m nnd_suites.evaluation.rank JOB`` (no command line is parsed there) and returns rank
0's result. Rank 0 reads the score cache and broadcasts what is left to score; the requests are
split by rendered context, so each context is encoded once on one rank (context sharing
survives the split), and contexts are dealt to ranks balancing their text length. Ranks score
their shards in rounds; after each round rank 0 gathers the finished scores and writes them to
the cache at once, so a run stopped anywhere (a killed rank stops them all) resumes from the
cache. Only rank 0 writes the cache, the report and the outcome files; every rank returns the
same report.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from nnd_suites.errors import NNDError, ScoringError
from nnd_suites.evaluation.backend import Score, ScoreRequest, ScoreSink

#: Contexts each rank scores between two gathers (each gather is one cache transaction on rank 0).
CONTEXTS_PER_ROUND = 32
#: The module each rank started by :func:`launch` runs: a library entry point, not the CLI.
RANK_MODULE = "nnd_suites.evaluation.rank"
#: Set by :func:`launch` in each rank's environment: the launcher's process id.
LAUNCHER_PID = "NND_SUITES_LAUNCHER_PID"
#: Seconds a rank has to stop after the launcher forwards SIGTERM before it is killed.
STOP_GRACE_SECONDS = 5.0
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass(frozen=True)
class Rank:
    rank: int
    world_size: int
    local_rank: int

    @property
    def main(self) -> bool:
        return self.rank == 0


def current_rank() -> Rank | None:
    """This process's place in a launched group (``WORLD_SIZE`` > 1), else None."""
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if world <= 1:
        return None
    rank = int(os.environ.get("RANK", "0"))
    return Rank(rank, world, int(os.environ.get("LOCAL_RANK", str(rank))))


def init_group(rank: Rank) -> None:
    """Join the process group (gloo on CPU, nccl when every rank has a GPU)."""
    # lazy: torch loads with a model only (`import nnd_suites` and `list` stay torch-free)
    import torch
    import torch.distributed as dist

    if dist.is_initialized():
        return
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(rank.local_rank)
    dist.init_process_group(backend, rank=rank.rank, world_size=rank.world_size)


def device_for_rank(device: str, rank: Rank) -> str:
    """``auto`` on a GPU machine means this rank's own GPU (``cuda:LOCAL_RANK``)."""
    # lazy: torch loads with a model only (`import nnd_suites` and `list` stay torch-free)
    import torch

    if device == "auto" and torch.cuda.is_available():
        return f"cuda:{rank.local_rank % torch.cuda.device_count()}"
    return device


def broadcast(value: object, rank: Rank) -> object:
    """Rank 0's ``value`` on every rank."""
    # lazy: torch loads with a model only (`import nnd_suites` and `list` stay torch-free)
    import torch.distributed as dist

    box = [value if rank.main else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def shard_by_context(requests: Sequence[ScoreRequest], world_size: int) -> list[list[list[int]]]:
    """Per rank, its contexts (each the indices of that context's requests), largest first dealt
    to the least-loaded rank (by characters), so shards take about the same time."""
    by_context: dict[str, list[int]] = {}
    for index, request in enumerate(requests):
        by_context.setdefault(request.context, []).append(index)
    weight = {
        context: len(context) + sum(len(requests[i].candidate) for i in indices)
        for context, indices in by_context.items()
    }
    shards: list[list[list[int]]] = [[] for _ in range(world_size)]
    loads = [0] * world_size
    for context in sorted(by_context, key=lambda c: (-weight[c], c)):
        target = loads.index(min(loads))
        shards[target].append(by_context[context])
        loads[target] += weight[context]
    return shards


def score_data_parallel(
    score: Callable[[list[ScoreRequest]], list[Score]],
    requests: list[ScoreRequest],
    rank: Rank,
    sink: ScoreSink | None,
    progress: Callable[[int], None] | None,
) -> list[Score]:
    """Score ``requests`` (the same list on every rank) with ``score`` on this rank's shard;
    rank 0's ``sink`` receives every round's scores from all ranks; all ranks get all scores."""
    # lazy: torch loads with a model only (`import nnd_suites` and `list` stay torch-free)
    import torch.distributed as dist

    shards = shard_by_context(requests, rank.world_size)
    mine = shards[rank.rank]
    rounds = max((len(s) + CONTEXTS_PER_ROUND - 1) // CONTEXTS_PER_ROUND for s in shards)
    results: list[Score | None] = [None] * len(requests)
    for number in range(rounds):
        contexts = mine[number * CONTEXTS_PER_ROUND : (number + 1) * CONTEXTS_PER_ROUND]
        indices = [i for context in contexts for i in context]
        scores = score([requests[i] for i in indices]) if indices else []
        gathered: list[object] = [None] * rank.world_size
        dist.all_gather_object(gathered, (indices, scores))
        done_indices: list[int] = []
        done_scores: list[Score] = []
        for part in gathered:
            part_indices, part_scores = part  # type: ignore[misc]
            for index, value in zip(part_indices, part_scores, strict=True):
                results[index] = value
            done_indices += part_indices
            done_scores += part_scores
        if rank.main and sink is not None and done_indices:
            sink(done_indices, done_scores)
        if rank.main and progress is not None:
            progress(len(done_indices))
    missing = sum(r is None for r in results)
    if missing:  # a bug, never an input problem
        raise RuntimeError(f"{missing} request(s) were not scored by any rank")
    return results  # type: ignore[return-value]


def die_with_launcher() -> None:
    """In a rank started by :func:`launch`: be killed when the launcher dies, however it dies
    (SIGKILL included: a batch scheduler, ``timeout -s KILL``, a closed SSH session), so no rank
    goes on scoring and writes into ``--out`` after its launcher is gone. Linux only (prctl); on
    other systems the launcher's signal forwarding is the only guard."""
    launcher = os.environ.pop(LAUNCHER_PID, None)  # not inherited by a rank's own children
    if launcher is None or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != int(launcher):  # the launcher died before prctl took effect
        os._exit(128 + signal.SIGKILL)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS picks it), for a process group's rendezvous."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def resume_note(cached: bool) -> str:
    """What a stopped run left behind: its finished rounds are in the score cache, unless the run
    used none (``--no-cache``), when nothing is kept and a rerun scores every request again."""
    if cached:
        return "finished rounds are in the score cache: the same run resumes from them"
    return (
        "nothing was kept: the run used no score cache (--no-cache), so running it again "
        "scores every request again (drop --no-cache to keep finished rounds)"
    )


class RankFailedError(ScoringError):
    """A data-parallel rank died of something other than an error on bad input (which comes
    back as its own class): killed, out of memory, a bug."""

    def __init__(self, rank: int, processes: int, status: int, cached: bool = True) -> None:
        how = (
            f"was killed by {signal.Signals(-status).name}"
            if status < 0 and -status in signal.valid_signals()
            else f"ended with exit status {status} (its messages are above)"
        )
        super().__init__(
            f"data-parallel rank {rank} of {processes} {how}; the other ranks were stopped; "
            + resume_note(cached)
        )


class StoppedError(NNDError):
    """The launcher was sent SIGTERM: every rank was stopped and reaped. Its exit status is the
    shell's for that signal (128 + 15)."""

    def __init__(self, signum: int, cached: bool = True) -> None:
        self.exit_status = 128 + signum
        super().__init__(
            f"stopped by {signal.Signals(signum).name}: every data-parallel rank was stopped; "
            + resume_note(cached)
        )


def launch(
    job: str | os.PathLike, processes: int, *, cached: bool = True
) -> tuple[int, int] | None:
    """Run ``python -m nnd_suites.evaluation.rank JOB`` in N local processes, as torchrun would:
    None when every rank succeeded, else ``(rank, exit status)`` of the first that failed (the
    others are then stopped; their finished rounds are in the cache when ``cached``). Each rank
    leads its own process group and dies with the launcher; SIGTERM/SIGINT sent to the launcher
    are forwarded to every rank's group (then :class:`StoppedError`, saying what ``cached`` kept,
    or KeyboardInterrupt), and every rank is reaped before this returns."""
    if processes < 2:
        raise NNDError(f"data parallel over {processes} process(es): give 2 or more")
    command = [sys.executable, "-m", RANK_MODULE, os.fspath(job)]
    port = free_port()
    children: list[subprocess.Popen] = []
    received: list[int] = []
    with _forwarding_signals(children, received):
        try:
            for rank in range(processes):
                children.append(_start_rank(command, rank, processes, port))
            while not received:
                codes = [child.poll() for child in children]
                failed = [(rank, code) for rank, code in enumerate(codes) if code not in (None, 0)]
                if failed:  # a rank killed by a signal first: its peers then fail for want of it
                    return min(failed, key=lambda failure: failure[1] >= 0)
                if all(code == 0 for code in codes):
                    return None
                time.sleep(0.2)
        finally:
            _stop(children)
    if received[0] == signal.SIGINT:
        raise KeyboardInterrupt
    raise StoppedError(received[0], cached)


def _start_rank(command: list[str], rank: int, processes: int, port: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(processes),
        "LOCAL_WORLD_SIZE": str(processes),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        LAUNCHER_PID: str(os.getpid()),
    }
    # N ranks on one machine share its cores: without this each would start a thread per
    # core (torchrun sets 1); an explicit OMP_NUM_THREADS wins.
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // processes)))
    quiet = subprocess.DEVNULL if rank else None  # one rank speaks
    # Its own session and process group: a terminal's Ctrl-C reaches the launcher, which
    # forwards it, and a stop signal reaches whatever the rank itself started.
    return subprocess.Popen(command, env=env, stdout=quiet, start_new_session=True)


@contextlib.contextmanager
def _forwarding_signals(children: list[subprocess.Popen], received: list[int]) -> Iterator[None]:
    """While launching: SIGTERM and SIGINT go on to every rank's process group and are recorded
    in ``received`` (the launcher then stops waiting and reaps)."""

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        for child in children:
            _signal_group(child, signum)

    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    else:  # signal handlers can only be set from the main thread
        previous = {}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _signal_group(child: subprocess.Popen, signum: int) -> None:
    if child.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signum)


def _stop(children: list[subprocess.Popen]) -> None:
    """SIGTERM to every rank still running, SIGKILL after a grace period; every rank reaped."""
    for child in children:
        _signal_group(child, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for child in children:
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(child, signal.SIGKILL)
            child.wait()
