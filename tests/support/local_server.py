"""An HTTP server on 127.0.0.1 in a daemon thread, for the tests that download or call a server.

``serve_forever`` checks for ``shutdown()`` every ``poll_interval`` seconds (0.5 by default):
each test would wait up to that long for its server to stop, so it polls every 20 ms here.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

SHUTDOWN_POLL_SECONDS = 0.02


def start_server(
    handler: type[http.server.BaseHTTPRequestHandler] | functools.partial,
) -> http.server.ThreadingHTTPServer:
    """A threading server on a free port of 127.0.0.1, already serving; stop it with
    :func:`stop_server`."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, args=(SHUTDOWN_POLL_SECONDS,), daemon=True
    )
    thread.start()
    return server


def stop_server(server: http.server.ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()


@contextlib.contextmanager
def serving(
    handler: type[http.server.BaseHTTPRequestHandler] | functools.partial,
) -> Iterator[http.server.ThreadingHTTPServer]:
    """The server of :func:`start_server` while the block runs, stopped after it."""
    server = start_server(handler)
    try:
        yield server
    finally:
        stop_server(server)


def quiet_file_handler(directory: str | Path) -> functools.partial:
    """Serves the files of ``directory`` without logging each request to stderr."""

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    return functools.partial(QuietHandler, directory=str(directory))
