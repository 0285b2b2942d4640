"""Keyboard typos ("butter fingers", GEM section 4.2 (ii)): letters slip to a neighbouring key."""

from __future__ import annotations

import random

from pydantic import Field

from nnd_suites.transformations.base import (
    SeededParams,
    Transformation,
    TransformationMetadata,
    register_transformation,
)

QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def qwerty_neighbours() -> dict[str, str]:
    """Keys touching each letter key on a QWERTY keyboard (each row sits half a key right of
    the one above, so key i of a row touches keys i and i+1 of the row above)."""
    neighbours: dict[str, str] = {}
    for row_index, row in enumerate(QWERTY_ROWS):
        for col, key in enumerate(row):
            near = [row[i] for i in (col - 1, col + 1) if 0 <= i < len(row)]
            if row_index > 0:
                above = QWERTY_ROWS[row_index - 1]
                near += [above[i] for i in (col, col + 1) if i < len(above)]
            if row_index + 1 < len(QWERTY_ROWS):
                below = QWERTY_ROWS[row_index + 1]
                near += [below[i] for i in (col - 1, col) if 0 <= i < len(below)]
            neighbours[key] = "".join(sorted(near))
    return neighbours


NEIGHBOURS = qwerty_neighbours()


class TyposParams(SeededParams):
    rate: float = Field(
        0.05, ge=0.0, le=1.0, description="probability that each letter slips (GEM used 0.02, 0.05)"
    )


@register_transformation("typos")
class Typos(Transformation):
    metadata = TransformationMetadata(
        touches="candidates",
        kind="perturbation",
        seeded=True,
        languages=["en"],
        summary="keyboard-neighbour typos at a given rate (butter fingers)",
        description="Butter-finger typos: each ASCII letter, with probability `rate`, is replaced "
        "by a letter whose key touches it on a QWERTY keyboard (case kept).",
    )
    Params = TyposParams

    def transform_text(self, text: str, rng: random.Random) -> str:
        rate = self.params.rate  # type: ignore[attr-defined]
        out = []
        for char in text:
            lower = char.lower() if char.isascii() else char  # the Kelvin sign lowers to k
            keys = NEIGHBOURS.get(lower)
            if keys and rng.random() < rate:
                slip = rng.choice(keys)
                char = slip.upper() if char != lower else slip
            out.append(char)
        return "".join(out)
