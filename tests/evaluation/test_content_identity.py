"""Identity from content, everywhere (issue 33 §3): a suite is what it holds when it is scored,
a reference model is its weights, a served engine is what it answers now. Each case ends in the
right figure or a named one-line error."""

from __future__ import annotations

import copy

import pytest

from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.comparison import IncomparableRunsError, compare_reports

#: context groups scored per run: enough tests for a pass rate, few enough for a quick test
GROUPS = 5


def _swapped(suite):
    """A deep copy of ``suite`` with the two sides of every test swapped in memory: the same test
    ids, the manifest untouched, every verdict reversed."""
    edited = copy.deepcopy(suite)
    for pair in edited.pairs:
        pair.high, pair.low = pair.low, pair.high
    return edited


def test_a_suite_edited_in_memory_is_scored_and_compared_as_other_tests(
    tiny_causal_model, quiz_design_suite
):
    def run(suite):
        return evaluate(
            str(tiny_causal_model), suite, limit=GROUPS, cache=False, progress=False
        ).suites["quiz_design"]

    original, swapped = run(quiz_design_suite), run(_swapped(quiz_design_suite))
    # every test reversed: the swapped run passes exactly the tests the original fails
    assert original.overall.n == swapped.overall.n == 33
    assert original.overall.ties == swapped.overall.ties == 0
    assert swapped.passed == original.overall.n - original.passed > 0
    assert swapped.overall.pass_rate != original.overall.pass_rate
    assert original.content_hash == quiz_design_suite.manifest.content_hash
    assert swapped.content_hash != original.content_hash
    assert swapped.limited == original.limited  # the same part of the suite: only the content


def test_compare_refuses_a_suite_edited_in_memory_as_other_tests(
    tiny_causal_model, quiz_design_suite
):
    def run(suite):
        return evaluate(str(tiny_causal_model), suite, limit=GROUPS, cache=False, progress=False)

    original, swapped = run(quiz_design_suite), run(_swapped(quiz_design_suite))
    with pytest.raises(IncomparableRunsError, match="cover different tests: suite quiz_design: "):
        compare_reports(original, swapped)
    with pytest.raises(IncomparableRunsError, match="cover different tests"):
        compare_reports(original, swapped, allow_different_scoring=True)  # never on purpose
    assert compare_reports(original, run(quiz_design_suite)).suites["quiz_design"].overall
