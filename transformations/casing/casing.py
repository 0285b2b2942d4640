"""Casing variants: lowercase, uppercase, title case, and the first letter only."""

from __future__ import annotations

import random
import re
import unicodedata
from typing import Literal

from pydantic import Field

from nnd_suites.transformations.base import (
    Transformation,
    TransformationMetadata,
    TransformationParams,
    register_transformation,
)

# A letter that starts a word: not preceded by a word character or an apostrophe (so "it's"
# keeps a lower-case "s", unlike str.title()), nor by combining marks on one (_capitalised).
_IN_WORD = "[\\w'\u2019]"
_WORD_START = re.compile(f"(?<!{_IN_WORD})[^\\W\\d_]")


def _capitalised(match: re.Match[str]) -> str:
    """The letter of ``match`` title-cased (ﬁ -> Fi, not FI), unless it follows combining marks
    that sit on a word's letter ("cafe" + U+0301 + "s": decomposed text, or "i" + U+0307 from
    "İ".lower())."""
    text, start = match.string, match.start()
    base = start
    while base and unicodedata.category(text[base - 1]).startswith("M"):
        base -= 1
    if base < start and base and re.match(_IN_WORD, text[base - 1]):
        return match.group()
    return match.group().title()


@register_transformation("lowercase")
class Lowercase(Transformation):
    metadata = TransformationMetadata(
        touches="both",
        kind="normalization",
        seeded=False,
        languages=["*"],
        summary="lower-case every letter",
        description="Lower-case every letter (str.lower), for uncased models.",
    )

    def transform_text(self, text: str, rng: random.Random) -> str:
        return text.lower()


@register_transformation("uppercase")
class Uppercase(Transformation):
    metadata = TransformationMetadata(
        touches="candidates",
        kind="perturbation",
        seeded=False,
        languages=["*"],
        summary="upper-case every letter",
        description="Upper-case every letter (str.upper).",
    )

    def transform_text(self, text: str, rng: random.Random) -> str:
        return text.upper()


@register_transformation("titlecase")
class Titlecase(Transformation):
    metadata = TransformationMetadata(
        touches="candidates",
        kind="perturbation",
        seeded=False,
        languages=["en"],
        summary="Title Case every word",
        description="Title Case: every word's first letter title-cased, its other letters "
        "lower-cased; letters after an apostrophe stay lower-case (it's, not It'S).",
    )

    def transform_text(self, text: str, rng: random.Random) -> str:
        return _WORD_START.sub(_capitalised, text.lower())


class FirstLetterParams(TransformationParams):
    to: Literal["upper", "lower"] = Field("upper", description="case given to the first letter")
    sentences: bool = Field(False, description="also the first letter after . ! or ? and a space")


@register_transformation("first_letter_case")
class FirstLetterCase(Transformation):
    metadata = TransformationMetadata(
        touches="candidates",
        kind="normalization",
        seeded=False,
        languages=["*"],
        summary="change the case of the first letter (of the text or of each sentence)",
        description="Change the case of the first letter only (of the text, or of every "
        "sentence), leaving the other letters as they are: restores the capital of "
        "lower-cased system outputs.",
    )
    Params = FirstLetterParams

    def transform_text(self, text: str, rng: random.Random) -> str:
        params: FirstLetterParams = self.params  # type: ignore[assignment]
        chars = list(text)
        at_start, after_mark = True, False
        for index, char in enumerate(chars):
            if at_start and char.isalpha():
                # title case: the capital a word starts with (ﬁ -> Fi, ǆ -> ǅ; not FI, Ǆ)
                chars[index] = char.title() if params.to == "upper" else char.lower()
                at_start = False
                if not params.sentences:
                    break
            if char in ".!?":
                after_mark = True
            elif char.isspace():
                at_start = at_start or after_mark
            else:
                after_mark = False
        return "".join(chars)
