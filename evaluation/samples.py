"""What the model saw, test by test (``--log-samples``, lm-evaluation-harness's ``--log_samples``).

A report folder written with samples holds ``samples/SUITE.jsonl``: one JSON line per test, in
suite order, joinable 1:1 with ``outcomes/SUITE.parquet`` on ``pair_id``. A line holds the
rendered context exactly as the backend received it, each candidate exactly as sent, each side's
score (sum of target log-probabilities, number of targets: the candidate's tokens plus EOS, the
scorer's value) and the verdict. Every other score the run's scorers read is there too, so the
verdict can be recomputed from the line alone: each side's ``neutral`` score (after
``neutral_context``, the template with empty fields: ``pmi``) and ``reference`` score (under the
report's ``reference_model``: ``ratio``). Log-probabilities are natural logs (nats).
When the backend tokenises in process (Hugging Face, llama.cpp)
a line also holds ``tokens``: the context and each candidate's scored targets decoded back from
the very tokens the model read and was scored on (leading space, BOS and the EOS token shown as
the model's own texts, a context cut to fit the window as cut).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.backend import Backend, Score, ScoreRequest
from nnd_suites.evaluation.scorers.base import Scorer
from nnd_suites.evaluation.templates import neutral_context
from nnd_suites.infra.validation import StrictModel
from nnd_suites.statistics.outcomes import Outcome, TestOutcome

if TYPE_CHECKING:
    from nnd_suites.evaluation.prepared import Plan

SAMPLES_FOLDER = "samples"
#: A score lookup: (rendered context, candidate) -> its Score.
Lookup = Callable[[str, str], Score]


class OtherScore(StrictModel):
    """Another score of the candidate that a scorer of the run read beside the model's after
    the context: after the neutral context (``pmi``), or under the reference model (``ratio``)."""

    logprob_sum: float | None = Field(
        description="sum of the natural-log probabilities of its targets, in nats (null: skipped)"
    )
    n_targets: int = Field(description="targets scored: the candidate's tokens + EOS")
    truncated_tokens: int = Field(description="context tokens cut from the left to fit")
    skipped: str = Field("", description="why the request could not be scored ('' if it was)")


class ScoredSide(StrictModel):
    """One candidate of a test as it was scored."""

    text: str = Field(description="the candidate exactly as sent to the backend")
    logprob_sum: float | None = Field(
        description="sum of the natural-log probabilities of its targets after the context, in "
        "nats (null: skipped)"
    )
    n_targets: int = Field(description="targets scored: the candidate's tokens + EOS")
    score: float | None = Field(
        description="the run's scorer's value, compared with the other side's (mean: nats per "
        "target; sum, pmi, ratio: nats; per_char, per_byte: nats per character, per byte; "
        "null: skipped)"
    )
    truncated_tokens: int = Field(description="context tokens cut from the left to fit")
    skipped: str = Field("", description="why the request could not be scored ('' if it was)")
    neutral: OtherScore | None = Field(
        None,
        description="its score after the sample's neutral_context, read by pmi: score = "
        "logprob_sum - neutral.logprob_sum (null: no scorer of the run reads it)",
    )
    reference: OtherScore | None = Field(
        None,
        description="its score under the report's reference_model, read by ratio: score = "
        "logprob_sum - reference.logprob_sum (normalise=mean: each one divided by its own "
        "n_targets) (null: no scorer of the run reads it)",
    )


class ScoredTokens(StrictModel):
    """The tokens of a test decoded back to text: what the model read and was scored on."""

    context: str = Field(
        description="the context tokens the model read (the encoder's input for seq2seq), "
        "special tokens included, after any cut to fit the window"
    )
    high: str = Field(description="the high candidate's targets: its tokens and EOS")
    low: str = Field(description="the low candidate's targets: its tokens and EOS")


class Sample(StrictModel):
    """One line of ``samples/SUITE.jsonl``."""

    suite: str
    pair_id: str = Field(description="the test's id, as in outcomes/SUITE.parquet")
    group_id: str
    category: str
    label: str
    template: str = Field(description="the template that rendered the context (its name)")
    context: str = Field(description="the rendered context exactly as the backend received it")
    neutral_context: str | None = Field(
        None,
        description="the template with every field empty, as the backend received it, after "
        "which each side's neutral score was taken (null: no scorer of the run reads it)",
    )
    high: ScoredSide
    low: ScoredSide
    scorer: str = Field(description="the scorer whose values are the sides' scores (its spec)")
    outcome: Outcome
    tokens: ScoredTokens | None = Field(
        None, description="the tokens decoded (null: the backend does not tokenise in process)"
    )


def plan_samples(
    plan: Plan,
    outcomes: Sequence[TestOutcome],
    lookup: Lookup,
    backend: Backend,
    scorers: Sequence[Scorer],
    reference: Lookup | None = None,
) -> list[Sample]:
    """The samples of a prepared suite's tests as ``backend`` scored them (``lookup`` gives a
    request's score), compared by ``scorers`` (the first one's values are the sides' scores);
    ``reference`` looks up the reference model's scores. Every score a scorer reads is logged
    (the neutral context's, the reference model's), so each verdict can be recomputed from its
    line; the tokens are decoded when the backend tokenises in process."""
    pairs = plan.suite.pairs
    neutrals: Sequence[str | None] = [None] * len(pairs)
    if any(one.needs_neutral for one in scorers):
        neutrals = [neutral_context(plan.template, pair.context) for pair in pairs]
    if not any(one.needs_reference for one in scorers):
        reference = None
    tokens = decoded_tokens(backend, plan.requests())
    samples = []
    for context, empty, outcome, pair in zip(plan.contexts, neutrals, outcomes, pairs, strict=True):
        pair_texts = (pair.high.text, pair.low.text)
        sides = [
            ScoredSide(
                text=text,
                score=value if math.isfinite(value) else None,
                **_logged(lookup(context, text)),
                neutral=_other(None if empty is None else lookup(empty, text)),
                reference=_other(None if reference is None else reference(context, text)),
            )
            for text, value in zip(pair_texts, (outcome.ll_high, outcome.ll_low), strict=True)
        ]
        decoded = None
        if tokens is not None:
            (read, high), (_, low) = (tokens[(context, text)] for text in pair_texts)
            decoded = ScoredTokens(context=read, high=high, low=low)
        samples.append(
            Sample(
                suite=plan.name,
                pair_id=outcome.pair_id,
                group_id=outcome.group_id,
                category=outcome.category,
                label=outcome.label,
                template=plan.template_name,
                context=context,
                neutral_context=empty,
                high=sides[0],
                low=sides[1],
                scorer=scorers[0].spec,
                outcome=outcome.outcome,
                tokens=decoded,
            )
        )
    return samples


def _other(score: Score | None) -> OtherScore | None:
    return None if score is None else OtherScore(**_logged(score))


def _logged(score: Score) -> dict[str, Any]:
    """A score's logged fields (a skipped one has no sum: null, never a NaN JSON refuses)."""
    return {
        "logprob_sum": None if score.skipped else score.logprob_sum,
        "n_targets": score.n_targets,
        "truncated_tokens": score.truncated_tokens,
        "skipped": score.skipped,
    }


def decoded_tokens(
    backend: Backend, requests: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], tuple[str, str]] | None:
    """(context, candidate) -> (context tokens read, targets scored), decoded by the backend's
    own tokenizer from the layouts it scores; None when the backend does not tokenise in
    process (a served engine, a wrapper) or cannot decode."""
    layouts = getattr(backend, "layouts", None)
    decode = _decoder(getattr(backend, "tokenizer", None)) if layouts is not None else None
    if layouts is None or decode is None:
        return None
    wanted = [ScoreRequest(context, candidate) for context, candidate in requests]
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for request, layout in zip(wanted, layouts(wanted), strict=True):
        if isinstance(layout, str):  # not scored (too long): the texts say what was asked
            found[(request.context, request.candidate)] = (request.context, request.candidate)
            continue
        found[(request.context, request.candidate)] = (
            decode(layout.prefix),
            decode(layout.targets),
        )
    return found


def _decoder(tokenizer: Any) -> Callable[[Sequence[int]], str] | None:
    """Token ids -> text with special tokens shown: a transformers tokenizer's ``decode``, or a
    GGUF tokenizer's pieces joined."""
    if tokenizer is None:
        return None
    if callable(getattr(tokenizer, "decode", None)):
        return lambda ids: tokenizer.decode(list(ids), skip_special_tokens=False)
    if callable(getattr(tokenizer, "piece", None)):
        return lambda ids: "".join(tokenizer.piece(i) for i in ids)
    return None


def samples_file(suite: str) -> Path:
    """Where a report folder keeps a suite's samples (relative to the folder)."""
    return Path(SAMPLES_FOLDER) / f"{suite}.jsonl"


def write_samples(path: Path, samples: Sequence[Sample]) -> None:
    """One JSON line per sample, into a report folder not yet swapped in (a reader sees all of
    them or none: the folder is swapped in whole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for sample in samples:
            handle.write(sample.model_dump_json() + "\n")


def read_samples(path: str | Path) -> list[Sample]:
    """The samples of a ``samples/SUITE.jsonl`` file; a bad line is an error naming it."""
    path = Path(path)
    samples = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                samples.append(Sample.model_validate_json(line))
            except ValueError as exc:  # pydantic's ValidationError is a ValueError
                first = str(exc).splitlines()[0]
                raise NNDError(
                    f"{path}, line {number}: not a sample ({first}); write the samples again "
                    "with `nnd-suites evaluate --log-samples`"
                ) from exc
    return samples
