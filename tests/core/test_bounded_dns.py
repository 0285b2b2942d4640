"""A host name that resolves slowly cannot hold a request past its deadline: the lookup runs
within the deadline, like every other wait of the bounded HTTP client."""

from __future__ import annotations

import socket
import time

import pytest

from nnd_suites.infra.bounded_http import Limits, TransportError, request, resolve


@pytest.fixture
def slow_resolver(monkeypatch):
    """``slow.test`` takes 5 s to resolve (to 127.0.0.1); every other name resolves as usual."""
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host == "slow.test":
            time.sleep(5)
            host = "127.0.0.1"
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_a_slow_name_lookup_is_cut_at_the_deadline(slow_resolver):
    started = time.monotonic()
    with pytest.raises(TransportError, match="timed out") as caught:
        request("http://slow.test:9/v1/models", Limits(time.monotonic() + 0.5, 1 << 20))
    took = time.monotonic() - started
    assert 0.4 < took < 2.5, took  # the deadline, not the resolver's 5 s
    assert caught.value.retry and "slow.test" in str(caught.value)


def test_resolve_gives_the_addresses_in_time_and_refuses_when_late(slow_resolver):
    infos = resolve("127.0.0.1", 80, 1.0)
    assert infos and infos[0][4][:2] == ("127.0.0.1", 80)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="slow.test"):
        resolve("slow.test", 80, 0.3)
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
