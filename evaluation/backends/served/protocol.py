"""OpenAI ``/v1/completions`` with ``echo`` and ``logprobs``: build requests, read the echoed
prompt's tokens and find a candidate's tokens in it by character offsets.

Engines tokenise context and candidate together, so the candidate is located by the character
offset of each echoed token: a target is every token that holds at least one character of the
candidate (a token straddling the boundary counts as the candidate's, see evaluation/README.md),
followed by the EOS token appended to the prompt.

Offsets are taken from the token texts wherever these reassemble the prompt, not from the
server's ``text_offset``: servers disagree on it. SGLang sends -1 for every token, and vLLM counts
the text of a leading BOS token (``<|begin_of_text|>``) into the offsets of every token after it,
so both would place the candidate wrongly. Only where the texts do not reassemble the prompt (a
character split over byte-level tokens, decoded one token at a time) are the server's offsets
used, and a server that has none is a named error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from nnd_suites.errors import ScoringError
from nnd_suites.evaluation.backend import ABOVE_ZERO, Score


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


def echoed_tokens(answer: Any, *, echo: bool, prompt: str) -> list[EchoToken]:
    """The tokens of a completion answer for ``prompt``, at their character offsets in it; with
    ``echo`` only the prompt's (generated ones, counted by ``usage.completion_tokens``, are
    dropped). Whatever the server sent, the result is tokens or a :class:`ScoringError`."""
    try:
        texts, offsets, values, generated = _read_logprobs(answer)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
        raise ScoringError(
            "the server's answer is not a completion with logprobs.tokens and "
            f"logprobs.token_logprobs ({type(error).__name__}: {error}); it must support "
            "echo=true with logprobs"
        ) from None
    if not len(texts) == len(offsets) == len(values):
        raise ScoringError("the server's logprobs lists have different lengths")
    _check_values(texts, values)
    if echo:
        if generated > len(texts):
            raise ScoringError(
                f"the server counts {generated} generated tokens in an answer of {len(texts)}"
            )
        kept = len(texts) - generated
        texts, offsets, values = texts[:kept], offsets[:kept], values[:kept]
    unpredicted = bool(values) and values[0] is None  # as a BOS token is
    texts, placed = _place(texts, offsets, prompt, unpredicted)
    return [EchoToken(t, o, v) for t, o, v in zip(texts, placed, values, strict=True)]


def _read_logprobs(answer: Any) -> tuple[list[str], list[int], list[float | None], int]:
    """Texts, offsets (-1: none), values and generated count, type-checked (no coercion: a
    token that is not a string, or an offset that is not an integer, is an error)."""
    logprobs = answer["choices"][0]["logprobs"]
    texts, values = list(logprobs["tokens"]), list(logprobs["token_logprobs"])
    if not all(isinstance(t, str) for t in texts):
        raise TypeError("a token is not a string")
    if not all(v is None or _is_number(v) for v in values):
        raise TypeError("a token log-probability is neither a number nor null")
    raw = logprobs.get("text_offset")
    offsets = [-1] * len(texts) if raw is None else list(raw)
    if not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets):
        raise TypeError("a text offset is not an integer")
    usage = answer.get("usage") or {}
    generated = usage.get("completion_tokens") or 0
    if not isinstance(generated, int) or isinstance(generated, bool) or generated < 0:
        raise ValueError(f"usage.completion_tokens is {generated!r}")
    return texts, offsets, [None if v is None else float(v) for v in values], generated


def _check_values(texts: list[str], values: list[float | None]) -> None:
    """Every value must be a finite log-probability (<= 0), in every answer: a server that
    sends probabilities, or starts to after the probe, would give pass rates that mean nothing."""
    for text, value in zip(texts, values, strict=True):
        if value is not None and not (math.isfinite(value) and value <= ABOVE_ZERO):
            raise ScoringError(
                f"the server gave token {text!r} the value {value!r}, which is not a finite "
                "log-probability (<= 0): it sends probabilities or other numbers, so its answers "
                "cannot be scored"
            )


def check_answer_model(answer: Any, model: str) -> None:
    """An answer that names its model must name the one asked for (a router falling back to
    another model would otherwise have its scores cached under the requested id)."""
    named = answer.get("model") if isinstance(answer, dict) else None
    if named is not None and named != model:
        raise ScoringError(
            f"asked for model {model!r}, the server answered with model {named!r}: refusing "
            "scores of another model (a router's fallback?); check the server's model ids"
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _place(
    texts: list[str], offsets: list[int], prompt: str, unpredicted: bool
) -> tuple[list[str], list[int]]:
    """Each token's text and offset in ``prompt``: from the texts where they reassemble it, else
    the server's offsets. A leading token without a log-probability whose text is not the
    prompt's (or is, when the prompt itself starts with BOS and the server adds one more) is a
    special token such as BOS: it becomes an empty token at 0. Tokens past the prompt's end
    (generated ones) follow it."""
    reached = 0  # how far the texts reassemble the prompt, for an error message
    for special_first in (False, True) if unpredicted else (False,):
        placed, stop = _align(texts, prompt, special_first)
        if placed is not None:
            return (["", *texts[1:]] if special_first else texts), placed
        reached = max(reached, stop)
    return _server_offsets(texts, offsets, prompt, unpredicted, reached)


def _align(texts: list[str], prompt: str, special_first: bool) -> tuple[list[int] | None, int]:
    """Offsets of ``texts`` laid end to end over ``prompt`` (None where one does not match),
    and the character where they stopped matching."""
    placed, position = [], 0
    for i, text in enumerate(texts):
        if i == 0 and special_first:
            placed.append(0)
            continue
        if position < len(prompt) and not prompt.startswith(text, position):
            return None, position
        placed.append(position)
        position += len(text)
    return placed, position


def _server_offsets(
    texts: list[str], offsets: list[int], prompt: str, unpredicted: bool, position: int
) -> tuple[list[str], list[int]]:
    """The server's offsets, trusted only where they agree with every token text that decoded
    cleanly (vLLM's offsets add up the texts, so a lossy text shifts all that follow);
    ``position`` is where the texts stopped reassembling the prompt."""
    where = f"from character {position} on (the prompt reads {prompt[position : position + 20]!r})"
    if any(o < 0 for o in offsets):
        raise ScoringError(
            f"the server gives no token offsets (text_offset -1, as SGLang sends) and its token "
            f"texts do not reassemble the prompt {where}: the candidate cannot be located; serve "
            "the model with an engine that reports offsets (vLLM) or a tokenizer whose tokens "
            "decode one at a time (byte-level BPE)"
        )
    texts = list(texts)
    if unpredicted and texts and prompt[offsets[0] : offsets[0] + len(texts[0])] != texts[0]:
        texts[0] = ""  # BOS echoed with its own text: it holds no prompt character
    end = 0  # where the last cleanly decoded token ended: no token may start before it
    lossy_end = 0  # a lossy token holds at least its first character: no clean token there
    for text, offset in zip(texts, offsets, strict=True):
        clean = text and "\ufffd" not in text and offset < len(prompt)
        if clean and prompt[offset : offset + len(text)] != text:
            raise ScoringError(
                f"the token texts do not reassemble the prompt {where}, and the server's offsets "
                f"disagree with them (token {text!r} at offset {offset}, where the prompt reads "
                f"{prompt[offset : offset + len(text)]!r}): the candidate cannot be located"
            )
        earliest = max(end, lossy_end) if clean else end
        if offset < earliest:  # a token sent twice, or out of order, would be summed twice
            raise ScoringError(
                f"the server's echoed token {text!r} at offset {offset} overlaps the token "
                f"before it, which ends at {earliest}: its tokens repeat or are out of order, so "
                "the candidate's log-probabilities cannot be summed"
            )
        end = offset + len(text) if clean else end
        lossy_end = offset + 1 if text and not clean else lossy_end
    return _lost_characters(texts, offsets, prompt), offsets


def _lost_characters(texts: list[str], offsets: list[int], prompt: str) -> list[str]:
    """llama-cpp-python decodes each token alone, dropping bytes that are not whole UTF-8: the
    tokens of a character split over byte-level tokens come back empty, all at its offset. The
    last of them gets the characters up to the next token's offset when these are all
    non-ASCII (the only ones such a decode loses), so that the character is held by a token."""
    texts = list(texts)
    for i in range(len(texts) - 1):
        lost = prompt[offsets[i] : offsets[i + 1]]
        if not texts[i] and lost and all(ord(c) > 127 for c in lost):
            texts[i] = lost
    return texts


def candidate_score(
    tokens: list[EchoToken], boundary: int, end: int, eos_text: str, describe: str
) -> Score:
    """Sum the log-probabilities of the tokens holding characters ``[boundary, end)`` of the
    prompt and of the EOS token that follows them (the prompt's last token)."""
    if not tokens or tokens[-1].text not in ("", eos_text) or tokens[-1].offset != end:
        last = tokens[-1] if tokens else None
        raise ScoringError(
            f"{describe}: the echoed prompt does not end with the EOS token {eos_text!r} at "
            f"character {end} (last token {last}); the server must parse special tokens in "
            "prompts, and count the tokens it generated (usage.completion_tokens)"
        )
    # an empty token inside the candidate is one of its bytes (see _lost_characters)
    targets = [
        t
        for t in tokens[:-1]
        if t.offset < end and (t.offset >= boundary or t.offset + len(t.text) > boundary)
    ]
    _check_covered(targets, boundary, end, describe)
    targets.append(tokens[-1])
    values = [t.logprob for t in targets]
    if any(v is None or not math.isfinite(v) for v in values):
        raise ScoringError(
            f"{describe}: the server gave no log-probability for a candidate token "
            f"({[t.text for t in targets]} -> {values}); an empty context needs a BOS token"
        )
    total = sum(values)  # type: ignore[arg-type]
    if not math.isfinite(total):  # each value finite, too large to add up
        raise ScoringError(
            f"{describe}: the server's log-probabilities of the candidate's tokens add up to "
            f"{total} ({values[:3]}...): no model gives such values; check the server"
        )
    return Score(total, len(values))


def _check_covered(targets: list[EchoToken], boundary: int, end: int, describe: str) -> None:
    """Every character of the candidate must be in a target token: a gap means the server
    dropped a token (llama.cpp drops tokens equal to BOS), and summing the rest would score a
    different candidate."""
    covered = boundary
    for token in sorted(targets, key=lambda t: t.offset):
        if token.offset > covered:
            break
        covered = max(covered, token.offset + len(token.text))
    if covered < end:
        raise ScoringError(
            f"{describe}: no echoed token holds character {covered} of the prompt, inside the "
            f"candidate (characters {boundary}-{end - 1}): the server left a token out or decoded "
            "it lossily, so the candidate cannot be scored whole"
        )
