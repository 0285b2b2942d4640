"""A small OpenAI-compatible completion server on 127.0.0.1 for the served backend's tests.

Tokens are words with their leading space (and ``</s>``); a token's log-probability depends on
its text only, so generating and echoing agree. Switches make it misbehave: ``misaligned``
(echo shifted by one position), ``fail`` (statuses to answer before succeeding), ``drop``
(connections to close unanswered), ``delay`` (seconds per request, or a function of the prompt).
``offsets`` imitates how engines report token positions: ``"openai"`` (true offsets), ``"sglang"``
(``text_offset`` -1 for every token) and ``"vllm"`` (a BOS token echoed with its text ``<s>`` and
counted into every later offset); ``lossy`` decodes each token alone, so that a non-ASCII
character comes back as U+FFFD.

Issue 21's modes: ``values="probabilities"`` (each value sent as exp(log-probability)),
``answer_model`` (another id in every answer's ``model`` field), ``scale`` (log-probabilities
multiplied: another model swapped in behind the same id; or a function of the prompt, a model
that answers some prompts as the old one did), ``models_answer`` (what GET /v1/models
answers), ``redirect`` (GET /v1/models answers 302 to that URL), ``raw`` (bytes sent as the body of
every POST answer) with ``length`` (the Content-Length announced; None: no header) and ``drip``
(seconds between the bytes sent). ``seen`` records (Host, Authorization) of every request.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

from local_server import start_server, stop_server

TOKEN = re.compile(r"</s>|\s*[^\s<]+|\s+|<")
EOS = "</s>"


def logprob(token: str) -> float:
    return -0.5 - 0.25 * len(token.strip()) - (0.125 if token.startswith(" ") else 0.0)


def tokenize(text: str) -> list[tuple[str, int]]:
    return [(m.group(), m.start()) for m in TOKEN.finditer(text)]


class FakeServer:
    def __init__(self) -> None:
        self.misaligned = False
        self.echo = "full"  # or "ignored" (llama-server), "tokens only" (no prompt logprobs)
        self.offsets = "openai"  # or "sglang", "vllm"
        self.lossy = False
        self.fail: list[int] = []
        self.error: object = {"error": "busy"}  # the body of each ``fail`` answer
        self.drop = 0
        self.delay = 0.0
        self.seen_auth: list[str | None] = []
        self.seen: list[tuple[str | None, str | None]] = []
        self.values = "logprobs"  # or "probabilities"
        self.answer_model: str | None = None
        self.scale: float | Callable[[str], float] = 1.0
        self.models_answer: object = None  # None: the model "fake", created now
        self.redirect: str | None = None
        self.raw: bytes | None = None
        self.length: int | None = None
        self.drip = 0.0
        self.requests = 0
        self.lock = threading.Lock()
        self.httpd = start_server(self._handler())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        stop_server(self.httpd)

    def complete(self, body: dict) -> dict:
        prompt = body["prompt"]
        tokens = tokenize(prompt)
        generated = (" ok", len(prompt))
        if body.get("echo") and self.echo != "ignored":  # a different next token: shifts show
            shown = [*tokens, (" fin", len(prompt))]
            values = [logprob(t) for t, _ in shown]
            if self.misaligned:  # each token gets the next one's value
                values = [*values[1:], logprob(" and so on")]
            values[0] = None
            if self.echo == "tokens only":
                values = [None] * len(tokens) + values[len(tokens) :]
            if self.offsets == "vllm":  # BOS first, unpredicted; the first word now is
                shown = [("<s>", 0)] + [(t, o + len("<s>")) for t, o in shown]
                values = [None, logprob(shown[1][0]), *values[1:]]
        else:
            shown, values = [generated], [logprob(" ok")]
        if self.offsets == "sglang":
            shown = [(t, -1) for t, _ in shown]
        if self.lossy:
            shown = [(re.sub(r"[^\x00-\x7f]", "\ufffd", t), o) for t, o in shown]
        scale = self.scale(prompt) if callable(self.scale) else self.scale
        values = [None if v is None else v * scale for v in values]
        if self.values == "probabilities":
            values = [None if v is None else math.exp(v) for v in values]
        return {
            "object": "text_completion",
            "model": self.answer_model or body["model"],
            "choices": [
                {
                    "text": (prompt if body.get("echo") else "") + " ok",
                    "index": 0,
                    "logprobs": {
                        "tokens": [t for t, _ in shown],
                        "text_offset": [o for _, o in shown],
                        "token_logprobs": values,
                        "top_logprobs": None,
                    },
                    "finish_reason": "length",
                }
            ],
            "usage": {"prompt_tokens": len(tokens), "completion_tokens": 1},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: object) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send_raw(self) -> None:
                data = server.raw or b""
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if server.length is not None:
                    self.send_header("Content-Length", str(server.length))
                self.end_headers()
                try:
                    if not server.drip:
                        self.wfile.write(data)
                        return
                    for byte in data:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(server.drip)
                except OSError:
                    pass  # the client gave up first
                finally:
                    self.close_connection = True

            def _misbehave(self) -> bool:
                with server.lock:
                    server.requests += 1
                    server.seen_auth.append(self.headers.get("Authorization"))
                    auth = self.headers.get("Authorization")
                    server.seen.append((self.headers.get("Host"), auth))
                    if server.drop:
                        server.drop -= 1
                        self.close_connection = True
                        self.connection.close()
                        return True
                    status = server.fail.pop(0) if server.fail else None
                if status is not None:
                    self._send(status, server.error)
                    return True
                return False

            def do_GET(self) -> None:
                if self._misbehave():
                    return
                if self.path == "/v1/models" and server.redirect:
                    self.send_response(302)
                    self.send_header("Location", server.redirect)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path == "/v1/models":
                    answer = server.models_answer
                    if answer is None:
                        answer = {"data": [{"id": "fake", "created": time.time()}]}
                    self._send(200, answer)
                elif self.path == "/version":
                    self._send(200, {"version": "fake-1.0"})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self._misbehave():
                    return
                delay = server.delay(body["prompt"]) if callable(server.delay) else server.delay
                time.sleep(delay)
                if server.raw is not None:
                    self._send_raw()
                else:
                    self._send(200, server.complete(body))

        return Handler


def load(server: FakeServer, **options: object):
    """The served backend on ``server`` (EOS ``</s>``, no tokenizer to load, fast retries)."""
    from nnd_suites.evaluation.backend import load_backend

    options = {
        "base_url": server.url,
        "eos_text": "</s>",
        "tokenizer": "no-such-tokenizer",
        "backoff": 0.01,
        **options,
    }
    return load_backend("fake", "served", **options)


def evaluate_served(server: FakeServer, suite, cache_dir, *, cache: bool = True):  # type: ignore[no-untyped-def]
    """``evaluate`` of the fake model behind ``server`` on the first 3 context groups of
    ``suite``, its scores cached under ``cache_dir`` (none with ``cache=False``)."""
    from nnd_suites.evaluation import evaluate

    options = {"base_url": server.url, "eos_text": "</s>", "tokenizer": "no-such-tokenizer"}
    return evaluate(
        "fake",
        suite,
        backend="served",
        backend_options=options,
        limit=3,
        cache=cache,
        cache_dir=cache_dir,
        progress=False,
    )
