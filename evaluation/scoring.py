"""Scoring modes: which tokens a model sees and which it is scored on, for each request.

Both modes score ``targets = tokens(candidate) + [eos]`` and average over those N+1 targets, so an
empty candidate has a well-defined score (the log-probability of ending right away).

``reference`` reproduces the paper's code (salesforce/nnd_evaluation, ``GeneratorHF``) exactly:

- causal: input ``tokens(context) + [start] + tokens(candidate)``, predicting
  ``tokens(candidate) + [eos]``; the context is encoded with the tokenizer's special tokens, the
  candidate without, and ``start`` is the tokenizer's BOS id (0 when it has none);
- seq2seq: encoder ``tokens(context)`` (with special tokens), decoder
  ``[start] + tokens(candidate)``.

``default`` is ours, built around the known scoring traps:

- The context is tokenised once (with the tokenizer's leading special tokens such as Llama's BOS,
  without trailing ones) and the candidate on its own, so no token ever straddles the boundary.
- Leading space: trailing spaces and tabs of the rendered context are dropped, and for tokenizers
  whose tokens carry their leading space (byte-level BPE: GPT-2, RoBERTa, Llama 3) the candidate
  is encoded as ``" " + candidate``, as it would appear in running text, unless the context is
  empty or ends with a line break or the candidate already starts with whitespace. Tokenizers that
  mark word starts themselves (SentencePiece) get the candidate as is.
- Causal models predict the first candidate token from the last context token: nothing is
  inserted between context and candidate. An empty context becomes ``[bos]`` (``[eos]`` if the
  tokenizer has no BOS), so the first candidate token is always scored.
- Seq2seq models decode from the model's own ``decoder_start_token_id`` followed by whatever the
  tokenizer puts in front of a target (BART's ``<s>``), conditioned on but not scored.
- EOS is scored (as in the reference): it says the candidate is complete, and it is what makes
  the empty candidate scorable.

Truncation (both modes): when context plus candidate exceed the model's window, context tokens are
cut from the left (leading special tokens kept) and the number cut is reported; the candidate is
never cut, and a candidate that cannot fit with at least the minimum context is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nnd_suites.errors import NNDError

if TYPE_CHECKING:
    from nnd_suites.evaluation.backend import ScoreRequest

SEPARATOR = " "
#: SentencePiece marks a word start with U+2581; a bare word that already carries it needs no space.
WORD_START_MARKERS = ("\u2581",)


@dataclass(frozen=True, slots=True)
class TokenizerTraits:
    """What the layouts need to know about a tokenizer, measured once on probe texts."""

    leading: tuple[int, ...]  # special tokens the tokenizer puts before any text (BOS, <s>)
    trailing: tuple[int, ...]  # special tokens it puts after any text (</s>)
    bos: int | None
    eos: int | None
    space_prefix: bool  # a word after a space is one token that includes the space


def tokenizer_traits(tokenizer) -> TokenizerTraits:
    """Measure a Hugging Face tokenizer's special-token and leading-space conventions."""
    bare = tokenizer("the", add_special_tokens=False)["input_ids"]
    full = tokenizer("the", add_special_tokens=True)["input_ids"]
    start = next(
        (i for i in range(len(full) - len(bare) + 1) if full[i : i + len(bare)] == bare), 0
    )
    spaced = tokenizer(" the", add_special_tokens=False)["input_ids"]
    return TokenizerTraits(
        leading=tuple(full[:start]),
        trailing=tuple(full[start + len(bare) :]),
        bos=tokenizer.bos_token_id,
        eos=tokenizer.eos_token_id,
        space_prefix=_space_is_encoded(tokenizer, bare, spaced),
    )


def _space_is_encoded(tokenizer, bare: list[int], spaced: list[int]) -> bool:
    """Whether a leading space changes the tokens (byte-level BPE) rather than being implied by
    the tokenizer's own word-start marker (SentencePiece's dummy prefix)."""
    if spaced == bare:
        return False
    if spaced[1:] == bare and bare:
        first = str(tokenizer.convert_ids_to_tokens(bare[0]))
        return not first.startswith(WORD_START_MARKERS)
    return True


@dataclass(frozen=True, slots=True)
class Layout:
    """The tokens of one request.

    Causal models read ``prefix + inputs``; seq2seq models read ``prefix`` on the encoder and
    ``inputs`` on the decoder. ``targets[j]`` is predicted by the output at position
    ``first + j`` of the scored sequence (``prefix + inputs`` for causal models, ``inputs`` for
    seq2seq ones). Requests with the same ``prefix`` share its encoding.
    """

    prefix: tuple[int, ...]
    inputs: tuple[int, ...]
    targets: tuple[int, ...]
    first: int
    truncated: int = 0


def boundary_texts(
    context: str, candidate: str, traits: TokenizerTraits, mode: str, causal: bool
) -> tuple[str, str]:
    """The context and candidate texts as they are tokenised (the leading-space rule)."""
    if mode == "reference" or not causal:
        return context, candidate
    context = context.rstrip(" \t")
    if (
        traits.space_prefix
        and context
        and candidate
        and not context.endswith(("\n", "\r"))
        and not candidate[0].isspace()
    ):
        candidate = SEPARATOR + candidate
    return context, candidate


def context_tokens(
    encoded: Sequence[int], traits: TokenizerTraits, mode: str, causal: bool
) -> tuple[tuple[int, ...], int]:
    """The context's tokens and how many of them at the start must survive truncation."""
    ids = tuple(encoded)
    head = _count_prefix(ids, traits.leading)
    if mode == "default" and causal:
        tail = _count_suffix(ids, traits.trailing)
        ids = ids[: len(ids) - tail] if tail else ids
        if not ids:  # the first candidate token must be predicted from something
            start = traits.bos if traits.bos is not None else traits.eos
            ids, head = (start,), 1
    return ids, head


def causal_layout(
    context: tuple[int, ...],
    head: int,
    candidate: Sequence[int],
    traits: TokenizerTraits,
    mode: str,
    window: int | None,
    describe: str = "",
) -> Layout:
    eos = _require_eos(traits)
    cand = tuple(candidate)
    if mode == "reference":
        start = traits.bos if traits.bos is not None else 0
        inputs, minimum = (start, *cand), head
    else:
        inputs, minimum = cand, max(head, 1)
    prefix, cut = _fit(context, head, window, len(inputs), minimum, describe)
    first = len(prefix) if mode == "reference" else len(prefix) - 1
    return Layout(prefix, inputs, (*cand, eos), first, cut)


def encode_distinct(tokenizer: Any, texts: Sequence[str], special: bool) -> dict[str, list[int]]:
    """Each distinct text's token ids, in one batched call of ``tokenizer`` (a transformers
    tokenizer, or one called the same way: llama_cpp_files.GGUFTokenizer)."""
    distinct = list(dict.fromkeys(texts))
    if not distinct:
        return {}
    # verbose=False: long contexts are expected here, they are cut to the window later
    ids = tokenizer(distinct, add_special_tokens=special, verbose=False)["input_ids"]
    return dict(zip(distinct, ids, strict=True))


def causal_layouts(
    requests: Sequence[ScoreRequest],
    tokenizer: Any,
    traits: TokenizerTraits,
    mode: str,
    window: int | None,
) -> list[Layout | str]:
    """Every request's causal layout, each distinct text tokenised once; for a candidate that
    cannot fit the window, why (a string: its test is skipped and counted, the run goes on)."""
    texts = [boundary_texts(r.context, r.candidate, traits, mode, causal=True) for r in requests]
    contexts = encode_distinct(tokenizer, [context for context, _ in texts], special=True)
    candidates = encode_distinct(tokenizer, [candidate for _, candidate in texts], special=False)
    prepared: dict[str, tuple[tuple[int, ...], int]] = {}
    layouts: list[Layout | str] = []
    for (context, candidate), request in zip(texts, requests, strict=True):
        if context not in prepared:
            prepared[context] = context_tokens(contexts[context], traits, mode, causal=True)
        ids, head = prepared[context]
        try:
            layout: Layout | str = causal_layout(
                ids,
                head,
                candidates[candidate],
                traits,
                mode,
                window,
                describe=f"candidate {request.candidate[:60]!r}",
            )
        except CandidateTooLong as exc:
            layout = str(exc)
        layouts.append(layout)
    return layouts


def seq2seq_layout(
    encoder: tuple[int, ...],
    candidate: Sequence[int],
    traits: TokenizerTraits,
    mode: str,
    decoder_start: int,
    decoder_window: int | None,
    describe: str = "",
) -> Layout:
    eos = _require_eos(traits)
    cand = tuple(candidate)
    if mode == "reference":
        head: tuple[int, ...] = (traits.bos if traits.bos is not None else 0,)
    else:
        head = (decoder_start, *traits.leading)
    inputs = (*head, *cand)
    if decoder_window is not None and len(inputs) > decoder_window:
        raise _too_long(len(inputs), decoder_window, 0, describe)
    return Layout(encoder, inputs, (*cand, eos), len(head) - 1)


def fit_encoder(
    ids: tuple[int, ...], traits: TokenizerTraits, window: int | None
) -> tuple[tuple[int, ...], int]:
    """Cut an encoder input from the left to ``window`` tokens, keeping its special tokens."""
    if window is None or len(ids) <= window:
        return ids, 0
    head = _count_prefix(ids, traits.leading)
    tail = _count_suffix(ids[head:], traits.trailing)
    keep = window - head - tail
    if keep < 0:
        raise NNDError(
            f"the encoder window ({window} tokens) cannot hold the tokenizer's own "
            "special tokens; this model cannot be scored"
        )
    body = ids[head : len(ids) - tail]
    kept = body[len(body) - keep :] if keep else ()
    return (*ids[:head], *kept, *ids[len(ids) - tail :]), len(body) - len(kept)


def _fit(
    context: tuple[int, ...], head: int, window: int | None, used: int, minimum: int, describe: str
) -> tuple[tuple[int, ...], int]:
    if window is None or len(context) + used <= window:
        return context, 0
    room = window - used
    if room < minimum:
        raise _too_long(used, window, minimum, describe)
    keep = room - head
    kept = context[len(context) - keep :] if keep > 0 else ()
    prefix = (*context[:head], *kept)
    return prefix, len(context) - len(prefix)


class CandidateTooLong(NNDError):
    """A candidate (with the tokens it needs around it) does not fit the model's window."""


def _too_long(used: int, window: int, minimum: int, describe: str) -> NNDError:
    what = f" ({describe})" if describe else ""
    return CandidateTooLong(
        f"a candidate needs {used} tokens plus {minimum} context token(s), more than "
        f"the model's window of {window} tokens{what}; the candidate is never cut: "
        "use a model with a longer context window"
    )


def _require_eos(traits: TokenizerTraits) -> int:
    if traits.eos is None:
        raise NNDError(
            "the tokenizer has no EOS token, which both scoring modes score after the "
            "candidate; set tokenizer.eos_token or use another model"
        )
    return traits.eos


def _count_prefix(ids: tuple[int, ...], special: tuple[int, ...]) -> int:
    return len(special) if special and ids[: len(special)] == special else 0


def _count_suffix(ids: tuple[int, ...], special: tuple[int, ...]) -> int:
    return (
        len(special)
        if special and len(ids) >= len(special) and ids[len(ids) - len(special) :] == special
        else 0
    )
