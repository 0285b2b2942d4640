"""OpenAI ``/v1/completions`` with ``echo`` and ``logprobs``: build requests, read the echoed
prompt's tokens and find a candidate's tokens in it by character offsets.

Engines tokenise context and candidate together, so the candidate is located by the
``text_offset`` of each echoed token: a target is every token that holds at least one
character of the candidate (a token straddling the boundary counts as the candidate's, see
evaluation/README.md), followed by the EOS token appended to the prompt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from nnd_suites.errors import ScoringError
from nnd_suites.evaluation.backend import Score


@dataclass(frozen=True, slots=True)
class EchoToken:
    text: str
    offset: int
    logprob: float | None


def completion_payload(model: str, prompt: str, *, echo: bool) -> dict[str, Any]:
    """One greedy token (the smallest completion every engine accepts) with log-probabilities."""
    return {
        "model": model,
        "prompt": prompt,
        "max_tokens": 1,
        "temperature": 0,
        "logprobs": 1,
        "echo": echo,
    }


def echoed_tokens(answer: dict[str, Any], *, echo: bool) -> list[EchoToken]:
    """The tokens of a completion answer; with ``echo`` only the prompt's (generated ones, counted
    by ``usage.completion_tokens``, are dropped)."""
    try:
        logprobs = answer["choices"][0]["logprobs"]
        texts, offsets = logprobs["tokens"], logprobs["text_offset"]
        values = logprobs["token_logprobs"]
    except (KeyError, IndexError, TypeError) as error:
        raise ScoringError(
            f"the server's completion has no logprobs.tokens/text_offset/token_logprobs "
            f"({type(error).__name__}: {error}); it must support echo=true with logprobs"
        ) from None
    if not len(texts) == len(offsets) == len(values):
        raise ScoringError("the server's logprobs lists have different lengths")
    tokens = [
        EchoToken(t, int(o), None if v is None else float(v))
        for t, o, v in zip(texts, offsets, values, strict=True)
    ]
    if echo:
        generated = int((answer.get("usage") or {}).get("completion_tokens") or 0)
        tokens = tokens[: len(tokens) - generated] if generated else tokens
    return tokens


def candidate_score(
    tokens: list[EchoToken], boundary: int, end: int, eos_text: str, describe: str
) -> Score:
    """Sum the log-probabilities of the tokens holding characters ``[boundary, end)`` of the
    prompt and of the EOS token that follows them (the prompt's last token)."""
    if not tokens or tokens[-1].text not in ("", eos_text):
        last = tokens[-1] if tokens else None
        raise ScoringError(
            f"{describe}: the echoed prompt does not end with the EOS token {eos_text!r} "
            f"(last token {last}); the server must parse special tokens in prompts"
        )
    targets = [t for t in tokens[:-1] if t.offset < end and t.offset + len(t.text) > boundary]
    targets.append(tokens[-1])
    values = [t.logprob for t in targets]
    if any(v is None or not math.isfinite(v) for v in values):
        raise ScoringError(
            f"{describe}: the server gave no log-probability for a candidate token "
            f"({[t.text for t in targets]} -> {values}); an empty context needs a BOS token"
        )
    return Score(sum(values), len(values))  # type: ignore[arg-type]
