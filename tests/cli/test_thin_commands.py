"""What the commands used to compute themselves is the library's now, and the commands print
what it returns: a run matched to its suite, slice pass rates, verify's systems, the rewrites a
transformation refused, robustness's overall table, the shipped-suite build, grouped reasons."""

from __future__ import annotations

import json

import pytest

from nnd_suites.cli import main
from nnd_suites.errors import NNDError, OutputFolderError


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory, challenge300_suite, heuristic_report):
    """A run folder written like `evaluate --out` (a heuristic prefers the longer text)."""
    from nnd_suites.evaluation.outputs import write_report

    folder = tmp_path_factory.mktemp("runs") / "run"
    write_report(heuristic_report([challenge300_suite], "prefer-longer", len), folder)
    return folder


def test_a_run_is_matched_to_its_suite_by_content_hash(
    saved_run, challenge300_suite, quiz_design_suite
):
    from nnd_suites.evaluation.saved import load_report, outcomes_for

    outcomes = outcomes_for(saved_run, challenge300_suite)
    assert outcomes == load_report(saved_run).outcomes["challenge300"] and len(outcomes) == 807
    with pytest.raises(NNDError, match=r"did not score suite quiz_design .*challenge300"):
        outcomes_for(saved_run, quiz_design_suite)


def test_a_run_of_another_build_of_the_suite_is_named_as_such(
    saved_run, challenge300_suite, tmp_path, capsys
):
    # README: evaluate --suite suites/c300 (built from a --source file) --out runs/d2, then
    # slices challenge300 --run runs/d2 said "did not score suite challenge300 (... it scored
    # ['challenge300'])"
    other_build = challenge300_suite.derive(challenge300_suite.pairs[:100]).save(tmp_path / "c300")
    assert main(["slices", str(other_build), "--run", str(saved_run)]) == 2
    err = capsys.readouterr().err
    assert "the run scored another build of suite challenge300" in err
    assert "give the suite the run scored, as it was given to `evaluate --suite`" in err


def test_slices_prints_the_library_slice_rates(saved_run, challenge300_suite, capsys):
    from nnd_suites.evaluation.saved import outcomes_for
    from nnd_suites.evaluation.slicing import slice_rates
    from nnd_suites.infra.formatting import rate_with_interval

    rates = slice_rates(challenge300_suite, outcomes_for(saved_run, challenge300_suite))
    only = slice_rates(
        challenge300_suite, outcomes_for(saved_run, challenge300_suite), ["length_chars"]
    )
    assert list(only) == ["length_chars"] and only["length_chars"] == rates["length_chars"]
    capsys.readouterr()
    assert main(["slices", "challenge300", "--run", str(saved_run)]) == 0
    out = capsys.readouterr().out
    for subset, r in rates["length_chars"].items():
        assert f"pass {rate_with_interval(r.pass_rate, r.ci)}" in next(
            line for line in out.splitlines() if line.strip().startswith(subset + " ")
        )


def test_slices_columns_line_up_whatever_the_width_of_n(saved_run, capsys):
    """`n=27  pass ...` beside `n=300  pass ...`: the pass column moved with n's width."""
    assert main(["slices", "challenge300", "--run", str(saved_run)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if " n=" in line]
    widths = {len(line.split(" n=")[1].split()[0]) for line in lines}
    assert len(widths) > 1, "the counts all have one width: nothing to line up"
    assert len({line.index(" n=") for line in lines}) == 1
    assert len({line.index("  pass ") for line in lines if "  pass " in line}) == 1


def test_verify_systems_from_arguments_and_file(tmp_path):
    from nnd_suites.evaluation.verify.run import collect_systems

    mapping = tmp_path / "systems.yaml"
    mapping.write_text("mixqg: models/a\nbartl_sup: models/b\n", encoding="utf-8")
    systems = collect_systems(["dgpt2_sup=models/c"], mapping)
    assert systems == {"mixqg": "models/a", "bartl_sup": "models/b", "dgpt2_sup": "models/c"}
    with pytest.raises(NNDError, match="--system mixqg is given twice"):
        collect_systems(["mixqg=models/x"], mapping)
    with pytest.raises(NNDError, match="write NAME=MODEL"):
        collect_systems(["mixqg"])


def test_refused_rewrites_are_the_transformations_own(challenge300_suite, tmp_path, capsys):
    from nnd_suites.transformations import transform_suite
    from nnd_suites.transformations.apply import refused_rewrites

    first = challenge300_suite.pairs[0]
    odd = first.model_copy(
        update={"id": "0" * 16, "high": first.high.model_copy(update={"text": "?!"})}
    )
    suite = challenge300_suite.derive([*challenge300_suite.pairs, odd])
    child = transform_suite(suite, "no_punctuation")
    (kept,) = refused_rewrites(child)  # the parent's own skip records are not among them
    assert (
        kept.reason == f"no_punctuation on {suite.name} would leave an empty text; kept unchanged"
    )
    assert kept.count == 1 and refused_rewrites(suite) == []  # not a child suite
    again = transform_suite(child, "lowercase")  # a chain: the parent's refusals are not its own
    assert refused_rewrites(again) == []
    suite.save(tmp_path / "odd")
    capsys.readouterr()
    argv = ["transform", str(tmp_path / "odd"), "--transform", "no_punctuation"]
    assert main([*argv, "--out", str(tmp_path / "child")]) == 0
    assert f"  {kept.reason}: 1" in capsys.readouterr().out


def test_the_same_transformation_twice_counts_only_its_own_refusals(
    challenge300_suite, tmp_path, capsys
):
    """A child transformed again by its own transformation: the rewrites this step refused are
    told apart from its parent's (the same plugin, the same kind of refusal), in the manifest
    and in what `transform` prints."""
    from nnd_suites.transformations import transform_suite
    from nnd_suites.transformations.apply import refused_rewrites

    first = challenge300_suite.pairs[0]
    odd = first.model_copy(
        update={"id": "0" * 16, "high": first.high.model_copy(update={"text": "?!"})}
    )
    child = transform_suite(
        challenge300_suite.derive([*challenge300_suite.pairs, odd]), "no_punctuation"
    )
    twice = transform_suite(child, "no_punctuation")
    (kept,) = refused_rewrites(twice)
    assert kept.count == 1 and child.name in kept.reason
    refusals = [s for s in twice.manifest.skipped if "would leave an empty text" in s.reason]
    assert len({s.reason for s in refusals}) == 2 and sum(s.count for s in refusals) == 2
    child.save(tmp_path / "child")
    capsys.readouterr()
    argv = ["transform", str(tmp_path / "child"), "--transform", "no_punctuation"]
    assert main([*argv, "--out", str(tmp_path / "twice"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kept_unchanged"] == 1


def test_robustness_overall_table_is_the_reports_first_part(quiz_design_suite):
    from nnd_suites.evaluation.robustness import RobustnessReport, make_cell, to_markdown
    from nnd_suites.evaluation.robustness.stats import paired_tests
    from nnd_suites.statistics.outcomes import rate
    from nnd_suites.transformations import transform_suite

    def shorter(suite):
        return {p.id: "pass" if len(p.high.text) < len(p.low.text) else "fail" for p in suite.pairs}

    child = transform_suite(quiz_design_suite, "lowercase")
    cell = make_cell(
        "quiz_design",
        "lowercase",
        child.name,
        paired_tests(quiz_design_suite, child, shorter(quiz_design_suite), shorter(child)),
    )
    report = RobustnessReport(
        model="shorter",
        suites={"quiz_design": rate(shorter(quiz_design_suite).values())},
        transforms=["lowercase"],
        cells=[cell],
    )
    overall = to_markdown(report, per_category=False)
    assert to_markdown(report).startswith(overall + "\n\n## Per category")
    assert "| quiz_design | lowercase |" in overall and "Per category" not in overall


def test_shipped_suites_check_every_target_before_the_first_build(tmp_path):
    from nnd_suites.hub.building import build_shipped_suites
    from nnd_suites.resolve import shipped_suites

    last = shipped_suites()[-1]
    (tmp_path / last).mkdir()
    (tmp_path / last / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(OutputFolderError):
        next(build_shipped_suites(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [last]  # nothing built
    assert (tmp_path / last / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_a_single_build_refuses_a_foreign_folder_before_reading(tmp_path, capsys):
    from nnd_suites.builder.suites import build_suite

    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(OutputFolderError):
        build_suite("quiz_design", tmp_path / "no-such-source.jsonl", foreign)  # never read


def test_stats_lines_group_reasons_that_differ_by_a_name():
    from nnd_suites.suite.stats_text import stats_lines

    stats = {
        "name": "s",
        "adapter": "a",
        "pairs": 3,
        "groups": 2,
        "candidates": 5,
        "breakdowns": {"category": {"x": 2, "y": 1}},
        "pairs_repeating_texts": 0,
        "degenerate_pairs": 1,
        "groups_without_pairs": 0,
        "skipped": {"no rating (sysA)": 2, "no rating (sysB)": 3, "empty text": 1},
    }
    assert stats_lines(stats) == [
        "suite s (adapter a): 3 pairs from 2 groups, 5 candidates read",
        "  category: x 2, y 1",
        "  degenerate pairs (identical texts, counted apart from pass rates): 1",
        "  skipped: no rating: 5 rows (sysA 2, sysB 3)",
        "  skipped: empty text: 1",
    ]


def test_compare_runs_records_where_each_side_came_from(
    saved_run, challenge300_suite, heuristic_report, tmp_path, capsys
):
    from nnd_suites.evaluation.comparison import SameRunError, compare_runs
    from nnd_suites.evaluation.outputs import write_report

    with pytest.raises(SameRunError, match="one run"):  # one run given twice: nothing compared
        compare_runs(saved_run, saved_run / "report.json")
    again = heuristic_report([challenge300_suite], "prefer-longer", len)
    again.created = "2024-01-02T00:00:00+00:00"  # the same model scored again, a day later
    write_report(again, tmp_path / "again")
    comparison = compare_runs(saved_run, tmp_path / "again" / "report.json")
    assert comparison.source_a == str(saved_run / "report.json")
    assert comparison.source_b == str(tmp_path / "again" / "report.json")
    (result,) = comparison.suites.values()
    assert result.overall.passed_a == result.overall.passed_b > 0  # the same outcomes again
    assert result.overall.difference == 0
    capsys.readouterr()
    assert main(["compare", str(saved_run), str(tmp_path / "again"), "--json"]) == 0
    assert capsys.readouterr().out.strip() == comparison.model_dump_json(indent=2)


def test_schema_writes_every_schema_the_package_ships_as_shipped(tmp_path, capsys):
    """`schema` wrote no declarative_source.schema.json (source.yaml's), and no command
    regenerated the shipped one."""
    from importlib import resources

    shipped = resources.files("nnd_suites.schemas")
    names = {p.name for p in shipped.iterdir() if p.name.endswith(".schema.json")}
    assert main(["schema", "--out", str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.iterdir()} == names
    for name in names:
        assert (tmp_path / name).read_text("utf-8") == shipped.joinpath(name).read_text("utf-8")
