"""The pair budget: a group's pairs are counted before they are built and refused over the limit."""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnd_suites import Candidate, Group, QualityMap, build_suite
from nnd_suites.builder.budget import PairBudget, check_pair_budget
from nnd_suites.builder.pairs import build_pairs
from nnd_suites.cli import main
from nnd_suites.errors import NNDError, PairBudgetError

QD_MAP = QualityMap.load("quiz_design")
QD_LABELS = ["No error", "disfluent", "off_target", "wrong_context"]
UNLIMITED = PairBudget(per_group=None, total=None)


def numeric_map(gap: float) -> QualityMap:
    return QualityMap.from_dict(
        {
            "name": "scores",
            "description": "a pair when scores differ by at least the gap",
            "labels": ["lower"],
            "rating_rule": {
                "kind": "numeric",
                "rating": "overall",
                "aggregate": "mean",
                "minimum_gap": gap,
                "low_label": "lower",
            },
        }
    )


def big_quiz_design_file(path, n: int) -> None:
    """One Quiz Design group of ``n`` questions, half good, half bad (n*n/4 pairs)."""
    questions = [
        {"question": f"q{i}?", "reason": QD_LABELS[i % 2], "model_name": f"m{i}"} for i in range(n)
    ]
    row = {"group_id": 0, "context": "p", "answer_span": "a", "questions": questions}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")


# Texts repeat (merged entries, several systems per text) and labels or scores repeat (ties).
labelled = st.lists(
    st.tuples(st.sampled_from("abcdef"), st.sampled_from(QD_LABELS)), min_size=0, max_size=12
)
scored = st.lists(
    st.tuples(st.sampled_from("abcdef"), st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0])),
    min_size=0,
    max_size=12,
)


def _group(cands: list[Candidate]) -> Group:
    return Group(id="g", context={"x": "y"}, candidates=cands)


def _assert_budget_is_exact(groups: list[Group], qmap: QualityMap) -> None:
    """The count the budget checks is the number built: exactly at it passes, one below fails."""
    built = len(build_pairs(groups, qmap, budget=UNLIMITED).pairs)
    if built:
        exact = PairBudget(per_group=built, total=built)
        assert len(build_pairs(groups, qmap, budget=exact).pairs) == built
    if built > 1:  # a budget is at least 1
        with pytest.raises(PairBudgetError, match=f"would give {built:,} pairs"):
            build_pairs(groups, qmap, budget=PairBudget(per_group=built - 1, total=None))
        with pytest.raises(PairBudgetError, match=f"would reach {built:,} pairs"):
            build_pairs(groups, qmap, budget=PairBudget(per_group=None, total=built - 1))


@settings(max_examples=150, deadline=None)
@given(labelled, st.sampled_from(["candidate", "text"]))
def test_counted_pairs_equal_built_pairs_for_labels(rows, pairs_per):
    cands = [
        Candidate(text=t, systems=[f"s{i}"], label=lab, where=f"f:{i}")
        for i, (t, lab) in enumerate(rows)
    ]
    qmap = QualityMap.from_dict(
        {**QD_MAP.data, "pairs_per": pairs_per, "conflicting_labels": "keep"}
    )
    _assert_budget_is_exact([_group(cands)], qmap)


@settings(max_examples=150, deadline=None)
@given(scored, st.sampled_from([0.5, 1.0, 2e-12]))  # the smallest gap a map may give
def test_counted_pairs_equal_built_pairs_for_scores(rows, gap):
    cands = [
        Candidate(text=t, systems=[f"s{i}"], ratings={"overall": [score]}, where=f"f:{i}")
        for i, (t, score) in enumerate(rows)
    ]
    _assert_budget_is_exact([_group(cands)], numeric_map(gap))


def test_a_huge_group_is_refused_before_its_pairs_are_built(tmp_path):
    source = tmp_path / "one_group.jsonl"
    big_quiz_design_file(source, 4000)  # 4,000,000 pairs: 3.2 GB before the budget
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(PairBudgetError) as caught:
            build_suite("quiz_design", source)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(caught.value)
    assert "one_group.jsonl:1" in message and "4,000,000 pairs" in message
    assert "--max-pairs-per-group 4000000" in message and "max_pairs_per_group=" in message
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MiB traced before the refusal"
    assert time.perf_counter() - started < 60


def test_the_limits_are_raised_explicitly(tmp_path, capsys):
    source = tmp_path / "one_group.jsonl"
    big_quiz_design_file(source, 300)  # 22,500 pairs
    assert main(
        ["build", "quiz_design", "--source", str(source), "--out", str(tmp_path / "a")]
    ) == (PairBudgetError.exit_status)
    assert "22,500 pairs" in capsys.readouterr().err
    suite = build_suite("quiz_design", source, max_pairs_per_group=22_500)
    assert len(suite) == 22_500
    args = ["build", "quiz_design", "--source", str(source), "--out", str(tmp_path / "b")]
    assert main([*args, "--max-pairs-per-group", "30000", "--max-pairs", "20000"]) != 0
    assert "over the limit of 20,000 pairs" in capsys.readouterr().err
    assert main([*args, "--max-pairs-per-group", "30000"]) == 0
    assert "22,500 pairs" in capsys.readouterr().out


@pytest.mark.parametrize("value", [0, -1, True])
def test_a_budget_below_one_is_refused(value):
    with pytest.raises(NNDError, match="at least 1"):
        PairBudget(per_group=value)


def test_the_check_is_public_for_other_builders():
    check_pair_budget(10, "judgments.jsonl:3", built=5, budget=PairBudget(10, 15))
    with pytest.raises(PairBudgetError, match=r"judgments.jsonl:3.*16 pairs"):
        check_pair_budget(10, "judgments.jsonl:3", built=6, budget=PairBudget(10, 15))


def _hh_rows(n: int):
    """``n`` HH-RLHF rows, each its own small dialogue (chosen beats rejected)."""
    for i in range(n):
        dialogue = f"\n\nHuman: question {i}?"
        yield {
            "chosen": f"{dialogue}\n\nAssistant: a kind answer {i}",
            "rejected": f"{dialogue}\n\nAssistant: a rude answer {i}",
        }


def test_a_pairwise_source_stops_being_read_at_the_pair_budget(tmp_path, capsys):
    """Adapters gather every group before yielding one, so the budget is counted while reading:
    the build stops at the first row past it, not after the whole file (1.5 M rows: 6.6 GB)."""
    source = tmp_path / "many.jsonl.gz"
    with gzip.open(source, "wt", encoding="utf-8") as out:
        for row in _hh_rows(50_000):
            out.write(json.dumps(row) + "\n")
    with pytest.raises(PairBudgetError) as caught:
        build_suite("hh_rlhf", source, max_pairs=100)
    # the row that stopped the read is the 101st: the 49,899 after it were never handed out
    assert str(caught.value).startswith("many.jsonl.gz:101: the source holds more than 100 rows")
    assert "--max-pairs N" in str(caught.value)

    code = main(["build", "hh_rlhf", "--source", str(source), "--max-pairs", "100",
                 "--out", str(tmp_path / "suite")])  # fmt: skip
    assert code != 0
    err = capsys.readouterr().err
    assert "many.jsonl.gz:101:" in err and "Traceback" not in err
    assert not (tmp_path / "suite").exists()


def test_a_pairwise_source_within_the_budget_builds(tmp_path):
    source = tmp_path / "few.jsonl.gz"
    with gzip.open(source, "wt", encoding="utf-8") as out:
        for row in _hh_rows(100):
            out.write(json.dumps(row) + "\n")
    assert len(build_suite("hh_rlhf", source, max_pairs=100).pairs) == 100
