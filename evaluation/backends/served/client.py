"""HTTP for the served backend: JSON over urllib, bounded concurrency, retries with backoff.

The standard library is enough here (one POST per request, no streaming) and keeps the backend
free of an extra dependency. The API key is only ever put in the Authorization header.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, TypeVar

from nnd_suites.errors import ScoringError

T = TypeVar("T")
R = TypeVar("R")
#: Statuses worth retrying: rate limits and server-side failures.
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


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

    def post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        return self._call(path, json.dumps(payload).encode())

    def get(self, path: str) -> dict[str, Any] | None:
        """GET ``path``; ``None`` when the server has no such endpoint (404/405)."""
        try:
            return self._call(path, None)
        except ServerError as error:
            if getattr(error, "status", None) in (404, 405):
                return None
            raise

    def _call(self, path: str, body: bytes | None) -> dict[str, Any]:
        absolute = path.startswith(("http://", "https://"))
        url = path if absolute else self.base_url.rstrip("/") + "/" + path.lstrip("/")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        deadline = time.monotonic() + self.timeout
        attempt, wait_s = 0, self.backoff
        while True:
            left = deadline - time.monotonic()
            try:
                request = urllib.request.Request(url, data=body, headers=headers)
                with urllib.request.urlopen(request, timeout=max(left, 0.001)) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as error:
                detail = error.read()[:500].decode("utf-8", "replace")
                failure = _server_error(url, f"HTTP {error.code}: {detail}", error.code)
                if error.code not in RETRY_STATUSES:
                    raise failure from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
                failure = _server_error(url, f"{type(e).__name__}: {getattr(e, 'reason', e)}")
            except json.JSONDecodeError as error:
                raise _server_error(url, f"the answer is not JSON ({error})") from None
            attempt += 1
            if attempt > self.retries or time.monotonic() + wait_s >= deadline:
                raise ServerError(
                    f"{failure} (gave up after {attempt} attempt(s) within the {self.timeout:g} s "
                    "timeout; raise --request-timeout S or --retries N, or check the server)"
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
