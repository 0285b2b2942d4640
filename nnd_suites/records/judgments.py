"""Pairwise human judgments: what an adapter of a comparative source emits.

Most human evaluation of generated text is comparative: a person saw two responses to one context
and said which is better (or that they tie), perhaps with a strength, perhaps one of several
raters. An adapter of such a source yields :class:`JudgedGroup` objects (one per context) holding
:class:`Judgment` objects; the quality map's ``pairwise`` rule says what a verdict means and how
several verdicts on the same two texts combine (:mod:`nnd_suites.builder.judged_pairs` makes the
tests).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from nnd_suites.infra.validation import StrictModel

Verdict = Literal["a", "b", "tie"]
#: The system of a response whose source names none (HH-RLHF): not a system that can be scored.
UNKNOWN_SYSTEM = "unknown"


def named_systems(systems: Iterable[str]) -> list[str]:
    """The systems named, once each and in order, without the placeholder ``UNKNOWN_SYSTEM``
    (empty for an output whose source names no system)."""
    return [system for system in dict.fromkeys(systems) if system != UNKNOWN_SYSTEM]


class Judgment(StrictModel):
    """One person's comparison of two responses to the group's context."""

    response_a: str
    response_b: str
    verdict: Verdict = Field(description="a: A is better; b: B is better; tie")
    strength: float | None = Field(
        None, allow_inf_nan=False, description="strength or confidence of the verdict"
    )
    rater: str | None = None
    systems_a: list[str] = Field(default_factory=lambda: [UNKNOWN_SYSTEM], min_length=1)
    systems_b: list[str] = Field(default_factory=lambda: [UNKNOWN_SYSTEM], min_length=1)
    category: str | None = Field(None, description="finer category, rolled up by the hierarchy")
    breakdown: dict[str, str] = Field(default_factory=dict)
    where: str = Field("", description="file:line (or item id) for messages")


class JudgedGroup(StrictModel):
    """Every judgment made on one context; the context is kept as named fields."""

    id: str
    context: dict[str, str]
    judgments: list[Judgment]
    breakdown: dict[str, str] = Field(default_factory=dict)
    where: str = ""
