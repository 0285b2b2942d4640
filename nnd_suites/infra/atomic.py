"""Atomic writes: a killed run never leaves a corrupt file or folder behind.

A writer holds the target's lock (:func:`writer_lock`, a :class:`filelock.FileLock` beside it,
whose file the holder deletes before releasing it: filelock's POSIX lock leaves it behind) from
start to end, so writers of one target take turns. It writes into
``.NAME.PID.RANDOM.tmp`` beside the target, then puts it in place: a file with ``os.replace``; a
folder by exchanging the two in one step where Linux can (``renameat2``), else by renaming the old
folder aside to ``.NAME.PID.RANDOM.old`` and the new one in. A later writer of the same target,
holding the lock, knows that every such name beside it was left by a killed writer: it deletes
them, and first renames a set-aside ``.old`` back when a kill between the two renames left the
target missing. We keep the exchange of our own because neither ``os`` nor ``filelock`` has one,
and without it a reader could find the target missing for an instant.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from nnd_suites.errors import NNDError, OutputFolderError

# ------------------------------------------------------------------- locks
#: How long a writer waits for another writer of the same path before giving up.
LOCK_WAIT_SECONDS = 600.0
#: ``.NAME`` + this, beside the target: the lock file of a writer of ``NAME``
LOCK_SUFFIX = ".nnd-suites.lock"


@contextlib.contextmanager
def writer_lock(target: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the lock of ``target`` (a file or folder, existing or not; its folder must exist).

    Not re-entrant: a process that holds it and asks again waits for itself."""
    lock = FileLock(target.parent / f".{target.name}{LOCK_SUFFIX}")
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
def folder_lock(
    folder: str | Path, timeout: float | None = None, *, recover: bool = False
) -> Iterator[list[str]]:
    """Hold the lock of ``folder`` (created if missing): writers of one folder that add to it
    (an export folder's configs and card) run one after the other. With ``recover``, what
    killed writers left in it is cleaned first (:func:`recover_dead_writers`); the names
    removed are yielded."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFolderError(
            f"{folder}: cannot create the folder ({exc.strerror or exc}); choose a writable one"
        ) from exc
    with writer_lock(folder, timeout):
        yield recover_dead_writers(folder) if recover else []


# ------------------------------------------------------------------- exchange
AT_FDCWD = -100
RENAME_EXCHANGE = 2


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
    # The random part has no dot, so ``.a.b.1.x.tmp`` is never taken for ``a``. Names without
    # a process id come from versions before the id was added.
    return re.compile(rf"^\.{re.escape(name)}\.(?:(\d+)\.)?[a-z0-9_]{{8}}\.(tmp|old)$")


def _leftover_path(target: Path, kind: str) -> Path:
    return target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.{kind}"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _recover(target: Path) -> None:
    """Delete what killed writers of ``target`` left beside it, after renaming the newest
    set-aside ``.old`` back if ``target`` is missing; the caller holds the target's lock."""
    pattern = _leftover_pattern(target.name)
    found = [(entry, pattern.match(entry.name)) for entry in target.parent.iterdir()]
    leftovers = sorted(
        ((entry, match) for entry, match in found if match),
        key=lambda item: item[0].lstat().st_mtime,
        reverse=True,  # the most recent old copy is the one a killed swap took away
    )
    for path, match in leftovers:
        if match.group(2) == "old" and not target.exists() and not target.is_symlink():
            legacy = path / "x"  # versions before process ids kept the old folder inside as x
            os.rename(legacy if match.group(1) is None and legacy.is_dir() else path, target)
        _remove(path)


#: The target name of any leftover or lock file beside it. The name is the shortest that fits,
#: so ``.a.b.1234.x.tmp`` (a writer's process id, then the random part) is a leftover of ``a.b``.
_LEFTOVER_OF = re.compile(r"^\.(.+?)\.(?:\d+\.)?[a-z0-9_]{8}\.(?:tmp|old)$")
_LOCK_OF = re.compile(rf"^\.(.+){re.escape(LOCK_SUFFIX)}$")


def recover_dead_writers(folder: str | os.PathLike) -> list[str]:
    """Clean what killed writers of any target in ``folder`` left there (the temporary copies
    and lock files of other configs of an export folder, say): each target whose lock no live
    writer holds is recovered as its own next writer would (:func:`_recover`), its lock file
    deleted. Only names this module writes are touched; a target being written is left to its
    writer. Returns the names removed, sorted."""
    folder = real_target(folder)
    if not folder.is_dir():
        return []
    before = {entry.name for entry in folder.iterdir()}
    targets = {
        match.group(1)
        for name in before
        if (match := _LEFTOVER_OF.match(name) or _LOCK_OF.match(name))
    }
    for name in sorted(targets):
        try:
            with writer_lock(folder / name, timeout=0):  # held: a live writer, never touched
                _recover(folder / name)
        except OutputFolderError:
            continue
    return sorted(before - {entry.name for entry in folder.iterdir()})


def real_target(target: str | os.PathLike) -> Path:
    """The path the kernel reaches for ``target``, absolute, its folders' links followed and its
    last name kept (a link there is the writer's to refuse, never followed).

    ``link/../out`` is ``out`` beside the link's target for the kernel, but ``./out`` for a
    lexical clean-up (``os.path.abspath``): every writer and every guard names its target
    through this one function, so the folder checked is the folder replaced."""
    given = Path(os.fspath(target))
    if given.name in ("", ".."):  # "/", ".", "..": no name of their own to keep
        return Path(os.path.realpath(given))
    return Path(os.path.realpath(given.parent)) / given.name


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
def _locked_beside(target: str | os.PathLike) -> Iterator[tuple[Path, Path]]:
    """Hold ``target``'s lock with its leftovers cleaned; yield (target, a fresh temporary path)."""
    target = real_target(target)
    with contextlib.ExitStack() as stack:
        with _writable(target):
            target.parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(writer_lock(target))
            _recover(target)
        tmp = _leftover_path(target, "tmp")
        try:
            yield target, tmp
        finally:
            if tmp.exists():
                _remove(tmp)


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` only on success."""
    with _locked_beside(target) as (target, tmp):
        tmp.touch(exist_ok=False)  # created as open() would: its mode follows the umask
        yield tmp
        os.replace(tmp, target)


def atomic_write_text(target: str | os.PathLike, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


@contextlib.contextmanager
def atomic_directory(target: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``target``; swap it in only when the block succeeds.

    An existing ``target`` is replaced as a whole, so readers see either the old or the new folder
    (see the module docstring for how, and for what happens to a killed run's leftovers).
    """
    with _locked_beside(target) as (target, tmp):
        tmp.mkdir()  # created as mkdir would: its mode follows the umask
        yield tmp
        _swap_in(tmp, target)


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
    old = _leftover_path(target, "old")
    os.rename(target, old)
    os.rename(tmp, target)  # killed before this line: the next writer renames ``old`` back
    shutil.rmtree(old, ignore_errors=True)
