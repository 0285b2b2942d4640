"""Unicode compatibility normalisation (NFKC)."""

from __future__ import annotations

import random
import unicodedata

from nnd_suites.transformations.base import (
    Transformation,
    TransformationMetadata,
    register_transformation,
)


@register_transformation("nfkc")
class NFKC(Transformation):
    metadata = TransformationMetadata(
        touches="both",
        kind="normalization",
        seeded=False,
        languages=["*"],
        summary="Unicode NFKC normalisation",
        description="Unicode NFKC normalisation: compatibility characters become their plain "
        "forms (ligatures, full-width letters, superscripts, no-break spaces) and "
        "accents are composed.",
    )

    def transform_text(self, text: str, rng: random.Random) -> str:
        return unicodedata.normalize("NFKC", text)
