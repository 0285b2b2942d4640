"""One rule decides when two texts are the same and when a text is empty
(nnd_suites.records.texts)."""

from __future__ import annotations

import os
import unicodedata
from itertools import chain, compress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnd_suites import Candidate, Group, QualityMap
from nnd_suites.builder.pairs import build_pairs
from nnd_suites.records.pairs import Pair, PairCandidate, is_degenerate
from nnd_suites.records.texts import (
    TEXT_EQUIVALENCE,
    drop_invisible,
    equivalence_key,
    is_blank,
    joiners_dropped_key,
    same_text,
)
from nnd_suites.transformations import TRANSFORMATIONS

QD_MAP = QualityMap.load("quiz_design")
KEEP_MAP = QualityMap.from_dict({**QD_MAP.data, "conflicting_labels": "keep"})
TEXT = "Où est le café ?"

# Spellings of TEXT that no reader tells apart from it.
INVISIBLY_DIFFERENT = {
    "NFD": unicodedata.normalize("NFD", TEXT),
    "trailing space": TEXT + " ",
    "trailing CR": TEXT + "\r",
    "zero-width space": TEXT.replace("est", "e\u200bst"),
    "right-to-left override": "\u202e" + TEXT,
    "NUL": TEXT + "\x00",
    "byte-order mark": "\ufeff" + TEXT,
    "no-break space": TEXT.replace(" ", "\u00a0"),
    "double space": TEXT.replace(" ", "  "),
}
BLANK = ["", " ", "\u200b\u200b\u200b", "\r\n\t", "\x00", "\u202e\u200d", "\ufeff \u00a0"]


def group(*cands, context=None) -> Group:
    return Group(
        id="g1",
        context=context or {"answer": "a", "paragraph": "p"},
        candidates=[
            Candidate(text=t, systems=[s], label=lab, where=f"f:{i}")
            for i, (t, s, lab) in enumerate(cands)
        ],
    )


@pytest.mark.parametrize("variant", INVISIBLY_DIFFERENT)
def test_an_invisible_difference_is_a_conflict_not_a_test(variant):
    g = group((TEXT, "A", "No error"), (INVISIBLY_DIFFERENT[variant], "B", "disfluent"))
    result = build_pairs([g], QD_MAP)
    assert result.pairs == []
    assert result.skipped.counts == {"same text given conflicting labels": 2}
    kept = build_pairs([g], KEEP_MAP)  # kept by the map: a degenerate test, counted as such
    assert len(kept.pairs) == 1 and is_degenerate(kept.pairs[0])
    assert kept.counts["degenerate_pairs"] == 1 and kept.counts["conflicting_texts"] == 1


@pytest.mark.parametrize("variant", INVISIBLY_DIFFERENT)
def test_an_invisible_difference_merges_the_same_judgment(variant):
    g = group(
        (TEXT, "A", "No error"),
        (INVISIBLY_DIFFERENT[variant], "B", "No error"),
        ("Where?", "C", "disfluent"),
    )
    per_text = QualityMap.from_dict({**QD_MAP.data, "pairs_per": "text"})
    pairs = build_pairs([g], per_text).pairs
    assert len(pairs) == 1 and pairs[0].high.systems == ["A", "B"]


@pytest.mark.parametrize("blank", BLANK)
def test_a_text_no_reader_sees_is_empty_everywhere(blank):
    g = group((TEXT, "A", "No error"), (blank, "B", "disfluent"))
    result = build_pairs([g], QD_MAP)
    assert result.pairs == [] and result.skipped.counts == {"empty candidate text": 1}
    assert is_blank(blank)
    assert is_blank(TRANSFORMATIONS.get("whitespace")().apply(blank))  # the same verdict
    context = group((TEXT, "A", "No error"), ("Where?", "B", "disfluent"), context={"x": blank})
    assert build_pairs([context], QD_MAP).skipped.counts == {"empty context field(s) ['x']": 2}


def test_the_whitespace_transformation_agrees_with_the_rule():
    whitespace = TRANSFORMATIONS.get("whitespace")()
    for variant in INVISIBLY_DIFFERENT.values():
        assert equivalence_key(whitespace.apply(variant)) == equivalence_key(TEXT)


def test_visible_differences_stay_tests():
    for other in ("Où est le cafe ?", "où est le café ?", "Où est le café?", "Où est le café ?!"):
        assert not same_text(TEXT, other)
        g = group((TEXT, "A", "No error"), (other, "B", "disfluent"))
        assert len(build_pairs([g], QD_MAP).pairs) == 1


def test_degenerate_pairs_use_the_rule():
    def pair(high: str, low: str) -> Pair:
        side = {"label": "x", "systems": ["s"]}
        return Pair(
            id="0" * 16,
            group_id="g",
            context={"x": "y"},
            high=PairCandidate(text=high, **side),
            low=PairCandidate(text=low, **side),
            label="x",
            category="x",
            category_path=["x"],
        )

    for variant in INVISIBLY_DIFFERENT.values():
        assert is_degenerate(pair(TEXT, variant))
    assert not is_degenerate(pair(TEXT, TEXT.lower()))


def test_the_manifest_names_the_rule(challenge300_suite):
    manifest = challenge300_suite.manifest
    assert manifest.text_equivalence == TEXT_EQUIVALENCE
    # A suite built before the rule (no field) keeps its hashes and stays valid.
    older = manifest.model_copy(update={"text_equivalence": None})
    sealed = older.sealed(challenge300_suite.pairs, challenge300_suite.candidates)
    assert "text_equivalence" not in sealed.section_hashes
    assert "text_equivalence" in manifest.section_hashes


def test_validation_calls_an_invisible_candidate_empty(quiz_design_suite):
    from nnd_suites.errors import SuiteValidationError
    from nnd_suites.suite import Suite

    first = quiz_design_suite.pairs[0]
    hidden = first.model_copy(update={"low": first.low.model_copy(update={"text": "\u200b\u200b"})})
    suite = Suite(quiz_design_suite.manifest, [hidden, *quiz_design_suite.pairs[1:]], [])
    with pytest.raises(SuiteValidationError, match="empty candidate text"):
        suite.validate()


def rule_key(text: str, *, keep_joiners: bool = True) -> str:
    """The rule as the module docstring states it, in its order (NFC, drop the invisible but the
    joiners, collapse whitespace, nothing but joiners and spaces is empty), with none of
    ``equivalence_key``'s shortcut (collapse first, skip the drop when the collapsed text is
    printable); without ``keep_joiners``, the older rule (JOINERS_DROPPED)."""
    normal = unicodedata.normalize("NFC", text)
    key = " ".join(drop_invisible(normal, keep_joiners=keep_joiners).split())
    return "" if set(key) <= {" ", "\u200c", "\u200d"} else key


def test_the_shortcut_gives_the_rule_for_every_code_point():
    chars = list(map(chr, chain(range(0xD800), range(0xE000, 0x110000))))  # all but surrogates
    # Unassigned (Cn) and private-use (Co) code points, nine in ten, are starters that NFC leaves
    # as they are and ``isprintable`` refuses, so a text of many of them takes the branch and the
    # normalisation each takes alone: 4,096 to a text keeps this test near two seconds where
    # 3.3 million texts one at a time took seven (map and compress: no Python loop per char).
    unassigned = list(map({"Cn", "Co"}.__contains__, map(unicodedata.category, chars)))
    assigned = [char for char, no in zip(chars, unassigned, strict=True) if not no]
    # alone (the ends stripped), between letters (NFC may compose it with "a"), between spaces
    texts = [*assigned, *(f"a{char}b" for char in assigned), *(f"a {char} b" for char in assigned)]
    batched = list(compress(chars, unassigned))
    for start in range(0, len(batched), 4096):
        chunk = batched[start : start + 4096]
        texts.append(f"{''.join(chunk)} {' '.join(chunk)}")  # side by side, between spaces
    differ = map(str.__ne__, map(equivalence_key, texts), map(rule_key, texts))
    assert list(compress(texts, differ)) == []
    assert len(assigned) > 100_000 and len(assigned) + len(batched) == 0x110000 - 0x800


@settings(settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci")))
@given(st.text(st.characters(exclude_categories=["Cs"])))
def test_the_shortcut_gives_the_rule_for_any_text(text):
    assert equivalence_key(text) == rule_key(text)
    assert joiners_dropped_key(text) == rule_key(text, keep_joiners=False)


# Zero-width joiners are written, not invisible: a Persian word with its non-joiner (U+200C) and
# without it, and an emoji sequence (woman, U+200D, laptop: one glyph) and its two glyphs apart,
# render differently.
JOINED = {
    "Persian ZWNJ": (
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        "\u0645\u06cc\u062e\u0648\u0627\u0647\u0645",
    ),
    "emoji ZWJ": ("I am a \U0001f469\u200d\U0001f4bb.", "I am a \U0001f469\U0001f4bb."),
}


@pytest.mark.parametrize("variant", JOINED)
def test_a_joiner_makes_another_text(variant):
    joined, apart = JOINED[variant]
    assert not same_text(joined, apart) and equivalence_key(joined) != equivalence_key(apart)
    g = group((joined, "A", "No error"), (apart, "B", "disfluent"))
    result = build_pairs([g], QD_MAP)
    assert result.skipped.counts == {} and len(result.pairs) == 1
    assert not is_degenerate(result.pairs[0]) and result.counts["degenerate_pairs"] == 0
    assert (result.pairs[0].high.text, result.pairs[0].low.text) == (joined, apart)
    # an invisible difference beside the joiner is still none
    assert same_text(joined, "\u200b" + joined + " ") and not is_blank(joined)


def test_joiners_with_nothing_to_join_are_empty():
    for blank in ("\u200c", "\u200d\u200c", " \u200d \u200c\u200b "):
        assert is_blank(blank) and same_text(blank, "") and equivalence_key(blank) == ""
