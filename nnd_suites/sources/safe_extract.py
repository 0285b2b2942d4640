"""Safe tar extraction on every supported Python, the one place an archive is unpacked.

tarfile's ``data`` filter (PEP 706) exists from Python 3.12 and in 3.11.4 / 3.10.12 backports;
Debian 12's system Python (3.11.2) lacks it. Where it exists it is used; everywhere, each member
is first checked here (:func:`tar_member_refusal`), and where the filter is missing the member's
permissions and owner are made safe here as the filter would (:func:`_as_data`). So the refusals
are the same on every Python: an absolute name (which the filter would silently strip), a name
or a link that resolves outside the folder, a device, fifo or other special file.
Each member is checked just before it is written, against the folder as already extracted, so a
link extracted earlier cannot carry a later member out.
"""

from __future__ import annotations

import copy
import os
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from nnd_suites.errors import UnsafeArchiveError

__all__ = ["extract_tar", "has_data_filter", "path_refusal", "tar_member_refusal"]


def has_data_filter() -> bool:
    """Whether this Python's tarfile has extraction filters (a function: tests force False)."""
    return hasattr(tarfile, "data_filter")


def _outside(path: str, folder: str) -> bool:
    return os.path.commonpath([os.path.realpath(path), folder]) != folder


def path_refusal(name: str, folder: str) -> str | None:
    """Why a member called ``name`` may not be written under ``folder`` (already resolved with
    ``os.path.realpath``), or None when it may. Shared by tar and zip extraction."""
    if name.startswith(("/", os.sep)) or os.path.isabs(name):
        return "has an absolute path"
    if _outside(os.path.join(folder, name), folder):
        return "points outside the folder"
    return None


def tar_member_refusal(member: tarfile.TarInfo, folder: str) -> str | None:
    """Why ``member`` may not be extracted into ``folder`` (resolved), or None when it may."""
    reason = path_refusal(member.name, folder)
    if reason is not None:
        return reason
    if member.issym() or member.islnk():
        if os.path.isabs(member.linkname):
            return f"is a link to an absolute path ({member.linkname!r})"
        # a symbolic link is relative to its own folder, a hard link to the archive's root
        start = os.path.dirname(member.name) if member.issym() else ""
        if _outside(os.path.join(folder, start, member.linkname), folder):
            return f"is a link pointing outside the folder ({member.linkname!r})"
        return None
    if not (member.isreg() or member.isdir()):
        return "is a device, fifo or other special file (only files, folders and links inside)"
    return None


def _as_data(member: tarfile.TarInfo) -> tarfile.TarInfo:
    """``member`` with the permissions and owner the ``data`` filter gives it: no set-id or
    group/other write bits, owner read-write, and owned by whoever extracts it."""
    safe = copy.copy(member)
    if member.isreg() or member.islnk():
        mode = member.mode & 0o755
        if not mode & 0o100:  # not executable by its owner: executable by nobody
            mode &= ~0o111
        safe.mode = mode | 0o600
    elif member.isdir():
        # the filter ignores a folder's mode, so the folder gets the system's default
        safe.mode = 0o777 & ~_umask()
    safe.uid, safe.gid, safe.uname, safe.gname = os.getuid(), os.getgid(), "", ""
    return safe


def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it: put it straight back
    os.umask(mask)
    return mask


def extract_tar(
    tar: tarfile.TarFile,
    folder: str | os.PathLike,
    members: Iterable[tarfile.TarInfo] | None = None,
    *,
    source: str,
) -> None:
    """Extract ``members`` (default: all) of ``tar`` into ``folder``, refusing with
    :class:`UnsafeArchiveError` (naming ``source`` and the member) any member that would land
    outside it or is a special file."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    resolved = os.path.realpath(folder)
    chosen = tar.getmembers() if members is None else list(members)

    def checked(member: tarfile.TarInfo) -> tarfile.TarInfo:
        reason = tar_member_refusal(member, resolved)
        if reason is not None:
            raise UnsafeArchiveError(source, member.name, reason)
        return member

    if has_data_filter():

        def checked_data(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo:
            return tarfile.data_filter(checked(member), path)

        try:
            tar.extractall(folder, members=chosen, filter=checked_data)
        except tarfile.FilterError as exc:  # the filter's own refusal, should ours miss one
            raise UnsafeArchiveError(source, exc.tarinfo.name, str(exc)) from None
        return

    def checked_members() -> Iterator[tarfile.TarInfo]:
        # a generator: extractall checks each member after the ones before it are on disk
        for member in chosen:
            yield _as_data(checked(member))

    tar.extractall(folder, members=checked_members(), numeric_owner=True)
