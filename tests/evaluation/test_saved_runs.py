"""Run folders read by compare/place: damaged or foreign files are named errors, outcomes stay
inside their run folder, and outcome rows that are not the run's (edited by hand, or of another
run) are refused."""

from __future__ import annotations

import json
import math
import re
import shutil
from collections import Counter
from collections.abc import Callable

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.outputs import write_report
from nnd_suites.evaluation.saved import load_report


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory, challenge300_suite, heuristic_report):
    """A run folder written like `evaluate --out` (a heuristic scores by length)."""
    folder = tmp_path_factory.mktemp("runs") / "run"
    write_report(heuristic_report([challenge300_suite], "prefer-longer", len), folder)
    return folder


@pytest.fixture
def run(saved_run, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(saved_run, copy)
    return copy


@pytest.fixture
def skipping_run(tmp_path, challenge300_suite, heuristic_report):
    """A run with skipped tests (a candidate over 60 characters is not scored) besides ties."""
    folder = tmp_path / "skipping"
    score = lambda text: None if len(text) > 60 else len(text)  # noqa: E731
    write_report(heuristic_report([challenge300_suite], "skips-long", score), folder)
    return folder


def _outcomes_file(run) -> str:
    report = json.loads((run / "report.json").read_text("utf-8"))
    return report["suites"]["challenge300"]["outcomes_file"]


def _set_outcomes_file(run, value: str) -> None:
    path = run / "report.json"
    report = json.loads(path.read_text("utf-8"))
    report["suites"]["challenge300"]["outcomes_file"] = value
    path.write_text(json.dumps(report), encoding="utf-8")


def test_a_saved_run_reads_back(run):
    report = load_report(run)
    assert len(report.outcomes["challenge300"]) == report.suites["challenge300"].pairs == 807


def test_a_truncated_outcomes_file_is_named(run):
    outcomes = run / _outcomes_file(run)
    outcomes.write_bytes(outcomes.read_bytes()[: outcomes.stat().st_size // 2])
    with pytest.raises(NNDError, match=rf"{outcomes}: unreadable outcomes of suite challenge300"):
        load_report(run)


def test_an_unknown_outcome_is_named(run):
    outcomes = run / _outcomes_file(run)
    table = pq.read_table(outcomes)
    values = table.column("outcome").to_pylist()
    values[0] = "PASS"
    column = table.schema.get_field_index("outcome")
    pq.write_table(table.set_column(column, "outcome", pa.array(values)), outcomes)
    with pytest.raises(NNDError, match=r"not the per-test outcomes of suite challenge300.*outcome"):
        load_report(run)


def test_a_bad_outcome_row_is_named_by_its_row_test_and_field(run):
    """An outcomes file's bad row was told by pydantic's location alone ("first: ('outcome',):
    Input should be ..."): which row, which test? It names the row, its test id and field."""
    outcomes = run / _outcomes_file(run)
    table = pq.read_table(outcomes)
    values = table.column("outcome").to_pylist()
    values[5] = "PASS"
    column = table.schema.get_field_index("outcome")
    pq.write_table(table.set_column(column, "outcome", pa.array(values)), outcomes)
    test = table.column("pair_id")[5].as_py()
    with pytest.raises(NNDError) as refused:
        load_report(run)
    said = str(refused.value)
    assert said.startswith(
        f"{outcomes}: not the per-test outcomes of suite challenge300: row 5 (test {test!r}): "
        "outcome: Input should be 'pass'"
    ), said
    assert "(got 'PASS')" in said and "('outcome',)" not in said, said


def test_a_report_that_is_not_utf8_is_named(run):
    path = run / "report.json"
    text = path.read_text("utf-8").replace('"prefer-longer"', '"préférer"')
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(NNDError, match=r"report.json:\d+: not UTF-8 text"):
        load_report(run)


def test_a_deep_or_huge_report_is_named(run):
    path = run / "report.json"
    path.write_text('{"a": ' * 5_000 + "1" + "}" * 5_000, encoding="utf-8")
    with pytest.raises(NNDError, match=r"report.json: JSON nested 5000 deep"):
        load_report(run)
    path.write_text('{"pairs": ' + "9" * 5_000 + "}", encoding="utf-8")
    with pytest.raises(NNDError, match=r"report.json: an integer of 5,000 digits"):
        load_report(run)


def test_outcomes_outside_the_run_folder_are_refused(run, tmp_path, saved_run):
    other_run = saved_run / _outcomes_file(saved_run)  # a real outcomes file of another run
    for outside in ("/etc/passwd", str(other_run), "../elsewhere.parquet"):
        _set_outcomes_file(run, outside)
        with pytest.raises(NNDError, match="outside the run folder"):
            load_report(run)
    link = run / "outcomes" / "link.parquet"
    link.symlink_to(other_run)
    _set_outcomes_file(run, "outcomes/link.parquet")
    with pytest.raises(NNDError, match="outside the run folder"):
        load_report(run)


def _edit_rows(run, edit: Callable[[list[dict]], str]):
    """Rewrite the run's outcome rows with ``edit`` (as by hand: the same schema, nothing else
    touched); returns the outcomes file and what ``edit`` returns (the edited pair id)."""
    path = run / _outcomes_file(run)
    table = pq.read_table(path)
    rows = table.to_pylist()
    edited = edit(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return path, edited


def _first(rows: list[dict], outcome: str) -> dict:
    return next(r for r in rows if r["outcome"] == outcome)


def test_an_untouched_run_with_ties_and_skipped_tests_reads_back(run, skipping_run):
    for folder in (run, skipping_run):
        report = load_report(folder)
        counts = Counter(o.outcome for o in report.outcomes["challenge300"])
        overall = report.suites["challenge300"].overall
        assert (counts["pass"], counts["fail"], counts["tie"], counts["skipped"]) == (
            overall.passed,
            overall.failed,
            overall.ties,
            overall.skipped,
        )
    assert counts["tie"] and counts["skipped"]  # both kinds of row are checked and accepted


@pytest.mark.parametrize(("was", "now"), [("fail", "pass"), ("pass", "tie"), ("tie", "fail")])
def test_a_verdict_its_scores_contradict_is_refused(run, was, now):
    def flip(rows: list[dict]) -> str:
        row = _first(rows, was)
        row["outcome"] = now
        return row["pair_id"]

    path, pair_id = _edit_rows(run, flip)
    where = re.escape(str(path))
    with pytest.raises(
        NNDError,
        match=rf"{where}: test {pair_id} of suite challenge300 says {now}, but its scores "
        rf"\(high .*, low .*\) make it {was}; the folder was edited or mixes two runs",
    ):
        load_report(run)


def test_a_skipped_test_given_scores_is_refused(skipping_run):
    def scored(rows: list[dict]) -> str:
        row = _first(rows, "skipped")
        row["ll_high"], row["ll_low"] = 2.0, 1.0
        return row["pair_id"]

    path, pair_id = _edit_rows(skipping_run, scored)
    with pytest.raises(
        NNDError, match=rf"{re.escape(str(path))}: test {pair_id} .* says skipped, .* make it pass"
    ):
        load_report(skipping_run)


def _swap_a_fail(rows: list[dict]) -> str:
    """Scores and verdict edited together: the row agrees with itself, not with the report."""
    row = _first(rows, "fail")
    row["ll_high"], row["ll_low"], row["outcome"] = row["ll_low"], row["ll_high"], "pass"
    return row["pair_id"]


def _unskip(rows: list[dict]) -> str:
    """A skipped test called a fail: its NaN scores are a fail by the rule, so only the counts
    tell."""
    row = _first(rows, "skipped")
    assert math.isnan(row["ll_high"])
    row["outcome"] = "fail"
    return row["pair_id"]


@pytest.mark.parametrize(
    ("folder", "edit", "moved"),
    [
        ("run", _swap_a_fail, {"passed": 1, "failed": -1}),
        ("skipping_run", _unskip, {"failed": 1, "skipped": -1}),
    ],
)
def test_outcome_counts_that_are_not_the_reports_are_refused(request, folder, edit, moved):
    run = request.getfixturevalue(folder)
    overall = load_report(run).suites["challenge300"].overall
    path, _ = _edit_rows(run, edit)
    fields = ("passed", "failed", "ties", "degenerate", "skipped")
    reported = ", ".join(f"{getattr(overall, f)} {f}" for f in fields)
    counted = ", ".join(f"{getattr(overall, f) + moved.get(f, 0)} {f}" for f in fields)
    with pytest.raises(NNDError) as refused:
        load_report(run)
    assert str(refused.value) == (
        f"{path}: the outcomes count {counted}, but {run / 'report.json'} reports {reported} "
        "for suite challenge300; the folder was edited or mixes two runs: re-run the evaluation"
    )


def test_outcome_rows_moved_to_another_category_are_refused(run):
    """A passed test relabelled into another category keeps every overall count: compare
    printed the edited per-category pass rates and p-values with exit 0."""
    by_category = load_report(run).suites["challenge300"].by_category
    categories = sorted(by_category)

    def move(rows: list[dict]) -> str:
        row = next(r for r in rows if r["outcome"] == "pass" and r["category"] == categories[0])
        row["category"] = categories[1]
        return row["pair_id"]

    path, _ = _edit_rows(run, move)
    with pytest.raises(NNDError) as refused:
        load_report(run)
    reported = by_category[categories[0]]
    assert str(refused.value).startswith(
        f"{path}: the outcomes count {reported.passed - 1} passed, {reported.failed} failed"
    )
    assert f"for suite challenge300 in category {categories[0]}; the folder was edited" in str(
        refused.value
    )


@pytest.mark.parametrize("where", [("overall",), ("by_category", "Science")])
def test_a_pass_rate_its_counts_do_not_give_is_refused(run, where):
    """report.json's pass rate edited, its counts not: `place` (with a verify run that keeps no
    outcomes) printed the edited rate, and a human score predicted from it, with exit 0."""
    path = run / "report.json"
    report = json.loads(path.read_text("utf-8"))
    figures = report["suites"]["challenge300"]
    for key in where:
        figures = figures[key]
    passed, n = figures["passed"], figures["n"]
    figures["pass_rate"] = 0.05
    path.write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(NNDError) as refused:
        load_report(run)
    said = str(refused.value)
    assert said.startswith(f"{path}: not an nnd-suites evaluation report")
    assert f"pass_rate 0.05 is not passed {passed} / n {n} ({passed / n})" in said


@pytest.mark.parametrize("limit", [-1, 0, 2.5])
def test_a_limit_that_limit_refuses_is_refused(run, limit):
    """report.json's limit edited to -1 was read, and compare's note said the runs scored "the
    first -100% of the context groups" with exit 0: a limit --limit would refuse is named."""
    path = run / "report.json"
    report = json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps({**report, "limit": limit}), encoding="utf-8")
    with pytest.raises(NNDError, match=r"\('limit',\): Value error, must be a whole number"):
        load_report(run)


@pytest.mark.parametrize(
    "where",
    [
        ("limit",),
        ("requests", "cached"),
        ("seconds",),
        ("suites", "challenge300", "truncated_tokens"),
    ],
)
def test_a_boolean_where_a_report_holds_a_number_is_refused(run, where):
    """report.json's limit edited to `true` was read as 1 (compare said the runs scored "the
    first 1 context groups", exit 0), as was any count or figure: every number of a saved
    report is strict, as verify.json's are, and a boolean there is named."""
    path = run / "report.json"
    report = json.loads(path.read_text("utf-8"))
    holder = report
    for key in where[:-1]:
        holder = holder[key]
    holder[where[-1]] = True
    path.write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(NNDError) as refused:
        load_report(run)
    said = str(refused.value)
    assert said.startswith(f"{path}: not an nnd-suites evaluation report"), said
    assert repr(where) in said, said
