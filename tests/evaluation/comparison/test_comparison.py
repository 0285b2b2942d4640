"""Paired comparison of two saved runs: McNemar and Holm by hand, counts on real suites, refusals,
and the CLI. The runs are scored by text heuristics (no model) through the evaluator's own
outcome and report code, then written and read back like `nnd-suites evaluate --out`."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli import main
from nnd_suites.errors import NNDError
from nnd_suites.evaluation.comparison import (
    IncomparableRunsError,
    SameRunError,
    compare_reports,
)
from nnd_suites.evaluation.limits import suite_limit
from nnd_suites.evaluation.outputs import write_report
from nnd_suites.evaluation.prepared import first_groups
from nnd_suites.evaluation.saved import load_report
from nnd_suites.statistics.paired import holm, mcnemar_exact


def chars(text: str) -> float:
    return float(len(text))


def words(text: str) -> float:
    return float(len(text.split()))


def test_mcnemar_and_holm_by_hand():
    # 1 of 6 discordant tests favour A: 2 * P(X <= 1), X ~ Bin(6, 1/2) = 2 * (1 + 6) / 64
    assert mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(4, 4) == pytest.approx(1.0)
    assert mcnemar_exact(0, 0) == 1.0  # no discordant test: no evidence of a difference
    # sorted .01 .03 .04 .2 -> .01*4=.04, .03*3=.09, .04*2=.08 -> .09 (monotone), .2*1=.2
    assert holm([0.04, 0.01, 0.2, 0.03]) == pytest.approx([0.09, 0.04, 0.2, 0.09])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([]) == []


@pytest.fixture(scope="module")
def runs(tmp_path_factory, challenge300_suite, quiz_design_suite, heuristic_report):
    """Runs whose 'model' scores each candidate by a text heuristic, saved like evaluate."""
    root = tmp_path_factory.mktemp("runs")
    suites = [challenge300_suite, quiz_design_suite]

    def save_run(name: str, suites: list, model: str, score: Callable[[str], float]) -> Path:
        write_report(heuristic_report(suites, model, score), root / name)
        return root / name

    return {
        "chars": save_run("chars", suites, "prefer-longer", chars),
        "words": save_run("words", suites, "prefer-more-words", words),
        "c300": save_run("c300", [challenge300_suite], "prefer-longer", chars),
        # the same model name, other "weights": a run of the same folder after it changed
        "longer_again": save_run("longer_again", suites, "prefer-longer", words),
    }


def test_counts_match_a_direct_count(runs, challenge300_suite):
    comparison = compare_reports(load_report(runs["chars"]), load_report(runs["words"]))
    assert list(comparison.suites) == ["challenge300", "quiz_design"]
    suite = comparison.suites["challenge300"]
    expected: dict[str, Counter] = {}
    for pair in challenge300_suite.pairs:
        a = chars(pair.high.text) > chars(pair.low.text)
        b = words(pair.high.text) > words(pair.low.text)
        counts = expected.setdefault(pair.category, Counter())
        counts[{(1, 1): "both", (1, 0): "a_only", (0, 1): "b_only"}.get((a, b), "neither")] += 1
        counts["ties_a"] += chars(pair.high.text) == chars(pair.low.text)
        counts["ties_b"] += words(pair.high.text) == words(pair.low.text)
    # the report's order: largest category first
    size = {
        c: sum(n[k] for k in ("both", "a_only", "b_only", "neither")) for c, n in expected.items()
    }
    assert list(suite.by_category) == sorted(expected, key=lambda c: -size[c])
    for category, counts in expected.items():
        got = suite.by_category[category]
        for key in ("both", "a_only", "b_only", "neither", "ties_a", "ties_b"):
            assert getattr(got, key) == counts[key], (category, key)
        assert got.n == sum(counts[k] for k in ("both", "a_only", "b_only", "neither"))
        assert got.difference == pytest.approx((counts["a_only"] - counts["b_only"]) / got.n)
        assert got.p_value == pytest.approx(mcnemar_exact(counts["a_only"], counts["b_only"]))
    raw = [r.p_value for r in suite.by_category.values()]
    assert [r.p_holm for r in suite.by_category.values()] == pytest.approx(holm(raw))
    overall = suite.overall
    assert overall.n == 807 and overall.p_holm is None
    assert overall.passed_a == 398  # "prefer the longer" passes 398 of challenge300's tests
    assert overall.a_only == sum(c["a_only"] for c in expected.values())


def test_tests_are_matched_by_id_whatever_the_order_of_a_runs_outcomes(runs):
    a, b = load_report(runs["chars"]), load_report(runs["words"])
    expected = compare_reports(a, b)
    for outcomes in b.outcomes.values():
        outcomes.reverse()  # the same tests, listed in another order
    assert compare_reports(a, b) == expected


def test_refuses_runs_over_different_tests(runs, tmp_path, challenge300_suite):
    chars_run, c300 = load_report(runs["chars"]), load_report(runs["c300"])
    with pytest.raises(IncomparableRunsError, match=r"only run A has suite quiz_design"):
        compare_reports(chars_run, c300)
    # restricting to the common suite is fine
    assert list(compare_reports(chars_run, c300, suites=["challenge300"]).suites) == [
        "challenge300"
    ]
    other = load_report(runs["c300"])
    other.suites["challenge300"].content_hash = "0" * 64
    with pytest.raises(IncomparableRunsError, match="different tests"):
        compare_reports(c300, other)
    other = load_report(runs["c300"])
    other.outcomes["challenge300"][0].pair_id = "f" * 16
    with pytest.raises(IncomparableRunsError, match=r"1 test id\(s\) only in A"):
        compare_reports(c300, other)
    limited = load_report(runs["c300"])
    # what --limit kept is named before the test ids, which a limit also makes differ
    limited.suites["challenge300"].limited = suite_limit(first_groups(challenge300_suite, 50))
    with pytest.raises(
        IncomparableRunsError,
        match=r"tests kept by --limit: every test vs [\d,]+ of 807 \(the first 50 groups\)"
        r".*keeping the same context groups",
    ):
        compare_reports(c300, limited)
    assert isinstance(IncomparableRunsError("x"), NNDError)
    templated = load_report(runs["c300"])
    templated.suites["challenge300"].template = "Q: {question}"
    with pytest.raises(
        IncomparableRunsError, match=r"template '\{question\}' vs 'Q: \{question\}'.*on purpose"
    ):
        compare_reports(c300, templated)
    templated.mode = "reference"
    with pytest.raises(IncomparableRunsError, match="scoring mode 'default' vs 'reference'"):
        compare_reports(c300, templated)
    on_purpose = compare_reports(c300, templated, allow_different_scoring=True)
    assert len(on_purpose.scoring_differences) == 2 and on_purpose.mode_b == "reference"


def test_runs_over_different_suites_name_only_the_side_with_more(runs, capsys):
    """Run B holding a suite run A lacks said "only A has [], only B has ['quiz_design']"."""
    both, one = str(runs["chars"]), str(runs["c300"])
    assert main(["compare", one, both]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "the runs cover different suites: only run B has suite quiz_design;" in err
    assert "only run A" not in err and "[]" not in err
    assert "compare the suites both have with --suite NAME (here: challenge300)" in err
    assert main(["compare", one, both, "--suite", "quiz_design"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "suite quiz_design is not in run A (it has challenge300)" in err and "[" not in err
    both_sides = load_report(runs["c300"]).model_copy(deep=True)
    both_sides.suites["other"] = both_sides.suites.pop("challenge300")
    both_sides.outcomes["other"] = both_sides.outcomes.pop("challenge300")
    with pytest.raises(
        IncomparableRunsError,
        match=r"only run A has suites challenge300 and quiz_design; only run B has suite other; "
        r"the runs share no suite",
    ):
        compare_reports(load_report(runs["chars"]), both_sides)


def test_load_report_names_what_is_missing(runs, tmp_path):
    with pytest.raises(NNDError, match="no evaluation report there"):
        load_report(tmp_path)
    broken = tmp_path / "run"
    broken.mkdir()
    data = json.loads((runs["c300"] / "report.json").read_text())
    (broken / "report.json").write_text(json.dumps(data))
    with pytest.raises(NNDError, match="outcomes of suite challenge300 .* are missing"):
        load_report(broken)
    del data["model"]
    (broken / "report.json").write_text(json.dumps(data))
    with pytest.raises(NNDError, match="not an nnd-suites evaluation report"):
        load_report(broken / "report.json")


def test_cli_markdown_json_and_files(runs, tmp_path, capsys):
    assert main(["compare", str(runs["chars"]), str(runs["words"])]) == 0
    text = capsys.readouterr().out
    assert "A = `prefer-longer`" in text and "## quiz_design" in text
    assert "a tie (equal scores for both candidates) is not a pass" in text
    assert main(["compare", str(runs["chars"]), str(runs["words"]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["suites"]["challenge300"]["overall"]["passed_a"] == 398
    assert data["source_a"].endswith("report.json")
    out = tmp_path / "cmp"
    assert main(["compare", str(runs["chars"]), str(runs["words"]), "--out", str(out)]) == 0
    capsys.readouterr()
    schema = json.loads((out / "comparison.schema.json").read_text())
    written = json.loads((out / "comparison.json").read_text())
    jsonschema.validate(written, schema)
    assert written == data
    assert (out / "comparison.md").read_text().startswith("# Paired comparison")
    assert (out / "differences.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left
    assert main(["compare", str(runs["chars"]), str(runs["c300"])]) == 2
    assert "--suite NAME" in capsys.readouterr().err


def test_the_markdown_names_the_two_runs_it_compares(runs, capsys):
    # two runs of one model folder whose weights changed between them were both just `m1`
    assert main(["compare", str(runs["chars"]), str(runs["words"])]) == 0
    text = capsys.readouterr().out
    a, b = runs["chars"] / "report.json", runs["words"] / "report.json"
    assert f"\n\nRun A: `{a}`; run B: `{b}`.\n\n" in text
    again = runs["longer_again"] / "report.json"
    assert main(["compare", str(runs["chars"]), str(runs["longer_again"])]) == 0
    text = capsys.readouterr().out
    assert f"run B: `{again}`. Both runs name the model `prefer-longer`: each report's" in text


def test_a_run_compared_with_itself_is_refused(runs, tmp_path, capsys):
    """One run given as A and B (the same folder, its report.json, or a copy of the folder)
    was compared and printed zero differences everywhere with exit 0: nothing was compared."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(runs["chars"], copy)
    for b in (runs["chars"], runs["chars"] / "report.json", copy):
        assert main(["compare", str(runs["chars"]), str(b)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert "are one run" in captured.err and "Give two different runs" in captured.err
    assert f"{copy / 'report.json'} holds the same report" in captured.err
    run = load_report(runs["chars"])
    with pytest.raises(SameRunError, match="are one run"):
        compare_reports(run, run)
    with pytest.raises(SameRunError, match="are one run"):
        compare_reports(run, load_report(copy))
    assert isinstance(SameRunError("x"), IncomparableRunsError)


def test_end_to_end_with_two_tiny_models(tiny_causal_model, tiny_seq2seq_model, tmp_path, capsys):
    """Two real `evaluate --out` runs (random tiny models: the figures mean nothing), compared."""
    for name, model in (("causal", tiny_causal_model), ("seq2seq", tiny_seq2seq_model)):
        args = ["--suite", "challenge300", "--model", str(model), "--batch-size", "16"]
        assert main(["evaluate", *args, "--quiet", "--out", str(tmp_path / name)]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "causal"), str(tmp_path / "seq2seq"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    overall = data["suites"]["challenge300"]["overall"]
    saved = [json.loads((tmp_path / n / "report.json").read_text()) for n in ("causal", "seq2seq")]
    assert overall["n"] == 807
    assert overall["passed_a"] == saved[0]["suites"]["challenge300"]["overall"]["passed"]
    assert overall["passed_b"] == saved[1]["suites"]["challenge300"]["overall"]["passed"]
    assert overall["ties_a"] == saved[0]["suites"]["challenge300"]["overall"]["ties"]
    assert overall["both"] + overall["a_only"] + overall["b_only"] + overall["neither"] == 807


def test_one_suite_built_from_two_places_is_refused_saying_what_differs(
    tiny_causal_model, tmp_path, capsys
):
    """The same annotations built from two copies of their file (or a folder against
    builtin:NAME): compare said only "content X vs Y (another build, version or
    transformation)". A suite is its content hash, manifest included, so the runs are still
    refused, saying where each suite came from and what differs: the manifest's sources only, or
    the tests themselves."""
    source = ADAPTERS.get("quiz_design").default_source_path()
    lines = source.read_text("utf-8").splitlines(True)
    specs = {}
    for name, text in (("copy_a", lines), ("copy_b", lines), ("part", lines[:60])):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.jsonl").write_text("".join(text), "utf-8")
        build_suite("quiz_design", tmp_path / name / f"{name}.jsonl", tmp_path / f"suite_{name}")
        specs[name] = str((tmp_path / f"suite_{name}").resolve())
    specs["builtin"] = "builtin:quiz_design"
    for name, spec in specs.items():
        args = ["--suite", spec, "--model", str(tiny_causal_model), "--limit", "2", "--quiet"]
        assert main(["evaluate", *args, "--no-cache", "--out", str(tmp_path / f"run_{name}")]) == 0
    capsys.readouterr()
    for a, b, differ in (
        ("copy_a", "copy_b", "the same pairs and candidates, but manifests differing in sources"),
        ("copy_a", "builtin", "the same pairs and candidates, but manifests differing in sources"),
        ("part", "builtin", "pairs and candidates differ; manifests in sources, counts"),
    ):
        assert main(["compare", str(tmp_path / f"run_{a}"), str(tmp_path / f"run_{b}")]) == 2
        err = capsys.readouterr().err
        assert f"(A's from {specs[a]}, B's from {specs[b]}): {differ}" in err, err
        assert "score both models on the same suite folder" in err


def test_a_suite_named_twice_and_a_foreign_out_are_refused_first(runs, tmp_path, capsys):
    """compare --suite X --suite X was taken, while evaluate refuses a repeat; and --out was
    checked only once both runs were read and compared."""
    a, b = str(runs["chars"]), str(runs["words"])
    assert main(["compare", a, b, "--suite", "quiz_design", "--suite", "quiz_design"]) == 2
    assert "suite 'quiz_design' is given twice (--suite)" in capsys.readouterr().err
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("a user's file")
    gone = str(tmp_path / "no-such-run")
    assert main(["compare", gone, b, "--out", str(mine)]) == 2
    err = capsys.readouterr().err
    assert f"{mine}: holds 1 entry" in err and "no-such-run" not in err
    assert (mine / "notes.txt").read_text() == "a user's file"


def test_suites_of_one_name_given_in_the_other_order_are_matched(
    tiny_causal_model, tmp_path, capsys
):
    """Two suites named quiz_design (the whole one and a part) are reported as quiz_design and
    quiz_design_2 in the order given: runs of `--suite whole --suite part` and `--suite part
    --suite whole` were refused (content X vs Y under each name). Suites are matched by name and
    content hash, in run A's order, and a suite that differs is still refused."""
    source = ADAPTERS.get("quiz_design").default_source_path()
    (tmp_path / "part.jsonl").write_text(
        "".join(source.read_text("utf-8").splitlines(True)[:60]), "utf-8"
    )
    build_suite("quiz_design", tmp_path / "part.jsonl", tmp_path / "part_suite")
    part = str((tmp_path / "part_suite").resolve())
    model = ["--model", str(tiny_causal_model), "--limit", "2", "--quiet", "--no-cache"]
    for name, specs in (
        ("whole_part", ["builtin:quiz_design", part]),
        ("part_whole", [part, "builtin:quiz_design"]),
        ("part", [part]),
    ):
        suites = [arg for spec in specs for arg in ("--suite", spec)]
        assert main(["evaluate", *suites, *model, "--out", str(tmp_path / name)]) == 0
    capsys.readouterr()
    runs = [str(tmp_path / name) for name in ("whole_part", "part_whole", "part")]
    assert main(["compare", runs[0], runs[1], "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)["suites"]
    reports = [json.loads((tmp_path / n / "report.json").read_text()) for n in runs[:2]]
    assert list(compared) == ["quiz_design", "quiz_design_2"]
    for name, in_b in (("quiz_design", "quiz_design_2"), ("quiz_design_2", "quiz_design")):
        assert compared[name]["suite_b"] == in_b
        assert compared[name]["content_hash"] == reports[1]["suites"][in_b]["content_hash"]
        assert (
            compared[name]["overall"]["passed_b"] == reports[1]["suites"][in_b]["overall"]["passed"]
        )
        assert (
            compared[name]["overall"]["both"] + compared[name]["overall"]["neither"]
            == (
                compared[name]["overall"]["n"]  # the same model on the same tests: no discordance
            )
        )
    assert main(["compare", runs[0], runs[1]]) == 0
    assert "Run B names this suite `quiz_design_2`" in capsys.readouterr().out
    # the part alone is run A's quiz_design_2; the whole suite is in run A only
    assert main(["compare", runs[0], runs[2]]) == 2
    assert "only run A has suite quiz_design;" in capsys.readouterr().err
    assert main(["compare", runs[0], runs[2], "--suite", "quiz_design_2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["suites"]["quiz_design_2"]["suite_b"] == (
        "quiz_design"
    )
    # the other way round: run B's quiz_design_2 is A's quiz_design, the whole suite B's only
    assert main(["compare", runs[2], runs[0]]) == 2
    assert "only run B has suite quiz_design_2;" in capsys.readouterr().err
    assert main(["compare", runs[2], runs[0], "--suite", "quiz_design"]) == 0


def test_a_model_named_like_tex_is_drawn_as_text(tmp_path, challenge300_suite, heuristic_report):
    r"""A model folder named `x$\frac$y` (a `$` pair in a path) made Matplotlib parse the title
    as TeX: `evaluate --out` and `compare --out` died in the chart with a ParseSyntaxException
    traceback after scoring, writing nothing. Charts draw every text as written."""
    for name, model, score in (("a", r"runs/x$\frac$y", chars), ("b", "runs/$b$", words)):
        write_report(heuristic_report([challenge300_suite], model, score), tmp_path / name)
        assert (tmp_path / name / "pass_rates.png").read_bytes().startswith(b"\x89PNG")
    out = tmp_path / "compared"
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out)]) == 0
    assert (out / "differences.png").read_bytes().startswith(b"\x89PNG")
    assert r"A = `runs/x$\frac$y`" in (out / "comparison.md").read_text()


def test_the_same_tests_under_another_name_are_named_as_such(tiny_causal_model, tmp_path, capsys):
    """A run of `build challenge300 --name c300` against one of challenge300 said only that the
    runs "share no suite": it now says that they hold the same tests, and how to compare them."""
    build_suite("challenge300", name="c300").save(tmp_path / "c300")
    build_suite("quiz_design", name="qd").save(tmp_path / "qd")
    argv = ["evaluate", "--model", str(tiny_causal_model), "--limit", "1", "--quiet", "--out"]
    for suite, out in (("challenge300", "a"), (tmp_path / "c300", "b"), (tmp_path / "qd", "c")):
        assert main([*argv, str(tmp_path / out), "--suite", str(suite)]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    said = (
        "the runs share no suite, so there is nothing to compare; run B's c300 holds the same "
        "tests as run A's challenge300 under another name (built with --name)"
    )
    assert said in err
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "c")]) == 2  # other tests
    err = " ".join(capsys.readouterr().err.split())
    assert "the runs share no suite" in err and "same tests" not in err
