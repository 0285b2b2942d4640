"""Local paths or URLs of annotation sources: bounded downloads into a cache of complete files.

A URL is downloaded once into a local cache (atomically, and only when the whole body arrived in
time with a 2xx status) when an adapter reads it; nothing is downloaded at import time. Downloads
stream through the one bounded HTTP client (nnd_suites/infra/bounded_http.py): http(s) only, a
total deadline (``$NND_SUITES_DOWNLOAD_TIMEOUT``, 300 s) and a size cap
(``$NND_SUITES_DOWNLOAD_MAX_BYTES``, 16 GiB). The cache holds the file the URL names: a
Content-Encoding the server added is undone (a ``.gz`` file sent as gzip-encoded stays gzip).

A cache of our own, because the libraries' (pooch, through requests; ``datasets``'
DownloadManager) bound neither a download's total time nor its size, nor refuse a web page sent
in place of a data file.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import time
from pathlib import Path

import httpx2 as httpx

from nnd_suites.errors import NNDError, SourceFormatError
from nnd_suites.infra.atomic import atomic_path
from nnd_suites.infra.bounded_http import Limits, TransportError, check_url, redact, request
from nnd_suites.infra.paths import cache_root, positive_setting
from nnd_suites.infra.reading import sha256_file
from nnd_suites.sources.archive import ARCHIVE_SUFFIXES, extract_archive, is_archive

#: Seconds a whole download may take (not per read: a server dripping bytes cannot hang a build).
DEFAULT_DOWNLOAD_TIMEOUT = 300.0
DOWNLOAD_TIMEOUT_ENV = "NND_SUITES_DOWNLOAD_TIMEOUT"
#: Longest wait for any single read, within the overall deadline.
READ_TIMEOUT = 60.0
#: Largest file downloaded (an endless body must not fill the disk).
DEFAULT_DOWNLOAD_MAX_BYTES = 16 << 30
DOWNLOAD_MAX_BYTES_ENV = "NND_SUITES_DOWNLOAD_MAX_BYTES"
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
#: ``scheme://``: a URL, whatever its scheme (only http and https are fetched).
URL_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
#: Names of gzip files: sent with ``Content-Encoding: gzip`` (as some servers do), they are kept
#: as sent, since the gzip data is the file itself.
GZIP_NAMES = (".gz", ".tgz")


def cache_dir() -> Path:
    """Downloads live under the one cache root (``$NND_SUITES_CACHE``)."""
    return cache_root()


def is_url(source: str | os.PathLike) -> bool:
    """Whether ``source`` is written as a URL (``scheme://``); only http(s) ones are fetched."""
    return bool(URL_LIKE.match(str(source)))


def public_source_name(source: str | os.PathLike) -> str:
    """``source`` as it may be recorded and published: a URL loses its user:password, query string
    and fragment (where access tokens travel); a path is kept as given."""
    text = str(source)
    return redact(text) if is_url(text) else text


def download_timeout() -> float:
    """The whole-download deadline in seconds: ``$NND_SUITES_DOWNLOAD_TIMEOUT`` or 300."""
    return positive_setting(DOWNLOAD_TIMEOUT_ENV, DEFAULT_DOWNLOAD_TIMEOUT, "seconds")


def download_max_bytes() -> int:
    """The largest download in bytes: ``$NND_SUITES_DOWNLOAD_MAX_BYTES`` or 16 GiB."""
    return int(positive_setting(DOWNLOAD_MAX_BYTES_ENV, DEFAULT_DOWNLOAD_MAX_BYTES, "bytes"))


def check_sha256(expected: str | None) -> str | None:
    """Normalise a pinned sha256 (64 hex digits) or refuse it."""
    if expected is None:
        return None
    normal = expected.strip().lower()
    if not SHA256_HEX.fullmatch(normal):
        raise NNDError(f"--source-sha256 {expected!r}: expected 64 hexadecimal digits")
    return normal


def file_stamp(stat: os.stat_result) -> dict[str, int]:
    """What changes whenever a file's content may have: the size and modification time, and the
    inode and change time, which no copy can carry over (``cp -p``, ``rsync -a``, ``tar x`` and
    ``touch -r`` keep the first two, so a same-size checkpoint copied over the old path would
    look unchanged)."""
    return {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "ctime_ns": stat.st_ctime_ns,
        "inode": stat.st_ino,
        "device": stat.st_dev,
    }


def resolve_source(source: str | os.PathLike, sha256: str | None = None) -> Path:
    """Return a local path for ``source``: a path, or an http(s) URL fetched into the cache (any
    other scheme, ``file://`` and ``ftp://`` included, is a usage error: pass the local path).

    With ``sha256`` the file must have that hash (a mismatch names both); a download that does
    not match is not cached.
    """
    path = _fetch(source, check_sha256(sha256), folder_ok=False)
    if is_archive(path):  # read as the table itself, its bytes were "invalid JSON" at line 1
        raise SourceFormatError(
            public_source_name(source),
            None,
            "an archive, but this adapter reads one file",
            "extract the file and pass it (a .gz of the file itself is read as it is)",
        )
    return path


def resolve_source_folder(
    source: str | os.PathLike, sha256: str | None = None
) -> tuple[Path, Path | None]:
    """Return ``(folder, archive)`` for a folder source: a local folder (``archive`` None), or a
    local or downloaded archive extracted into the cache (``sha256`` then pins the archive)."""
    path = _fetch(source, check_sha256(sha256), folder_ok=True)
    if path.is_dir():
        return path, None
    if not is_archive(path):
        raise SourceFormatError(
            public_source_name(source),
            None,
            "this adapter reads a folder of files, not one file",
            f"pass the folder, or an archive of it ({', '.join(ARCHIVE_SUFFIXES)})",
        )
    return extract_archive(path, sha256_file(path)), path


def _fetch(source: str | os.PathLike, sha256: str | None, folder_ok: bool) -> Path:
    text = str(source)
    if not is_url(text):
        path = Path(text).expanduser()
        if path.is_dir():
            return _local_folder(text, path, sha256, folder_ok)
        if not path.is_file():
            raise SourceFormatError(
                text, None, "source file not found", "pass an existing path or URL"
            )
        _check_pin(text, sha256, sha256_file(path))
        return path
    parsed = check_url(text, "--source")  # http(s) only: a usage error at once otherwise
    name = Path(parsed.path).name or "source"
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    local = cache_dir() / "sources" / digest / name
    if local.exists():
        _check_pin(
            public_source_name(text),
            sha256,
            sha256_file(local),
            f"the cached copy {local} differs; delete it to download again",
        )
        return local
    try:
        with atomic_path(local) as tmp:
            got = _download(text, tmp, name)
            _check_pin(public_source_name(text), sha256, got)
    except BaseException:
        with contextlib.suppress(OSError):  # only when empty: a failed download leaves no folder
            local.parent.rmdir()
        raise
    return local


def _local_folder(text: str, path: Path, sha256: str | None, folder_ok: bool) -> Path:
    if not folder_ok:
        raise SourceFormatError(
            text,
            None,
            "this is a folder, and this adapter reads one file",
            "pass the file itself (FOLDER/FILE); `nnd-suites list` describes each adapter's source",
        )
    if sha256 is not None:
        raise SourceFormatError(
            text,
            None,
            "--source-sha256 pins one file, not a folder",
            "pin an archive of the folder, or leave it out: the manifest records the sha256 of "
            "every file read",
        )
    return path


def _check_pin(where: str, expected: str | None, actual: str, hint: str = "") -> None:
    if expected is not None and actual != expected:
        raise SourceFormatError(
            where,
            None,
            f"sha256 is {actual}, but --source-sha256 pins {expected}",
            hint or "the file changed: check it, then pin its new hash",
        )


def _download(url: str, target: Path, name: str) -> str:
    """Write the file at ``url`` (named ``name``) to ``target`` within the deadline and the size
    cap; return its sha256."""
    shown, seconds = public_source_name(url), download_timeout()
    limits = Limits(time.monotonic() + seconds, download_max_bytes(), min(READ_TIMEOUT, seconds))
    digest = hashlib.sha256()
    with open(target, "wb") as out:

        def keep(block: bytes) -> None:
            digest.update(block)
            out.write(block)

        try:
            request(
                url,
                limits,
                sink=keep,
                check=functools.partial(_check_response, shown),
                keep_encoding=functools.partial(_is_gzip_file, name),
            )
        except TransportError as error:
            if "deadline" in error.reason:
                message = f"not complete after {seconds:g} s ({error.reason})"
            elif error.status is not None:
                message = f"the server answered {error.reason.removeprefix('HTTP ')}"
            else:
                message = error.reason
            hint = f"raise {DOWNLOAD_MAX_BYTES_ENV}" if "the cap is" in error.reason else ""
            raise _failed(shown, message, hint) from None
    return digest.hexdigest()


def _check_response(shown: str, answer: httpx.Response) -> None:
    kind = answer.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind == "text/html":
        raise _failed(
            shown,
            "the server sent a web page (text/html), not a data file",
            "link to the raw file (e.g. raw.githubusercontent.com), not to a page showing it",
        )


def _is_gzip_file(name: str, headers: httpx.Headers) -> bool:
    """Whether a gzip Content-Encoding is the file's own compression (kept, not undone)."""
    encoding = headers.get("content-encoding", "").strip().lower()
    return name.lower().endswith(GZIP_NAMES) and encoding in ("gzip", "x-gzip")


def _failed(shown: str, message: str, hint: str = "") -> SourceFormatError:
    return SourceFormatError(
        shown,
        None,
        f"could not download: {message}",
        hint or "nothing was cached; check the URL and your connection, or pass a local path",
    )
