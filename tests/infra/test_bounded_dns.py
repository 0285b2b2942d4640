"""A host name that resolves slowly cannot hold a request past its deadline: the lookup runs
within the deadline, like every other wait of the bounded HTTP client (httpx's own timeouts do
not cover it)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from nnd_suites.infra.bounded_http import Limits, TransportError, request

#: How long ``slow.test`` holds a lookup at most: far past every deadline here, so a call that
#: returns sooner was cut by its deadline, however slowly a loaded machine ran the test.
STUCK = 120.0


@pytest.fixture
def slow_resolver(monkeypatch):
    """``slow.test`` resolves (to 127.0.0.1) only when the test is over (or after STUCK s);
    every other name resolves as usual. No race between a sleep and a timer: the lookup cannot
    finish while the test runs."""
    real = socket.getaddrinfo
    test_over = threading.Event()

    def getaddrinfo(host, port, *args, **kwargs):
        if host == "slow.test":
            test_over.wait(STUCK)
            host = "127.0.0.1"
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield
    test_over.set()  # the lookups left behind in daemon threads end now


def test_a_slow_name_lookup_is_cut_at_the_deadline(slow_resolver):
    started = time.monotonic()
    with pytest.raises(TransportError, match="timed out") as caught:
        request("http://slow.test:9/v1/models", Limits(time.monotonic() + 0.5, 1 << 20))
    took = time.monotonic() - started
    assert 0.4 < took < STUCK / 2, took  # the deadline, not the stuck resolver
    assert caught.value.retry and "slow.test" in str(caught.value)


def test_a_lookup_in_time_is_served_and_a_late_one_refused_naming_the_host(
    slow_resolver, fake_server
):
    """Was a test of the hand-written resolver thread; the same checks through ``request``."""
    port = fake_server.httpd.server_address[1]
    got = request(f"http://127.0.0.1:{port}/v1/models", Limits(time.monotonic() + 1.0, 1 << 20))
    assert got.status == 200
    started = time.monotonic()
    with pytest.raises(TransportError, match=r"slow\.test.*timed out"):
        request(f"http://slow.test:{port}/v1/models", Limits(time.monotonic() + 0.3, 1 << 20))
    assert time.monotonic() - started < 2


def test_a_name_that_resolves_in_time_is_served(slow_resolver, fake_server):
    port = fake_server.httpd.server_address[1]
    got = request(f"http://localhost:{port}/v1/models", Limits(time.monotonic() + 10, 1 << 20))
    assert got.status == 200 and b"fake" in got.body


def test_a_name_that_does_not_exist_is_a_transport_error_naming_the_url(monkeypatch):
    def unknown(host, port, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unknown)
    with pytest.raises(TransportError, match=r"http://nowhere\.test/x: gaierror"):
        request("http://nowhere.test/x", Limits(time.monotonic() + 5, 1 << 20))
