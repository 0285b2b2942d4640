"""Two figures are compared only on the tests both rated (issue 33 §2): a model's bias baselines,
its placement among the annotated systems, and runs cut by --limit are all counted on the tests
actually rated or kept, through :func:`nnd_suites.statistics.outcomes.rated_by_all`.

The runs are scored by text heuristics through the evaluator's own outcome and report code; the
'model' skips the tests with a long candidate, as a model with a short window does."""

from __future__ import annotations

import pytest

from nnd_suites.errors import NNDError
from nnd_suites.evaluation import plots
from nnd_suites.evaluation.baselines import baseline_outcomes, baseline_rates
from nnd_suites.evaluation.comparison import IncomparableRunsError, compare_reports
from nnd_suites.evaluation.leaderboard import leaderboard
from nnd_suites.evaluation.multi import leaderboard_markdown, write_leaderboard_folder
from nnd_suites.evaluation.prepared import first_groups
from nnd_suites.evaluation.report_markdown import markdown as report_markdown
from nnd_suites.evaluation.verify.models import Correlation, VerifyReport, sealed
from nnd_suites.evaluation.verify.place import place_in_verify
from nnd_suites.evaluation.verify.render import placement_markdown
from nnd_suites.evaluation.verify.stats import place_model
from nnd_suites.records.pairs import is_degenerate
from nnd_suites.statistics.outcomes import outcome_map, rate, rated_by_all

#: longer than this many characters, a candidate "does not fit the window" of the short model
WINDOW = 40


def short_window(text: str) -> float | None:
    """Prefer the shorter candidate; skip a candidate longer than ``WINDOW``."""
    return None if len(text) > WINDOW else -float(len(text))


@pytest.fixture(scope="module")
def short_run(challenge300_suite, heuristic_report):
    return heuristic_report([challenge300_suite], "short-window", short_window)


def test_rated_by_all_keeps_the_tests_every_run_rated():
    a = {"t1": "pass", "t2": "skipped", "t3": "tie", "t4": "fail", "t5": "degenerate"}
    b = {"t1": "fail", "t2": "pass", "t3": "pass", "t5": "pass"}
    assert rated_by_all(a, b) == ["t1", "t3"]  # t4 absent from b, t2 skipped, t5 degenerate
    assert rated_by_all(a) == ["t1", "t3", "t4"]
    assert rated_by_all() == []


def test_baselines_are_counted_on_the_tests_the_model_rated(short_run, challenge300_suite):
    result = short_run.suites["challenge300"]
    mine = result.overall
    assert mine.skipped > 100  # the long tests: the ones "prefer the longer" passes most
    rated = rated_by_all(outcome_map(short_run.outcomes["challenge300"]))
    assert len(rated) == mine.n
    longer = baseline_outcomes(challenge300_suite, "longer")
    on_rated = rate(longer[pair_id] for pair_id in rated)
    on_every_test = rate(longer.values())
    figures = result.baselines["longer"]
    assert figures.overall == on_rated and figures.overall.n == mine.n
    assert figures.left_out == mine.skipped + mine.degenerate
    # the figure the report printed before, over every test: 398/807 = 49.3% against 235/496
    assert (on_every_test.passed, on_every_test.n) == (398, 807)
    assert (on_rated.passed, on_rated.n) == (235, 496)
    for category, r in figures.by_category.items():
        assert r.n == result.by_category[category].n
    # the model prefers the shorter candidate: on the same tests it IS the "shorter" baseline
    shorter = result.baselines["shorter"]
    for theirs, ours in [
        (shorter.overall, mine),
        *((shorter.by_category[c], r) for c, r in result.by_category.items() if r.n),
    ]:
        assert (theirs.n, theirs.passed, theirs.ties) == (ours.n, ours.passed, ours.ties)
    # a run that rated every test gets the suite's baselines, nothing left out
    whole = baseline_rates(challenge300_suite)
    assert whole["longer"].overall == on_every_test and whole["longer"].left_out == 0
    text = report_markdown(short_run)
    assert (
        f"Bias baselines on the same tests (no model; a tie is not a pass), the {mine.n} tests "
        f"this model rated ({mine.skipped} skipped, {mine.degenerate} degenerate left out)"
    ) in text


def _verify(suite, result, systems: dict[str, dict[str, str]]) -> VerifyReport:
    human = {"x": 0.1, "y": 0.45, "z": 0.8}

    def correlation(tests: list[str]) -> Correlation:
        return Correlation(
            tests=len(tests),
            systems=3,
            pass_rates={
                n: sum(o[t] == "pass" for t in tests) / len(tests) for n, o in systems.items()
            },
            human_scores=human,
            kendall_tau=None,
            kendall_tau_ci=None,
            gap_pearson=None,
            gap_pearson_ci=None,
            undefined_resamples={"kendall_tau": 0, "gap_pearson": 0},
        )

    every = rated_by_all(*systems.values())
    categories = {p.id: p.category for p in suite.pairs}
    report = VerifyReport(
        nnd_suites_version="test",
        created="2024-01-01T00:00:00+00:00",
        suite=suite.name,
        content_hash=suite.manifest.content_hash,
        measure="mean rating",
        systems={"x": "m1", "y": "m2", "z": "m3"},
        mode="default",
        template=result.template,
        resamples=10,
        seed=0,
        confidence=0.95,
        note="test",
        overall=correlation(every),
        by_category={
            c: correlation([t for t in every if categories[t] == c]) for c in result.by_category
        },
        category_kinds=dict.fromkeys(result.by_category, "error"),
        outcomes=systems,
    )
    return sealed(report)


def test_place_fits_on_the_tests_the_model_rated(short_run, challenge300_suite):
    suite, result = challenge300_suite, short_run.suites["challenge300"]
    # the systems rate every test; x passes the long tests more than the short ones
    systems = {
        name: {
            p.id: "degenerate"
            if is_degenerate(p)
            else "pass"
            if rule(i, max(len(p.high.text), len(p.low.text)) > WINDOW)
            else "fail"
            for i, p in enumerate(suite.pairs)
        }
        for name, rule in (
            ("x", lambda i, long: long or i % 5 == 0),
            ("y", lambda i, long: i % 2 == 0),
            ("z", lambda i, long: i % 4 != 0),
        )
    }
    verify = _verify(suite, result, systems)
    placed = place_in_verify(verify, short_run)
    mine = outcome_map(short_run.outcomes["challenge300"])
    tests = rated_by_all(mine, *systems.values())
    assert placed.tests == len(tests) == result.overall.n
    assert placed.not_rated == result.overall.skipped == verify.overall.tests - len(tests)
    rates = {n: sum(o[t] == "pass" for t in tests) / len(tests) for n, o in systems.items()}
    assert placed.system_pass_rates == rates
    assert rates["x"] < verify.overall.pass_rates["x"]  # its long-test passes left out
    expected = place_model(rates, verify.overall.human_scores, result.pass_rate)
    assert placed.overall.pass_rate == result.pass_rate
    assert placed.overall.predicted_human_score == pytest.approx(expected.predicted)
    assert placed.overall.r_squared == pytest.approx(expected.r_squared)
    assert (
        f"counted on the same {len(tests)} tests: those every annotated system's model and this "
        f"model rated; {result.overall.skipped} tests of the verify run's fit this model did not "
        "rate"
    ) in placement_markdown(placed)
    # a verify run that kept no per-test outcomes cannot be cut to the rated tests
    verify.outcomes = None
    with pytest.raises(NNDError, match="records no per-test outcomes .* re-run verify"):
        place_in_verify(verify, short_run)


def test_an_older_verify_run_places_a_model_that_skipped_nothing(
    challenge300_suite, heuristic_report
):
    """Without per-test outcomes the stored fit is used, only for a model that rated every
    test it could: its placement says no test count (``tests`` null), as such reports did."""
    run = heuristic_report([challenge300_suite], "longer", lambda t: float(len(t)))
    result = run.suites["challenge300"]
    assert result.skipped == 0
    systems = {
        n: {p.id: "pass" if i % k == 0 else "fail" for i, p in enumerate(challenge300_suite.pairs)}
        for n, k in (("x", 5), ("y", 2), ("z", 1))
    }
    verify = _verify(challenge300_suite, result, systems)
    verify.outcomes = None
    placed = place_in_verify(sealed(verify), run)
    assert placed.tests is None and placed.not_rated == 0
    expected = place_model(verify.overall.pass_rates, verify.overall.human_scores, result.pass_rate)
    assert placed.overall.predicted_human_score == pytest.approx(expected.predicted)
    assert "counted on the same" not in placement_markdown(placed)


def _limited(heuristic_report, suite, limit):
    report = heuristic_report([first_groups(suite, limit)], f"limit-{limit}", lambda t: len(t))
    report.limit = limit
    return report


def test_limit_is_compared_by_the_tests_it_kept(heuristic_report, quiz_design_suite):
    # 396 context groups: --limit 4 and --limit 0.01 keep the same first 4
    four = _limited(heuristic_report, quiz_design_suite, 4)
    share = _limited(heuristic_report, quiz_design_suite, 0.01)
    kept = four.suites["quiz_design"].limited
    assert kept is not None and kept.groups == 4 and kept == share.suites["quiz_design"].limited
    assert compare_reports(four, share).suites["quiz_design"].overall.n > 0
    leaderboard([four, share], ["four", "share"])  # same tests: one leaderboard
    # --limit larger than the suite keeps it whole: the same tests as a run without it
    every = heuristic_report([quiz_design_suite], "whole", lambda t: len(t))
    beyond = _limited(heuristic_report, quiz_design_suite, 1000)
    assert beyond.suites["quiz_design"].limited is None
    assert compare_reports(every, beyond).suites["quiz_design"].overall.n == (
        every.suites["quiz_design"].overall.n
    )
    # the same spelling of --limit is not enough: what it kept is compared
    five = _limited(heuristic_report, quiz_design_suite, 5)
    five.limit = 4
    with pytest.raises(
        IncomparableRunsError,
        match=r"suite quiz_design: tests kept by --limit: \d+ of 2,686 \(the first 4 groups\) vs "
        r"\d+ of 2,686 \(the first 5 groups\).*keeping the same context groups",
    ):
        compare_reports(four, five)
    with pytest.raises(NNDError, match="tests kept by --limit: every test vs"):
        compare_reports(every, four)


def test_leaderboard_baselines_count_the_tests_every_model_rated(
    short_run, challenge300_suite, heuristic_report
):
    """A model that rates every test listed first, one that skips the long candidates second:
    the baselines beside both count only the tests both rated, whatever the order, and the
    table says how many that is."""
    every = heuristic_report([challenge300_suite], "every-test", lambda t: -float(len(t)))
    runs = [outcome_map(run.outcomes["challenge300"]) for run in (every, short_run)]
    common = rated_by_all(*runs)
    assert len(common) == short_run.suites["challenge300"].overall.n  # the short window's tests
    assert len(common) < every.suites["challenge300"].overall.n
    longer = baseline_outcomes(challenge300_suite, "longer")
    expected = rate(longer[pair_id] for pair_id in common)
    on_the_first = every.suites["challenge300"].baselines["longer"].overall
    assert expected.pass_rate != on_the_first.pass_rate  # the figure the leaderboard printed
    for board in (
        leaderboard([every, short_run], ["every", "short"]),
        leaderboard([short_run, every], ["short", "every"]),
    ):
        assert board.baselines["challenge300"]["longer"]["overall"] == expected.pass_rate
        assert board.baseline_tests["challenge300"]["overall"] == len(common)
        table = leaderboard_markdown(board)
        baseline_row = next(line for line in table.splitlines() if "*baseline: longer*" in line)
        assert f"{100 * expected.pass_rate:.1f}% (n={len(common):,})" in baseline_row
        assert "on the tests every model rated" in table


def test_the_leaderboard_chart_marks_the_baselines_on_the_tests_every_model_rated(
    short_run, challenge300_suite, heuristic_report, tmp_path, monkeypatch
):
    """leaderboard.png draws the leaderboard's baselines, not the first model's report's."""
    every = heuristic_report([challenge300_suite], "every-test", lambda t: -float(len(t)))
    board = leaderboard([every, short_run], ["every", "short"])
    marked: dict[str, list[float]] = {}

    def mark(axis, baseline, marker, points):  # type: ignore[no-untyped-def]
        marked[baseline] = [x for x, _ in points]

    monkeypatch.setattr(plots, "mark_baseline", mark)
    write_leaderboard_folder(board, tmp_path / "board")
    shared = board.baselines["challenge300"]["longer"]["overall"]
    assert marked["longer"][0] == pytest.approx(100 * shared)
    own = every.suites["challenge300"].baselines["longer"].overall.pass_rate
    assert marked["longer"][0] != pytest.approx(100 * own)
