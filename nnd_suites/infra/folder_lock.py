"""Writers of one path take turns on a :class:`filelock.FileLock` beside it.

The holder deletes the lock file ``.NAME.nnd-suites.lock`` before releasing it, which filelock's
POSIX lock does not do (it leaves the file behind), so no lock file stays beside a user's output;
filelock's acquire already checks that the file it locked was not deleted meanwhile.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from nnd_suites.errors import OutputFolderError

#: How long a writer waits for another writer of the same path before giving up.
LOCK_WAIT_SECONDS = 600.0


@contextlib.contextmanager
def writer_lock(target: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the lock of ``target`` (a file or folder, existing or not; its folder must exist).

    Not re-entrant: a process that holds it and asks again waits for itself."""
    lock = FileLock(target.parent / f".{target.name}.nnd-suites.lock")
    timeout = LOCK_WAIT_SECONDS if timeout is None else timeout
    try:
        lock.acquire(timeout=timeout)
    except Timeout as exc:
        raise OutputFolderError(
            f"{target}: another nnd-suites process has been writing there for over "
            f"{timeout:.0f} s; wait for it to finish, or write to another place"
        ) from exc
    try:
        yield
    finally:
        if os.name == "posix":  # Windows' lock deletes its file itself, and a held file cannot be
            Path(lock.lock_file).unlink(missing_ok=True)
        lock.release()


@contextlib.contextmanager
def folder_lock(folder: str | Path, timeout: float | None = None) -> Iterator[Path]:
    """Hold the lock of ``folder`` (created if missing): writers of one folder that add to it
    (an export folder's configs and card) run one after the other."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFolderError(
            f"{folder}: cannot create the folder ({exc.strerror or exc}); choose a writable one"
        ) from exc
    with writer_lock(folder, timeout):
        yield folder
