"""Writers that add to one folder (an export folder's configs and card) take turns."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from nnd_suites.errors import OutputFolderError

try:  # POSIX: writers of one folder serialise on a lock of the folder itself (no lock file)
    import fcntl
except ImportError:  # pragma: no cover - Windows: a lock file beside the folder
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def folder_lock(folder: str | Path, timeout: float = 600.0) -> Iterator[Path]:
    """Hold the exclusive lock of ``folder`` (created if missing): writers of one folder that
    add to it (an export folder's configs and card) run one after the other."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFolderError(
            f"{folder}: cannot create the folder ({exc.strerror or exc}); choose a writable one"
        ) from exc
    if fcntl is None:  # pragma: no cover - Windows
        from filelock import FileLock, Timeout

        try:
            with FileLock(str(folder.parent / f".{folder.name}.lock"), timeout=timeout):
                yield folder
        except Timeout as exc:
            raise OutputFolderError(_busy(folder, timeout)) from exc
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OutputFolderError(_busy(folder, timeout)) from None
                time.sleep(0.05)
        yield folder
    finally:
        os.close(fd)  # releases the lock


def _busy(folder: Path, timeout: float) -> str:
    return (
        f"{folder}: another nnd-suites process has been writing there for over {timeout:.0f} s; "
        "wait for it to finish, or write to another folder"
    )
