"""Whitespace normalisation: one space between words, none at the ends, no invisible characters.

Invisible characters are those :mod:`nnd_suites.records.texts` ignores when it compares texts
(format characters such as U+200B and U+202E, controls such as NUL): a candidate made only of them
is blank here (``is_blank``) exactly when the pair builder calls it empty. The zero-width
non-joiner and joiner (U+200C, U+200D) are kept: they are no whitespace but part of how Persian
and Indic words and emoji sequences (woman, ZWJ, laptop) are written; dropping them changes what
a reader sees."""

from __future__ import annotations

import random
import re

from nnd_suites.records.texts import drop_invisible
from nnd_suites.transformations.base import (
    Transformation,
    TransformationMetadata,
    register_transformation,
)

# str.split() semantics: every Unicode whitespace, no-break spaces and line breaks included.
_SPACES = re.compile(r"\s+")


@register_transformation("whitespace")
class Whitespace(Transformation):
    metadata = TransformationMetadata(
        touches="both",
        kind="normalization",
        seeded=False,
        languages=["*"],
        summary="collapse whitespace runs to one space, strip, drop invisible characters",
        description="Replace every run of whitespace (line breaks, tabs, no-break spaces "
        "included) by one space, strip both ends, and drop invisible characters (format "
        "characters such as zero-width spaces and bidirectional controls; controls such as "
        "NUL), as suites do when they compare texts; zero-width joiners and non-joiners, part "
        "of emoji and Persian or Indic words, are kept.",
    )

    def transform_text(self, text: str, rng: random.Random) -> str:
        return _SPACES.sub(" ", drop_invisible(text, keep_joiners=True)).strip()
