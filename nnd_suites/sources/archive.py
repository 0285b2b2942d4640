"""Folder sources: a local folder, or an archive (local or downloaded) extracted into the cache.

An archive is data from elsewhere: tar members are extracted by
:func:`nnd_suites.sources.safe_extract.extract_tar` (no absolute paths, no ``..`` escape, no links
out of the folder, no device files, on every Python) and zip members with the same path check
(no links at all), and a declared total size over :func:`max_extracted_bytes` is refused
before anything is written. The extraction is atomic and keyed by the archive's sha256, so a
killed run leaves nothing half-extracted and a second run reuses the folder.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from nnd_suites.errors import SourceFormatError, UnsafeArchiveError
from nnd_suites.infra.atomic import atomic_directory
from nnd_suites.infra.paths import cache_root, positive_setting
from nnd_suites.sources.safe_extract import extract_tar, path_refusal

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
MAX_EXTRACTED_BYTES_ENV = "NND_SUITES_MAX_EXTRACTED_BYTES"


def max_extracted_bytes() -> int:
    """``$NND_SUITES_MAX_EXTRACTED_BYTES`` or 8 GiB: an annotation source is megabytes; a
    declared size past this is a mistake or a zip bomb."""
    return int(positive_setting(MAX_EXTRACTED_BYTES_ENV, 8 << 30, "bytes"))


def is_archive(path: str | os.PathLike) -> bool:
    return str(path).lower().endswith(ARCHIVE_SUFFIXES)


def extract_archive(archive: Path, digest: str) -> Path:
    """The folder holding ``archive``'s files (its single top folder when it has one)."""
    target = cache_root() / "sources" / "extracted" / digest[:16]
    if not target.is_dir():
        with atomic_directory(target) as tmp:
            try:
                if archive.name.lower().endswith(".zip"):
                    _extract_zip(archive, tmp)
                else:
                    _extract_tar(archive, tmp)
            except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
                raise SourceFormatError(
                    str(archive),
                    None,
                    f"not a readable archive: {type(exc).__name__}: {exc}",
                    f"pass a folder or an archive ({', '.join(ARCHIVE_SUFFIXES)})",
                ) from None
    entries = [entry for entry in target.iterdir() if not entry.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return target


def _check_size(archive: Path, total: int) -> None:
    """Refuse an archive whose members declare more than the extraction limit in all."""
    limit = max_extracted_bytes()
    if total > limit:
        raise SourceFormatError(
            str(archive),
            None,
            f"the archive declares {total:,} bytes, over the {limit:,}-byte limit",
            f"extract it yourself and pass the folder, or raise {MAX_EXTRACTED_BYTES_ENV}",
        )


def _one_copy_each(archive: Path, files: list[str]) -> None:
    """Refuse an archive holding one file path twice ('a/x.json', 'a/./x.json'): extracted, the
    later copy would replace the earlier unsaid, and which is the data cannot be told."""
    seen: dict[str, int] = {}
    for index, name in enumerate(files):
        first = files[seen.setdefault(posixpath.normpath(name), index)]
        if seen[posixpath.normpath(name)] != index:
            raise SourceFormatError(
                str(archive),
                None,
                f"member {name!r} is in the archive twice (first as {first!r}): extracted, the "
                "later copy would replace the earlier, so which one is the data cannot be told",
                "repack the archive with one copy, or extract the copy you mean and pass it",
            )


def _extract_tar(archive: Path, folder: Path) -> None:
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        _check_size(archive, sum(member.size for member in members))
        _one_copy_each(archive, [member.name for member in members if not member.isdir()])
        extract_tar(tar, folder, members, source=str(archive))


def _extract_zip(archive: Path, folder: Path) -> None:
    with zipfile.ZipFile(archive) as handle:
        infos = handle.infolist()
        _check_size(archive, sum(info.file_size for info in infos))
        _one_copy_each(archive, [info.filename for info in infos if not info.is_dir()])
        resolved = os.path.realpath(folder)
        for info in infos:
            name = PurePosixPath(info.filename)
            reason = path_refusal(info.filename, resolved)
            if reason is None and "\\" in info.filename:  # a Windows separator: ambiguous
                reason = "has a backslash in its path"
            if reason is None and stat.S_ISLNK(info.external_attr >> 16):
                reason = "is a link (a zip's links are not extracted)"
            if reason is not None:
                raise UnsafeArchiveError(str(archive), info.filename, reason)
            destination = folder.joinpath(*name.parts)
            if info.is_dir():
                destination.mkdir(parents=True, exist_ok=True)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            with handle.open(info) as source, open(destination, "wb") as out:
                shutil.copyfileobj(source, out)
