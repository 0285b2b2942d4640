"""Content identity: what a run scored is named by its content, never by where it was found.

Three things decide a run's figures besides the scoring settings, and each is identified here
from what it is:

- a **suite** by the content hash of what it holds when it is scored (pairs, candidates,
  manifest): :meth:`nnd_suites.suite.Suite.resealed`, which
  :func:`nnd_suites.resolve.resolve_suites` calls on every Suite object, so an edit in memory is
  another suite (the suite layer holds it: transformations link their parent through it too);
- a **model** (the scored one and the ``ratio`` scorer's reference) by :func:`content_identity`:
  its backend's identity without the path or id it was loaded from whenever another field names
  its files by their content (a folder's file hashes, a Hub commit, a GGUF file's sha256). The
  score cache's scope and a report's ``reference_identity`` both come from it, so ``./models/x``
  and ``models/x`` are one model and other weights at the same path are another;
- a **served engine**, whose identity is only what its server says (URL, id, the probe's
  answers to fixed prompts), by what it answers now: :func:`check_cached_scores` re-scores a
  random sample of the requests the cache is about to answer and refuses the cache when the
  live engine disagrees.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping

from nnd_suites.errors import CacheMismatchError
from nnd_suites.evaluation.backend import Backend, Score, ScoreRequest

#: The identity field that says where a model was found (a path as typed, a Hub id).
LOCATION = "model"
#: Identity fields whose values name a model's files by their content: a local folder's file
#: hashes or a Hub commit (``revision``), a GGUF file's sha256 (``sha256``).
CONTENT_FIELDS = {
    "revision": re.compile(r"sha256:[0-9a-f]{64}|[0-9a-f]{40}"),
    "sha256": re.compile(r"[0-9a-f]{64}"),
}

#: The report field (a backend's ``describe``, not its identity) that names a local folder's
#: weight files alone by content: the same weights beside another README or marker share it.
WEIGHT_FILES = "weight_files"
#: The fields of a report's ``backend`` that name the model's files by content.
MODEL_CONTENT_FIELDS = {**CONTENT_FIELDS, WEIGHT_FILES: re.compile(r"sha256:[0-9a-f]{64}")}


def content_identity(identity: Mapping[str, str]) -> dict[str, str]:
    """``identity`` (a backend's) as its content names it: without :data:`LOCATION` when a field
    of :data:`CONTENT_FIELDS` holds a content hash, so the same files found by another path share
    it and other files at the same path never do. An identity with no content hash (a served
    model, a branch name, an in-memory model's label beside its weight fingerprint) keeps
    everything it says."""
    named = any(
        pattern.fullmatch(str(identity.get(field, ""))) for field, pattern in CONTENT_FIELDS.items()
    )
    return {k: str(v) for k, v in identity.items() if not (named and k == LOCATION)}


def model_content(backend: Mapping[str, object]) -> dict[str, str]:
    """The weights a report's ``backend`` scored, by content: its :data:`CONTENT_FIELDS` and
    :data:`WEIGHT_FILES` that hold a content hash, else where the model was found
    (:data:`LOCATION`). Two runs of one model with other settings (device, dtype, batch size)
    share it."""
    named = {
        field: str(backend[field])
        for field, pattern in MODEL_CONTENT_FIELDS.items()
        if pattern.fullmatch(str(backend.get(field, "")))
    }
    return named or {LOCATION: str(backend.get(LOCATION, ""))}


def same_model(one: Mapping[str, str], other: Mapping[str, str]) -> bool:
    """Whether two :func:`model_content` name one model: a field both hold has one value (the
    whole folder's hash, its weight files', a Hub commit, a GGUF file's; where it was found when
    neither names its content). A record written before :data:`WEIGHT_FILES` still matches by
    the fields it has."""
    return any(one[field] == other[field] for field in one.keys() & other.keys())


def same_score(cached: Score, live: Score, tolerance: float) -> bool:
    """The same targets and truncation, and log-probability sums within ``tolerance`` nats per
    target (an engine's run-to-run noise adds up over a candidate's tokens)."""
    if (cached.n_targets, cached.truncated_tokens, bool(cached.skipped)) != (
        live.n_targets,
        live.truncated_tokens,
        bool(live.skipped),
    ):
        return False
    allowed = tolerance * max(cached.n_targets, 1)
    return math.isclose(cached.logprob_sum, live.logprob_sum, rel_tol=0.0, abs_tol=allowed)


def check_cached_scores(backend: Backend, cached: Mapping[tuple[str, str], Score]) -> None:
    """Before the cache answers ``cached`` ((context, candidate) -> score) for ``backend``:
    re-score ``backend.cache_check`` of them, drawn at random (an engine cannot tune its answers
    to a sample it cannot foresee), on the live backend, and raise :class:`CacheMismatchError` at
    the first that differs beyond ``backend.cache_tolerance``. Nothing is checked for a backend
    whose identity names its content (``cache_check`` 0)."""
    if not backend.cache_check or not cached:
        return
    drawn = random.Random().sample(list(cached), min(backend.cache_check, len(cached)))
    sample = [ScoreRequest(context, candidate) for context, candidate in drawn]
    live = backend.score(sample)
    for key, request, now in zip(drawn, sample, live, strict=True):
        then = cached[key]
        if not same_score(then, now, backend.cache_tolerance):
            model = backend.identity.get(LOCATION, backend.name)
            raise CacheMismatchError(
                f"model {model!r} ({backend.name}) no longer gives the scores the score cache "
                f"holds for it: request context={request.context[-60:]!r} candidate="
                f"{request.candidate[:60]!r} was {_shown(then)}, is now {_shown(now)} (tolerance "
                f"{backend.cache_tolerance:g} per token); another model is served behind the "
                "same URL and id, so the cache is refused: pass --no-cache, or a new --cache-dir"
            )


def _shown(score: Score) -> str:
    if score.skipped:
        return f"skipped ({score.skipped})"
    return f"{score.logprob_sum:.4f} over {score.n_targets} token(s)"
