"""Local paths or URLs of annotation sources: bounded downloads into a cache of complete files.

A URL is downloaded once into a local cache (atomically, and only when the whole body arrived in
time with a 2xx status) when an adapter reads it; nothing is downloaded at import time.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from nnd_suites.errors import NNDError, SourceFormatError
from nnd_suites.io import atomic_path
from nnd_suites.paths import cache_root

#: Seconds a whole download may take (not per read: a server dripping bytes cannot hang a build).
DEFAULT_DOWNLOAD_TIMEOUT = 300.0
DOWNLOAD_TIMEOUT_ENV = "NND_SUITES_DOWNLOAD_TIMEOUT"
#: Longest wait for any single read, within the overall deadline.
READ_TIMEOUT = 60.0
CHUNK = 1 << 16
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def cache_dir() -> Path:
    """Downloads live under the one cache root (``$NND_SUITES_CACHE``)."""
    return cache_root()


def is_url(source: str | os.PathLike) -> bool:
    return urllib.parse.urlparse(str(source)).scheme in {"http", "https", "file"}


def public_source_name(source: str | os.PathLike) -> str:
    """``source`` as it may be recorded and published: a URL loses its user:password, query string
    and fragment (where access tokens travel); a path is kept as given."""
    text = str(source)
    if not is_url(text):
        return text
    parsed = urllib.parse.urlsplit(text)
    host = parsed.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parsed.port}" if parsed.port is not None else host
    return urllib.parse.urlunsplit((parsed.scheme, netloc, parsed.path, "", ""))


def download_timeout() -> float:
    """The whole-download deadline in seconds: ``$NND_SUITES_DOWNLOAD_TIMEOUT`` or 300."""
    raw = os.environ.get(DOWNLOAD_TIMEOUT_ENV)
    if not raw:
        return DEFAULT_DOWNLOAD_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise NNDError(f"{DOWNLOAD_TIMEOUT_ENV}={raw!r}: expected a positive number of seconds")
    return value


def check_sha256(expected: str | None) -> str | None:
    """Normalise a pinned sha256 (64 hex digits) or refuse it."""
    if expected is None:
        return None
    normal = expected.strip().lower()
    if not SHA256_HEX.fullmatch(normal):
        raise NNDError(f"--source-sha256 {expected!r}: expected 64 hexadecimal digits")
    return normal


def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resolve_source(source: str | os.PathLike, sha256: str | None = None) -> Path:
    """Return a local path for ``source``: a path, or an http(s)/file URL fetched into the cache.

    With ``sha256`` the file must have that hash (a mismatch names both); a download that does
    not match is not cached.
    """
    return _fetch(source, check_sha256(sha256), folder_ok=False)


def resolve_source_folder(
    source: str | os.PathLike, sha256: str | None = None
) -> tuple[Path, Path | None]:
    """Return ``(folder, archive)`` for a folder source: a local folder (``archive`` None), or a
    local or downloaded archive extracted into the cache (``sha256`` then pins the archive)."""
    from nnd_suites.sources.archive import ARCHIVE_SUFFIXES, extract_archive, is_archive

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
    parsed = urllib.parse.urlparse(text)
    if parsed.scheme == "file":
        return _fetch(urllib.request.url2pathname(parsed.path), sha256, folder_ok)
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
    with atomic_path(local) as tmp:
        got = _download(text, tmp)
        _check_pin(public_source_name(text), sha256, got)
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


def _download(url: str, target: Path) -> str:
    """Write the body of ``url`` to ``target`` within the deadline; return its sha256."""
    shown, deadline = public_source_name(url), download_timeout()
    host = urllib.parse.urlparse(url).hostname or ""
    if not re.fullmatch(r"[\w.-]*\w[\w.-]*|\[[0-9A-Fa-f:.]+\]", host) or ".." in host:
        raise SourceFormatError(
            shown, None, f"not a usable URL: host {host!r}", "give the file's full address"
        )
    started = time.monotonic()
    digest, received = hashlib.sha256(), 0
    try:
        with (
            urllib.request.urlopen(url, timeout=min(READ_TIMEOUT, deadline)) as response,
            open(target, "wb") as out,
        ):
            _check_response(shown, response)
            length = response.headers.get("Content-Length")
            while block := response.read1(CHUNK):
                digest.update(block)
                received += len(block)
                out.write(block)
                if time.monotonic() - started > deadline:
                    raise _failed(shown, f"not complete after {deadline:g} s ({received:,} bytes)")
    except (OSError, http.client.HTTPException, ValueError) as exc:  # ValueError: a bad host
        if isinstance(exc, urllib.error.HTTPError):
            raise _failed(shown, f"the server answered {exc.code} {exc.reason}") from None
        raise _failed(shown, f"{type(exc).__name__}: {exc}") from exc
    if length is not None and length.isdigit() and received != int(length):
        raise _failed(shown, f"the server sent {received:,} of the {int(length):,} bytes announced")
    return digest.hexdigest()


def _check_response(shown: str, response: http.client.HTTPResponse) -> None:
    status = getattr(response, "status", 200)
    if not 200 <= status < 300:
        raise _failed(shown, f"the server answered {status} {response.reason}")
    if response.headers.get_content_type() == "text/html":
        raise _failed(
            shown,
            "the server sent a web page (text/html), not a data file",
            "link to the raw file (e.g. raw.githubusercontent.com), not to a page showing it",
        )


def _failed(shown: str, message: str, hint: str = "") -> SourceFormatError:
    return SourceFormatError(
        shown,
        None,
        f"could not download: {message}",
        hint or "nothing was cached; check the URL and your connection, or pass a local path",
    )
