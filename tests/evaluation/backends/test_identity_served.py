"""Served models, issue 21: what was scored is identified (a model swapped behind the same URL and
id is a new cache scope; an answer from another model, or values that are not log-probabilities,
at any request, are refused) and every answer is bounded (size, time, shape), against the fake
OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import time

import pytest
import served_fake as fake

from nnd_suites.errors import NNDError, ScoringError
from nnd_suites.evaluation.backend import ScoreRequest
from nnd_suites.evaluation.backends.served.client import Client, ServerError

REQUEST = ScoreRequest("Q: x?", "yes no")


@pytest.fixture
def server():
    running = fake.FakeServer()
    yield running
    running.close()


def test_probabilities_are_refused_in_the_probe_and_at_every_later_request(server):
    server.values = "probabilities"
    with pytest.raises(ScoringError, match=r"not a finite log-probability \(<= 0\)"):
        fake.load(server)
    server.values = "logprobs"
    backend = fake.load(server)
    assert backend.score([REQUEST])[0].logprob_sum < 0
    server.values = "probabilities"  # the server changes after the probe
    with pytest.raises(ScoringError, match=r"candidate='yes no'.*not a finite log-probability"):
        backend.score([REQUEST])


def test_an_answer_from_another_model_is_refused(server):
    server.answer_model = "other-model"
    with pytest.raises(ScoringError, match="answered with model 'other-model'"):
        fake.load(server)
    server.answer_model = None
    backend = fake.load(server)
    server.answer_model = "other-model"  # a router falling back after the probe
    with pytest.raises(ScoringError, match="asked for model 'fake'.*'other-model'"):
        backend.score([REQUEST])


def test_a_model_swapped_behind_the_same_url_and_id_is_not_served_from_the_cache(
    server, quiz_design_suite, tmp_path
):
    def run(cache: bool = True):
        return fake.evaluate_served(server, quiz_design_suite, tmp_path / "cache", cache=cache)

    first = run()
    assert run().requests.scored == 0  # the same model: every score from the cache
    server.scale = 1.5  # another model, same URL, same id, same /v1/models
    swapped, fresh = run(), run(cache=False)
    assert swapped.requests.cached == 0 and swapped.requests.scored == first.requests.scored
    assert swapped.backend["probe_fingerprint"] != first.backend["probe_fingerprint"]
    lls = [o.ll_high for o in swapped.outcomes["quiz_design"]]
    assert lls == [o.ll_high for o in fresh.outcomes["quiz_design"]]
    assert lls != [o.ll_high for o in first.outcomes["quiz_design"]]


@pytest.mark.parametrize("listed", [[1, 2], {"data": 5}, {"data": None}, {"models": []}, "x"])
def test_a_malformed_models_list_is_a_named_error(server, listed):
    server.models_answer = listed
    with pytest.raises(ScoringError, match=r"/v1/models answered .*not \{\"data\""):
        fake.load(server)


def test_a_cross_host_redirect_does_not_carry_the_bearer_token(server, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-secret-123")
    port = server.url.split(":")[2].split("/")[0]
    server.redirect = f"http://localhost:{port}/v1/elsewhere"  # 127.0.0.1 -> localhost: 404
    fake.load(server, api_key_env="MY_KEY")  # no models list: nothing to check it against
    [(host, auth), (other, dropped)] = server.seen[:2]
    assert host.startswith("127.0.0.1") and auth == "Bearer sk-secret-123"
    assert other.startswith("localhost") and dropped is None


def test_a_redirect_to_another_scheme_is_refused_at_once(server):
    server.redirect = "ftp://alice:s3cret@127.0.0.1/models"
    with pytest.raises(
        NNDError, match=r"redirects to 'ftp://127\.0\.0\.1/models': only http"
    ) as refused:
        Client(server.url, retries=3).get("models")
    assert type(refused.value) is NNDError and "s3cret" not in str(refused.value)
    assert server.requests == 1  # a usage error: not retried


GOOD = json.dumps({"choices": [{"logprobs": {"tokens": [], "token_logprobs": []}}]}).encode()


@pytest.mark.parametrize(
    ("raw", "length", "message"),
    [
        (b"[" + b"0," * 200_000 + b"0]", None, "goes on past it: the cap is 300,000 bytes"),
        (b"[" + b"0," * 200_000 + b"0]", "own", "announces 400,003 bytes: the cap is"),
        (GOOD, len(GOOD) + 50, f"ended after {len(GOOD)} of the {len(GOOD) + 50} bytes"),
        (b'{"choices": "\xff\xfe"}', "own", "not UTF-8 (byte 13"),
        (b"[" * 200_000, None, "nested too deep"),
        (b'{"a": ' + b"9" * 5000 + b"}", "own", "not JSON"),
    ],
)
def test_bad_transport_is_a_named_error(server, raw, length, message):
    server.raw, server.length = raw, len(raw) if length == "own" else length
    client = Client(server.url, timeout=10, retries=1, backoff=0.01, max_bytes=300_000)
    with pytest.raises(ServerError, match=re.escape(message)) as failed:
        client.post("completions", {"model": "fake", "prompt": "x"})
    assert "Traceback" not in str(failed.value)


def test_a_dripping_server_hits_the_total_deadline(server):
    """One byte every 0.5 s: each read succeeds, so a per-read timeout would wait forever."""
    server.raw, server.drip = GOOD, 0.5
    client = Client(server.url, timeout=1.5, retries=3, backoff=0.1)
    started = time.monotonic()
    with pytest.raises(ServerError, match=r"deadline.*gave up after 1 attempt"):
        client.post("completions", {"model": "fake", "prompt": "x"})
    # the whole drip takes 32 s: far under it is the deadline, on a loaded machine too (a bound
    # of 3 s raced the scheduler)
    assert time.monotonic() - started < len(GOOD) * server.drip / 2


@pytest.mark.parametrize(
    ("base_url", "message"),
    [
        ("ftp://127.0.0.1/v1", "only http:// and https://"),
        ("file:///etc/passwd", "only http:// and https://"),
        ("http://127.0.0.1:abc/v1", "is malformed"),
        ("http://.../v1", "not a usable URL"),
    ],
)
def test_other_schemes_and_malformed_base_urls_are_refused_at_once(base_url, message):
    started = time.monotonic()
    with pytest.raises(NNDError, match=message) as refused:
        Client(base_url)
    assert type(refused.value) is NNDError and time.monotonic() - started < 1


def test_credentials_in_the_base_url_are_never_shown(server):
    port = server.url.split(":")[2].split("/")[0]
    server.close()  # nothing answers any more
    with pytest.raises(ServerError) as failed:
        Client(f"http://bob:hunter2@127.0.0.1:{port}/v1", retries=0).get("models")
    assert "hunter2" not in str(failed.value) and "bob" not in str(failed.value)
    assert f"http://127.0.0.1:{port}/v1/models" in str(failed.value)
    server.close = lambda: None  # the fixture has nothing left to close


@pytest.mark.parametrize(
    "option",
    [
        {"timeout": float("nan")},
        {"timeout": float("inf")},
        {"timeout": 0},
        {"retries": -1},
        {"concurrency": -1},
        {"concurrency": 0},
        {"max_answer_bytes": -5},
        {"max_answer_bytes": 0},
    ],
)
def test_settings_out_of_range_are_usage_errors_before_any_request(server, option):
    with pytest.raises(NNDError, match="served client|--concurrency") as refused:
        fake.load(server, **option)
    assert type(refused.value) is NNDError and server.requests == 0


@pytest.mark.parametrize("tolerance", [float("inf"), float("nan"), -0.5])
def test_a_probe_tolerance_that_is_no_finite_number_at_least_0_is_refused(server, tolerance):
    """probe_tolerance=inf let any echo pass the probe (math.isclose with an infinite tolerance
    is always true) and the cache check after it; nan failed it with a misleading message."""
    with pytest.raises(NNDError, match=r"served client: probe_tolerance=.*give a finite number"):
        fake.load(server, probe_tolerance=tolerance)
    assert server.requests == 0


def test_the_bos_text_that_starts_an_empty_context_is_part_of_the_cache_scope(
    server, challenge300_suite, tmp_path
):
    """An empty context (pmi's neutral one on Challenge 300, `{question}` without its field) is
    sent after the model's BOS text, or after the EOS text when no tokenizer gives one
    (`--eos-text` alone, as the warning says). Both ran under one cache scope, so following the
    warning's advice (`--tokenizer`) reused the EOS-led scores as the BOS-led ones."""
    from transformers import PreTrainedTokenizerFast

    from nnd_suites.evaluation import evaluate

    words = {"<s>": 0, "</s>": 1, "[UNK]": 2}
    tokenizers = pytest.importorskip("tokenizers")
    model = tokenizers.models.WordLevel(words, unk_token="[UNK]")
    folder = tmp_path / "tokenizer"
    PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(model), bos_token="<s>", eos_token="</s>"
    ).save_pretrained(folder)

    def scale(prompt: str) -> float:  # by context and candidate (no ties); BOS-led ones twice
        scored = prompt.removesuffix("</s>") if prompt.endswith("</s>") else ""
        return (2.0 if prompt.startswith("<s>") else 1.0) * (1 + len(scored) % 5 / 10)

    server.scale = scale

    def run(tokenizer: str, cache: bool = True):
        options = {"base_url": server.url, "eos_text": "</s>", "tokenizer": tokenizer}
        report = evaluate(
            "fake",
            challenge300_suite,
            backend="served",
            backend_options=options,
            scorers=["pmi"],
            limit=2,
            cache=cache,
            cache_dir=tmp_path / "cache",
            progress=False,
        )
        return report, [(o.ll_high, o.ll_low) for o in report.outcomes["challenge300"]]

    _, without_bos = run("no-such-tokenizer")
    with_bos, scores = run(str(folder))
    assert with_bos.backend["bos_text"] == "<s>" and with_bos.requests.cached == 0
    assert scores == run(str(folder), cache=False)[1] != without_bos


def test_log_probabilities_too_large_to_add_up_are_a_named_error_not_a_traceback(server):
    """Each value finite (-1.05e308 for EOS) passed the checks, but a candidate's
    values added up to -inf, which Score refuses with a ValueError: `evaluate` ended in a
    traceback. It is a ScoringError naming the request."""
    backend = fake.load(server)
    server.scale = 7e307
    with pytest.raises(ScoringError, match=r"candidate='yes no': .* add up to -inf"):
        backend.score([REQUEST])
