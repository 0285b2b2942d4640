"""Which scorers a run uses, and what they need: the backend whose scores they read (a reward
model's for ``reward``) and the reference model of ``ratio``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.backend import Backend, load_backend
from nnd_suites.evaluation.scorers.base import Scorer, make_scorer
from nnd_suites.infra.key_values import require_unique


def resolve_scorers(scorers: str | Sequence[str]) -> list[Scorer]:
    """The scorers asked for, the first the report's own; each once."""
    specs = [scorers] if isinstance(scorers, str) else list(scorers)
    if not specs:
        raise NNDError("no scorer given: name at least one (mean, the paper's, by default)")
    chosen = [make_scorer(spec) for spec in specs]
    require_unique([one.spec for one in chosen], "scorer")
    return chosen


def backend_for(chosen: list[Scorer], backend: str | None, model: object) -> str | None:
    """The backend the scorers need (a reward model's for ``reward``), refusing a mix of scorers
    that read different kinds of score, or a backend that gives the wrong kind."""
    kinds = {one.backend for one in chosen}
    if len(kinds) > 1:
        raise NNDError(
            f"scorers {[one.spec for one in chosen]} read different scores (a reward model's "
            "scalar and log-likelihoods): run them separately"
        )
    required = kinds.pop()
    given = model.name if isinstance(model, Backend) else backend
    if required is not None:
        if given not in (None, required):
            raise NNDError(f"scorer {chosen[0].spec} reads backend {required}, not {given}")
        return backend or (None if isinstance(model, Backend) else required)
    if given == "hf_reward":
        raise NNDError(
            "backend hf_reward gives a reward model's scalar: score it with --scorer reward"
        )
    return backend


def reference_backend_of(
    reference_model: str | Path | Backend | None,
    mode: str,
    device: str,
    dtype: str,
    batch_size: int | str,
    strategy: str,
    backend: str | None,
) -> Backend:
    """The reference model of the ``ratio`` scorer, loaded the way the model was."""
    if reference_model is None:
        raise NNDError(
            "the ratio scorer compares the model with a reference model: give one "
            "(--reference-model, reference_model=...), e.g. the model a DPO model was tuned from"
        )
    if isinstance(reference_model, Backend):
        return reference_model
    return load_backend(
        str(reference_model),
        backend,
        mode=mode,
        device=device,
        dtype=dtype,
        batch_size=batch_size,
        strategy=strategy,
    )
