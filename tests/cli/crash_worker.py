"""Fork server for the crash tests: runs ``nnd-suites`` commands in forked children to be killed.

Importing nnd-suites, pyarrow and torch takes seconds; a kill should cost milliseconds. This
process imports them once, then for each JSON line ``{"argv": [...], "log": PATH, "kill_after":
SECONDS or null}`` on stdin forks a child that runs ``nnd_suites.cli.main(argv)`` (stdout and
stderr to ``log``), SIGKILLs it after ``kill_after`` seconds if it still runs, and answers
``{"rc": RC, "seconds": S}`` (RC is ``-9`` when the kill landed). The child is killed before it
is reaped, so its process id cannot have been reused by then. ``"kill_at_rows": [DB, N]`` kills
it instead as soon as the SQLite score cache DB holds N scores (a kill after a given batch).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import time


def preload() -> None:
    import torch

    torch.set_num_threads(1)  # no thread pool to carry across fork()

    import transformers  # noqa: F401

    import nnd_suites.evaluation.backends
    import nnd_suites.evaluation.outputs
    import nnd_suites.hub  # noqa: F401
    from nnd_suites.cli import build_parser

    build_parser()  # imports every command module


def child(argv: list[str], log: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    code = 1
    try:
        from nnd_suites.cli import main

        code = main(argv)
    except BaseException as exc:
        print(f"crash worker: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def cached_scores(db: str) -> int:
    if not os.path.exists(db):
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as connection:
            return connection.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
    except sqlite3.Error:  # the table is not created yet, or the file is being set up
        return 0


def wait_for_rows(pid: int, db: str, rows: int) -> tuple[int, int]:
    """Poll until the child ended (its waitpid answer) or DB holds ``rows`` scores (0, 0)."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done or cached_scores(db) >= rows:
            return done, status
        time.sleep(0.005)


def serve() -> None:
    preload()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            child(request["argv"], request["log"])
        done, status = 0, 0
        if request.get("kill_after") is not None or request.get("kill_at_rows"):
            if request.get("kill_at_rows"):
                done, status = wait_for_rows(pid, *request["kill_at_rows"])
            else:
                time.sleep(request["kill_after"])
                done, status = os.waitpid(pid, os.WNOHANG)
            if not done:  # still running
                os.kill(pid, signal.SIGKILL)
        if not done:
            _, status = os.waitpid(pid, 0)
        seconds = time.perf_counter() - started
        answer = {"rc": os.waitstatus_to_exitcode(status), "seconds": seconds}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    serve()
