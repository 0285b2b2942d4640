"""The Scorer plugin class and its registry."""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from nnd_suites.errors import PluginError
from nnd_suites.evaluation.backend import Score
from nnd_suites.infra.formatting import clip
from nnd_suites.plugins.params import PluginParams, parse_params, parse_plugin_spec
from nnd_suites.plugins.plugin import Plugin, PluginMetadata
from nnd_suites.plugins.registry import Registry

#: the paper's scorer: the mean log-probability of the candidate's targets (tokens + EOS)
DEFAULT_SCORER = "mean"


@dataclass(frozen=True)
class CandidateScores:
    """What a scorer may read of one candidate: the model's score after the context, and, for
    the scorers that ask for them, after the neutral context and under the reference model."""

    model: Score
    neutral: Score | None = None
    reference: Score | None = None

    @property
    def truncated_tokens(self) -> int:
        """Context tokens cut to fit a window in every score read (model, neutral, reference):
        a scorer reports what it read, a reference model's truncation included."""
        return sum(
            s.truncated_tokens for s in (self.model, self.neutral, self.reference) if s is not None
        )

    @property
    def skipped(self) -> bool:
        return any(s is not None and s.skipped for s in (self.model, self.neutral, self.reference))


class ScorerMetadata(PluginMetadata):
    """What ``nnd-suites list`` shows of a scorer, and what it measures."""


class Scorer(Plugin, ABC):
    """Turns one candidate's score (and its text) into the number a test compares: the better
    candidate passes iff its number is strictly higher. Harness cases (known scores of two
    candidates -> the verdict) are in evaluation/scorers/examples.json."""

    examples_key: ClassVar[str] = "scorer"
    metadata: ClassVar[ScorerMetadata]
    Params: ClassVar[type[PluginParams]] = PluginParams
    #: the candidate is also scored after a neutral context (the template with empty fields)
    needs_neutral: ClassVar[bool] = False
    #: the candidate is also scored by a reference model (``reference_model=``)
    needs_reference: ClassVar[bool] = False
    #: the backend whose scores this scorer reads (None: any log-likelihood backend)
    backend: ClassVar[str | None] = None

    def __init__(self, **params: Any) -> None:
        self.params = parse_params("scorer", self.name, self.Params, params)

    @abstractmethod
    def value(self, scores: CandidateScores, text: str) -> float:
        """The number compared for a candidate ``text`` with its ``scores`` (never skipped)."""

    def compared_value(self, scores: CandidateScores, text: str, test: str) -> float:
        """:meth:`value`, refused unless it is a finite number: ``nan > x`` and ``nan == x`` are
        both false, so a nan would make every test it touches a silent fail (``test``: the test's
        id, named in the error)."""
        found = self.value(scores, text)
        if (
            isinstance(found, bool)
            or not isinstance(found, numbers.Real)
            or not math.isfinite(found)
        ):
            raise PluginError(
                f"scorer {self.spec} gave {found!r} for candidate {clip(repr(text), 60)} of test "
                f"{test}: a scorer returns a finite number for every candidate scored; fix the "
                "scorer (its harness cases in examples.json can pin its values)"
            )
        return float(found)

    @property
    def spec(self) -> str:
        """``NAME[:param=value,...]`` with the parameters given: the scorer's identity in reports
        and in what runs must share to be combined."""
        given = self.params.model_dump(mode="json", exclude_unset=True)
        if not given:
            return self.name
        return self.name + ":" + ",".join(f"{k}={v}" for k, v in given.items())


def _validate_scorer(cls: type) -> None:
    where = f"scorer {getattr(cls, 'name', cls.__name__)} ({cls.__module__})"
    if not isinstance(getattr(cls, "metadata", None), ScorerMetadata):
        raise PluginError(f"{where}: 'metadata' must be a ScorerMetadata")


SCORERS: Registry[Scorer] = Registry(
    "scorer",
    "nnd_suites.scorers",
    base=lambda: Scorer,
    builtin_package="nnd_suites.evaluation.scorers",
    validate=_validate_scorer,
)
#: ``@register_scorer("name")`` on a Scorer subclass registers it.
register_scorer = SCORERS.register


def make_scorer(spec: str | Scorer) -> Scorer:
    """A scorer from ``NAME[:param=value,...]`` (unknown names and parameters: clear errors)."""
    if isinstance(spec, Scorer):
        return spec
    name, params = parse_plugin_spec("scorer", spec)
    return SCORERS.get(name)(**params)
