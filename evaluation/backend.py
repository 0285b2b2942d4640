"""The backend interface: score (context, candidate) requests, in request order.

A backend turns each request into the sum of the log-probabilities of the candidate's target
tokens given the context, the number of targets (so the mean is ``sum / n``) and how many context
tokens had to be cut from the left to fit the model's window. Everything else (templates,
deduplication, the score cache, reports) lives in the evaluator, so a served backend only has to
implement ``score``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field

from nnd_suites.errors import NNDError, ParameterError, PluginError, ScoringError
from nnd_suites.plugins.params import PluginParams, parse_params
from nnd_suites.plugins.plugin import Plugin, PluginMetadata
from nnd_suites.plugins.registry import Registry

#: Bump when a change in tokenisation or scoring changes any score: it is part of every cache key.
SCORING_VERSION = "1"
#: The scoring modes every backend understands (see evaluation/scoring.py for what they mean).
MODES = ("default", "reference")


@dataclass(frozen=True, slots=True)
class ScoreRequest:
    """One candidate text to score after one rendered context."""

    context: str
    candidate: str


#: Why a request was not scored, when a candidate alone does not fit the model's window.
TOO_LONG = "the candidate alone does not fit the model's window"
#: How far above 0 a token's log-probability may be (float rounding in an engine) and still be one.
ABOVE_ZERO = 1e-4


@dataclass(frozen=True, slots=True)
class Score:
    """Log-likelihood of one candidate: ``mean`` is the paper's length-normalised LL (eq. 1).

    ``skipped`` says why a request could not be scored (then there are no targets): its test is
    counted as skipped with that reason, never scored as a pass or a failure.
    """

    logprob_sum: float
    n_targets: int
    truncated_tokens: int = 0
    skipped: str = ""

    def __post_init__(self) -> None:
        if self.skipped:
            if self.n_targets:
                raise ValueError(f"invalid score {self}: a skipped request has no targets")
            return
        if self.n_targets < 1 or not math.isfinite(self.logprob_sum):
            raise ValueError(f"invalid score {self}: a score needs >= 1 target and a finite sum")

    @classmethod
    def skip(cls, reason: str) -> Score:
        return cls(0.0, 0, 0, reason)

    @property
    def mean(self) -> float:
        return math.nan if self.skipped else self.logprob_sum / self.n_targets


def read_truncation(requests: Iterable[tuple[str, str]], *lookups: Mapping | None) -> int:
    """Context tokens cut to fit a window, summed over every score a scorer read: the model's
    and, for ``ratio``, the reference model's (a reference with a shorter window cuts more)."""
    return sum(
        lookup[request].truncated_tokens
        for lookup in lookups
        if lookup is not None
        for request in requests
    )


#: Called after each batch with the request indices scored and their scores (the cache writes them).
ScoreSink = Callable[[list[int], list[Score]], None]


def check_mode(mode: str) -> None:
    """Refuse a scoring mode no backend knows (a backend that scores fewer says so itself)."""
    if mode not in MODES:
        raise NNDError(f"unknown scoring mode {mode!r}; known: {', '.join(MODES)}")


def finite(value: float, source: str, what: str, candidate: str, hint: str = "") -> float:
    """``value``, or a ScoringError saying that ``source`` (the model, or its engine) gave a
    non-finite ``what`` for ``candidate``; ``hint`` says what to try (appended as is)."""
    if not math.isfinite(value):
        raise ScoringError(
            f"{source} gave a non-finite {what} ({value}) for candidate {candidate[:60]!r}{hint}"
        )
    return value


class ScoreDelivery:
    """A backend's scores, kept in request order and handed on as they finish: each count to
    ``progress`` at once, the scores to ``sink`` (the score cache) in groups of at least
    ``every``, and whatever is left when the ``with`` block ends, even on an error, so an
    interrupted run keeps its work. Every backend's :meth:`Backend.score` goes through one."""

    def __init__(
        self,
        count: int,
        sink: ScoreSink | None,
        progress: Callable[[int], None] | None,
        every: int = 1,
    ) -> None:
        self._results: list[Score | None] = [None] * count
        self._sink, self._progress, self._every = sink, progress, every
        self._indices: list[int] = []
        self._scores: list[Score] = []

    def add(self, indices: Sequence[int], scores: Sequence[Score]) -> None:
        """Record the scores of requests ``indices`` (one score each)."""
        for index, score in zip(indices, scores, strict=True):
            self._results[index] = score
        self._indices += indices
        self._scores += scores
        if self._progress is not None:
            self._progress(len(indices))
        if len(self._indices) >= self._every:
            self._flush()

    def _flush(self) -> None:
        if self._indices and self._sink is not None:
            self._sink(self._indices, self._scores)
        self._indices, self._scores = [], []

    def __enter__(self) -> ScoreDelivery:
        return self

    def __exit__(self, *_: object) -> None:
        self._flush()

    @property
    def scores(self) -> list[Score]:
        """Every request's score, in request order."""
        missing = [i for i, score in enumerate(self._results) if score is None]
        if missing:  # a bug, never an input problem: fail loudly rather than drop requests
            raise RuntimeError(f"{len(missing)} request(s) were not scored")
        return self._results  # type: ignore[return-value]


class BackendParams(PluginParams):
    """The run options ``evaluate`` gives every backend; a backend that takes more declares a
    subclass as its ``Params`` (unknown keys and bad values are usage errors naming them)."""

    device: str = Field("auto", description="auto, cpu, cuda, cuda:N, mps")
    dtype: str = Field("auto", description="weights dtype: auto, fp32, bf16, fp16")
    batch_size: int | str = Field("auto", description="'auto' or contexts per batch")
    revision: str | None = Field(None, description="Hub revision (branch, tag or commit)")
    strategy: str = Field("auto", description="batching strategy")


class BackendMetadata(PluginMetadata):
    """What ``nnd-suites list`` and a reader need to know about a backend. A built-in backend is a
    lazy entry (listing must not import torch): its entry's summary is this summary."""


class Backend(Plugin, ABC):
    """Computes log-likelihoods. Subclasses declare ``metadata`` (and ``Params`` when they take
    options beyond :class:`BackendParams`), register with ``@register_backend(NAME)`` or a lazy
    entry, and implement :meth:`load` (from a model reference) and :meth:`score`. Harness cases
    (a tiny model scored, the contract checked) are in the examples.json beside the module."""

    examples_key: ClassVar[str] = "backend"
    metadata: ClassVar[BackendMetadata]
    Params: ClassVar[type[BackendParams]] = BackendParams
    mode: str = "default"
    #: Scores the cache would answer that are re-scored live first (a random sample): 0 where
    #: the identity names the model by its content (file hashes, weights); a served engine is
    #: named only by what its server says (``identity.check_cached_scores``)
    cache_check: ClassVar[int] = 0
    #: How far a live score may be from the cached one in that check, in nats per target.
    cache_tolerance: float = 0.0
    #: Whether a score's sum is a log-likelihood, never above 0 (bar :data:`ABOVE_ZERO` per
    #: target): the score cache reads a positive one as damage. False where the sum is another
    #: number (a reward model's scalar).
    log_likelihoods: ClassVar[bool] = True

    @classmethod
    @abstractmethod
    def load(cls, model: str, *, mode: str = "default", **options: Any) -> Backend:
        """Load ``model`` (a Hub id, a local path, or whatever the backend understands)."""

    @property
    @abstractmethod
    def identity(self) -> dict[str, str]:
        """Everything a score depends on besides the texts: model and revision (or a hash of its
        files), dtype, backend, scoring mode. Part of every score-cache key."""

    @abstractmethod
    def score(
        self,
        requests: Sequence[ScoreRequest],
        *,
        sink: ScoreSink | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[Score]:
        """Score every request; return the scores in request order.

        ``sink`` receives each finished batch (request indices, scores) as soon as it is done, so
        an interrupted run keeps its work; ``progress`` receives the number of requests finished.
        """

    @classmethod
    def refuse_options(cls, options: dict[str, Any]) -> None:
        """Refuse, by name, options that ``load`` was given and does not take."""
        if options:
            raise ParameterError(
                f"backend {cls.name}: unknown option(s) {sorted(options)} (known: "
                f"{', '.join(cls.Params.model_fields)})"
            )

    def describe(self) -> dict[str, Any]:
        """What a report records about the backend (identity plus run settings)."""
        return dict(self.identity)

    def model_size(self) -> tuple[int | None, str | None]:
        """(parameter count, architecture name) of the model, each None when not known (a
        leaderboard draws a scaling plot when its models form a family of known sizes)."""
        return None, None


def _validate_backend(cls: type) -> None:
    where = f"backend {cls.__module__}.{cls.__name__}"
    if not isinstance(getattr(cls, "metadata", None), BackendMetadata):
        raise PluginError(f"{where}: 'metadata' must be a BackendMetadata (summary, description)")
    params = getattr(cls, "Params", None)
    if not (isinstance(params, type) and issubclass(params, BackendParams)):
        raise PluginError(f"{where}: 'Params' must subclass BackendParams")


BACKENDS: Registry[Backend] = Registry(
    "backend",
    "nnd_suites.backends",
    base=lambda: Backend,
    builtin_package="nnd_suites.evaluation.backends",
    import_builtins=False,  # lazy entries below: listing must not import torch
    validate=_validate_backend,
)
#: ``@register_backend("name")`` on a Backend subclass registers it (third-party backends).
register_backend = BACKENDS.register
# The built-in backends, by import path: they need torch, which listing plugins must not load.
BACKENDS.add_lazy(
    "hf",
    "nnd_suites.evaluation.backends.hf_auto:HFAutoBackend",
    summary="Hugging Face model: hf_seq2seq for encoder-decoders, else hf_causal",
)
BACKENDS.add_lazy(
    "hf_causal",
    "nnd_suites.evaluation.backends.hf_causal:HFCausalBackend",
    summary="Hugging Face decoder-only LM, each context encoded once per group",
)
BACKENDS.add_lazy(
    "hf_seq2seq",
    "nnd_suites.evaluation.backends.hf_seq2seq:HFSeq2SeqBackend",
    summary="Hugging Face encoder-decoder LM, encoder run once per context",
)
BACKENDS.add_lazy(
    "hf_reward",
    "nnd_suites.evaluation.backends.hf_reward:HFRewardBackend",
    summary="Hugging Face reward model's scalar per candidate (--scorer reward)",
)

BACKENDS.add_lazy(
    "served",
    "nnd_suites.evaluation.backends.served.backend:ServedBackend",
    summary="OpenAI-compatible server (vLLM, SGLang, llama.cpp), probed before use",
)
BACKENDS.add_lazy(
    "llama_cpp",
    "nnd_suites.evaluation.backends.llama_cpp:LlamaCppBackend",
    summary="a .gguf model in llama.cpp, in process (pip install 'nnd-suites[llama]')",
)


def backend_name(model: str, backend: str | None = None, **options: Any) -> str:
    """The backend that scores ``model``: the one named; without a name, ``served`` when a
    server's ``base_url`` is given, ``llama_cpp`` for a ``.gguf`` file, else ``hf`` (which reads
    the model's config and picks ``hf_causal`` or ``hf_seq2seq``)."""
    if backend is not None:
        return backend
    if options.get("base_url"):
        return "served"
    return "llama_cpp" if str(model).lower().endswith(".gguf") else "hf"


def load_backend(
    model: str, backend: str | None = None, *, mode: str = "default", **options: Any
) -> Backend:
    """Load ``model`` with the backend :func:`backend_name` picks (``base_url=...`` alone
    selects the served backend). ``options`` are checked against the backend's ``Params``
    first. ``nnd-suites:tiny-random`` is the embedded model (made on first use), except for a
    server, which names its own models."""
    name = backend_name(model, backend, **options)
    if name != "served":
        # lazy: tiny reads suites, which listing the backends does not need
        from nnd_suites.evaluation.tiny import embedded_or

        model = embedded_or(model)
    cls = BACKENDS.get(name)
    params = parse_params("backend", cls.name, cls.Params, options)
    return cls.load(model, mode=mode, **{key: getattr(params, key) for key in options})
