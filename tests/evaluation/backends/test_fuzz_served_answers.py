"""Fuzzing of what a served engine sends back: any JSON answer, and damaged copies of a good one,
end in scores or a ScoringError, never in another exception (a traceback) or in a candidate
placed where the prompt does not hold it; any bytes, sent with any Content-Length by a server on
127.0.0.1, end in JSON or a named ServerError (the transport).

A server is data from elsewhere: the served backend reads its answers with the same care as a
source file. Profiles (`ci`: 200 examples per target, fixed seed; `thorough`: 5,000) are in
tests/conftest.py.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from served_fake import FakeServer

from nnd_suites.errors import ScoringError
from nnd_suites.evaluation.backends.served.client import Client, ServerError
from nnd_suites.evaluation.backends.served.protocol import candidate_score, echoed_tokens
from nnd_suites.infra.bounded_http import TransportError, parse_json

PROFILE = settings(
    settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
CONTEXT, CANDIDATE, EOS = "Q: où is it?", " là-bas, near", "</s>"
PROMPT = CONTEXT + CANDIDATE + EOS
TOKENS = ["Q", ":", " où", " is", " it", "?", " là", "-", "bas", ",", " near", EOS]

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)


def good_answer(bos: bool = False) -> dict:
    texts = (["<s>"] if bos else []) + TOKENS + [" ok"]
    offsets, position = [], 0
    for text in texts:
        offsets.append(position)
        position += len(text)
    values = [None] + [-0.5 - i / 10 for i in range(len(texts) - 1)]
    return {
        "choices": [
            {"logprobs": {"tokens": texts, "text_offset": offsets, "token_logprobs": values}}
        ],
        "usage": {"prompt_tokens": len(texts) - 1, "completion_tokens": 1},
    }


def score(answer: object) -> None:
    """What the backend does with one answer; returns quietly or raises ScoringError."""
    tokens = echoed_tokens(answer, echo=True, prompt=PROMPT)
    for token in tokens:
        assert isinstance(token.text, str) and isinstance(token.offset, int)
        assert token.logprob is None or isinstance(token.logprob, float)
    result = candidate_score(tokens, len(CONTEXT), len(CONTEXT + CANDIDATE), EOS, "fuzz")
    assert result.n_targets >= 1


def test_a_good_answer_scores_the_candidate_tokens():
    for bos in (False, True):
        tokens = echoed_tokens(good_answer(bos), echo=True, prompt=PROMPT)
        targets = [t.text for t in tokens if t.offset >= len(CONTEXT)]
        assert targets == [" là", "-", "bas", ",", " near", EOS]


@PROFILE
@given(answer=JSON)
def test_any_json_answer_scores_or_is_a_scoring_error(answer):
    with contextlib.suppress(ScoringError):
        score(answer)


PATHS = [
    ("choices",),
    ("choices", 0),
    ("choices", 0, "logprobs"),
    ("choices", 0, "logprobs", "tokens"),
    ("choices", 0, "logprobs", "text_offset"),
    ("choices", 0, "logprobs", "token_logprobs"),
    ("usage",),
    ("usage", "completion_tokens"),
]


@st.composite
def damaged_answers(draw: st.DrawFn) -> dict:
    """A good answer (with or without an echoed BOS) with a few parts replaced, removed, cut or
    set to values servers have been seen to send (null, -1, strings, NaN)."""
    answer = copy.deepcopy(good_answer(draw(st.booleans())))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = answer
        for key in path[:-1]:
            parent = parent[key] if _has(parent, key) else None
            if parent is None:
                break
        if parent is None or not _has(parent, path[-1]):
            continue
        key = path[-1]
        value = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "cut", "item", "offsets -1"]))
        if action == "replace":
            parent[key] = draw(JSON)
        elif action == "delete" and isinstance(parent, dict):
            del parent[key]
        elif action == "cut" and isinstance(value, list) and value:
            parent[key] = value[: draw(st.integers(0, len(value) - 1))]
        elif action == "item" and isinstance(value, list) and value:
            index = draw(st.integers(0, len(value) - 1))
            value[index] = draw(JSON | st.sampled_from([float("nan"), -1, "", "�", EOS]))
        elif action == "offsets -1" and key == "text_offset" and isinstance(value, list):
            parent[key] = [-1] * len(value)
    return answer


def _has(container: object, key: object) -> bool:
    if isinstance(container, dict):
        return key in container
    return isinstance(container, list) and isinstance(key, int) and 0 <= key < len(container)


@PROFILE
@given(answer=damaged_answers())
def test_damaged_answers_score_or_are_a_scoring_error(answer):
    try:
        tokens = echoed_tokens(answer, echo=True, prompt=PROMPT)
    except ScoringError:
        return
    # whatever was damaged, a token placed inside the prompt holds the prompt's own text there
    for token in tokens:
        if token.text and token.offset < len(PROMPT) and "\ufffd" not in token.text:
            assert PROMPT[token.offset : token.offset + len(token.text)] == token.text, token
    with contextlib.suppress(ScoringError):
        score(answer)


@st.composite
def tokenised_prompts(draw: st.DrawFn) -> tuple[str, list[str], bool]:
    """A prompt cut into tokens at random places, perhaps after an echoed BOS text."""
    prompt = draw(st.text(min_size=1, max_size=40))
    cuts = (
        sorted(draw(st.sets(st.integers(1, len(prompt) - 1), max_size=12)))
        if len(prompt) > 1
        else []
    )
    bounds = [0, *cuts, len(prompt)]
    tokens = [prompt[a:b] for a, b in itertools.pairwise(bounds)]
    return prompt, tokens, draw(st.booleans())


@PROFILE
@given(case=tokenised_prompts(), offsets=st.sampled_from(["true", "none", "bos-counted"]))
def test_offsets_from_texts_are_the_true_offsets(case, offsets):
    """However an engine cuts the prompt and reports offsets (true, -1 as SGLang, or counting an
    echoed BOS text as vLLM), each token lands at its true place in the prompt."""
    prompt, tokens, bos = case
    true = [sum(map(len, tokens[:i])) for i in range(len(tokens))]
    texts = (["<|bos|>"] if bos else []) + tokens
    if offsets == "true":
        sent = ([0] if bos else []) + true
    elif offsets == "none":
        sent = [-1] * len(texts)
    else:
        sent = [sum(map(len, texts[:i])) for i in range(len(texts))]
    values = [None] + [-1.0] * (len(texts) - 1)
    answer = {
        "choices": [{"logprobs": {"tokens": texts, "text_offset": sent, "token_logprobs": values}}]
    }
    placed = echoed_tokens(answer, echo=True, prompt=prompt)
    if bos and not prompt.startswith("<|bos|>"):
        assert placed[0].text == "" and placed[0].offset == 0
        placed = placed[1:]
    assert [(t.text, t.offset) for t in placed][-len(tokens) :] == list(
        zip(tokens, true, strict=True)
    )


# ------------------------------------------------------------------------------- the transport
@st.composite
def damaged_bodies(draw: st.DrawFn) -> bytes:
    """A good answer's bytes, cut, with bytes flipped or inserted (bad UTF-8, deep nesting, a
    huge number), or any bytes at all."""
    body = json.dumps(good_answer(draw(st.booleans()))).encode()
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(body)))
        insert = draw(st.sampled_from([b"\xff", b"\xc3", b"[" * 5000, b"9" * 5000, b"", b'"']))
        end = at + draw(st.integers(0, 4))
        body = body[:at] + insert + body[end:]
    return draw(st.just(body) | st.binary(max_size=200))


@PROFILE
@given(body=damaged_bodies())
def test_any_answer_bytes_score_or_are_a_named_error(body):
    """What the client does with a body: JSON or a TransportError, then scores or a
    ScoringError (never a RecursionError, UnicodeDecodeError or ValueError)."""
    try:
        answer = parse_json(body, "http://127.0.0.1/v1/completions")
    except TransportError as error:
        assert "127.0.0.1" in str(error)
        return
    with contextlib.suppress(ScoringError):
        score(answer)


@pytest.fixture(scope="module")
def fake_server():
    running = FakeServer()
    yield running
    running.close()


@settings(PROFILE, max_examples=min(PROFILE.max_examples, 60))
@given(body=damaged_bodies(), announced=st.sampled_from(["none", "exact", "more", "fewer"]))
def test_any_body_over_http_is_an_answer_or_a_server_error(fake_server, body, announced):
    """The same bodies sent by a server, with a Content-Length that is absent, right, too large
    (a short body) or too small: the client returns JSON or raises a named ServerError."""
    lengths = {"none": None, "exact": len(body), "more": len(body) + 7}
    fake_server.raw = body
    fake_server.length = lengths.get(announced, max(len(body) - 3, 0))
    client = Client(fake_server.url, timeout=5, retries=0, max_bytes=8000)
    try:
        client.post("completions", {"model": "fake", "prompt": "x"})
    except ServerError as error:
        assert str(error).startswith(fake_server.url + "/completions: ")
