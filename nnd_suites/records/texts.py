"""One rule for when two texts are the same and when a text is empty.

A test whose two candidates differ only in what no reader sees is no test: the NFC and NFD
spellings of one word, a trailing space or ``\\r``, a zero-width space (U+200B), a bidirectional
override (U+202E), a NUL. Conflicts (one text given two labels), degenerate tests (both sides the
same text) and empty texts (a candidate of zero-width spaces) are all decided by this module, so
the pair builder, suite validation, evaluators and the ``whitespace`` transformation agree.

The rule, named by :data:`TEXT_EQUIVALENCE` in every suite manifest built with it: Unicode NFC;
format characters (category Cf: zero-width and bidirectional controls, the byte-order mark, soft
hyphens) other than the zero-width non-joiner and joiner (U+200C, U+200D), and control characters
other than whitespace (category Cc: NUL, ESC) dropped; every run of whitespace (``str.split``:
Unicode spaces and line breaks) one space; both ends stripped; a text left with nothing but
joiners and spaces is empty. The joiners are kept because they are written, not invisible: they
are how Persian and Indic words and emoji sequences (woman + ZWJ + laptop) are spelt, and a word
with one renders differently from the word without it. Alone they join nothing and show nothing.

Suites built before, under :data:`JOINERS_DROPPED` (the joiners dropped too), are validated by
``nnd_suites.suite`` against both rules.
"""

from __future__ import annotations

import functools
import unicodedata

#: the name of the rule below, recorded in suite manifests (``text_equivalence``)
TEXT_EQUIVALENCE = "nfc+drop-cf-cc-but-joiners+collapse-whitespace"
#: the rule of suites built before the joiners were kept: the same, the joiners dropped too
JOINERS_DROPPED = "nfc+drop-cf-cc+collapse-whitespace"
#: the zero-width non-joiner and joiner, the two format characters the rule keeps
JOINERS = "\u200c\u200d"


class _Invisible(dict):
    """``str.translate`` table: code point -> None (dropped) for Cf and non-whitespace Cc
    characters, itself otherwise; filled as characters are met (no start-up cost)."""

    def __missing__(self, code: int) -> int | None:
        char = chr(code)
        kept = unicodedata.category(char) not in ("Cf", "Cc") or char.isspace()
        self[code] = code if kept else None
        return self[code]


_INVISIBLE = _Invisible()
_INVISIBLE_BUT_JOINERS = _Invisible({0x200C: 0x200C, 0x200D: 0x200D})


def drop_invisible(text: str, *, keep_joiners: bool = False) -> str:
    """``text`` without format characters (Cf) and non-whitespace controls (Cc); with
    ``keep_joiners``, the zero-width non-joiner and joiner (U+200C, U+200D) kept: they are how
    Persian and Indic words and emoji sequences are written, and dropping them changes both."""
    return text.translate(_INVISIBLE_BUT_JOINERS if keep_joiners else _INVISIBLE)


#: texts up to this long have their keys remembered (the last 16,384 of them)
_REMEMBERED_LENGTH = 2048


def equivalence_key(text: str) -> str:
    """What two texts must share to be the same text (see the module docstring).

    Remembered for the last 16,384 texts of up to 2,048 characters: a suite asks for a
    candidate's key once per pair it is in, and again each time its pairs are counted and
    validated. A longer text is computed each time, so what is kept stays bounded."""
    if len(text) > _REMEMBERED_LENGTH:
        return _equivalence_key(text)
    return _remembered_key(text)


def _equivalence_key(text: str, *, keep_joiners: bool = True) -> str:
    # Whitespace collapsed first: the characters dropped are never whitespace, so the order
    # changes nothing, and a collapsed text that is all printable (no Cf, no Cc: the usual
    # case) has nothing to drop, which ``isprintable`` tells in C, far faster than translate.
    # The joiners are Cf, so a text holding one takes the slow way.
    collapsed = " ".join(unicodedata.normalize("NFC", text).split())
    if collapsed.isprintable():
        return collapsed
    kept = " ".join(drop_invisible(collapsed, keep_joiners=keep_joiners).split())
    return kept if kept.strip(" " + JOINERS) else ""


_remembered_key = functools.lru_cache(maxsize=1 << 14)(_equivalence_key)


def joiners_dropped_key(text: str) -> str:
    """The key of :data:`JOINERS_DROPPED`, the rule of older suites (not remembered: only texts
    holding a joiner, in suites built under it, are asked for it)."""
    return _equivalence_key(text, keep_joiners=False)


def has_joiner(text: str) -> bool:
    """Whether ``text`` holds a zero-width non-joiner or joiner, the only texts on which
    :data:`TEXT_EQUIVALENCE` and :data:`JOINERS_DROPPED` can disagree."""
    return JOINERS[0] in text or JOINERS[1] in text


def same_text(first: str, second: str) -> bool:
    return first == second or equivalence_key(first) == equivalence_key(second)


def is_blank(text: str) -> bool:
    """Nothing a reader would see: empty, whitespace, format and control characters only."""
    return not equivalence_key(text)
