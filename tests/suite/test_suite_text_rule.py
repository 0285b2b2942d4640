"""A suite is validated under the text equivalence rule its manifest names (``text_equivalence``):
suites built before zero-width joiners were kept load while that rule and this one agree on every
text they hold, and are refused, naming the test or candidate, where they do not."""

from __future__ import annotations

import pytest

from nnd_suites.errors import SuiteValidationError
from nnd_suites.records.texts import JOINERS_DROPPED, TEXT_EQUIVALENCE
from nnd_suites.suite import Suite
from nnd_suites.transformations import transform_suite

WITH_ZWNJ = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # Persian "I want", as written
WITHOUT = WITH_ZWNJ.replace("\u200c", "")


def under(suite: Suite, rule: str | None, pairs=None, candidates=None) -> Suite:
    """``suite`` as one built under ``rule`` holding ``pairs`` and ``candidates``, sealed."""
    pairs = suite.pairs if pairs is None else pairs
    candidates = suite.candidates if candidates is None else candidates
    manifest = suite.manifest.model_copy(update={"text_equivalence": rule})
    return Suite(manifest.sealed(pairs, candidates), pairs, candidates)


def with_joined_test(suite: Suite) -> list:
    first = suite.pairs[0]
    high = first.high.model_copy(update={"text": WITH_ZWNJ})
    low = first.low.model_copy(update={"text": WITHOUT})
    return [first.model_copy(update={"high": high, "low": low}), *suite.pairs[1:]]


def test_new_suites_name_the_rule_that_keeps_joiners(quiz_design_suite):
    assert TEXT_EQUIVALENCE != JOINERS_DROPPED
    assert quiz_design_suite.manifest.text_equivalence == TEXT_EQUIVALENCE


@pytest.mark.parametrize("rule", [JOINERS_DROPPED, None])
def test_an_older_suite_without_joiners_loads_with_its_counts(quiz_design_suite, tmp_path, rule):
    older = under(quiz_design_suite, rule)
    older.save(tmp_path / "older")
    loaded = Suite.load(tmp_path / "older")
    assert loaded.manifest.text_equivalence == rule
    assert loaded.manifest.counts == quiz_design_suite.manifest.counts
    assert loaded.manifest.content_hash == older.manifest.content_hash


def test_a_joined_and_an_unjoined_text_are_a_test_under_this_rule(quiz_design_suite):
    under(quiz_design_suite, TEXT_EQUIVALENCE, with_joined_test(quiz_design_suite)).validate()


@pytest.mark.parametrize("rule", [JOINERS_DROPPED, None])
def test_an_older_suite_that_took_them_for_one_text_is_refused(quiz_design_suite, rule):
    pairs = with_joined_test(quiz_design_suite)
    with pytest.raises(SuiteValidationError) as caught:
        under(quiz_design_suite, rule, pairs).validate()
    message = str(caught.value)
    assert f"pair {pairs[0].id}" in message and "U+200C" in message
    assert JOINERS_DROPPED in message and "rebuild the suite" in message


def test_older_candidates_it_pooled_as_one_text_are_refused(quiz_design_suite):
    candidates = list(quiz_design_suite.candidates)
    group = candidates[0].group_id
    mine = [i for i, c in enumerate(candidates) if c.group_id == group][:2]
    for i, text in zip(mine, (WITH_ZWNJ, WITHOUT), strict=True):
        candidates[i] = candidates[i].model_copy(update={"text": text})
    # the current rule tells them apart: nothing to refuse
    under(quiz_design_suite, TEXT_EQUIVALENCE, candidates=candidates).validate()
    with pytest.raises(SuiteValidationError, match=f"group {group!r}.*rebuild the suite"):
        under(quiz_design_suite, JOINERS_DROPPED, candidates=candidates).validate()


def test_a_rule_this_release_does_not_know_is_named(quiz_design_suite):
    with pytest.raises(SuiteValidationError, match="'nfc-only'.*upgrade nnd-suites"):
        under(quiz_design_suite, "nfc-only").validate()


def test_a_child_records_the_rule_its_counts_were_made_with(quiz_design_suite):
    child = transform_suite(under(quiz_design_suite, JOINERS_DROPPED), "whitespace")
    assert child.manifest.text_equivalence == TEXT_EQUIVALENCE


def test_a_reader_of_the_rule_that_drops_joiners_refuses_a_suite_built_now(
    challenge300_suite, tmp_path, monkeypatch
):
    # a release of format 2.3 applies JOINERS_DROPPED to every suite: it must read a suite
    # that tells joiners apart as newer ("upgrade"), never count its tests under its own rule
    from nnd_suites.suite import manifest as suite_manifest

    assert challenge300_suite.manifest.format_version == suite_manifest.FORMAT_VERSION == "2.4"
    assert challenge300_suite.manifest.text_equivalence == TEXT_EQUIVALENCE
    folder = challenge300_suite.save(tmp_path / "s")
    monkeypatch.setattr(suite_manifest, "FORMAT_VERSION", "2.3")
    with pytest.raises(SuiteValidationError, match=r"format 2\.4, this one reads up to 2\.3"):
        Suite.load(folder)
