"""Robustness statistics: paired pass rates on the same tests, intervals, McNemar, reports."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.robustness import (
    RobustnessReport,
    make_cell,
    to_markdown,
    write_report,
)
from nnd_suites.evaluation.robustness.stats import PairedTest, compare_to_parent, paired_tests
from nnd_suites.statistics.outcomes import rate
from nnd_suites.statistics.paired import mcnemar_exact, newcombe_difference_ci
from nnd_suites.transformations import is_degenerate, transform_suite


def capitals_outcomes(suite):
    """A text-only stand-in for a model: pass iff the better question has fewer capitals.

    Lower-casing changes its outcomes, which is what the paired statistics must follow.
    """

    def capitals(text: str) -> int:
        return sum(c.isupper() for c in text)

    outcomes = {}
    for pair in suite.pairs:
        high, low = capitals(pair.high.text), capitals(pair.low.text)
        outcomes[pair.id] = "pass" if high < low else ("tie" if high == low else "fail")
    return outcomes


def test_compare_counts_the_same_tests_and_excludes_degenerate():
    tests = [
        PairedTest("a", "x", "pass", "pass", True),
        PairedTest("b", "x", "pass", "fail", True),
        PairedTest("c", "y", "fail", "pass", False),
        PairedTest("d", "y", "fail", "fail", False),
        PairedTest("e", "y", "pass", "fail", True),
        PairedTest("f", "y", "degenerate", "degenerate", True),  # degenerate: not compared
    ]
    result = compare_to_parent(tests)
    assert (result.n, result.degenerate) == (5, 1)
    assert (result.passed_b, result.passed_a, result.b_only, result.a_only) == (3, 2, 2, 1)
    assert result.pass_rate_b == 3 / 5 and result.pass_rate_a == 2 / 5
    assert result.difference == pytest.approx(-1 / 5)
    low, high = result.difference_ci
    assert -1 <= low < result.difference < high <= 1
    assert result.p_value == 1.0  # 2 lost vs 1 gained: no evidence
    empty = compare_to_parent([PairedTest("f", "y", "degenerate", "degenerate", True)])
    assert (empty.n, empty.degenerate, empty.difference, empty.p_value) == (0, 1, None, None)


def test_mcnemar_is_the_exact_binomial_on_discordant_tests():
    def two_sided(lost: int, gained: int) -> float:
        total, k = lost + gained, min(lost, gained)
        return min(1.0, 2 * sum(math.comb(total, i) for i in range(k + 1)) / 2**total)

    for lost, gained in [(10, 0), (0, 10), (7, 2), (30, 18), (5, 5), (1, 0)]:
        assert mcnemar_exact(lost, gained) == pytest.approx(two_sided(lost, gained), rel=1e-9)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(10, 0) == pytest.approx(2 * 0.5**10)


def paired_difference_ci(both, lost, gained, neither):
    """Transformed minus untouched: A = transformed (gained), B = untouched (lost)."""
    return newcombe_difference_ci(both, gained, lost, neither)


def wald_paired_difference_ci(lost: int, gained: int, n: int, confidence: float = 0.95):
    """The textbook large-sample interval, for comparison (too narrow for few discordant tests)."""
    from scipy.stats import norm

    z = norm.ppf(0.5 + confidence / 2)
    delta = (gained - lost) / n
    spread = z * math.sqrt(max((lost + gained) / n - delta**2, 0.0) / n)
    return delta - spread, delta + spread


def test_paired_interval_matches_wald_when_large_and_stays_bounded():
    for both, lost, gained, neither in [(5000, 1000, 500, 3500), (2000, 300, 420, 7280)]:
        n = both + lost + gained + neither
        newcombe = paired_difference_ci(both, lost, gained, neither)
        wald = wald_paired_difference_ci(lost, gained, n)
        assert newcombe == pytest.approx(wald, abs=0.002)
    for table in [(10, 0, 0, 0), (0, 0, 0, 10), (0, 10, 0, 0), (0, 0, 10, 0), (3, 0, 0, 1)]:
        low, high = paired_difference_ci(*table)
        delta = (table[2] - table[1]) / sum(table)
        assert -1 <= low <= delta <= high <= 1 and high - low > 0


def test_paired_interval_covers_the_true_difference():
    """Coverage by simulation: 95% nominal, on correlated pass/fail pairs with n = 60."""
    rng = np.random.default_rng(0)
    # P(both), P(lost), P(gained), P(neither): true delta = 0.08 - 0.18 = -0.10
    probabilities = [0.55, 0.18, 0.08, 0.19]
    truth = probabilities[2] - probabilities[1]
    tables = rng.multinomial(60, probabilities, size=800)
    covered = sum(low <= truth <= high for low, high in (paired_difference_ci(*t) for t in tables))
    wald = sum(
        low <= truth <= high
        for low, high in (wald_paired_difference_ci(t[1], t[2], 60) for t in tables)
    )
    assert 0.93 <= covered / len(tables) <= 0.975
    assert covered >= wald  # the score interval is at least as good as the textbook one


def test_paired_tests_on_real_suite_use_the_same_tests(quiz_design_suite):
    child = transform_suite(quiz_design_suite, "lowercase")
    parent_outcomes, child_outcomes = (
        capitals_outcomes(quiz_design_suite),
        capitals_outcomes(child),
    )
    tests = paired_tests(quiz_design_suite, child, parent_outcomes, child_outcomes)
    assert len(tests) == 2686 and sum(t.degenerate for t in tests) == 26
    cell = make_cell("quiz_design", "lowercase", child.name, tests)
    kept = [p for p in child.pairs if not is_degenerate(p)]
    assert cell.n == len(kept) == 2660 and cell.degenerate == 26
    # Parent pass rate on exactly the non-degenerate tests, by their ids.
    parent_passed = sum(parent_outcomes[p.parent_id] == "pass" for p in kept)
    assert cell.pass_rate_b == parent_passed / 2660
    assert cell.pass_rate_a == 0.0  # lower-cased candidates have no capitals: all ties
    assert cell.b_only == parent_passed and cell.a_only == 0
    assert cell.p_value < 1e-10 and cell.significant
    assert sum(c.n for c in cell.by_category.values()) == 2660
    assert sum(c.degenerate for c in cell.by_category.values()) == 26
    assert set(cell.by_category) == {"disfluent", "off_target", "wrong_context"}
    assert cell.changed == 2686 and cell.changed_only.n == 2660


def test_paired_tests_need_the_right_parent_and_every_outcome(
    quiz_design_suite, challenge300_suite
):
    child = transform_suite(challenge300_suite, "uppercase")
    outcomes = capitals_outcomes(challenge300_suite)
    with pytest.raises(NNDError, match="which suite quiz_design does not hold"):
        paired_tests(quiz_design_suite, child, outcomes, outcomes)
    partial = dict(list(outcomes.items())[:-1])
    with pytest.raises(NNDError, match=r"no outcome for test .* suite challenge300"):
        paired_tests(challenge300_suite, child, partial, capitals_outcomes(child))


def _report(quiz_design_suite, challenge300_suite) -> RobustnessReport:
    cells, suites = [], {}
    for suite in (quiz_design_suite, challenge300_suite):
        parent = capitals_outcomes(suite)
        suites[suite.name] = rate(parent.values())
        for spec in ("lowercase", "no_final_punctuation", "typos:rate=0.2,seed=1"):
            child = transform_suite(suite, spec)
            tests = paired_tests(suite, child, parent, capitals_outcomes(child))
            cells.append(make_cell(suite.name, spec, child.name, tests))
    transforms = ["lowercase", "no_final_punctuation", "typos:rate=0.2,seed=1"]
    return RobustnessReport(model="capitals", suites=suites, transforms=transforms, cells=cells)


def test_report_files(quiz_design_suite, challenge300_suite, tmp_path):
    import matplotlib.image

    report = _report(quiz_design_suite, challenge300_suite)
    paths = write_report(report, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert len(data["cells"]) == 6
    required = {"suite", "transform", "n", "degenerate", "pass_rate_b", "pass_rate_a"}
    assert all(
        required | {"difference", "difference_ci", "p_value"} <= set(c) for c in data["cells"]
    )
    assert RobustnessReport.model_validate(data) == report
    markdown = paths["markdown"].read_text()
    assert markdown.count("| quiz_design | ") == 3 and "### challenge300 / lowercase" in markdown
    lower = report.cell("quiz_design", "lowercase")
    # n, degenerate, skipped, changed
    assert "| quiz_design | lowercase | 2,660 | 26 | 0 | 2,686 |" in markdown
    assert f"{100 * lower.difference:+.1f} [" in to_markdown(report)
    image = matplotlib.image.imread(paths["heatmap"])
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "nnd-suites-output.json",
        "robustness.json",
        "robustness.md",
        "robustness.png",
        "robustness.schema.json",
    ]


def test_compare_is_invariant_to_test_order():
    rng = random.Random(3)
    outcomes = ["pass", "pass", "fail", "tie", "degenerate", "skipped"]
    tests = [
        PairedTest(str(i), "c", rng.choice(outcomes), rng.choice(outcomes), rng.random() < 0.5)
        for i in range(300)
    ]
    shuffled = tests[:]
    rng.shuffle(shuffled)
    assert compare_to_parent(tests) == compare_to_parent(shuffled)


def test_robustness_marks_are_holm_corrected(quiz_design_suite, challenge300_suite, tmp_path):
    from nnd_suites.evaluation.robustness.models import corrected
    from nnd_suites.evaluation.robustness.report import holm_p_values, to_markdown, write_report
    from nnd_suites.statistics.paired import holm

    report = _report(quiz_design_suite, challenge300_suite)
    adjusted = holm_p_values(report)
    overall = [c.p_value for c in report.cells]
    assert [adjusted[(c.suite, c.transform, None)] for c in report.cells] == holm(overall)
    for c in corrected(report).cells:  # the report keeps each category's corrected p too
        assert all(
            adjusted[(c.suite, c.transform, k)] == r.p_holm for k, r in c.by_category.items()
        )
    text = to_markdown(report)
    assert "after Holm's correction" in text and "can exclude 0 without a *" in text
    for c in report.cells:  # a mark iff the corrected p is below alpha
        line = next(x for x in text.splitlines() if x.startswith(f"| {c.suite} | {c.transform} |"))
        assert (" * |" in line) == (adjusted[(c.suite, c.transform, None)] < report.alpha)
    import matplotlib.image

    image = matplotlib.image.imread(write_report(report, tmp_path / "rob")["heatmap"])
    height, width = image.shape[:2]
    assert height > width  # a panel of suites, then one per suite with its categories


def _older(cell: dict) -> dict:
    """A paired cell as robustness reports wrote it before sharing compare's record."""
    older = {"passed_a": "passed", "passed_b": "parent_passed", "pass_rate_a": "pass_rate"}
    older |= {"pass_rate_b": "parent_pass_rate", "difference": "delta", "a_only": "gained"}
    older |= {"difference_ci": "delta_ci", "b_only": "lost"}
    dropped = {"both", "neither", "ties_a", "ties_b"}
    return {older.get(k, k): v for k, v in cell.items() if k not in dropped}


def test_an_older_robustness_report_still_loads(quiz_design_suite, challenge300_suite, tmp_path):
    from nnd_suites.infra.output_folder import MARKER_FILE, holds_kind

    report = _report(quiz_design_suite, challenge300_suite)
    folder = tmp_path / "older"
    write_report(report, folder)
    data = json.loads((folder / "robustness.json").read_text())
    for cell in data["cells"]:
        cell["changed_only"] = _older(cell["changed_only"])
        cell["by_category"] = {
            c: {k: v for k, v in _older(r).items() if k != "p_holm"}
            for c, r in cell["by_category"].items()
        }
    data["cells"] = [_older(cell) for cell in data["cells"]]
    assert "delta" in data["cells"][0] and "both" not in data["cells"][0]
    (folder / "robustness.json").write_text(json.dumps(data))
    (folder / MARKER_FILE).unlink()  # written before folders were marked: read to recognise
    assert holds_kind(folder, "robustness")
    loaded = RobustnessReport.model_validate(data)
    unrecorded = {"ties_a", "ties_b", "p_holm", "changed_only", "by_category"}
    for old, new in zip(loaded.cells, report.cells, strict=True):
        assert old.by_category.keys() == new.by_category.keys()
        for got, want in [
            (old, new),
            (old.changed_only, new.changed_only),
            *((old.by_category[c], new.by_category[c]) for c in new.by_category),
        ]:
            assert (got.ties_a, got.ties_b) == (None, None)  # not recorded: not made up
            assert got.model_dump(exclude=unrecorded) == want.model_dump(exclude=unrecorded)
    write_report(report, folder)  # the older folder is one to overwrite
    assert RobustnessReport.model_validate_json((folder / "robustness.json").read_text()) == report


def test_each_figure_of_a_cell_lands_in_its_column_and_holm_decides_the_mark():
    """Suite s, 17 tests; transformation a: 7 tests of category x lost (changed), one made
    degenerate, 7 of y kept, 2 of y skipped; b, c, d change no outcome. By hand: parent 14/14,
    transformed 7/14; McNemar p = 2 * 0.5**7 = 0.016, below 0.05, but Holm over the 4 cells
    makes it 4 * 0.015625 = 0.0625 (no mark), and over the suite's 8 category cells 0.125."""
    from nnd_suites.evaluation.robustness.models import corrected

    def tests(lose: bool) -> list[PairedTest]:
        lost = [
            PairedTest(f"x{i}", "x", "pass", "fail" if lose else "pass", lose) for i in range(7)
        ]
        kept = [PairedTest(f"y{i}", "y", "pass", "pass", False) for i in range(7)]
        other = [PairedTest("d", "x", "pass", "degenerate" if lose else "pass", lose)]
        skipped = [PairedTest(f"s{i}", "y", "skipped", "pass", False) for i in range(2)]
        return lost + kept + other + skipped

    cells = [make_cell("s", t, f"s.{t}", tests(t == "a")) for t in "abcd"]
    suites = {"s": rate(["pass"] * 15 + ["skipped"] * 2)}
    report = corrected(
        RobustnessReport(model="m", suites=suites, transforms=[*"abcd"], cells=cells)
    )
    a = report.cell("s", "a")
    assert (a.changed, a.changed_only.n, a.changed_only.b_only) == (8, 7, 7)
    assert a.p_value == 2 * 0.5**7 and a.p_holm == 0.0625 and not a.significant
    text = to_markdown(report)

    def row(start: str) -> list[str]:
        line = next(x for x in text.splitlines() if x.startswith(start))
        return [cell.strip() for cell in line.strip("|").split("|")]

    overall = row("| s | a |")
    assert overall[:8] == ["s", "a", "14", "1", "2", "8", "100.0%", "50.0%"]
    assert overall[8].startswith("-50.0 [") and not overall[8].endswith("*")
    assert overall[9:] == ["7", "0", "0.016", "0.062"]
    categories = text.split("### s / a")[1].split("###")[0]
    x = next(line for line in categories.splitlines() if line.startswith("| x |"))
    cells_x = [cell.strip() for cell in x.strip("|").split("|")]
    assert cells_x[:6] == ["x", "7", "1", "0", "100.0%", "0.0%"]
    assert cells_x[7:] == ["7", "0", "0.016", "0.12"]
    y = next(line for line in categories.splitlines() if line.startswith("| y |"))
    assert [cell.strip() for cell in y.strip("|").split("|")][:6] == [
        "y",
        "7",
        "0",
        "2",
        "100.0%",
        "100.0%",
    ]


def test_a_transformation_of_the_context_alone_changes_the_tests_it_rewrote(quiz_design_suite):
    """Lower-casing the context alone leaves every candidate as it was: a test is changed iff
    its context held a capital letter (every one of Quiz Design's 2,686)."""
    child = transform_suite(quiz_design_suite, "lowercase:on=context")
    parent = capitals_outcomes(quiz_design_suite)
    tests = paired_tests(quiz_design_suite, child, parent, capitals_outcomes(child))
    cell = make_cell("quiz_design", "lowercase:on=context", child.name, tests)
    capitals = [
        p
        for p in quiz_design_suite.pairs
        if any(c.isupper() for v in p.context.values() for c in v)
    ]
    assert cell.changed == len(capitals) == 2686 and cell.identical == 0
    assert cell.changed_only.n == cell.n and cell.a_only == cell.b_only == 0
