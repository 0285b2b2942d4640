"""Atomic writes: a partial run never leaves a corrupt file or folder behind.

A file is written to ``.NAME.PID.XXXXXXXX.tmp`` beside it and renamed onto it. A folder is written
to such a temporary folder and swapped with the target in one step: on Linux with
``renameat2(RENAME_EXCHANGE)``, so the target path always holds a complete old or new folder.
Elsewhere (or on a file system without the exchange) the old folder is first renamed to
``.NAME.PID.XXXXXXXX.old`` and the new one renamed into place; a run killed between the two
renames leaves the target missing, and the next write (or :func:`recover_leftovers`) renames the
complete old copy back.

Leftovers of killed runs are cleaned by the next write to the same target. A leftover belongs to
a live writer while its process id is alive or its ``fcntl`` lock is held, and is then left alone,
so two concurrent writers never delete each other's work.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from nnd_suites.errors import NNDError

try:  # POSIX: a writer holds an advisory lock on its temporary file or folder.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def current_umask() -> int:
    """The process umask (read without changing it where Linux allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _follow_umask(path: Path, mode: int) -> None:
    """mkstemp/mkdtemp create private 0600/0700 entries; give them what open/mkdir would."""
    os.chmod(path, mode & ~current_umask())


AT_FDCWD = -100
RENAME_EXCHANGE = 2
#: Without locks or process ids to ask (Windows), a leftover is stale after this many seconds.
STALE_AFTER = 24 * 3600


def _load_renameat2():  # the libc function, or None where there is none
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # glibc < 2.28, musl without it
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function


_renameat2 = _load_renameat2()


def exchange_paths(first: str | os.PathLike, second: str | os.PathLike) -> bool:
    """Swap two existing paths in one atomic step; False where the system cannot do it."""
    if _renameat2 is None:
        return False
    one, other = os.fsencode(first), os.fsencode(second)
    if _renameat2(AT_FDCWD, one, AT_FDCWD, other, RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):  # kernel or FS
        return False
    raise OSError(code, os.strerror(code), os.fspath(first), None, os.fspath(second))


# ------------------------------------------------------------------- leftovers
def _leftover_pattern(name: str) -> re.Pattern[str]:
    # The random part of tempfile names has no dot, so ``.a.b.1.x.tmp`` is never taken for ``a``.
    # Names without a process id come from versions before the id was added.
    return re.compile(rf"^\.{re.escape(name)}\.(?:(\d+)\.)?[a-z0-9_]{{8}}\.(tmp|old)$")


def _temp_prefix(target: Path) -> str:
    return f".{target.name}.{os.getpid()}."


def _lock(fd: int) -> bool:
    """Take the exclusive lock of an open file or folder without waiting; False if held."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0 only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


@contextlib.contextmanager
def _stale_leftover(path: Path, pid: str | None) -> Iterator[bool]:
    """Whether ``path`` was left by a dead writer; its lock is held during the block."""
    if fcntl is None:  # no lock and no safe liveness test (Windows): go by age
        yield time.time() - _mtime(path) > STALE_AFTER
        return
    if pid is not None and _process_alive(int(pid)):
        yield False
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # gone meanwhile (its writer finished)
        yield False
        return
    try:
        yield _lock(fd)
    finally:
        os.close(fd)


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except FileNotFoundError:  # removed meanwhile by its writer
        return 0.0


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def recover_leftovers(target: str | os.PathLike) -> None:
    """Clean what killed writes to ``target`` left beside it; restore a missing folder.

    A missing ``target`` with a complete ``.old`` copy (a run killed between the two renames of the
    fallback swap) gets the copy back; every other stale ``.tmp`` / ``.old`` leftover is deleted.
    """
    target = Path(target)
    if not target.parent.is_dir():
        return
    pattern = _leftover_pattern(target.name)
    leftovers = []
    for entry in target.parent.iterdir():
        match = pattern.match(entry.name)
        if match:
            leftovers.append((entry, match.group(1), match.group(2)))
    # Newest first: the most recent old copy is the one a killed swap took away.
    leftovers.sort(key=lambda item: _mtime(item[0]), reverse=True)
    for path, pid, kind in leftovers:
        with _stale_leftover(path, pid) as stale:
            if not stale:
                continue
            if kind == "old" and not target.exists() and not target.is_symlink():
                legacy = path / "x"  # earlier versions kept the old folder inside as ``x``
                copy = legacy if pid is None and legacy.is_dir() else path
                os.rename(copy, target)
                if copy is legacy:
                    _remove(path)
                continue
            _remove(path)


# ------------------------------------------------------------------- writers
@contextlib.contextmanager
def _writable(target: Path) -> Iterator[None]:
    """Name the target, not a temporary file, when its folder cannot be made or written."""
    try:
        yield
    except OSError as exc:
        raise NNDError(
            f"cannot write {target} ({exc.strerror or exc}); choose a path in a writable folder"
        ) from exc


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` only on success."""
    target = Path(os.path.abspath(target))  # "." and ".." have no parent to write beside
    with _writable(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        recover_leftovers(target)
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(target), suffix=".tmp", dir=target.parent)
    tmp_path = Path(tmp)
    _follow_umask(tmp_path, 0o666)
    try:
        _lock(fd)  # held until the rename, so no concurrent cleaner takes the file for stale
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        os.close(fd)
        if tmp_path.exists():
            tmp_path.unlink()


def atomic_write_text(target: str | os.PathLike, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


@contextlib.contextmanager
def atomic_directory(target: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``target``; swap it in only when the block succeeds.

    An existing ``target`` is replaced as a whole, so readers see either the old or the new folder
    (see the module docstring for how, and for what happens to a killed run's leftovers).
    """
    target = Path(os.path.abspath(target))  # "." and ".." have no parent to write beside
    with _writable(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        recover_leftovers(target)
        tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), suffix=".tmp", dir=target.parent))
    _follow_umask(tmp, 0o777)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        _lock(fd)
        yield tmp
        _swap_in(tmp, target)
    finally:
        os.close(fd)
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _swap_in(tmp: Path, target: Path) -> None:
    """Put the complete folder ``tmp`` at ``target``; the old folder (if any) is deleted."""
    if not target.exists() and not target.is_symlink():
        try:
            os.rename(tmp, target)  # refuses to replace a folder created meanwhile
            return
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.EISDIR):
                raise
    if exchange_paths(tmp, target):
        shutil.rmtree(tmp, ignore_errors=True)  # now holds the old folder
        return
    old = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), suffix=".old", dir=target.parent))
    old.rmdir()  # only the unique name is wanted; the rename below creates it
    os.rename(target, old)
    os.rename(tmp, target)  # killed before this line: the next write restores ``old``
    shutil.rmtree(old, ignore_errors=True)
