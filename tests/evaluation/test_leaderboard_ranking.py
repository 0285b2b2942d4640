"""A leaderboard of models that rated different tests (one skipped the tests whose candidate did
not fit its window): leaderboard.png gives each bar over fewer tests its own n; every chart of a
pipeline check (random weights) says PIPELINE CHECK in its title, as pass_rates.png does.

The runs are scored by text heuristics through the evaluator's own outcome and report code: on
quiz_design, 'short' (prefer the shorter candidate, skip one longer than 40 characters) rates
400 tests, 'every' (prefer the longer short candidate, the shorter long one) 2,686."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from nnd_suites.evaluation import plots
from nnd_suites.evaluation.comparison import compare_reports
from nnd_suites.evaluation.comparison.chart import write_differences
from nnd_suites.evaluation.leaderboard import leaderboard
from nnd_suites.evaluation.multi import write_leaderboard_folder

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


def test_the_leaderboard_chart_gives_each_bar_its_own_n(runs, tmp_path, monkeypatch):
    short, every = runs
    figures = _drawn(monkeypatch)
    write_leaderboard_folder(leaderboard([short, every], ["short", "every"]), tmp_path / "b")
    (figure,) = [f for f in figures if f.get_suptitle().startswith("NND leaderboard")]
    texts = _texts(figure)
    n_short, n_every = (r.suites["quiz_design"].overall.n for r in (short, every))
    axis = figure.axes[0]
    rows = [t.get_text() for t in axis.get_yticklabels()]
    assert rows[0] == f"overall (n={n_every:,})"
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
