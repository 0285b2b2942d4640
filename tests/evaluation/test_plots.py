"""PNG helpers: scatter of pass rate against human score, leaderboard of several runs."""

from __future__ import annotations

import pytest

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.leaderboard import leaderboard_rates
from nnd_suites.evaluation.plots import write_leaderboard, write_scatter
from nnd_suites.evaluation.report import EvaluationReport, Rate, RequestCounts, SuiteResult

PNG = b"\x89PNG\r\n\x1a\n"


def _report(model: str, passed: dict[str, int]) -> EvaluationReport:
    """A report of one suite with 100 tests in each of two categories."""
    rates = {c: _rate(p, 100) for c, p in passed.items()}
    total = _rate(sum(passed.values()), 200)
    result = SuiteResult(
        suite="toy",
        adapter="toy",
        content_hash="0" * 64,
        template_name="default",
        template="{x}",
        pairs=200,
        passed=total.passed,
        ties=0,
        failed=total.failed,
        degenerate=0,
        pass_rate=total.pass_rate,
        ci=total.ci,
        by_category=rates,
        by_breakdown={},
        truncated_tests=0,
        truncated_tokens=0,
    )
    return EvaluationReport(
        nnd_suites_version="0",
        created="2024-01-01T00:00:00+00:00",
        model=model,
        backend={},
        mode="default",
        suites={"toy": result},
        requests=RequestCounts(tests=200, unique=0, cached=0, scored=0),
        seconds=0.0,
    )


def _rate(passed: int, n: int) -> Rate:
    from nnd_suites.evaluation.report import rate

    return rate(["pass"] * passed + ["fail"] * (n - passed))


def test_scatter(tmp_path):
    path = write_scatter(
        tmp_path / "plots" / "scatter.png",
        {"A": 0.4, "B": 0.5, "C": 0.6, "D": 0.7},
        {"A": 0.30, "B": 0.45, "C": 0.40, "D": 0.70},
        human_label="share of acceptable outputs",
    )
    assert path.read_bytes()[:8] == PNG
    assert [p.name for p in path.parent.iterdir()] == ["scatter.png"]  # no temporary file left
    with pytest.raises(NNDError, match="same systems"):
        write_scatter(tmp_path / "x.png", {"A": 0.4}, {"B": 0.3})
    assert not (tmp_path / "x.png").exists()


def test_leaderboard(tmp_path):
    reports = [
        _report("m", {"x": 60, "y": 40}),
        _report("m", {"x": 70, "y": 45}),
        _report("n", {"x": 30, "y": 90}),
    ]
    table = leaderboard_rates(reports)
    assert list(table["toy"]) == ["overall", "x", "y"]
    assert list(table["toy"]["overall"]) == ["m", "m #2", "n"]  # the same model twice, numbered
    assert table["toy"]["overall"]["n"].passed == 120 and table["toy"]["y"]["m #2"].passed == 45
    path = write_leaderboard(tmp_path / "board.png", reports)
    assert path.read_bytes()[:8] == PNG
    with pytest.raises(NNDError, match="2 label"):
        leaderboard_rates(reports, ["a", "b"])


def test_a_category_named_overall_keeps_its_own_row(heuristic_report):
    """sfhot has a category 'overall': in a leaderboard its rate (and its baselines, and its
    test count) replaced the suite's overall row, so the board ranked models on 386 of 1003."""
    from nnd_suites import build_suite
    from nnd_suites.evaluation.leaderboard import leaderboard

    suite = build_suite("sfhot")
    longer = heuristic_report([suite], "longer", lambda text: float(len(text)))
    words = heuristic_report([suite], "words", lambda text: float(len(text.split())))
    board = leaderboard([longer, words], ["longer", "words"])
    rows = board.suites["sfhot"]
    result = longer.suites["sfhot"]
    assert rows["overall"]["longer"] == result.overall and result.overall.n > 386
    assert rows["overall (category)"]["longer"] == result.by_category["overall"]
    assert rows["overall (category)"]["longer"].n == 386
    assert board.baseline_tests["sfhot"]["overall"] == result.overall.n
    shorter = board.baselines["sfhot"]["shorter"]
    assert shorter["overall"] == result.baselines["shorter"].overall.pass_rate
    assert (
        shorter["overall (category)"]
        == result.baselines["shorter"].by_category["overall"].pass_rate
    )


def test_a_category_named_overall_has_its_own_bar_and_baselines(heuristic_report, monkeypatch):
    """pass_rates.png of an sfhot run had two bars labelled 'overall' (the suite, the category),
    and both were marked with one baseline figure."""
    from nnd_suites import build_suite
    from nnd_suites.evaluation import plots

    report = heuristic_report([build_suite("sfhot")], "longer", lambda text: float(len(text)))
    marked = []
    monkeypatch.setattr(plots, "baseline_marks", lambda axis, rates, rows: marked.append(rows))
    monkeypatch.setattr(plots, "save", lambda figure, path: path)
    plots.write_pass_rates(report, "unused.png")
    [rows] = marked
    assert rows[0] == "overall" and rows.count("overall") == 1 and "overall (category)" in rows
    shorter = plots.report_baselines(report)["sfhot"]["shorter"]
    result = report.suites["sfhot"]
    assert shorter["overall"] == result.baselines["shorter"].overall.pass_rate
    category = result.baselines["shorter"].by_category["overall"].pass_rate
    assert shorter["overall (category)"] == category != shorter["overall"]


def test_a_category_named_overall_is_told_apart_in_baseline_tables_and_the_comparison_chart(
    heuristic_report, monkeypatch
):
    """report.md's baselines table and `nnd-suites baselines` on sfhot had two columns headed
    'overall' (the suite's figure, then its category's), and compare's chart two rows labelled
    'overall': the category is 'overall (category)' there too, as in leaderboards and charts."""
    from matplotlib.axes import Axes

    from nnd_suites import build_suite
    from nnd_suites.evaluation.baselines import baselines, baselines_markdown
    from nnd_suites.evaluation.comparison import compare_reports
    from nnd_suites.evaluation.comparison.chart import write_differences
    from nnd_suites.evaluation.report_markdown import markdown

    suite = build_suite("sfhot")
    longer = heuristic_report([suite], "longer", lambda text: float(len(text)))
    words = heuristic_report([suite], "words", lambda text: float(len(text.split())))
    header = next(line for line in markdown(longer).splitlines() if line.startswith("| scorer"))
    assert header.startswith("| scorer | overall | overall (category) |")
    assert header.count("| overall |") == 1
    text = baselines_markdown(baselines(suite))
    assert "| baseline | overall (n=1,003) | overall (category) (n=386) |" in text
    labels = []
    monkeypatch.setattr(Axes, "set_yticks", lambda axis, ticks, shown: labels.extend(shown))
    monkeypatch.setattr("nnd_suites.evaluation.comparison.chart.save", lambda figure, path: path)
    write_differences(compare_reports(longer, words), "unused.png")
    assert labels[0].startswith("overall (n=1,003)") and labels[1].startswith("overall (category)")
