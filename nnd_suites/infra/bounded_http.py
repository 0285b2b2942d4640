"""One bounded HTTP client for source downloads and served-model requests, on top of httpx.

httpx (the ``httpx2`` distribution that huggingface_hub installs) sends the request, follows
redirects (dropping Authorization on one to another origin), turns ``user:password@`` into a Basic
header, undoes a Content-Encoding and refuses a body shorter than its Content-Length; what it
lacks is kept here: a deadline over the whole exchange (its timeouts bound each socket wait, so a
server dripping one byte per read, or a name lookup, which no timeout covers, could hold a run
forever), a cap on the body's size, and JSON read into named errors (not UTF-8, nested too deep,
a number too long) instead of tracebacks.

One call is one attempt; retries belong to the caller (the served client retries, downloads do
not). Usage errors (a malformed URL, another scheme) raise :class:`NNDError` at once; transport
failures raise :class:`TransportError`, which callers turn into their own named error.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2 as httpx

from nnd_suites.errors import NNDError

SCHEMES = ("http", "https")
#: Statuses worth retrying: rate limits and server-side failures.
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: A host name or an IP address (a placeholder such as ``...`` or a space is not one).
HOST = re.compile(r"[\w.-]*\w[\w.-]*|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*")
#: Characters of an error answer kept for the message.
DETAIL = 500
MAX_REDIRECTS = 10


class TransportError(NNDError):
    """One HTTP attempt failed: ``status`` (None without an answer), ``reason``, and whether a
    retry may help (timeouts, dropped connections, 5xx and 429 answers)."""

    def __init__(self, url: str, reason: str, status: int | None = None, retry: bool = False):
        self.url, self.reason, self.status, self.retry = url, reason, status, retry
        super().__init__(f"{url}: {reason}")


@dataclass
class Response:
    status: int
    body: bytes


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
    check: Callable[[httpx.Response], None] | None = None,
    keep_encoding: Callable[[httpx.Headers], bool] | None = None,
) -> Response:
    """One GET (or POST with ``data``) within ``limits``. The body is returned, or handed block
    by block to ``sink`` (a download writing to disk); ``check`` sees a 2xx answer (status and
    headers) before its body is read, and may refuse it. The body is decoded (its
    Content-Encoding undone) unless ``keep_encoding(headers)`` says to keep it as sent.
    Raises :class:`TransportError`."""
    check_url(url)
    shown = redact(url)
    if limits.left() <= 0:
        raise TransportError(shown, "no time left before the deadline", retry=False)
    exchange = _Exchange(url, shown, limits, sink, check, keep_encoding)
    worker = threading.Thread(
        target=exchange.run, args=(data, dict(headers or {})), name=f"HTTP {shown}", daemon=True
    )
    worker.start()
    try:
        worker.join(max(limits.left(), 0.0))
    finally:
        if worker.is_alive():  # late, or the caller was interrupted: stop the worker
            exchange.cancel()
    if worker.is_alive():  # it may be in a name lookup, which nothing interrupts: left to end
        raise TransportError(shown, _late(limits), retry=True)
    return exchange.outcome()


@functools.cache
def _client() -> httpx.Client:
    """One client per process (making one takes tens of milliseconds); no connection is kept
    alive, so that each attempt owns the sockets its cancel shuts. Each request passes its own
    timeout."""
    return httpx.Client(
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=0),
    )


# A forked child makes its own client (the parent's may have held a lock at the fork).
os.register_at_fork(after_in_child=_client.cache_clear)


class _Exchange:
    """One attempt, run in a worker thread so that the caller stops waiting at the deadline
    whatever the worker waits on; :meth:`cancel` shuts its sockets so that it ends soon after,
    and no block reaches the sink once it has been called."""

    def __init__(
        self,
        url: str,
        shown: str,
        limits: Limits,
        sink: Callable[[bytes], None] | None,
        check: Callable[[httpx.Response], None] | None,
        keep_encoding: Callable[[httpx.Headers], bool] | None,
    ) -> None:
        self.url, self.shown, self.limits = url, shown, limits
        self.sink, self.check, self.keep_encoding = sink, check, keep_encoding
        self.lock = threading.Lock()
        self.cancelled = False
        self.sockets: list[socket.socket] = []
        self.result: Response | None = None
        self.error: BaseException | None = None

    def run(self, data: bytes | None, headers: dict[str, str]) -> None:
        try:
            self.result = self._send(data, headers)
        except BaseException as error:  # raised again in the caller's thread
            self.error = error

    def outcome(self) -> Response:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result

    def cancel(self) -> None:
        with self.lock:
            self.cancelled = True
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        """httpx's trace hook: keeps each new connection's socket for :meth:`cancel`."""
        if event == "connection.connect_tcp.complete":
            with self.lock:
                self.sockets.append(info["return_value"].get_extra_info("socket"))
        if self.cancelled:  # the caller has gone (a connection made since is shut too)
            self.cancel()
            raise TransportError(self.shown, _late(self.limits), retry=True)

    def _send(self, data: bytes | None, headers: dict[str, str]) -> Response:
        parts = urllib.parse.urlsplit(self.url)
        auth = None
        if parts.username is not None and "Authorization" not in headers:
            auth = httpx.BasicAuth(
                urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or "")
            )
        url = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        wait = max(min(self.limits.read_timeout, self.limits.left()), 0.001)
        try:
            with _client().stream(
                "GET" if data is None else "POST",
                url,
                content=data,
                headers=headers,
                auth=auth,
                timeout=wait,
                extensions={"trace": self._trace},
            ) as answer:
                if not answer.is_success:
                    raise self._refused(answer)
                if self.check is not None:
                    self.check(answer)
                return self._read(answer)
        except httpx.UnsupportedProtocol as error:  # the URL was http(s): a redirect's is not
            where = redact(str(error.request.url))
            what = f"{self.shown} redirects to {where!r}: only http(s) is followed"
            raise NNDError(what) from None
        except httpx.TimeoutException:
            raise TransportError(self.shown, _late(self.limits), retry=True) from None
        except httpx.DecodingError as error:
            what = f"the body is not what its Content-Encoding says ({error})"
            raise TransportError(self.shown, what) from None
        except httpx.TooManyRedirects:
            raise TransportError(self.shown, f"more than {MAX_REDIRECTS} redirects") from None
        except httpx.HTTPError as error:
            cause: BaseException = error
            while (inner := cause.__cause__ or cause.__context__) is not None:
                cause = inner  # the socket's own error (gaierror, ...) says the most
            reason = f"{type(cause).__name__}: {cause}"
            raise TransportError(self.shown, reason, retry=True) from None
        except OSError as error:  # the sink's (a full disk): httpx maps the sockets' own
            raise TransportError(self.shown, f"{type(error).__name__}: {error}") from None

    def _refused(self, answer: httpx.Response) -> TransportError:
        detail = b""
        for block in answer.iter_bytes():
            detail += block
            if len(detail) >= DETAIL:
                break
        text = detail[:DETAIL].decode("utf-8", "replace") or answer.reason_phrase
        status = answer.status_code
        return TransportError(
            self.shown, f"HTTP {status}: {text}", status, status in RETRY_STATUSES
        )

    def _read(self, answer: httpx.Response) -> Response:
        announced = answer.headers.get("content-length", "")
        length = int(announced) if announced.isdigit() else None
        if length is not None and length > self.limits.max_bytes:
            raise TransportError(self.shown, _too_big(self.limits, f"announces {length:,} bytes"))
        keep = self.keep_encoding is not None and self.keep_encoding(answer.headers)
        blocks: list[bytes] = []
        received = 0
        try:
            for block in answer.iter_raw() if keep else answer.iter_bytes():
                received += len(block)
                if received > self.limits.max_bytes:
                    raise TransportError(self.shown, _too_big(self.limits, "goes on past it"))
                with self.lock:
                    if self.cancelled:
                        raise TransportError(self.shown, _late(self.limits), retry=True)
                    (self.sink or blocks.append)(block)
        except httpx.RemoteProtocolError:  # the connection closed before the end
            if length is None:
                raise
            short = _short(answer.num_bytes_downloaded, length)
            raise TransportError(self.shown, short, retry=True) from None
        return Response(answer.status_code, b"".join(blocks))


def _late(limits: Limits) -> str:
    if limits.left() <= 0:
        return "timed out (the total deadline passed)"
    return f"timed out (no answer within {limits.read_timeout:g} s)"


def _too_big(limits: Limits, what: str) -> str:
    return (
        f"the body {what}: the cap is {limits.max_bytes:,} bytes (raise it if the answer or "
        "file is really that large)"
    )


def _short(received: int, length: int) -> str:
    return f"the body ended after {received:,} of the {length:,} bytes announced (Content-Length)"


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
