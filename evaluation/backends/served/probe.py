"""Check an engine's prompt log-probabilities before trusting them.

Some engines return misaligned echoes with exit 0: llama-cpp-python 0.3.36 gives, for a model
that adds no BOS, every prompt token the log-probability of the *next* position's distribution.
The probe asks the server for one greedy token after a prompt, then echoes prompt + that token:
the echoed log-probability of the last prompt token must equal the generated one. It also checks
that the echoed tokens reassemble the prompt at their offsets, that the first token has no
log-probability (nothing predicts it) and that an EOS appended to a prompt is echoed and scored.

What the probe measured also identifies the model: its ``fingerprint`` (the echoed tokens and
their log-probabilities rounded to 0.1, hashed) joins the backend's identity, so a model swapped
behind the same URL and id is a new cache scope. Rounding keeps an engine's run-to-run noise
(~1e-3) from changing it in most runs; when it does, the cost is a rescoring, never a wrong score.
Fixed prompts cannot tell every pair of models apart, so before the cache answers, a random
sample of what it would answer is also scored live (:mod:`nnd_suites.evaluation.identity`).
"""

from __future__ import annotations

import hashlib
import json
import math

from nnd_suites.errors import ScoringError
from nnd_suites.evaluation.backends.served.client import Client
from nnd_suites.evaluation.backends.served.protocol import (
    EchoToken,
    check_answer_model,
    completion_payload,
    echoed_tokens,
)

#: Decimals of the probe's log-probabilities kept in its fingerprint.
FINGERPRINT_DECIMALS = 1

PROMPTS = (
    "The committee met on Tuesday to discuss the budget, and after a long debate they",
    "Question: What is the capital of France?\nAnswer: The capital of France is",
    "Once upon a time, in a small village by the sea, there lived an old",
)


def probe_engine(client: Client, model: str, eos_text: str, tolerance: float = 1e-2) -> dict:
    """Raise :class:`ScoringError` saying what is wrong unless the engine passes; return what the
    probe measured (recorded in the report)."""
    checked = None
    for prompt in PROMPTS:
        checked = _check_prompt(client, model, prompt, tolerance)
        if checked is not None:
            break
    if checked is None:
        raise _refuse(
            "no probe prompt gave a generated token that stays one token when echoed back; "
            "the engine's generated and echoed tokenisations disagree"
        )
    _check_eos(client, model, PROMPTS[0], eos_text)
    return checked


def _complete(client: Client, model: str, prompt: str, echo: bool) -> object:
    answer = client.post("completions", completion_payload(model, prompt, echo=echo))
    check_answer_model(answer, model)
    return answer


def _check_prompt(client: Client, model: str, prompt: str, tolerance: float) -> dict | None:
    generated = echoed_tokens(
        _complete(client, model, prompt, echo=False),
        echo=False,
        prompt="",  # the answer holds the generated token only
    )
    if not generated or not generated[0].text or generated[0].logprob is None:
        return None  # the greedy token was EOS or empty: try another prompt
    token = generated[0]
    text = prompt + token.text
    answer = _complete(client, model, text, echo=True)
    # Generated tokens are told apart by offset, not by usage counts: a shifted echo can also be
    # one entry short, and what it holds is what the check must see.
    echoed = [t for t in echoed_tokens(answer, echo=False, prompt=text) if t.offset < len(text)]
    if not echoed:
        raise _refuse(
            "asked to echo the prompt with log-probabilities, the server returned none of the "
            "prompt's tokens: it ignores `echo` (llama.cpp's own llama-server does); serve the "
            "model with an engine that echoes prompt log-probabilities (vLLM, SGLang, "
            "llama-cpp-python)"
        )
    _check_reassembly(echoed, text)
    if all(t.logprob is None for t in echoed):
        raise _refuse(
            "the server echoes the prompt's tokens but gives none of them a log-probability, "
            "so no candidate can be scored"
        )
    first = echoed[0]  # BOS when the engine echoes it, else the first text token
    if first.logprob is not None:
        raise _refuse(
            f"the first prompt token {first.text!r} has log-probability {first.logprob:.4f}, but "
            "nothing precedes it to predict it: the echoed log-probabilities are shifted"
        )
    last = [t for t in echoed if t.offset == len(prompt)]
    if len(last) != 1 or last[0].text != token.text:
        return None  # the generated token merged with the prompt when re-tokenised
    echoed_value = last[0].logprob
    if echoed_value is None or not math.isclose(echoed_value, token.logprob, abs_tol=tolerance):
        raise _refuse(
            f"after the prompt {prompt!r} the server generated {token.text!r} with "
            f"log-probability {token.logprob:.4f}, but echoing prompt + token gives that token "
            f"{echoed_value if echoed_value is None else round(echoed_value, 4)} (tolerance "
            f"{tolerance:g}): the echoed prompt log-probabilities are misaligned (llama.cpp "
            "servers shift them by one position for models that add no BOS token)"
        )
    return {
        "prompt_tokens": len(echoed),
        "difference": abs(echoed_value - token.logprob),
        "fingerprint": _fingerprint(echoed),
    }


def _fingerprint(echoed: list[EchoToken]) -> str:
    rounded = [
        (t.text, None if t.logprob is None else round(t.logprob, FINGERPRINT_DECIMALS) + 0.0)
        for t in echoed
    ]
    return "sha256:" + hashlib.sha256(json.dumps(rounded).encode()).hexdigest()


def _check_reassembly(echoed: list[EchoToken], text: str) -> None:
    position = 0
    for token in echoed:
        if token.offset == 0 and position == 0 and not text.startswith(token.text):
            continue  # a leading special token (BOS) echoed with its own text
        if token.offset != position or text[position : position + len(token.text)] != token.text:
            raise _refuse(
                f"the echoed tokens do not reassemble the prompt: token {token.text!r} at offset "
                f"{token.offset}, expected {text[position : position + 20]!r} at offset {position}"
            )
        position += len(token.text)
    if position != len(text):
        raise _refuse(f"the echoed tokens cover {position} of the prompt's {len(text)} characters")


def _check_eos(client: Client, model: str, prompt: str, eos_text: str) -> None:
    text = prompt + eos_text
    echoed = echoed_tokens(_complete(client, model, text, echo=True), echo=True, prompt=text)
    last = echoed[-1] if echoed else None
    if (
        last is None
        or last.offset != len(prompt)
        or last.text not in ("", eos_text)
        or last.logprob is None
    ):
        raise _refuse(
            f"the EOS token {eos_text!r} appended to a prompt is not echoed with a "
            f"log-probability (last echoed token: {last}); scores end with EOS, so this engine "
            "cannot score them (llama.cpp drops a token equal to the BOS token from echoes)"
        )


def _refuse(what: str) -> ScoringError:
    return ScoringError(
        f"the served engine failed its consistency probe: {what}. Its scores "
        "would be wrong, so it is refused; use another engine or model build"
    )
