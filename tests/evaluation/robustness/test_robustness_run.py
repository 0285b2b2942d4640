"""The robustness run end to end on a tiny local model: CLI, outputs, same tests, cache reuse."""

from __future__ import annotations

import json

import pytest

from nnd_suites import Suite
from nnd_suites.cli import main
from nnd_suites.errors import NNDError, PluginError, UnknownItemError
from nnd_suites.evaluation import evaluate, load_backend
from nnd_suites.evaluation.comparison import compare_reports
from nnd_suites.evaluation.robustness import RobustnessReport, robustness
from nnd_suites.evaluation.saved import load_report
from nnd_suites.transformations import is_degenerate, transform_suite

TRANSFORMS = ["lowercase", "no_final_punctuation", "typos:rate=0.05,seed=1"]


def subset(suite: Suite, group_ids: set[str]) -> Suite:
    """A valid suite of the tests of some groups (counts and content hash recomputed)."""
    pairs = [p for p in suite.pairs if p.group_id in group_ids]
    return suite.derive(pairs)


@pytest.fixture(scope="module")
def quiz_case_groups(quiz_design_suite) -> Suite:
    """Quiz Design's groups holding its 26 tests that differ only in case (143 tests)."""
    groups = {
        p.group_id for p in quiz_design_suite.pairs if p.high.text.lower() == p.low.text.lower()
    }
    return subset(quiz_design_suite, groups)


@pytest.fixture(scope="module")
def backend(tiny_causal_model):
    return load_backend(str(tiny_causal_model), batch_size=16)


def test_cli_run_over_two_suites_writes_all_outputs(
    tiny_causal_model, quiz_case_groups, tmp_path, capsys
):
    quiz = quiz_case_groups.save(tmp_path / "quiz_design")
    out = tmp_path / "rob"
    argv = ["robustness", "--model", str(tiny_causal_model), "--suite", str(quiz)]
    argv += ["--suite", "challenge300", "--out", str(out), "--json", "--quiet"]
    for spec in TRANSFORMS:
        argv += ["--transform", spec]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)  # exactly one JSON object on stdout
    cells = {(c["suite"], c["transform"]): c for c in printed["cells"]}
    assert set(cells) == {(s, t) for s in ("quiz_design", "challenge300") for t in TRANSFORMS}
    for cell in printed["cells"]:
        keys = ("n", "degenerate", "pass_rate_b", "pass_rate_a", "difference", "difference_ci")
        keys += ("p_value",)
        assert all(key in cell for key in keys)
        assert cell["n"] + cell["degenerate"] == (143 if cell["suite"] == "quiz_design" else 807)
        low, high = cell["difference_ci"]
        assert low <= cell["difference"] <= high
        assert cell["difference"] == pytest.approx(cell["pass_rate_a"] - cell["pass_rate_b"])
    assert cells[("quiz_design", "lowercase")]["degenerate"] == 26
    assert cells[("challenge300", "lowercase")]["degenerate"] == 0
    written = json.loads((out / "robustness.json").read_text())
    assert written == printed and RobustnessReport.model_validate(written).cells
    markdown = (out / "robustness.md").read_text()
    assert "| quiz_design | lowercase | 117 | 26 | 0 | 143 |" in markdown
    # every column is explained: 'changed' counts altered tests, not changed outcomes
    assert all(f"{column}: " in markdown for column in ("n", "changed", "lost", "gained"))
    # 'lost' read as "not transformed": a lost test was transformed, and then failed or tied
    legend = "lost: passed on the parent, failed or tied once transformed; gained: failed or tied"
    assert f"{legend} on the parent, passed once transformed." in markdown
    assert (out / "robustness.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "evaluation" / "report.json").is_file()  # the evaluator's own report


def test_pass_rates_are_on_the_same_tests(backend, quiz_case_groups):
    report = robustness(backend, [quiz_case_groups], ["lowercase"], progress=False)
    cell = report.cell("quiz_design", "lowercase")
    # Independently: the evaluator on the parent and on the child, joined by test id.
    child = transform_suite(quiz_case_groups, "lowercase")
    alone = evaluate(backend, [quiz_case_groups, child], progress=False)
    parent_rows = {row.pair_id: row.outcome for row in alone.outcomes["quiz_design"]}
    child_rows = {row.parent_id: row.outcome for row in alone.outcomes[child.name]}
    kept = [p.parent_id for p in child.pairs if not is_degenerate(p)]
    assert len(kept) == cell.n == 117 and set(child_rows) == set(parent_rows)
    assert cell.passed_b == sum(parent_rows[i] == "pass" for i in kept)
    assert cell.passed_a == sum(child_rows[i] == "pass" for i in kept)
    # The child's own pass rate (evaluator, degenerate excluded) is the transformed rate.
    assert cell.pass_rate_a == alone.suites[child.name].pass_rate
    assert alone.suites[child.name].degenerate == 26
    # The untouched rate over all 143 tests is reported apart from the paired one.
    assert report.suites["quiz_design"].pass_rate == alone.suites["quiz_design"].pass_rate
    lost = sum(parent_rows[i] == "pass" and child_rows[i] != "pass" for i in kept)
    assert cell.b_only == lost


def test_each_transformation_is_recorded_with_its_default_seed_and_parameters(
    backend, challenge300_suite, tmp_path
):
    """`--transform typos` recorded `typos` alone: no report said which seed and rate made its
    suite. Each is recorded with every parameter, in robustness.json and robustness.md."""
    some = subset(challenge300_suite, {p.group_id for p in challenge300_suite.pairs[:20]})
    report = robustness(backend, [some], ["typos", "lowercase"], out=tmp_path, progress=False)
    typos = {"rate": 0.05, "seed": 0, "on": "candidates"}
    assert report.transform_params == {"typos": typos, "lowercase": {"on": "both"}}
    written = json.loads((tmp_path / "robustness.json").read_text())
    assert written["transform_params"]["typos"] == typos
    assert "`typos`: on=candidates, seed=0, rate=0.05" in (tmp_path / "robustness.md").read_text()


def test_second_run_reuses_cached_scores(backend, challenge300_suite, tmp_path):
    some = subset(challenge300_suite, {p.group_id for p in challenge300_suite.pairs[:150]})
    first = robustness(backend, [some], TRANSFORMS, cache_dir=tmp_path, progress=False)
    again = robustness(backend, [some], TRANSFORMS, cache_dir=tmp_path, progress=False)
    assert first.evaluation["requests"]["scored"] > 300
    assert again.evaluation["requests"]["scored"] == 0
    assert again.evaluation["requests"]["cached"] == first.evaluation["requests"]["unique"]
    assert again.cells == first.cells


@pytest.mark.parametrize(
    ("transforms", "message"),
    [
        (["lowercase", "lowercase"], "transformation 'lowercase' is given twice"),
        (["typos", "typos:rate=0.05"], "include the same one twice"),
        (["lowercase", "lowercase:on=both"], "include the same one twice"),  # its default `on`
        (["typos:rate=3"], "transformation typos: parameter 'rate'"),
        (["lowercas"], "unknown transformation 'lowercas'"),
    ],
)
def test_bad_transform_lists_fail_before_scoring(transforms, message, capsys, tmp_path):
    argv = ["robustness", "--model", str(tmp_path / "no_model"), "--suite", "challenge300"]
    for spec in transforms:
        argv += ["--transform", spec]
    statuses = {NNDError.exit_status, PluginError.exit_status, UnknownItemError.exit_status}
    assert main(argv) in statuses
    assert message in capsys.readouterr().err


def test_transform_is_required(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["robustness", "--model", "m", "--suite", "challenge300"])
    assert exit_info.value.code == 2
    assert "--transform" in capsys.readouterr().err


def test_a_given_suite_named_like_a_child_is_not_read_for_it(backend, quiz_case_groups):
    """Outcomes are matched to suites by position: a second given suite named
    ``quiz_design.lowercase`` (same test ids, other texts) does not stand in for the child."""
    alone = robustness(backend, [quiz_case_groups], ["lowercase"], progress=False)
    other = transform_suite(quiz_case_groups, "no_final_punctuation")
    decoy = other.derive(other.pairs, name="quiz_design.lowercase")
    both = robustness(backend, [quiz_case_groups, decoy], ["lowercase"], progress=False)
    expected = alone.cell("quiz_design", "lowercase")
    got = both.cell("quiz_design", "lowercase")
    keys = ("n", "degenerate", "skipped", "passed_a", "passed_b", "changed", "b_only", "a_only")
    assert {k: getattr(got, k) for k in keys} == {k: getattr(expected, k) for k in keys}
    assert both.suites["quiz_design"] == alone.suites["quiz_design"]


def test_its_limited_evaluation_compares_with_evaluate_on_the_same_groups(
    backend, quiz_case_groups, tmp_path
):
    """robustness --limit N cut the parents before scoring them, so its evaluation/ report named
    each parent by the hash of the cut (and given_as null): compare with `evaluate --suite SAME
    --limit N` refused the same tests as "pairs differ". It now records the parent as evaluate
    does: the whole suite's content hash, what --limit kept, and where it came from."""
    folder = quiz_case_groups.save(tmp_path / "quiz_design").resolve()
    robustness(backend, [str(folder)], ["lowercase"], limit=3, out=tmp_path / "rob")
    alone = evaluate(backend, str(folder), limit=3, progress=False)
    scored = load_report(tmp_path / "rob" / "evaluation")
    result = scored.suites["quiz_design"]
    assert result.content_hash == quiz_case_groups.manifest.content_hash
    assert result.given_as == str(folder) == alone.suites["quiz_design"].given_as
    compared = compare_reports(alone, scored, suites=["quiz_design"]).suites["quiz_design"]
    assert compared.overall.n == alone.suites["quiz_design"].overall.n > 0
    assert compared.overall.a_only == compared.overall.b_only == 0  # one model, the same tests


def test_each_cell_gives_the_rewrites_its_transformation_was_refused(
    tiny_causal_model, challenge300_suite, tmp_path, capsys
):
    """A text no_punctuation would have emptied ("...", "!?") is kept unchanged: `transform`
    said how many, `robustness` said nothing (its cell counted the test as changed or not and
    scored it untransformed). Each cell gives the count with its reason, in robustness.json,
    robustness.md and the console."""
    some = subset(challenge300_suite, {p.group_id for p in challenge300_suite.pairs[:12]})
    pairs = list(some.pairs)
    for index, side, text in ((0, "low", "..."), (1, "low", "!?"), (2, "high", "...")):
        pair = pairs[index]
        candidate = getattr(pair, side).model_copy(update={"text": text})
        pairs[index] = pair.model_copy(update={side: candidate})
    punct = some.derive(pairs, name="punct").save(tmp_path / "punct")
    out = tmp_path / "rob"
    argv = ["robustness", "--model", str(tiny_causal_model), "--suite", str(punct), "--quiet"]
    argv += ["--transform", "no_punctuation", "--transform", "lowercase", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    reason = "no_punctuation on punct would leave an empty text; kept unchanged"
    cells = {c["transform"]: c for c in json.loads((out / "robustness.json").read_text())["cells"]}
    assert cells["no_punctuation"]["kept_unchanged"] == {reason: 3}
    assert cells["lowercase"]["kept_unchanged"] == {}
    markdown = (out / "robustness.md").read_text()
    for shown in (printed, markdown):
        assert "Rewrites refused: a text the transformation would have emptied is kept" in shown
        assert f"- `punct` / `no_punctuation`: {reason}: 3" in shown
        assert "| punct | lowercase |" in shown and "/ `lowercase`:" not in shown
