"""An NND test as a record: (context, high candidate, low candidate), its content-hash id, and
whether it is degenerate (both sides the same text). The builder is
:mod:`nnd_suites.builder.pairs`."""

from __future__ import annotations

import hashlib
import json

from pydantic import Field

from nnd_suites.errors import NNDError
from nnd_suites.infra.formatting import clip
from nnd_suites.infra.validation import StrictModel
from nnd_suites.records.texts import same_text
from nnd_suites.records.votes import Vote


class PairCandidate(StrictModel):
    """One side of a test: the text, its label (or aggregated score) and who produced it."""

    text: str = Field(description="empty only in suites built with allow_empty_candidates")
    label: str
    systems: list[str] = Field(min_length=1)
    score: float | None = None


class Pair(StrictModel):
    """An NND test: (context, high candidate, low candidate).

    ``label`` is the low candidate's label and ``category_path`` the roll-up of its error
    category (root first); ``category`` is that root, the unit of per-category pass rates.
    """

    id: str = Field(pattern=r"^[0-9a-f]{16}$", description="content hash, stable across builds")
    group_id: str
    context: dict[str, str]
    high: PairCandidate
    low: PairCandidate
    label: str
    category: str
    category_path: list[str] = Field(min_length=1)
    aspect: str | None = None
    score_gap: float | None = None
    votes: list[Vote] = Field(
        default_factory=list, description="each rater's judgment of this test (empty: unknown)"
    )
    margin: float | None = Field(
        None,
        allow_inf_nan=False,
        description="how clearly humans preferred high, in the suite's margin_kind "
        "(share of raters, score gap or stated confidence); None: not known",
    )
    breakdown: dict[str, str] = Field(default_factory=dict)
    parent_id: str | None = Field(None, description="id of the untransformed test, if any")


def pair_id(*parts: object) -> str:
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    try:
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
    except UnicodeEncodeError as exc:  # a lone surrogate: not text any file can hold
        raise NNDError(
            f"a text of group {clip(repr(parts[0]))} is not valid Unicode (a lone surrogate near "
            f"{exc.object[max(0, exc.start - 30) : exc.end + 30]!r}); fix the source"
        ) from None


def is_degenerate(pair: Pair) -> bool:
    """Both candidates are the same text (:func:`~nnd_suites.records.texts.same_text`: NFC,
    invisible characters and whitespace runs aside): the test can be neither passed nor failed.

    Happens when a transformation erases the difference (casing), or when a quality map keeps
    texts given conflicting labels (MQM: one rater found no error in a translation another rater
    marked in another system's identical output). Evaluators count these apart from pass rates.
    """
    return same_text(pair.high.text, pair.low.text)
