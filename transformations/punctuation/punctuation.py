"""Punctuation: remove the final punctuation (as GEM does), or all of it."""

from __future__ import annotations

import random
import unicodedata

from nnd_suites.transformations.base import (
    Transformation,
    TransformationMetadata,
    register_transformation,
)

#: Sentence-final marks GEM's "final punctuation" removal targets (not quotes or brackets),
#: with the ellipsis, the ideographic and full-width marks (。！？，；：、), the Arabic ones
#: (؟ ، ؛ and Urdu's ۔) and the Devanagari dandas (। ॥).
FINAL_MARKS = frozenset(
    ".!?;:,\u2026\u3002\uff01\uff1f\uff0c\uff1b\uff1a\u3001\u061f\u060c\u061b\u06d4\u0964\u0965"
)


def is_punctuation(char: str) -> bool:
    """Unicode general category P* (connector, dash, open, close, quotes, other)."""
    return unicodedata.category(char).startswith("P")


def in_number(text: str, index: int) -> bool:
    """The mark at ``index`` stands between two digits: a separator of a number (3.14, 1,000,
    12:30, 1/2), whose value changes without it."""
    return 0 < index < len(text) - 1 and text[index - 1].isdecimal() and text[index + 1].isdecimal()


@register_transformation("no_final_punctuation")
class NoFinalPunctuation(Transformation):
    metadata = TransformationMetadata(
        touches="candidates",
        kind="perturbation",
        seeded=False,
        languages=["*"],
        summary="remove the final punctuation marks, as GEM does",
        description="Remove the final punctuation marks (. ! ? ; : , …, their full-width, "
        "Arabic and Devanagari forms) at the end of the text, "
        "with the spaces between them (GEM challenge sets); trailing whitespace and "
        "closing quotes or brackets are kept.",
    )

    def transform_text(self, text: str, rng: random.Random) -> str:
        body = text.rstrip()
        end = len(body)
        while end and (body[end - 1] in FINAL_MARKS or body[end - 1].isspace()):
            end -= 1
        if end == len(body):
            return text
        return body[:end] + text[len(body) :]


@register_transformation("no_punctuation")
class NoPunctuation(Transformation):
    metadata = TransformationMetadata(
        touches="both",
        kind="normalization",
        seeded=False,
        languages=["*"],
        summary="remove every punctuation character",
        description="Remove every punctuation character (Unicode category P*) but a mark "
        "between two digits (3.14, 1,000, 12:30: a number's separator); where a removed run "
        "stood between two spaces, one of them goes too.",
    )

    def transform_text(self, text: str, rng: random.Random) -> str:
        out: list[str] = []
        index = 0
        while index < len(text):
            if not is_punctuation(text[index]) or in_number(text, index):
                out.append(text[index])
                index += 1
                continue
            end = index
            while end < len(text) and is_punctuation(text[end]):
                end += 1
            standalone = (not out or out[-1].isspace()) and (
                end == len(text) or text[end].isspace()
            )
            if standalone and out and end < len(text):
                end += 1  # "a , b" -> "a b", not "a  b"
            elif standalone and out and end == len(text):
                while out and out[-1] == " ":  # "done ." -> "done"
                    out.pop()
            elif standalone and not out and end < len(text):
                end += 1  # "( cnn" -> "cnn"
            index = end
        return "".join(out)
