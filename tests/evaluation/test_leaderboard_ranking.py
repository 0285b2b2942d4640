"""A leaderboard of models that rated different tests (one skipped the tests whose candidate did
not fit its window) ranks them on the tests every model rated, as ``compare`` pairs them, and
says so in leaderboard.md (the console prints it), leaderboard.json and leaderboard.png; its
charts, like every chart of a pipeline check, say PIPELINE CHECK in the title.

The runs are scored by text heuristics through the evaluator's own outcome and report code: on
quiz_design, 'short' (prefer the shorter candidate, skip one longer than 40 characters) rates
400 tests at 42.2%, 'every' (prefer the longer short candidate, the shorter long one) rates
2,686 at 41.8% but 48.2% on the 400 'short' rated."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from nnd_suites.evaluation import plots
from nnd_suites.evaluation.comparison import compare_reports
from nnd_suites.evaluation.comparison.chart import write_differences
from nnd_suites.evaluation.leaderboard import COMMON_ROW, Leaderboard, leaderboard
from nnd_suites.evaluation.multi import leaderboard_markdown, write_leaderboard_folder

WINDOW = 40


@pytest.fixture(scope="module")
def runs(quiz_design_suite, heuristic_report):
    short = heuristic_report(
        [quiz_design_suite], "short", lambda t: None if len(t) > WINDOW else -float(len(t))
    )
    every = heuristic_report(
        [quiz_design_suite],
        "every",
        lambda t: float(len(t)) if len(t) <= WINDOW else -float(len(t)),
    )
    return short, every


def _row(table: str, label: str) -> int:
    return next(i for i, line in enumerate(table.splitlines()) if line.startswith(f"| {label} "))


def test_models_that_rated_different_tests_are_ranked_on_the_tests_all_rated(runs):
    short, every = runs
    own_short = short.suites["quiz_design"].overall
    own_every = every.suites["quiz_design"].overall
    # each model's own rate puts 'short' first: the order the leaderboard printed
    assert own_short.pass_rate > own_every.pass_rate and own_short.n < own_every.n
    paired = compare_reports(every, short).suites["quiz_design"].overall
    assert paired.pass_rate_a > paired.pass_rate_b  # 'every' wins on the tests both rated
    board = leaderboard([short, every], ["short", "every"])
    ranked = board.ranking["quiz_design"]
    assert ranked.order == ["every", "short"]
    assert ranked.tests == paired.n == own_short.n
    assert ranked.rates["every"].pass_rate == pytest.approx(paired.pass_rate_a)
    assert ranked.rates["short"].pass_rate == pytest.approx(paired.pass_rate_b)
    assert ranked.left_out == own_every.n - own_short.n
    assert ranked.skipped == {"short": own_short.skipped, "every": 0}
    assert board.models[0].label == "short"  # the models keep the order they were given in
    again = Leaderboard.model_validate_json(board.model_dump_json())
    assert again.ranking == board.ranking  # leaderboard.json holds it
    table = leaderboard_markdown(board)
    assert _row(table, "every") < _row(table, "short")
    header = next(line for line in table.splitlines() if line.startswith("| model "))
    assert f"| {COMMON_ROW} (n={own_short.n}) | overall (n={own_every.n:,}) |" in header
    short_row = table.splitlines()[_row(table, "short")]
    own = f"(n={own_short.n}, {own_short.skipped:,} skipped)"  # its own rate and n, beside
    assert f"{100 * own_short.pass_rate:.1f}%" in short_row and own in short_row
    assert (
        f"Ranked on the {own_short.n} tests every model rated (first rate column): "
        f"{ranked.left_out:,} tests left out of the ranking because some model skipped them, "
        f"a candidate did not fit its window (short skipped {own_short.skipped:,})"
    ) in table


def test_models_that_rated_the_same_tests_are_ranked_as_before(runs, heuristic_report):
    _, every = runs
    shorter = heuristic_report(
        [every.suites["quiz_design"]._scored[0]], "shorter", lambda t: -len(t)
    )
    board = leaderboard([every, shorter], ["every", "shorter"])
    assert board.ranking == {}
    table = leaderboard_markdown(board)
    assert COMMON_ROW not in table and "Ranked on" not in table
    first = "every" if _row(table, "every") < _row(table, "shorter") else "shorter"
    rates = {r.model: r.suites["quiz_design"].overall.pass_rate for r in (every, shorter)}
    assert first == max(rates, key=rates.__getitem__)


def _drawn(monkeypatch) -> list[Figure]:
    """The figures the charts save, kept to read their text."""
    figures: list[Figure] = []
    savefig = Figure.savefig

    def keep(figure, *args, **kwargs):  # type: ignore[no-untyped-def]
        figures.append(figure)
        return savefig(figure, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return figures


def _texts(figure: Figure) -> list[str]:
    return [t.get_text() for t in figure.findobj(Text) if t.get_text()]


def test_the_leaderboard_chart_gives_each_bar_its_own_n_and_the_ranking_row(
    runs, tmp_path, monkeypatch
):
    short, every = runs
    figures = _drawn(monkeypatch)
    write_leaderboard_folder(leaderboard([short, every], ["short", "every"]), tmp_path / "b")
    (figure,) = [f for f in figures if f.get_suptitle().startswith("NND leaderboard")]
    texts = _texts(figure)
    n_short, n_every = (r.suites["quiz_design"].overall.n for r in (short, every))
    axis = figure.axes[0]
    rows = [t.get_text() for t in axis.get_yticklabels()]
    assert rows[:2] == [f"{COMMON_ROW} (n={n_short})", f"overall (n={n_every:,})"]
    # the 'short' bars over fewer tests than their row's n say their own
    assert f"n={n_short}" in texts
    assert not any("PIPELINE CHECK" in text for text in texts)  # heuristics, not random weights


def test_every_chart_of_a_pipeline_check_says_so(runs, tmp_path, monkeypatch):
    short, every = runs
    for run in runs:
        run.random_weights = True
    try:
        figures = _drawn(monkeypatch)
        write_leaderboard_folder(leaderboard([short, every], ["short", "every"]), tmp_path / "b")
        comparison = compare_reports(every, short)
        assert comparison.random_weights
        write_differences(comparison, tmp_path / "differences.png")
        plots.write_pass_rates(every, tmp_path / "pass_rates.png")
        plots.write_scatter(tmp_path / "v.png", {"a": 0.4, "b": 0.6}, {"a": 1, "b": 2}, check=True)
    finally:
        for run in runs:
            run.random_weights = None
    # leaderboard.png, each model's pass_rates.png, differences.png, pass_rates.png, the scatter
    assert len(figures) == 6
    for figure in figures:
        assert any(plots.PIPELINE_CHECK in text for text in _texts(figure))
