"""One bounded HTTP client for source downloads and served-model requests.

Everything a server sends is bounded: the scheme (http and https only), the body's size (a cap,
checked against Content-Length first and while reading), the time (a total deadline checked
between reads, and a watchdog that shuts the socket when it passes, wherever the client waits:
a server dripping its headers or body one byte at a time cannot hang a run) and the body's
shape (shorter than its Content-Length, not UTF-8, JSON nested too deep or with a number too
long: named errors, not tracebacks). Credentials never
leak: a redirect to another host loses the Authorization header, ``user:password@`` in a URL is
sent as a Basic header and never shown (:func:`redact`).

One call is one attempt; retries belong to the caller (the served client retries, downloads do
not). Usage errors (a malformed URL, another scheme) raise :class:`NNDError` at once; transport
failures raise :class:`TransportError`, which callers turn into their own named error.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nnd_suites.errors import NNDError

SCHEMES = ("http", "https")
CHUNK = 1 << 16
#: Statuses worth retrying: rate limits and server-side failures.
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: A host name or an IP address (a placeholder such as ``...`` or a space is not one).
HOST = re.compile(r"[\w.-]*\w[\w.-]*|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*")
#: Characters of an error answer kept for the message.
DETAIL = 500


class TransportError(NNDError):
    """One HTTP attempt failed: ``status`` (None without an answer), ``reason``, and whether a
    retry may help (timeouts, dropped connections, 5xx and 429 answers)."""

    def __init__(self, url: str, reason: str, status: int | None = None, retry: bool = False):
        self.url, self.reason, self.status, self.retry = url, reason, status, retry
        super().__init__(f"{url}: {reason}")


@dataclass
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes = b""
    received: int = 0


@dataclass
class Limits:
    """How much one attempt may take: ``deadline`` (``time.monotonic()`` value) for everything,
    ``read_timeout`` for any single wait, ``max_bytes`` for the body."""

    deadline: float
    max_bytes: int
    read_timeout: float = 60.0

    def left(self) -> float:
        return self.deadline - time.monotonic()


def check_url(url: str, what: str = "URL") -> urllib.parse.SplitResult:
    """The parts of ``url``, or a usage error naming what is wrong (shown redacted)."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as error:
        raise NNDError(f"{what} {redact(url)!r} is malformed ({error})") from None
    if parts.scheme.lower() not in SCHEMES:
        raise NNDError(
            f"{what} {redact(url)!r}: only http:// and https:// URLs are read (got "
            f"{parts.scheme + '://' if parts.scheme else 'no scheme'}); pass a local path for a "
            "file on this machine"
        )
    host = parts.hostname or ""
    if not HOST.fullmatch(host) or ".." in host:
        raise NNDError(
            f"{what} {redact(url)!r}: not a usable URL (host {host!r}); give the full address"
        )
    return parts


def redact(url: str) -> str:
    """``url`` without its ``user:password@``, query string and fragment (where tokens travel)."""
    try:
        parts = urllib.parse.urlsplit(str(url))
        port = parts.port
    except ValueError:  # not parseable (a bad port or IPv6 literal): cut the same parts by text
        text = re.sub(r"^([^:/?#]*://)[^/?#]*@", r"\1", str(url))
        return re.split(r"[?#]", text, maxsplit=1)[0]
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def request(
    url: str,
    limits: Limits,
    *,
    data: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    sink: Callable[[bytes], None] | None = None,
    check: Callable[[Any], None] | None = None,
) -> Response:
    """One GET (or POST with ``data``) within ``limits``. The body is returned, or handed block
    by block to ``sink`` (a download writing to disk); ``check`` sees the answer (status and
    headers) before its body is read, and may refuse it. Raises :class:`TransportError`."""
    parts = check_url(url)
    shown = redact(url)
    headers = dict(headers or {})
    if parts.username is not None:  # user:password@host: a Basic header, never in the URL sent
        if "Authorization" not in headers:
            pair = f"{urllib.parse.unquote(parts.username)}:"
            pair += urllib.parse.unquote(parts.password or "")
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        url = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    if limits.left() <= 0:
        raise TransportError(shown, "no time left before the deadline", retry=False)
    watchdog = _Watchdog(limits.left())
    opener = urllib.request.build_opener(
        _SameHostAuthRedirect, _WatchedHTTP(watchdog), _WatchedHTTPS(watchdog)
    )
    try:
        with (
            watchdog,
            opener.open(
                urllib.request.Request(url, data=data, headers=headers),
                timeout=max(min(limits.read_timeout, limits.left()), 0.001),
            ) as answer,
        ):
            if check is not None:
                check(answer)
            got = _read(answer, shown, limits, sink)
        if watchdog.fired:  # the socket was shut mid-body: what arrived may look complete
            raise TransportError(shown, _late(limits), retry=True)
        return got
    except TransportError:
        if watchdog.fired:  # a short body or a cut read, because the deadline shut the socket
            raise TransportError(shown, _late(limits), retry=True) from None
        raise
    except NNDError:  # a redirect refused
        raise
    except (OSError, http.client.HTTPException, ValueError) as error:  # URLError is an OSError
        raise _failure(error, shown, limits, watchdog.fired) from None


def _failure(error: Exception, shown: str, limits: Limits, late: bool) -> TransportError:
    if isinstance(error, urllib.error.HTTPError):
        retry = error.code in RETRY_STATUSES
        return TransportError(
            shown, f"HTTP {error.code}: {_error_detail(error)}", error.code, retry
        )
    reason = error.reason if isinstance(error, urllib.error.URLError) else error
    if late or isinstance(reason, TimeoutError):
        return TransportError(shown, _late(limits), retry=True)
    return TransportError(shown, f"{type(reason).__name__}: {reason}", retry=True)


def _late(limits: Limits) -> str:
    if limits.left() <= 0:
        return "timed out (the total deadline passed)"
    return f"timed out (no answer within {limits.read_timeout:g} s)"


def _read(
    answer: Any, shown: str, limits: Limits, sink: Callable[[bytes], None] | None
) -> Response:
    status = getattr(answer, "status", 200)
    headers = {k.lower(): v for k, v in answer.headers.items()}
    announced = headers.get("content-length", "")
    length = int(announced) if announced.isdigit() else None
    if length is not None and length > limits.max_bytes:
        raise TransportError(shown, _too_big(limits, f"announces {length:,} bytes"))
    blocks: list[bytes] = []
    received = 0
    while True:
        left = limits.left()
        if left <= 0:
            raise TransportError(
                shown, f"not complete by the deadline ({received:,} bytes received)", retry=True
            )
        try:
            block = answer.read1(CHUNK)
        except http.client.IncompleteRead as error:
            received += len(error.partial)
            raise TransportError(shown, _short(received, length), retry=True) from None
        if not block:
            break
        received += len(block)
        if received > limits.max_bytes:
            raise TransportError(shown, _too_big(limits, "goes on past it"))
        if sink is not None:
            sink(block)
        else:
            blocks.append(block)
    if length is not None and received != length:
        raise TransportError(shown, _short(received, length), retry=True)
    return Response(status, headers, b"".join(blocks), received)


def _too_big(limits: Limits, what: str) -> str:
    return (
        f"the body {what}: the cap is {limits.max_bytes:,} bytes (raise it if the answer or "
        "file is really that large)"
    )


def _short(received: int, length: int | None) -> str:
    return f"the body ended after {received:,} of the {length:,} bytes announced (Content-Length)"


def resolve(host: str, port: int, seconds: float) -> list[tuple]:
    """``socket.getaddrinfo(host, port)`` within ``seconds``: the resolver cannot be interrupted
    and no socket exists yet for the watchdog to shut, so it runs in a daemon thread that is left
    behind (to finish on its own) when the time is up. Raises ``TimeoutError`` then."""
    found: dict[str, Any] = {}

    def lookup() -> None:
        try:
            found["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            found["error"] = error

    worker = threading.Thread(target=lookup, name=f"resolve {host}", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if worker.is_alive():
        raise TimeoutError(f"resolving {host} did not finish within {max(seconds, 0.0):.3g} s")
    if "error" in found:
        raise found["error"]
    return found["infos"]


class _Watchdog:
    """Shuts the connection's sockets down when the deadline passes, wherever the client waits
    (connecting, reading the status line and headers one byte at a time, or the body); the host
    name is resolved within the same deadline."""

    def __init__(self, seconds: float) -> None:
        self.sockets: list[socket.socket] = []
        self.fired = False
        self.deadline = time.monotonic() + max(seconds, 0.0)
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired = True
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def create_connection(
        self,
        address: tuple[str, int],
        timeout: float | None = None,
        source_address: tuple[str, int] | None = None,
        **_: Any,
    ) -> socket.socket:
        """``socket.create_connection`` with the name lookup bounded by the deadline."""
        infos = resolve(address[0], address[1], self.deadline - time.monotonic())
        errors: list[OSError] = []
        for family, kind, proto, _name, where in infos:
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(timeout)
                if source_address:
                    sock.bind(source_address)
                sock.connect(where)
                return sock
            except OSError as error:
                sock.close()
                errors.append(error)
        raise errors[0] if errors else OSError(f"{address[0]} resolves to no address")

    def watched(self, base: type[http.client.HTTPConnection]) -> Callable[..., Any]:
        def connect(connection: http.client.HTTPConnection) -> None:
            connection._create_connection = self.create_connection  # type: ignore[attr-defined]
            base.connect(connection)
            self.sockets.append(connection.sock)
            if self.fired:
                self._fire()

        return type(f"Watched{base.__name__}", (base,), {"connect": connect})


class _WatchedHTTP(urllib.request.HTTPHandler):
    def __init__(self, watchdog: _Watchdog) -> None:
        super().__init__()
        self.connection = watchdog.watched(http.client.HTTPConnection)

    def http_open(self, req):  # type: ignore[no-untyped-def]
        return self.do_open(self.connection, req)


class _WatchedHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, watchdog: _Watchdog) -> None:
        super().__init__()
        self.connection = watchdog.watched(http.client.HTTPSConnection)

    def https_open(self, req):  # type: ignore[no-untyped-def]
        return self.do_open(self.connection, req, context=self._context)


def _error_detail(error: urllib.error.HTTPError) -> str:
    try:
        return error.read(DETAIL).decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        return error.reason or ""


class _SameHostAuthRedirect(urllib.request.HTTPRedirectHandler):
    """Follow redirects to http(s) only; one to another host (or scheme or port) drops the
    Authorization header, so a bearer key never reaches a host it was not meant for."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        target = urllib.parse.urlsplit(urllib.parse.urljoin(req.full_url, newurl))
        if target.scheme.lower() not in SCHEMES:
            raise NNDError(
                f"{redact(req.full_url)} redirects to {redact(newurl)!r}: only http(s) is followed"
            )
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(urllib.parse.urlsplit(req.full_url)) != _origin(target):
            for store in (new.headers, new.unredirected_hdrs):
                for key in [k for k in store if k.lower() == "authorization"]:
                    del store[key]
        return new


def _origin(parts: urllib.parse.SplitResult) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or default


def parse_json(body: bytes, shown: str) -> Any:
    """The JSON value of ``body``, or a :class:`TransportError` saying why it is not one."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        bad = body[error.start : error.start + 1]
        what = f"the answer is not UTF-8 (byte {error.start}: {bad!r})"
        raise TransportError(shown, what) from None
    try:
        return json.loads(text)
    except RecursionError:
        raise TransportError(shown, "the answer's JSON is nested too deep to read") from None
    except ValueError as error:  # JSONDecodeError, or an integer over Python's digit limit
        raise TransportError(shown, f"the answer is not JSON ({error})"[:300]) from None
