"""Every renderer says what its command computed: the one formatter, escaped Markdown cells,
units, sections, and each chart written at a sane size. Runs are scored by text heuristics
(no model) through the evaluator's own outcome and report code."""

from __future__ import annotations

import json
import re

import matplotlib.image
import pytest

from nnd_suites.evaluation.comparison import compare_reports, comparison_markdown, write_comparison
from nnd_suites.evaluation.outputs import write_report
from nnd_suites.evaluation.report_markdown import markdown
from nnd_suites.evaluation.sensitivity import sensitivity
from nnd_suites.evaluation.tiny import EMBEDDED_FOLDER
from nnd_suites.infra.formatting import (
    cell,
    difference_with_interval,
    p_value,
    percent,
    plural,
    rate_with_interval,
    row,
    table,
)

ODD = "Odd | name\nsplit"  # a category or system name that would break a Markdown table


def columns(line: str) -> int:
    """Cells of a Markdown table row (an escaped ``\\|`` is not a separator)."""
    return len(re.split(r"(?<!\\)\|", line.strip())) - 2


def check_tables(text: str) -> None:
    """Every row of every table has as many cells as its header."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---") or line.startswith("|:"):
            width = columns(lines[i - 1])
            j = i + 1
            while j < len(lines) and lines[j].startswith("|"):
                assert columns(lines[j]) == width, (lines[i - 1], lines[j])
                j += 1


def size_of(path) -> tuple[int, int]:
    image = matplotlib.image.imread(path)
    assert image.ndim == 3
    height, width = image.shape[:2]
    assert 300 <= width <= 3000 and 250 <= height <= 4000, (path, width, height)
    return width, height


def test_formatter():
    assert percent(0.1234) == "12.3%" and percent(None) == "n/a"
    assert rate_with_interval(0.5, (0.4, 0.6)) == "50.0% [40.0, 60.0]"
    assert difference_with_interval(-0.05, (-0.08, -0.01)) == "-5.0 [-8.0, -1.0]"
    assert p_value(0.0312) == "0.031" and p_value(3e-7) == "3.0e-07" and p_value(None) == "n/a"
    assert plural(1, "group") == "1 group" and plural(3, "group") == "3 groups"
    assert plural(1, "match") == "1 match" and plural(2, "match") == "2 matches"
    assert plural(12345, "test") == "12,345 tests"
    assert cell(ODD) == "Odd \\| name split" and columns(row([ODD, "x"])) == 2
    # a separator per column (text left, numbers right), and never one too few or too many
    assert table(["a", "b", "c"], [[ODD, 2, 3]], ["---", "---:"]).splitlines() == [
        "| a | b | c |",
        "|---|---|---:|",
        "| Odd \\| name split | 2 | 3 |",
    ]
    with pytest.raises(ValueError, match="1 alignments for the 2 columns after the first"):
        table(["a", "b", "c"], [], ["---:"])


def _rename_category(report, suite: str, old: str, new: str) -> None:
    result = report.suites[suite]
    result.by_category = {new if k == old else k: v for k, v in result.by_category.items()}
    for baseline in result.baselines.values():
        baseline.by_category = {new if k == old else k: v for k, v in baseline.by_category.items()}


@pytest.fixture(scope="module")
def runs(challenge300_suite, quiz_design_suite, heuristic_report):
    suites = [challenge300_suite, quiz_design_suite]
    longer = heuristic_report(suites, "prefer-longer", lambda text: float(len(text)))
    words = heuristic_report(suites, "prefer-more-words", lambda text: float(len(text.split())))
    return longer, words


def test_report_markdown_and_pass_rates_chart(runs, challenge300_suite, tmp_path):
    longer, words = runs
    report = longer.model_copy(deep=True)
    report.limit = 6
    report.sensitivity = {
        "challenge300": sensitivity(
            challenge300_suite.pairs,
            {"mean": longer.outcomes["challenge300"], "sum": words.outcomes["challenge300"]},
        )
    }
    _rename_category(report, "challenge300", "Science", ODD)
    text = markdown(report)
    check_tables(text)
    assert "Odd \\| name split" in text and ODD not in text
    assert (
        "Only the first 6 context groups with tests of each suite" in text
        and "scorer `mean`" in text
    )
    assert "| group |" not in text and "| label |" not in text  # the categories again / one value
    assert "## Scorer sensitivity" in text and "| `sum` |" in text and "flips vs mean" in text
    assert "- `sum`: " in text and "PIPELINE CHECK" not in text
    flips = report.sensitivity["challenge300"].scorers["sum"].flips
    assert f"| {flips.flipped:,} | {percent(flips.share)} | {p_value(flips.p_value)} |" in text
    report.model = f"/cache/models/{EMBEDDED_FOLDER}"
    assert "PIPELINE CHECK" in markdown(report).split("## ")[0]
    paths = write_report(report, tmp_path / "run")
    size_of(paths["chart"])


def test_comparison_markdown_and_chart(runs, tmp_path):
    a, b = (r.model_copy(deep=True) for r in runs)
    comparison = compare_reports(a, b)
    suite = comparison.suites["challenge300"]
    suite.by_category = {(ODD if k == "Science" else k): v for k, v in suite.by_category.items()}
    suite.overall.degenerate, suite.overall.skipped = 1, 1_234  # said as counts, not "test(s)"
    text = comparison_markdown(comparison)
    check_tables(text)
    assert "1 degenerate test left out." in text and "1,234 tests left out: a candidate" in text
    overall = suite.overall
    assert difference_with_interval(overall.difference, overall.difference_ci) in text
    assert overall.difference_ci is not None and "Odd \\| name split" in text
    paths = write_comparison(comparison, tmp_path / "cmp")
    assert paths["chart"].name == "differences.png"
    size_of(paths["chart"])


def test_leaderboard_markdown_and_scaling_chart(runs, tmp_path):
    from nnd_suites.evaluation.leaderboard import leaderboard
    from nnd_suites.evaluation.multi import leaderboard_markdown
    from nnd_suites.evaluation.plots import parameters, write_leaderboard, write_scaling

    small, large = (r.model_copy(deep=True) for r in runs)
    for report, size in ((small, 124_000_000), (large, 355_000_000)):
        report.parameters, report.architecture = size, "gpt2"
    board = leaderboard([small, large], ["gpt2", ODD])
    assert board.family  # one architecture, 2.9x the size
    text = leaderboard_markdown(board)
    check_tables(text)
    assert "| Odd \\| name split | 355,000,000 |" in text and "scaling.png" in text
    assert "(2 models)" in text and "*baseline: longer*" in text
    assert parameters(124_000_000) == "124M" and parameters(7e9) == "7B"
    assert parameters(230_000) == "230K"
    size_of(write_scaling(tmp_path / "scaling.png", board))
    size_of(write_leaderboard(tmp_path / "leaderboard.png", board.reports, ["gpt2", ODD]))


def test_build_output_names_each_system_once_per_reason(capsys):
    from nnd_suites.cli import main

    assert main(["stats", "challenge300"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "without a credit column" in line]
    assert len(lines) == 1 and "never graded in the source" in lines[0]  # one line, not six
    assert "1,800 rows (Macaw-3B 300, " in lines[0]
    assert "pairs from " in out and " groups, " in out


def _verify_report():
    from nnd_suites.evaluation.verify.models import Correlation, VerifyReport

    rates, scores = {"a": 0.40, "b": 0.55, ODD: 0.70}, {"a": 0.30, "b": 0.50, ODD: 0.60}
    overall = Correlation(
        tests=200, systems=3, pass_rates=rates, human_scores=scores, kendall_tau=1.0,
        kendall_tau_ci=(0.33, 1.0), gap_pearson=0.9, gap_pearson_ci=(0.2, 1.0),
        undefined_resamples={},
    )  # fmt: skip
    return VerifyReport(
        nnd_suites_version="0", created="2024-01-01T00:00:00+00:00", suite="toy",
        content_hash="0" * 64, measure="share of acceptable outputs", score_range=(0.0, 1.0),
        systems={"a": "m/a", "b": "m/b", ODD: "m/c"}, limit=4, resamples=50, seed=0,
        confidence=0.95, note="3 systems.", overall=overall, by_category={}, category_kinds={},
    )  # fmt: skip


@pytest.mark.parametrize("limit", ["abc", [4]])
def test_a_union_field_of_a_verify_report_is_named_by_its_key_and_what_it_takes(tmp_path, limit):
    """validation_problems named each branch pydantic tried, by its type: `limit.int: Input
    should be a valid integer ...; limit.float: Input should be a valid number ...`. The key is
    named as the file writes it, once, with what it takes."""
    from nnd_suites.errors import NNDError
    from nnd_suites.evaluation.verify.render import load_verify

    written = json.loads(_verify_report().model_dump_json())
    (tmp_path / "verify.json").write_text(json.dumps({**written, "limit": limit}))
    with pytest.raises(NNDError) as caught:
        load_verify(tmp_path)
    said = str(caught.value)
    assert f"(limit: takes a number (got {limit!r}))" in said, said
    assert ".int" not in said and ".float" not in said


def test_verify_and_placement_markdown_and_charts(tmp_path):
    from nnd_suites.evaluation.verify.models import PlacedScore, PlacementReport
    from nnd_suites.evaluation.verify.render import (
        placement_markdown,
        verify_markdown,
        write_placement,
        write_verify,
    )
    from nnd_suites.infra.formatting import interval
    from nnd_suites.statistics.outcomes import wilson

    report = _verify_report()
    text = verify_markdown(report)
    check_tables(text)
    # pass rates in percent with their Wilson interval over the tests every system scored
    assert f"| b | `m/b` | 55.0 {interval(wilson(110, 200))} | 0.500 |" in text
    assert "| Odd \\| name split |" in text and "pass rate (%)" in text
    assert "| **overall** | 200 | 3 | +1.00 | [+0.33, +1.00] | +0.90 | [+0.20, +1.00] |" in text
    assert "first 4 context groups" in text
    size_of(write_verify(report, tmp_path / "verify")["chart"])
    placed = PlacedScore(
        pass_rate=0.9, predicted_human_score=0.8, prediction_interval=(0.5, 1.0), r_squared=0.3,
        systems=3, poor_fit=True, reason="only 3 annotated systems", extrapolated=True,
    )  # fmt: skip
    placement = PlacementReport.model_validate(
        {"model": "/x/y/new", "suite": "toy", "measure": report.measure, "confidence": 0.95,
         "overall": placed, "by_category": {}, "skipped": {}}
    )  # fmt: skip
    text = placement_markdown(placement)
    check_tables(text)
    assert "poor fit: only 3 annotated systems; extrapolated" in text and "| 90.0 | 0.800 |" in text
    size_of(write_placement(placement, report, tmp_path / "placement")["chart"])


def test_a_backtick_in_a_model_name_keeps_its_code_span(tiny_causal_model, tmp_path, capsys):
    """A model folder named ``my`model`` closed the report's inline code span after ``my``:
    every span is now fenced longer than the backticks inside (padded where one ends it)."""
    import shutil

    from nnd_suites.cli import main

    model = shutil.copytree(tiny_causal_model, tmp_path / "my`model")
    runs = [tmp_path / "a", tmp_path / "b"]
    for run in runs:
        argv = ["evaluate", "--model", str(model), "--suite", "challenge300", "--limit", "2"]
        assert main([*argv, "--quiet", "--out", str(run)]) == 0
    report = (runs[0] / "report.md").read_text()
    assert report.startswith(f"# NND evaluation of ``{model}``\n")
    assert main(["compare", *map(str, runs), "--out", str(tmp_path / "cmp")]) == 0
    compared = (tmp_path / "cmp" / "comparison.md").read_text().splitlines()[0]
    assert f"A = ``{model}`` (default), B = ``{model}`` (default)" in compared
    argv = ["robustness", "--model", str(model), "--suite", "challenge300", "--limit", "2"]
    assert main([*argv, "--transform", "lowercase", "--out", str(tmp_path / "rob")]) == 0
    robust = (tmp_path / "rob" / "robustness.md").read_text()
    assert robust.startswith(f"# Robustness of ``{model}``")
    from nnd_suites.infra.formatting import code  # the one maker of every span

    assert code("my`model") == "``my`model``" and code("x``") == "``` x`` ```"
    assert code("`a`") == "`` `a` ``" and code(" a ") == "`  a  `" and code("a\nb") == "`a b`"


def test_a_leaderboard_lists_models_best_first_and_ties_in_the_order_given(runs):
    """Each suite's table: the model of the higher overall pass rate (counted here from its
    outcomes: passed / rated) first; two models of the same rate keep the order given."""
    from nnd_suites.evaluation.leaderboard import leaderboard
    from nnd_suites.evaluation.multi import leaderboard_markdown

    longer, words = runs
    labels = ["a-longer", "b-words", "c-longer"]
    board = leaderboard([longer, words, longer.model_copy(deep=True)], labels)
    text = leaderboard_markdown(board)
    for suite in ("challenge300", "quiz_design"):
        rated = {
            label: [
                o.outcome for o in report.outcomes[suite] if o.outcome in ("pass", "fail", "tie")
            ]
            for label, report in zip(labels, (longer, words, longer), strict=True)
        }
        rates = {label: found.count("pass") / len(found) for label, found in rated.items()}
        assert rates["a-longer"] == rates["c-longer"] != rates["b-words"]
        words_first = rates["b-words"] > rates["a-longer"]
        expected = (
            ["b-words", "a-longer", "c-longer"]
            if words_first
            else ["a-longer", "c-longer", "b-words"]
        )
        section = text.split(f"## {suite}\n")[1].split("\n## ")[0]
        rows = [
            line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ")
        ]
        assert [label for label in rows if label in labels] == expected, suite


def test_the_length_controlled_view_keeps_candidates_of_the_same_length_apart(
    runs, challenge300_suite
):
    """Challenge 300 holds 32 tests whose candidates differ but have the same length: they are
    neither "better shorter" nor "better longer" (counted here from the texts)."""
    longer, words = runs
    suite = {p.id: p for p in challenge300_suite.pairs}
    outcomes = {"mean": longer.outcomes["challenge300"], "sum": words.outcomes["challenge300"]}
    found = sensitivity(list(suite.values()), outcomes).scorers["mean"].by_length
    rated = [o for o in outcomes["mean"] if o.outcome in ("pass", "fail", "tie")]

    def sizes(pair) -> tuple[int, int]:
        return len(pair.high.text), len(pair.low.text)

    same = [o for o in rated if sizes(suite[o.pair_id])[0] == sizes(suite[o.pair_id])[1]]
    shorter = [o for o in rated if sizes(suite[o.pair_id])[0] < sizes(suite[o.pair_id])[1]]
    assert found["same length"].n == len(same) > 0 and found["better shorter"].n == len(shorter)
    assert found["same length"].passed == sum(o.outcome == "pass" for o in same)
    # flips: a share of the tests rated under both scorers (three made degenerate are not)
    for name in outcomes:
        rows = outcomes[name]
        outcomes[name] = [o.model_copy(update={"outcome": "degenerate"}) for o in rows[:3]]
        outcomes[name] += rows[3:]
    pairs = zip(outcomes["mean"], outcomes["sum"], strict=True)
    both = [(a, b) for a, b in pairs if {a.outcome, b.outcome} <= {"pass", "fail", "tie"}]
    flipped = sum((a.outcome == "pass") != (b.outcome == "pass") for a, b in both)
    flips = sensitivity(list(suite.values()), outcomes).scorers["sum"].flips
    assert flips.share == flipped / len(both) and len(both) < len(outcomes["mean"])


def test_report_md_gives_each_category_the_counts_of_its_outcomes_in_report_json_order(runs):
    """report.md's category table: report.json's rows in report.json's order (largest first),
    each with the rated, passed and tied tests counted here from the run's outcomes."""
    longer, _ = runs
    text = markdown(longer)
    section = text.split("## challenge300\n")[1].split("\n## ")[0]
    table = section.split("| category |")[1].split("\n\n")[0].splitlines()[2:]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table]
    order = list(json.loads(longer.model_dump_json())["suites"]["challenge300"]["by_category"])
    assert [cells[0] for cells in rows] == order and len(order) > 1
    for cells in rows:
        mine = [o.outcome for o in longer.outcomes["challenge300"] if o.category == cells[0]]
        rated = [o for o in mine if o in ("pass", "fail", "tie")]
        assert cells[1:4] == [
            f"{len(rated):,}",
            f"{mine.count('pass'):,}",
            f"{mine.count('tie'):,}",
        ]


def test_report_md_puts_the_degenerate_and_skipped_counts_in_their_own_columns(
    wmt_mqm_suite, heuristic_report
):
    """No rendering test had a run with both degenerate tests (WMT MQM's identical
    translations) and skipped ones (here: a candidate over 420 characters, as one too long
    for a window) in different numbers: report.md could swap the two columns unseen."""
    report = heuristic_report(
        [wmt_mqm_suite], "prefer-longer", lambda text: None if len(text) > 420 else float(len(text))
    )
    found = [o.outcome for o in report.outcomes["wmt_mqm"]]
    degenerate, skipped = found.count("degenerate"), found.count("skipped")
    assert degenerate > skipped > 0
    lines = markdown(report).splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| suite |"))
    names = [c.strip() for c in lines[header].strip("|").split("|")]
    cells = dict(
        zip(names, [c.strip() for c in lines[header + 2].strip("|").split("|")], strict=True)
    )
    assert cells["suite"] == "wmt_mqm"
    assert (cells["degenerate"], cells["skipped"]) == (f"{degenerate:,}", f"{skipped:,}")
    assert cells["rated"] == f"{len(found) - degenerate - skipped:,}"


def test_a_leaderboard_ranks_and_counts_the_tests_each_model_rated_not_those_it_skipped(
    quiz_design_suite, heuristic_report
):
    """No leaderboard fixture had skipped tests, so one that counted them in n, or ranked on
    passed / (rated + skipped), passed. Here both models prefer the longer candidate, one
    skipping candidates over 86 characters, the other over 140: the first passes more of the
    tests it rated but fewer of all. Ranked on the tests both rated, where the two agree test by
    test, they tie and keep the order given."""
    from nnd_suites.evaluation.leaderboard import COMMON_ROW, leaderboard
    from nnd_suites.evaluation.multi import leaderboard_markdown

    reports = [
        heuristic_report(
            [quiz_design_suite],
            label,
            lambda t, most=most: float(len(t)) if len(t) <= most else None,
        )
        for label, most in (("skips-over-140", 140), ("skips-over-86", 86))
    ]
    labels = ["skips-over-140", "skips-over-86"]
    board = leaderboard(reports, labels)
    counted = {}
    for label, report in zip(labels, reports, strict=True):
        found = [o.outcome for o in report.outcomes["quiz_design"]]
        rated = len(found) - found.count("skipped") - found.count("degenerate")
        counted[label] = (found.count("pass"), rated, found.count("skipped"))
        rate = board.suites["quiz_design"]["overall"][label]
        assert (rate.n, rate.skipped) == (rated, found.count("skipped"))
        assert rate.pass_rate == found.count("pass") / rated
    (p1, n1, s1), (p2, n2, s2) = counted["skips-over-140"], counted["skips-over-86"]
    assert s2 > s1 > 0 and p2 / n2 > p1 / n1 and p2 / (n2 + s2) < p1 / (n1 + s1)
    text = leaderboard_markdown(board)
    section = text.split("## quiz_design\n")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    # ranked on the tests both rated, where the two give the same verdicts: a tie, kept in the
    # order given; each model's own rate (over its own n) follows
    ranked = board.ranking["quiz_design"]
    assert ranked.tests == n2 and ranked.rates[labels[0]] == ranked.rates[labels[1]]
    assert rows[0].startswith(
        f"| model | parameters | {COMMON_ROW} (n={n2:,}) | overall (n={n1:,}) |"
    ), rows[0]
    assert [r.split("|")[1].strip() for r in rows[1:3]] == ["skips-over-140", "skips-over-86"]
    assert f"(n={n2:,}, {s2:,} skipped)" in rows[2].split("|")[4]
    assert "(n=" not in rows[1].split("|")[4]  # the model that rated the most: the column's n
