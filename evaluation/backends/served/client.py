"""HTTP for the served backend: JSON through the one bounded client, bounded concurrency,
retries with backoff.

Each request goes through :mod:`nnd_suites.infra.bounded_http` (httpx with a cap on the answer's
size and a total deadline; named errors for short, non-UTF-8 or too deeply nested answers; no
Authorization header across hosts). The API key is only ever put in the Authorization header,
and a URL is only ever shown without its credentials.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, TypeVar

from nnd_suites.errors import NNDError, ScoringError
from nnd_suites.infra.bounded_http import (
    Limits,
    TransportError,
    check_url,
    parse_json,
    redact,
    request,
)

T = TypeVar("T")
R = TypeVar("R")
#: The largest answer read (an echo of a 32k-token prompt is a few MB).
DEFAULT_MAX_ANSWER_BYTES = 64 << 20

#: An answer saying the request found no room in the server's context or slots (llama.cpp's
#: "failed to find a memory slot", "exceeds the available context size"): not a slow server.
NO_ROOM = re.compile(r"\bslots?\b|context (size|length|window)|\bn_ctx\b|kv.?cache", re.I)
NO_ROOM_ADVICE = (
    "the server has no room for the request: it holds the requests in flight in its context, "
    "which llama-server shares among its --parallel slots; score with fewer requests in flight "
    "(a lower --concurrency; default 16), or restart the server with a larger --ctx-size "
    "(llama_cpp.server: --n_ctx) or fewer --parallel slots; a longer --request-timeout will "
    "not help"
)
TIMEOUT_ADVICE = "raise --request-timeout S or --retries N, or check the server"


class ServerError(ScoringError):
    """The server answered with an error that retrying does not fix (or retries ran out)."""


@dataclass
class Client:
    """POSTs and GETs JSON to ``base_url`` (e.g. ``http://host:8000/v1``)."""

    base_url: str
    api_key: str | None = None
    timeout: float = 300.0  # total seconds per request, retries included
    retries: int = 5
    backoff: float = 0.5  # first wait; doubled after each failed attempt
    max_bytes: int = DEFAULT_MAX_ANSWER_BYTES  # per answer

    def __post_init__(self) -> None:
        check_url(self.base_url, "--base-url")
        for name, low in (("timeout", 0.0), ("backoff", -1.0)):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > low):
                raise NNDError(f"served client: {name}={value!r}; give a finite number > {low:g}")
        if self.retries < 0 or self.max_bytes < 1:
            raise NNDError(
                f"served client: retries={self.retries}, max_bytes={self.max_bytes}; give "
                "retries >= 0 and max_bytes >= 1"
            )

    def post(self, path: str, payload: dict[str, Any]) -> Any:
        return self._call(path, json.dumps(payload).encode())

    def get(self, path: str) -> Any:
        """GET ``path``; ``None`` when the server has no such endpoint (404/405)."""
        try:
            return self._call(path, None)
        except ServerError as error:
            if getattr(error, "status", None) in (404, 405):
                return None
            raise

    def _call(self, path: str, body: bytes | None) -> Any:
        absolute = path.startswith(("http://", "https://"))
        url = path if absolute else self.base_url.rstrip("/") + "/" + path.lstrip("/")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        deadline = time.monotonic() + self.timeout
        attempt, wait_s = 0, self.backoff
        while True:
            limits = Limits(deadline, self.max_bytes, read_timeout=self.timeout)
            try:
                answer = request(url, limits, data=body, headers=headers)
                return parse_json(answer.body, redact(url))
            except TransportError as error:
                no_room = error.status is not None and NO_ROOM.search(error.reason)
                reason = f"{error.reason} ({NO_ROOM_ADVICE})" if no_room else error.reason
                failure = _server_error(error.url, reason, error.status)
                if not error.retry:
                    raise failure from None
            attempt += 1
            if attempt > self.retries or time.monotonic() + wait_s >= deadline:
                advice = "" if no_room else f"; {TIMEOUT_ADVICE}"
                raise ServerError(
                    f"{failure} (gave up after {attempt} attempt(s) within the {self.timeout:g} s "
                    f"timeout{advice})"
                ) from None
            time.sleep(wait_s)
            wait_s *= 2


def _server_error(url: str, what: str, status: int | None = None) -> ServerError:
    error = ServerError(f"{url}: {what}")
    error.status = status  # type: ignore[attr-defined]
    return error


def run_bounded(
    work: Callable[[T], R], items: Iterable[T], concurrency: int
) -> Iterator[tuple[int, R]]:
    """Apply ``work`` to every item with at most ``concurrency`` calls in flight; yield
    ``(index, result)`` as each one finishes. The first failure cancels what has not started."""
    pending: dict[Future[R], int] = {}
    source = iter(enumerate(items))
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        try:
            while True:
                for index, item in source:
                    pending[pool.submit(work, item)] = index
                    if len(pending) >= concurrency:
                        break
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield pending.pop(future), future.result()
        finally:
            for future in pending:
                future.cancel()
