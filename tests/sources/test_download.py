"""URL sources: bounded downloads, complete files only in the cache, pinned hashes, no secrets kept.

Each test serves files from a local http.server on 127.0.0.1 in a thread.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.server
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from local_server import serving

from nnd_suites import NNDError, SourceFormatError, build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main
from nnd_suites.hub import export_suites
from nnd_suites.sources.download import cache_dir, public_source_name

C3_SOURCE = get_adapter("challenge300").default_source_path()
C3_BYTES = C3_SOURCE.read_bytes()
C3_SHA256 = hashlib.sha256(C3_BYTES).hexdigest()


@contextlib.contextmanager
def serve(respond: Callable[[http.server.BaseHTTPRequestHandler], None]) -> Iterator[str]:
    """Serve every GET with ``respond``; yield the server's base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with contextlib.suppress(OSError):  # the client may hang up first
                respond(self)

        def log_message(self, *args: object) -> None:
            pass

    with serving(Handler) as server:
        yield f"http://127.0.0.1:{server.server_port}"


def send(handler, body: bytes, status: int = 200, kind: str = "text/plain", length=None) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body) if length is None else length))
    handler.end_headers()
    handler.wfile.write(body)


def cached_files() -> list[Path]:
    return [p for p in (cache_dir() / "sources").rglob("*") if p.is_file()]


def test_recorded_source_has_no_credentials(tmp_path):
    with serve(lambda h: send(h, C3_BYTES)) as base:
        url = f"{base}/files/c3.tsv?token=s3cret&sig=abc#frag"
        suite = build_suite("challenge300", url, tmp_path / "suite")
    [source] = suite.manifest.sources
    assert source.path == f"{base}/files/c3.tsv" and source.sha256 == C3_SHA256
    export_suites([suite], tmp_path / "nnd")
    for written in [tmp_path / "suite" / "manifest.json", *(tmp_path / "nnd").rglob("*")]:
        if written.is_file():
            assert b"s3cret" not in written.read_bytes(), written


@pytest.mark.parametrize(
    ("given", "recorded"),
    [
        ("https://user:pa55@host.org:8443/a/b.tsv?x=1#y", "https://host.org:8443/a/b.tsv"),
        ("https://tok@[::1]/f.jsonl", "https://[::1]/f.jsonl"),
        ("data/local file.tsv", "data/local file.tsv"),
    ],
)
def test_public_source_name(given, recorded):
    assert public_source_name(given) == recorded


def test_slow_drip_download_hits_the_total_deadline(monkeypatch):
    def drip(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(C3_BYTES)))
        handler.end_headers()
        for byte in C3_BYTES[:50]:  # one byte every 0.2 s: each read succeeds, the whole never
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(0.2)

    monkeypatch.setenv("NND_SUITES_DOWNLOAD_TIMEOUT", "1")
    with serve(drip) as base:
        started = time.monotonic()
        with pytest.raises(SourceFormatError, match=r"could not download: not complete after 1 s"):
            build_suite("challenge300", f"{base}/c3.tsv")
        assert time.monotonic() - started < 5
    assert cached_files() == []


def test_short_body_is_a_clear_error_and_not_cached():
    message = rf"the body ended after 1,000 of the {len(C3_BYTES):,} bytes announced"
    short = serve(lambda h: send(h, C3_BYTES[:1000], length=len(C3_BYTES)))
    with short as base, pytest.raises(SourceFormatError, match=message):
        build_suite("challenge300", f"{base}/c3.tsv")
    assert cached_files() == []


@pytest.mark.parametrize(
    ("status", "message"), [(404, "the server answered 404"), (200, "sent a web page")]
)
def test_html_error_page_is_refused_and_not_cached(status, message):
    page = b"<html><body>Not here</body></html>"
    html = serve(lambda h: send(h, page, status=status, kind="text/html"))
    with html as base, pytest.raises(SourceFormatError, match=message) as error:
        build_suite("challenge300", f"{base}/c3.tsv?token=s3cret")
    assert "s3cret" not in str(error.value)
    assert cached_files() == []


def test_sha256_pin(tmp_path, capsys):
    wrong = "0" * 64
    with serve(lambda h: send(h, C3_BYTES)) as base:
        url = f"{base}/c3.tsv"
        with pytest.raises(SourceFormatError, match=f"sha256 is {C3_SHA256}, but .* pins {wrong}"):
            build_suite("challenge300", url, source_sha256=wrong)
        assert cached_files() == []  # a file that does not match is not kept
        out = tmp_path / "suite"
        args = ["build", "challenge300", "--source", url, "--out", str(out), "--source-sha256"]
        assert main([*args, C3_SHA256.upper()]) == 0
        assert len(cached_files()) == 1
    assert main([*args, wrong]) == 3  # SourceFormatError; the cached copy is checked too
    assert f"pins {wrong}" in capsys.readouterr().err
    with pytest.raises(SourceFormatError, match=f"pins {wrong}"):
        build_suite("challenge300", C3_SOURCE, source_sha256=wrong)
    assert len(build_suite("challenge300", source_sha256=C3_SHA256)) == 807
    assert main([*args, "abc"]) == 2
    assert "expected 64 hexadecimal digits" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra", [["--source-sha256", C3_SHA256], ["--source", "x.tsv"], ["--option", "a=b"]]
)
def test_build_all_refuses_options_of_one_build(tmp_path, capsys, extra):
    assert main(["build", "--all", "--out", str(tmp_path), *extra]) == 2
    error = capsys.readouterr().err
    assert extra[0] in error and "nnd-suites build ADAPTER" in error
    assert not any(tmp_path.iterdir())  # refused before anything was built


@pytest.mark.parametrize("url", ["https://...", "https:///file.tsv", "http://exa mple.org/x.tsv"])
def test_a_placeholder_or_broken_url_is_a_named_error(url, tmp_path, capsys):
    assert main(["build", "challenge300", "--source", url, "--out", str(tmp_path / "s")]) == 2
    error = capsys.readouterr().err
    assert "not a usable URL" in error, error
    assert cached_files() == []


@pytest.mark.parametrize(
    "url",
    [
        "ftp://alice:s3cret@example.org/c3.tsv",
        "file:///etc/passwd",
        "http://alice:s3cret@127.0.0.1:abc/c3.tsv",
        "http://alice:s3cret@[bad/c3.tsv",
    ],
)
def test_other_schemes_and_malformed_urls_are_usage_errors_at_once(url, tmp_path, capsys):
    started = time.monotonic()
    assert main(["build", "challenge300", "--source", url, "--out", str(tmp_path / "s")]) == 2
    error = capsys.readouterr().err
    assert "only http:// and https://" in error or "is malformed" in error, error
    assert "s3cret" not in error and "alice" not in error
    assert time.monotonic() - started < 5 and cached_files() == []


def test_a_body_over_the_size_cap_is_refused_and_not_cached(monkeypatch):
    monkeypatch.setenv("NND_SUITES_DOWNLOAD_MAX_BYTES", "5000")

    def endless(handler) -> None:  # no Content-Length: only the count read can stop it
        handler.send_response(200)
        handler.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(10_000):
                handler.wfile.write(b"x" * 1000)

    for respond in (endless, lambda h: send(h, C3_BYTES)):  # announced too large, or sent
        with serve(respond) as base, pytest.raises(SourceFormatError) as refused:
            build_suite("challenge300", f"{base}/c3.tsv")
        assert "the cap is 5,000 bytes" in str(refused.value)
        assert "NND_SUITES_DOWNLOAD_MAX_BYTES" in str(refused.value)
    assert cached_files() == []
    monkeypatch.setenv("NND_SUITES_DOWNLOAD_MAX_BYTES", "-1")
    with pytest.raises(NNDError, match="expected a positive number of bytes"):
        build_suite("challenge300", "http://127.0.0.1:1/c3.tsv")


def test_credentials_are_sent_once_never_shown_nor_sent_to_another_host():
    """user:password@ becomes a Basic header for its own host only: a redirect to another host
    (127.0.0.1 -> localhost) arrives without it, and no error message shows the password."""
    seen: list[tuple[str, str | None]] = []

    def respond(handler) -> None:
        seen.append((handler.headers["Host"], handler.headers.get("Authorization")))
        if handler.path == "/start":
            port = handler.server.server_port
            handler.send_response(302)
            handler.send_header("Location", f"http://localhost:{port}/c3.tsv")
            handler.end_headers()
        else:
            send(handler, C3_BYTES[:2000], status=404)

    with serve(respond) as base:
        url = base.replace("http://", "http://alice:pa55w0rd@") + "/start"
        with pytest.raises(SourceFormatError) as failed:
            build_suite("challenge300", url)
    assert "pa55w0rd" not in str(failed.value) and "alice" not in str(failed.value)
    assert "404" in str(failed.value)
    [(first_host, first_auth), (second_host, second_auth)] = seen
    assert first_host.startswith("127.0.0.1") and first_auth.startswith("Basic ")
    assert second_host.startswith("localhost") and second_auth is None


def test_headers_dripping_one_byte_at_a_time_hit_the_total_deadline(monkeypatch):
    """Every read succeeds (a byte every 0.2 s) while the status line and headers arrive: only a
    deadline over the whole exchange ends it."""

    def drip_headers(handler) -> None:
        handler.wfile.write(b"HTTP/1.0 200 OK\r\n")
        for byte in b"X-Slow: " + b"a" * 100:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(0.2)

    monkeypatch.setenv("NND_SUITES_DOWNLOAD_TIMEOUT", "1")
    with serve(drip_headers) as base:
        started = time.monotonic()
        with pytest.raises(SourceFormatError, match=r"not complete after 1 s"):
            build_suite("challenge300", f"{base}/c3.tsv")
        # the headers would drip for 21.6 s: under half of that is the deadline, on a loaded
        # machine too (a bound of 3 s raced the scheduler)
        assert time.monotonic() - started < 10
    assert cached_files() == []


@pytest.mark.parametrize("name", ["c3.tsv", "c3.tsv.gz"])
def test_a_gzip_encoded_download_is_cached_as_the_file_its_url_names(name):
    """Sent with ``Content-Encoding: gzip``, a .tsv is cached decoded (its pin and recorded sha256
    are the file's), while a .tsv.gz, whose gzip data is the file itself, is kept as sent; the
    cached copy serves the next build with the server gone."""
    wire = gzip.compress(C3_BYTES, mtime=0)
    cached = C3_BYTES if name == "c3.tsv" else wire

    def respond(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/octet-stream")
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(wire)))
        handler.end_headers()
        handler.wfile.write(wire)

    pin = hashlib.sha256(cached).hexdigest()
    with serve(respond) as base:
        url = f"{base}/files/{name}"
        suite = build_suite("challenge300", url, source_sha256=pin)
    assert len(suite) == 807 and suite.manifest.sources[0].sha256 == pin
    [copy] = cached_files()
    assert copy.name == name and copy.read_bytes() == cached
    assert len(build_suite("challenge300", url, source_sha256=pin)) == 807  # from the cache


def test_a_failed_download_leaves_no_folder_in_the_cache():
    """Whatever stops a download (an error status, a short body, a pin that does not match), the
    cache keeps no folder for it; the next download of the URL works."""
    failures = [
        (lambda h: send(h, b"gone", status=404), None),
        (lambda h: send(h, C3_BYTES[:1000], length=len(C3_BYTES)), None),
        (lambda h: send(h, C3_BYTES), "0" * 64),
    ]
    for respond, pin in failures:
        with serve(respond) as base, pytest.raises(SourceFormatError, match="download|pins"):
            build_suite("challenge300", f"{base}/c3.tsv", source_sha256=pin)
        assert list((cache_dir() / "sources").glob("*")) == []
    with serve(lambda h: send(h, C3_BYTES)) as base:
        assert len(build_suite("challenge300", f"{base}/c3.tsv")) == 807
    assert len(cached_files()) == 1


def test_the_size_cap_counts_the_decoded_bytes_of_an_encoded_body(monkeypatch):
    """A gzip bomb (64 KiB on the wire, 64 MiB decoded) stops at the cap on what would be cached,
    not at the cap on what was sent."""
    monkeypatch.setenv("NND_SUITES_DOWNLOAD_MAX_BYTES", str(1 << 20))
    bomb = gzip.compress(bytes(64 << 20), compresslevel=9, mtime=0)
    assert len(bomb) < 1 << 20

    def respond(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(bomb)))
        handler.end_headers()
        handler.wfile.write(bomb)

    with serve(respond) as base, pytest.raises(SourceFormatError, match="goes on past it"):
        build_suite("challenge300", f"{base}/c3.tsv")
    assert cached_files() == []
