"""One outcome rule: the same per-test outcomes (with skipped, degenerate and tied tests) read
the same counts in every view: the run's report, a leaderboard, ``compare``, ``robustness`` and
``place``. (Before: ``compare`` counted a skipped test as a loss, so one run read 59.2% (n=255)
in its report and 55.7% (n=271) in ``compare``; the leaderboard's ``n`` counted skipped tests.)
"""

from __future__ import annotations

import pytest

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.comparison import compare_reports
from nnd_suites.evaluation.leaderboard import leaderboard
from nnd_suites.evaluation.limits import suite_limit
from nnd_suites.evaluation.prepared import first_groups
from nnd_suites.evaluation.report import suite_result
from nnd_suites.evaluation.robustness.stats import PairedTest, compare_to_parent, paired_tests
from nnd_suites.evaluation.verify.models import Correlation, VerifyReport, sealed
from nnd_suites.evaluation.verify.place import place_in_verify
from nnd_suites.records.pairs import is_degenerate
from nnd_suites.statistics.outcomes import RATED, Rate, rate, test_outcome, verdict, wilson
from nnd_suites.transformations import transform_suite


def _with_skips(report, suite, every: int):
    """``report`` with every ``every``-th rated test skipped (a candidate too long), its suite
    result recomputed by the evaluator's own code."""
    outcomes = [
        o.model_copy(update={"outcome": "skipped"}) if i % every == 0 and o.outcome in RATED else o
        for i, o in enumerate(report.outcomes[suite.name])
    ]
    result = report.suites[suite.name]
    report.suites[suite.name] = suite_result(
        suite.name, suite, result.template_name, result.template, outcomes, 0
    )
    report.outcomes[suite.name] = outcomes
    return report


@pytest.fixture(scope="module")
def runs(quiz_design_suite, heuristic_report):
    """Two 'models' on lower-cased Quiz Design (26 degenerate tests), with ties and skips."""
    child = transform_suite(quiz_design_suite, "lowercase")
    a = _with_skips(heuristic_report([child], "a", lambda text: -(len(text) // 8)), child, 17)
    b = _with_skips(heuristic_report([child], "b", lambda text: len(set(text))), child, 13)
    return child, a, b


def _counts(r) -> tuple[int, int, int, int, int]:
    return (r.n, r.passed, r.ties, r.degenerate, r.skipped)


def test_the_fixture_has_every_kind_of_outcome(runs):
    child, a, b = runs
    for run in (a, b):
        overall = run.suites[child.name].overall
        assert overall.degenerate == 26 and overall.skipped > 100 and overall.ties > 100
        assert overall.tests == len(child.pairs) == run.suites[child.name].pairs


def test_report_leaderboard_compare_robustness_and_place_agree(runs):
    child, a, b = runs
    name = child.name
    mine = a.suites[name]
    # leaderboard: the report's own Rate, overall and per category
    board = leaderboard([a, b], ["a", "b"])
    assert board.suites[name]["overall"]["a"] == mine.overall
    for category, r in mine.by_category.items():
        assert board.suites[name][category]["a"] == r
    # compare a run with the same model scored again (the same outcomes; a run with itself is
    # refused): every count is the report's
    again = a.model_copy(update={"created": "2024-01-02T00:00:00+00:00"})
    itself = compare_reports(a, again).suites[name]
    paired = itself.overall
    assert (paired.n, paired.passed_a, paired.ties_a, paired.degenerate, paired.skipped) == (
        _counts(mine.overall)
    )
    assert paired.pass_rate_a == mine.overall.pass_rate
    for category, r in mine.by_category.items():
        p = itself.by_category[category]
        assert (p.n, p.passed_a, p.ties_a, p.degenerate, p.skipped) == _counts(r)
    # robustness: a run against itself as its own parent, the same counts
    rows = a.outcomes[name]
    same = compare_to_parent(
        PairedTest(o.pair_id, o.category, o.outcome, o.outcome, False) for o in rows
    )
    assert (same.n, same.passed_a, same.degenerate, same.skipped) == (
        mine.overall.n,
        mine.overall.passed,
        mine.overall.degenerate,
        mine.overall.skipped,
    )
    assert same.pass_rate_a == same.pass_rate_b == mine.overall.pass_rate
    # place: the new model's pass rate is the report's, overall and per category
    verify = _verify_report(
        name, child.manifest.content_hash, list(mine.by_category), mine.template, child
    )
    placed = place_in_verify(verify, a)
    assert placed.overall.pass_rate == mine.overall.pass_rate
    for category, score in placed.by_category.items():
        assert score.pass_rate == mine.by_category[category].pass_rate


def test_place_refuses_a_run_scored_another_way(runs):
    child, a, _ = runs
    result = a.suites[child.name]
    categories = list(result.by_category)
    other = _verify_report(child.name, child.manifest.content_hash, categories, "{answer}", child)
    with pytest.raises(NNDError, match="template '\\{answer\\}'"):
        place_in_verify(other, a)
    old = _verify_report(child.name, child.manifest.content_hash, categories, None)
    with pytest.raises(NNDError, match="re-run verify"):
        place_in_verify(old, a)
    reference = _verify_report(
        child.name, child.manifest.content_hash, categories, result.template, child
    )
    reference.mode = "reference"
    with pytest.raises(NNDError, match="scoring mode 'reference'"):
        place_in_verify(reference, a)
    summed = _verify_report(
        child.name, child.manifest.content_hash, categories, result.template, child
    )
    summed.scorer = "sum"
    with pytest.raises(NNDError, match="scorer 'sum', the model to place with 'mean'"):
        place_in_verify(summed, a)


def test_two_runs_are_compared_on_the_tests_both_rated(runs):
    child, a, b = runs
    name = child.name
    rows_a, rows_b = a.outcomes[name], b.outcomes[name]
    both = [(x.outcome, y.outcome) for x, y in zip(rows_a, rows_b, strict=True)]
    rated = [(x, y) for x, y in both if x in RATED and y in RATED]
    result = compare_reports(a, b).suites[name].overall
    assert result.n == len(rated)
    assert result.degenerate == 26
    assert result.skipped == sum(1 for x, y in both if "degenerate" not in (x, y)) - len(rated)
    assert result.passed_a == sum(x == "pass" for x, _ in rated)
    assert result.passed_b == sum(y == "pass" for _, y in rated)
    assert result.ties_a == sum(x == "tie" for x, _ in rated)
    low, high = result.difference_ci
    assert low <= result.difference <= high
    # robustness counts the same pairs the same way (transformed = A, untouched = B)
    cell = compare_to_parent(
        PairedTest(x.pair_id, x.category, y.outcome, x.outcome, True)
        for x, y in zip(rows_a, rows_b, strict=True)
    )
    assert (cell.n, cell.passed_a, cell.passed_b, cell.skipped, cell.degenerate) == (
        result.n,
        result.passed_a,
        result.passed_b,
        result.skipped,
        result.degenerate,
    )
    assert cell.difference == pytest.approx(result.difference)
    assert cell.difference_ci == pytest.approx(result.difference_ci)
    assert cell.p_value == pytest.approx(result.p_value)


def test_robustness_leaves_out_a_test_skipped_on_either_side(quiz_design_suite, runs):
    child, a, _ = runs
    parent_outcomes = {p.id: "pass" for p in quiz_design_suite.pairs}
    child_outcomes = {o.pair_id: o.outcome for o in a.outcomes[child.name]}
    tests = paired_tests(quiz_design_suite, child, parent_outcomes, child_outcomes)
    cell = compare_to_parent(tests)
    overall = a.suites[child.name].overall
    assert (cell.n, cell.skipped, cell.degenerate) == (
        overall.n,
        overall.skipped,
        overall.degenerate,
    )
    assert cell.passed_a == overall.passed and cell.passed_b == cell.n
    with pytest.raises(Exception, match="not a test outcome"):
        paired_tests(quiz_design_suite, child, {k: "PASS" for k in parent_outcomes}, child_outcomes)


def test_the_rule_itself():
    assert verdict(-1.0, -2.0) == "pass" and verdict(-2.0, -1.0) == "fail"
    assert verdict(-1.0, -1.0) == "tie"
    assert test_outcome(0.0, -9.0, degenerate=True, skipped=True) == "degenerate"
    assert test_outcome(0.0, -9.0, degenerate=False, skipped=True) == "skipped"
    r = rate(["pass", "fail", "tie", "degenerate", "skipped", "pass"])
    assert _counts(r) == (4, 2, 1, 1, 1) and r.pass_rate == 0.5 and r.tests == 6
    with pytest.raises(ValueError, match="not a test outcome"):
        rate(["PASS"])
    with pytest.raises(ValueError, match="!= n"):
        Rate(n=5, passed=1, ties=0, failed=1, pass_rate=0.2, ci=None)


def test_the_wilson_interval_by_hand():
    # Wilson (1927): (p + z²/2n ± z sqrt(p(1 - p)/n + z²/4n²)) / (1 + z²/n), z = 1.959964 (95%)
    # 7 of 10: centre .644493, half-width .247715; 0 of 10: centre = half-width = .138766
    assert wilson(7, 10) == pytest.approx((0.396778, 0.892209), abs=1e-6)
    assert wilson(0, 10) == pytest.approx((0.0, 0.277533), abs=1e-6)
    assert rate(["pass"] * 7 + ["fail", "fail", "tie", "skipped"]).ci == wilson(7, 10)
    assert wilson(0, 0) is None


def _system_outcomes(suite) -> dict[str, dict[str, str]]:
    """Three annotated systems' outcomes: every test rated (degenerate ones aside), x passing
    one in 5, y one in 2, z two in 3."""
    return {
        name: {
            p.id: "degenerate" if is_degenerate(p) else "pass" if rule(i) else "fail"
            for i, p in enumerate(suite.pairs)
        }
        for name, rule in (
            ("x", lambda i: i % 5 == 0),
            ("y", lambda i: i % 2 == 0),
            ("z", lambda i: i % 3 != 0),
        )
    }


def _verify_report(
    suite: str, content_hash: str, categories: list[str], template: str | None, scored=None
) -> VerifyReport:
    """A verify report of ``suite``; ``scored``: the Suite whose tests the systems rated (their
    outcomes recorded, by :func:`_system_outcomes`), None: a report without outcomes."""

    def correlation(offset: float) -> Correlation:
        return Correlation(
            tests=100,
            systems=3,
            pass_rates={"x": 0.2 + offset, "y": 0.5 + offset, "z": 0.7 + offset},
            human_scores={"x": 0.1, "y": 0.45, "z": 0.8},
            kendall_tau=1.0,
            kendall_tau_ci=None,
            gap_pearson=1.0,
            gap_pearson_ci=None,
            undefined_resamples={"kendall_tau": 0, "gap_pearson": 0},
        )

    report = VerifyReport(
        nnd_suites_version="test",
        created="2024-01-01T00:00:00+00:00",
        suite=suite,
        content_hash=content_hash,
        measure="share of a system's candidates in the top tier",
        systems={"x": "m1", "y": "m2", "z": "m3"},
        mode="default" if template is not None else None,
        template=template,
        resamples=10,
        seed=0,
        confidence=0.95,
        note="test",
        overall=correlation(0.0),
        by_category={c: correlation(0.01 * i) for i, c in enumerate(categories)},
        category_kinds=dict.fromkeys(categories, "error"),
        outcomes=None if scored is None else _system_outcomes(scored),
    )
    return sealed(report)


def test_a_leaderboard_refuses_runs_scored_differently(runs):
    child, a, b = runs
    b2 = b.model_copy(deep=True)
    b2._outcomes = b.outcomes
    b2.suites[child.name].template = "{answer}"
    with pytest.raises(NNDError, match=r"b was scored differently from a: suite .* template"):
        leaderboard([a, b2], ["a", "b"])
    b2.suites[child.name].limited = suite_limit(first_groups(child, 3))
    with pytest.raises(
        NNDError,
        match=r"tests kept by --limit: every test vs [\d,]+ of 2,686 \("
        r"the first 3 groups\)",
    ):
        leaderboard([a, b2], ["a", "b"])
