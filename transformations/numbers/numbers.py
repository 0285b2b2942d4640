"""Number variation (GEM section 4.2 (iv)): every number written in digits gets a new value.

As in GEM, the new value keeps the number's format (integer, thousands separators, decimals with
the same precision, leading zeros, digits) and lies between zero and the next power of ten (54
becomes a value in 0-99). Each replacement is drawn from a generator keyed by the seed and the
number as written in ASCII digits, so the same number becomes the same new number in a context
and in its candidates, and in every test of the suite: the tests stay consistent.
"""

from __future__ import annotations

import random
import re
import unicodedata

from nnd_suites.transformations.base import (
    SeededParams,
    Transformation,
    TransformationMetadata,
    register_transformation,
)

# A word character of a script written without spaces between words (CJK ideographs, kana,
# hangul): a number beside one stands free (11项, 2019年, ２０２３年).
_UNSPACED = (
    "\u3005-\u3007\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\uff66-\uff9f\U00020000-\U0003134f"
)
# A free-standing number: 7, 1990, 1,000, 3.14, 007 (not 22nd, CO2, 1990s or a version 1.2.3).
NUMBER = re.compile(
    rf"(?<![^\W{_UNSPACED}])(?<![.,])(?P<int>\d{{1,3}}(?:,\d{{3}})+|\d+)(?P<frac>\.\d+)?"
    rf"(?![^\W{_UNSPACED}]|[.,]\d)"
)


#: numbers with more digits are drawn digit by digit: int() of a digit string is quadratic in its
#: length and refused past 4,300 digits
LONG_NUMBER_DIGITS = 300


def vary_number(written: str, rng: random.Random) -> str:
    """A different number in the same format, drawn from ``rng``."""
    integer, _, fraction = written.partition(".")
    digits = integer.replace(",", "")
    if len(digits) + len(fraction) > LONG_NUMBER_DIGITS:
        return _vary_long_number(integer, digits, fraction, rng)
    scale = 10 ** len(fraction)
    upper = 10 ** len(digits) * scale  # exclusive, in units of the last decimal
    old = int(digits + fraction)
    value = old
    while value == old:
        value = rng.randrange(upper)
    whole, part = divmod(value, scale)
    text = f"{whole:,}" if "," in integer else str(whole)
    if digits.startswith("0") and len(digits) > 1:
        text = text.zfill(len(digits))
    return f"{text}.{part:0{len(fraction)}d}" if fraction else text


def _vary_long_number(integer: str, digits: str, fraction: str, rng: random.Random) -> str:
    """:func:`vary_number` on strings of digits (the same range and format, linear time)."""
    old, value = digits + fraction, digits + fraction
    while value == old:
        value = "".join(rng.choices("0123456789", k=len(old)))
    whole, part = value[: len(digits)], value[len(digits) :]
    if not (digits.startswith("0") and len(digits) > 1):
        whole = whole.lstrip("0") or "0"
    if "," in integer:  # thousands separators, counted from the right
        head = len(whole) % 3 or 3
        whole = ",".join([whole[:head]] + [whole[i : i + 3] for i in range(head, len(whole), 3)])
    return f"{whole}.{part}" if fraction else whole


class NumbersParams(SeededParams):
    pass


@register_transformation("numbers")
class Numbers(Transformation):
    metadata = TransformationMetadata(
        touches="both",
        kind="perturbation",
        seeded=True,
        languages=["en"],
        summary="replace numbers in digits by random ones of the same format (GEM)",
        description="Replace every number written in digits by a random one of the same format "
        "between zero and the next power of ten (GEM's numerical variation); one "
        "number maps to one new value throughout the suite.",
    )
    Params = NumbersParams

    def transform_text(self, text: str, rng: random.Random) -> str:
        # The per-text generator is not used: each number draws from its own, so that its
        # replacement agrees across the texts (context, candidates) it appears in.
        return NUMBER.sub(self._vary, text)

    def _vary(self, match: re.Match[str]) -> str:
        """The number drawn for ``match`` as written in ASCII digits (２０２３ and 2023 are one
        number), written back in the digits of the original (full-width, Arabic-Indic, ...)."""
        written = match.group()
        zero = next(chr(ord(c) - unicodedata.decimal(c)) for c in written if c.isdecimal())
        plain = "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in written)
        new = vary_number(plain, self.rng_for(plain))
        return "".join(chr(ord(zero) + int(c)) if c.isdecimal() else c for c in new)
