"""Whitespace normalisation: one space between words, none at the ends, no invisible spaces."""

from __future__ import annotations

import random
import re

from nnd_suites.transformations.base import (
    Transformation,
    TransformationMetadata,
    register_transformation,
)

# Zero-width characters that tokenizers may keep but readers never see.
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
# str.split() semantics: every Unicode whitespace, no-break spaces and line breaks included.
_SPACES = re.compile(r"\s+")


@register_transformation("whitespace")
class Whitespace(Transformation):
    metadata = TransformationMetadata(
        touches="both",
        kind="normalization",
        seeded=False,
        languages=["*"],
        summary="collapse whitespace runs to one space, strip, drop zero-width characters",
        description="Replace every run of whitespace (line breaks, tabs, no-break spaces "
        "included) by one space, strip both ends, and drop zero-width characters.",
    )

    def transform_text(self, text: str, rng: random.Random) -> str:
        return _SPACES.sub(" ", _INVISIBLE.sub("", text)).strip()
