"""The served backend against a fake OpenAI-compatible server: scores, order, retries, timeouts,
the probe's refusal, and an API key that never reaches a report or the cache."""

from __future__ import annotations

import json
import random
import re

import pytest
import served_fake as fake

from nnd_suites.errors import NNDError, ScoringError
from nnd_suites.evaluation.backend import ScoreRequest
from nnd_suites.evaluation.backends.served.client import Client, ServerError


@pytest.fixture
def server():
    running = fake.FakeServer()
    yield running
    running.close()


def _load(server, **options):
    return fake.load(server, **options)


def _expected(context: str, candidate: str) -> tuple[float, int]:
    joined = candidate if not context or candidate[:1].isspace() else " " + candidate
    tokens = [t for t, _ in fake.tokenize(joined)] + ["</s>"]
    return sum(fake.logprob(t) for t in tokens), len(tokens)


def test_scores_in_request_order_with_requests_in_flight(server):
    backend = _load(server, concurrency=8)
    server.delay = lambda prompt: random.Random(prompt).uniform(0, 0.05)  # finish out of order
    requests = [ScoreRequest(f"Question {i}: what is it?", f"answer number {i}") for i in range(40)]
    seen: list[int] = []
    scores = backend.score(requests, sink=lambda idx, batch: seen.extend(idx))
    assert sorted(seen) == list(range(40))
    for request, score in zip(requests, scores, strict=True):
        total, n = _expected(request.context, request.candidate)
        assert score.n_targets == n and score.logprob_sum == pytest.approx(total)


def test_context_boundary_and_eos_are_scored(server):
    backend = _load(server)
    [spaced, newline, empty] = backend.score(
        [ScoreRequest("Q: x?  ", "yes no"), ScoreRequest("Q:\n", "yes"), ScoreRequest("Q:", "")]
    )
    assert spaced.n_targets == 3  # " yes", " no", EOS: trailing spaces dropped, one space added
    assert spaced.logprob_sum == pytest.approx(sum(map(fake.logprob, [" yes", " no", "</s>"])))
    assert newline.logprob_sum == pytest.approx(fake.logprob("yes") + fake.logprob("</s>"))
    assert empty.n_targets == 1 and empty.logprob_sum == pytest.approx(fake.logprob("</s>"))


@pytest.mark.parametrize("trouble", ["429", "500", "drop"])
def test_retries_until_the_server_answers(server, trouble):
    backend = _load(server)
    before = server.requests
    if trouble == "drop":
        server.drop = 2
    else:
        server.fail = [int(trouble)] * 2
    [score] = backend.score([ScoreRequest("Q:", "yes")])
    assert score.n_targets == 2 and server.requests - before == 3


def test_gives_up_with_a_clear_error(server):
    backend = _load(server, retries=2)
    server.fail = [503] * 5
    with pytest.raises(ServerError, match=r"HTTP 503.*gave up after 3 attempt"):
        backend.score([ScoreRequest("Q:", "yes")])
    server.fail = [400]
    with pytest.raises(ServerError, match="HTTP 400"):  # a client error is not retried
        backend.score([ScoreRequest("Q:", "yes")])


def test_a_request_without_room_on_the_server_gets_advice_that_fits(server):
    """llama.cpp's server answers HTTP 500 "failed to find a memory slot" when the requests in
    flight do not fit its context: that was advised "raise --request-timeout", which cannot help."""
    backend = _load(server, retries=1, concurrency=4)
    server.error = {
        "error": {
            "code": 500,
            "message": "failed to find a memory slot for batch of size 512",
            "type": "server_error",
        }
    }
    server.fail = [500] * 2
    with pytest.raises(ServerError) as raised:
        backend.score([ScoreRequest("Q:", "yes")])
    said = str(raised.value)
    assert "failed to find a memory slot" in said and "gave up after 2 attempt" in said
    assert "lower --concurrency" in said and "larger --ctx-size" in said
    assert "raise --request-timeout" not in said
    server.error = {"error": {"message": "the request exceeds the available context size"}}
    server.fail = [400]  # not retried, and advised alike
    with pytest.raises(ServerError, match=r"HTTP 400: .*larger --ctx-size"):
        backend.score([ScoreRequest("Q:", "yes")])
    server.error, server.fail = {"error": "busy"}, [500] * 2  # any other 500: the timeout
    with pytest.raises(ServerError, match=r"raise --request-timeout"):
        backend.score([ScoreRequest("Q:", "yes")])


def test_total_timeout_per_request(server):
    server.delay = 2.0
    client = Client(server.url, timeout=0.5, retries=3, backoff=0.1)
    with pytest.raises(ServerError, match=r"within the 0.5 s timeout"):
        client.post("completions", {"model": "fake", "prompt": "x", "echo": True})


def test_a_failure_keeps_what_finished_in_the_sink(server):
    backend = _load(server, concurrency=1, retries=0)
    requests = [ScoreRequest("Q:", f"a{i}") for i in range(20)]
    server.delay = lambda prompt: 0.0
    kept: list[int] = []
    original = server.complete

    def failing(body):
        if "a15" in body["prompt"]:
            raise RuntimeError("boom")  # the handler dies: the connection drops
        return original(body)

    server.complete = failing
    with pytest.raises(ServerError):
        backend.score(requests, sink=lambda idx, batch: kept.extend(idx))
    assert sorted(kept) == list(range(15))


@pytest.mark.parametrize("offsets", ["sglang", "vllm"])
def test_offsets_come_from_the_token_texts(server, offsets):
    """SGLang reports every text_offset as -1 and vLLM counts an echoed BOS text into the
    offsets: the candidate is still found, by the texts, with the same scores as true offsets."""
    requests = [
        ScoreRequest("Q: x?", "yes no"),
        ScoreRequest("", "first words"),  # empty context: BOS, then the candidate from 0
        ScoreRequest("Q: où?", "là-bas"),
    ]
    expected = _load(server).score(requests)
    server.offsets = offsets
    assert _load(server).score(requests) == expected
    total, n = _expected("Q: x?", "yes no")
    assert expected[0].n_targets == n and expected[0].logprob_sum == pytest.approx(total)


@pytest.mark.parametrize(
    ("offsets", "message"),
    [
        ("sglang", "no token offsets"),  # nothing to fall back on
        ("vllm", "the server's offsets disagree with them"),  # shifted by the BOS text
        ("openai", None),  # true offsets: the fallback scores as before
    ],
)
def test_texts_that_do_not_reassemble_fall_back_on_offsets_only_where_they_agree(
    server, offsets, message
):
    request = ScoreRequest("Q: où?", "là-bas")
    [expected] = _load(server).score([request])
    server.offsets, server.lossy = offsets, True  # each token decoded alone: "où" -> "o\ufffd"
    backend = _load(server)  # the probe's prompts are ASCII: it passes
    assert backend.score([ScoreRequest("Q: x?", "yes")])[0].n_targets == 2
    if message is None:
        assert backend.score([request]) == [expected]
        return
    with pytest.raises(ScoringError) as refused:
        backend.score([request])
    said = str(refused.value)
    assert said.startswith("request context='Q: où?' candidate='là-bas': ")
    assert message in said and "from character 2 on (the prompt reads ' où? là-bas" in said


def test_probe_refuses_a_misaligned_engine(server):
    server.misaligned = True
    with pytest.raises(ScoringError, match="failed its consistency probe.*misaligned"):
        _load(server)


@pytest.mark.parametrize(
    ("echo", "message"),
    [
        ("ignored", "returned none of the prompt's tokens: it ignores `echo`"),
        ("tokens only", "gives none of them a log-probability"),
    ],
)
def test_probe_refuses_an_engine_without_prompt_logprobs(server, echo, message):
    """Engines seen in the wild: llama.cpp's llama-server answers echo with the generated token
    only; others echo the prompt's tokens with null log-probabilities."""
    server.echo = echo
    with pytest.raises(ScoringError, match=f"failed its consistency probe: .*{re.escape(message)}"):
        _load(server)


def test_identity_has_server_facts_and_no_credentials(server, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-secret-123")
    url = server.url.replace("http://", "http://user:pw@")
    backend = _load(server, base_url=server.url, api_key_env="MY_KEY")
    assert "sk-secret-123" not in str(backend.describe())
    assert backend.identity["server_version"] == '{"version": "fake-1.0"}'
    assert "created" not in backend.identity["server_model"]  # volatile: would defeat the cache
    assert server.seen_auth[-1] == "Bearer sk-secret-123"
    from nnd_suites.evaluation.backends.served.backend import _without_credentials

    assert _without_credentials(url) == server.url


def test_key_never_in_report_or_cache(server, monkeypatch, tmp_path, quiz_design_suite):
    from nnd_suites.evaluation import evaluate

    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-written")
    options = {"base_url": server.url, "eos_text": "</s>", "tokenizer": "no-such-tokenizer"}
    report = evaluate(
        "fake",
        quiz_design_suite,
        backend="served",
        backend_options=options,
        limit=3,
        cache_dir=tmp_path / "cache",
        out=tmp_path / "out",
        progress=False,
    )
    assert report.requests.scored > 0 and report.backend["backend"] == "served"
    groups = {p.group_id for p in quiz_design_suite.pairs[: report.requests.tests]}
    assert len(groups) == 3
    again = evaluate(
        "fake",
        quiz_design_suite,
        backend="served",
        backend_options=options,
        limit=3,
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    assert again.requests.scored == 0  # every score came back from the cache
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"sk-never-written" not in path.read_bytes(), path


def test_cli_scores_through_a_server(server, tmp_path, capsys):
    from nnd_suites.cli import main

    served = ["--model", "fake", "--base-url", server.url, "--eos-text", "</s>"]
    out = ["--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "out"), "--quiet"]
    assert main(["evaluate", "--suite", "quiz_design", *served, "--limit", "2", *out]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["backend"]["backend"] == "served" and report["limit"] == 2
    assert report["suites"]["quiz_design"]["pairs"] > 0


def test_cli_refuses_hf_only_options_for_a_server(server, capsys):
    from nnd_suites.cli import main

    served = ["--model", "fake", "--base-url", server.url, "--eos-text", "</s>"]
    status = main(["evaluate", "--suite", "quiz_design", *served, "--trust-remote-code", "--quiet"])
    assert status == NNDError.exit_status
    assert "does not take trust_remote_code" in capsys.readouterr().err


def test_a_token_missing_from_the_candidate_is_an_error_not_a_smaller_sum():
    """llama.cpp leaves out echoed tokens equal to BOS: summing the rest would score another
    candidate. The candidate's characters must all be held by echoed tokens."""
    from nnd_suites.evaluation.backends.served.protocol import EchoToken, candidate_score

    prompt = "Q: x? yes no</s>"
    whole = [
        EchoToken("Q:", 0, None),
        EchoToken(" x?", 2, -1.0),
        EchoToken(" yes", 5, -2.0),
        EchoToken(" no", 9, -3.0),
        EchoToken("</s>", 12, -4.0),
    ]
    assert prompt[5:12] == " yes no"
    assert candidate_score(whole, 5, 12, "</s>", "r").logprob_sum == -9.0
    with pytest.raises(ScoringError, match=r"r: no echoed token holds character 9 .*5-11"):
        candidate_score([*whole[:3], whole[4]], 5, 12, "</s>", "r")
    with pytest.raises(ScoringError, match=r"holds character 5 of"):
        candidate_score([*whole[:2], whole[3], whole[4]], 5, 12, "</s>", "r")


@pytest.mark.parametrize(
    "candidate_tokens",
    [
        [(" yes", 5, -2.0), (" yes", 5, -2.0)],  # a token sent twice
        [(" ye", 5, -2.0), (" yes", 5, -2.0)],  # two tokens over the same characters
        [(" y", 5, -2.0), ("es", 7, -2.0), ("s", 8, -1.0)],  # one character in two tokens
        [("\ufffd", 5, -2.0), (" yes", 5, -2.0)],  # a lossy token where a clean one starts
        [("\ufffd", 5, -2.0), ("\ufffd", 5, -1.0), (" yes", 5, -2.0)],
    ],
)
def test_an_echoed_token_repeated_or_overlapping_is_an_error_not_a_larger_sum(candidate_tokens):
    """Where the token texts do not lay end to end over the prompt, the server's offsets place
    them: a token sent twice (or two over the same characters) passed, each was summed, and the
    candidate " yes" scored -8.0 over 3 targets instead of -6.0 over 2, exit status 0. A lossy
    token ("\\ufffd") holds at least the character at its offset, so a clean token starting there
    overlaps it: both were summed for " yes" (-8.0 over 3 targets)."""
    from nnd_suites.evaluation.backends.served.protocol import echoed_tokens

    prompt = "Q: x?" + " yes" + "</s>"
    echoed = [("Q:", 0, None), (" x?", 2, -1.0), *candidate_tokens, ("</s>", 9, -4.0)]
    texts, offsets, values = (list(column) for column in zip(*echoed, strict=True))
    logprobs = {"tokens": texts, "text_offset": offsets, "token_logprobs": values}
    answer = {"choices": [{"logprobs": logprobs}], "usage": {"completion_tokens": 0}}
    with pytest.raises(ScoringError, match=r"overlaps the token before it, which ends at"):
        echoed_tokens(answer, echo=True, prompt=prompt)


@pytest.mark.parametrize("generated", ["", "</s>"])
def test_a_generated_token_left_in_the_echo_is_not_taken_for_the_eos(generated):
    """Generated tokens are cut from an echo by the answer's usage.completion_tokens; an answer
    without it kept the greedy token after the prompt, and one whose text was empty (an EOS
    decoded without its text) or the EOS text was taken for the prompt's EOS: ' yes' scored
    -2.1 (its token and the generated one) instead of -6.0, exit status 0."""
    from nnd_suites.evaluation.backends.served.protocol import candidate_score, echoed_tokens

    prompt = "Q: x? yes</s>"
    echoed = [("Q:", 0, None), (" x?", 2, -1.0), (" yes", 5, -2.0), ("</s>", 9, -4.0)]
    texts, offsets, values = (list(c) for c in zip(*echoed, (generated, 13, -0.1), strict=True))
    logprobs = {"tokens": texts, "text_offset": offsets, "token_logprobs": values}

    def scored(usage: dict) -> float:
        answer = {"choices": [{"logprobs": logprobs}], **usage}
        placed = echoed_tokens(answer, echo=True, prompt=prompt)
        return candidate_score(placed, 5, 9, "</s>", "r").logprob_sum

    assert scored({"usage": {"completion_tokens": 1}}) == -6.0
    with pytest.raises(ScoringError, match=r"r: the echoed prompt does not end with the EOS .* 9"):
        scored({})


@pytest.mark.parametrize(
    ("context", "candidate", "tokens", "expected"),
    [  # (text, text_offset, log-probability) as llama-cpp-python 0.3.36 echoes them
        (
            "Q: x?",
            " ta’ala",
            [(" t", 5, -1.0), ("a", 7, -1.0), ("", 8, -2.0), ("", 8, -3.0), ("ala", 9, -1.0)],
            -9.0,
        ),
        ("Q:\n", "’tis", [("", 3, -2.0), ("", 3, -3.0), ("tis", 4, -1.0)], -7.0),
    ],
)
def test_a_character_split_over_byte_tokens_is_scored_whole(context, candidate, tokens, expected):
    """llama-cpp-python decodes each echoed token alone and drops bytes that are not whole UTF-8:
    the tokens of a character such as ’ come back empty at its offset. Every Challenge 300
    request holding one was refused ("no echoed token holds character ..."), so the served
    backend could not score the suite; the character is now held by its byte tokens, each
    summed (the first one too when the candidate starts with it)."""
    from nnd_suites.evaluation.backends.served.protocol import candidate_score, echoed_tokens

    prompt = context + candidate + "</s>"
    echoed = [
        ("Q:", 0, None),
        *([("\n", 2, -1.0)] if context.endswith("\n") else [(" x?", 2, -1.0)]),
    ]
    echoed += [*tokens, ("</s>", len(context + candidate), -1.0)]
    texts, offsets, values = (list(column) for column in zip(*echoed, strict=True))
    answer = {
        "choices": [
            {"logprobs": {"tokens": texts, "text_offset": offsets, "token_logprobs": values}}
        ],
        "usage": {"completion_tokens": 0},
    }
    placed = echoed_tokens(answer, echo=True, prompt=prompt)
    score = candidate_score(placed, len(context), len(context + candidate), "</s>", "r")
    assert score.logprob_sum == expected and score.n_targets == len(tokens) + 1


def test_eos_text_without_a_tokenizer_says_there_is_no_bos(server, caplog):
    with caplog.at_level("WARNING"):
        backend = _load(server)  # tokenizer "no-such-tokenizer", eos_text "</s>"
    assert backend.bos_text is None
    assert "cannot load the tokenizer 'no-such-tokenizer'" in caplog.text
    assert "an empty context follows the EOS text" in caplog.text


def test_options_given_as_none_take_their_defaults(server):
    """ServedParams declares timeout, retries, backoff and probe_tolerance optional (None), but
    load() ran float(None): a TypeError traceback instead of the defaults."""
    backend = _load(server, timeout=None, retries=None, backoff=None, probe_tolerance=None)
    client = backend.client
    assert (client.timeout, client.retries, client.backoff) == (300.0, 5, 0.5)
    assert backend.cache_tolerance == 1e-2
    total, n = _expected("Q: x?", "yes")
    [score] = backend.score([ScoreRequest("Q: x?", "yes")])
    assert score.logprob_sum == pytest.approx(total) and score.n_targets == n
