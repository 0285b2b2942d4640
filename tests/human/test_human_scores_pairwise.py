"""Human scores of a pairwise suite whose replies name their systems: each system's win rate over
the comparisons it took part in, a tie counting as half a win (issue 34). `systems`, `verify` and
`place` work on such a suite; a pairwise suite that names no system is refused in one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import Adapter, AdapterMetadata
from nnd_suites.cli import main
from nnd_suites.errors import NoSystemsError, SuiteValidationError
from nnd_suites.human.scores import human_scores
from nnd_suites.records.judgments import UNKNOWN_SYSTEM, JudgedGroup, Judgment
from nnd_suites.sources import ReadLog, read_jsonl
from nnd_suites.suite import Suite

FOLDER = Path(__file__).with_name("named_pairwise")


class NamedPairwiseAdapter(Adapter):
    """One judgment per line; each reply names its system (``null``: none)."""

    name = "named_pairwise"
    quality_map = str(FOLDER / "quality_map.yaml")
    context_fields = ("context",)
    default_template = "{context}"
    metadata = AdapterMetadata(
        task="dialogue",
        languages=["en"],
        annotation_type="pairwise",
        license="CC0-1.0",
        citation="@misc{named_pairwise, title={synthetic}, year={2026}}",
        source_urls=["https://example.org/named-pairwise"],
        description="Synthetic pairwise judgments naming each reply's system.",
    )

    def read(self, path: Path, log: ReadLog) -> Iterator[JudgedGroup]:
        groups: dict[str, JudgedGroup] = {}
        for line, row in read_jsonl(path, log):
            where = f"{path.name}:{line}"
            group = groups.setdefault(
                row["id"],
                JudgedGroup(id=row["id"], context={"context": row["context"]}, judgments=[]),
            )
            group.judgments.append(
                Judgment(
                    response_a=row["response_a"],
                    response_b=row["response_b"],
                    verdict=row["verdict"],
                    systems_a=[row["system_a"] or UNKNOWN_SYSTEM],
                    systems_b=[row["system_b"] or UNKNOWN_SYSTEM],
                    where=where,
                )
            )
        yield from groups.values()


@pytest.fixture(scope="module")
def named_suite() -> Suite:
    return build_suite(NamedPairwiseAdapter(), source=FOLDER / "judgments.jsonl")


def _by_hand(path: Path) -> dict[str, tuple[float, int]]:
    """Win credit and comparisons per system, counted from the raw lines alone."""
    tally: dict[str, list[float]] = {}
    for row in map(json.loads, path.read_text().splitlines()):
        a, b = row["system_a"], row["system_b"]
        if a == b:
            continue  # against itself: says nothing of the system against others
        credit = {"a": (1.0, 0.0), "b": (0.0, 1.0), "tie": (0.5, 0.5)}[row["verdict"]]
        for system, won in zip((a, b), credit, strict=True):
            if system is not None:
                tally.setdefault(system, []).append(won)
    return {s: (sum(v) / len(v), len(v)) for s, v in tally.items()}


def test_win_rates_count_ties_as_half_a_win(named_suite):
    scores = human_scores(named_suite)
    expected = _by_hand(FOLDER / "judgments.jsonl")
    assert {s: v.candidates for s, v in scores.systems.items()} == {
        s: n for s, (_, n) in expected.items()
    }
    assert {s: v.human_score for s, v in scores.systems.items()} == pytest.approx(
        {s: rate for s, (rate, _) in expected.items()}
    )
    assert scores.systems["sys-z"].human_score == pytest.approx(5 / 6)  # 2 wins and 1 tie of 3
    assert list(scores.systems) == ["sys-z", "sys-x", "sys-y"]  # best first
    assert scores.unattributed == 1 and scores.self_comparisons == 1
    assert scores.score_range == (0.0, 1.0) and scores.categories == {}
    assert "a tie counts as half a win" in scores.measure


def test_systems_command_prints_the_win_rates(named_suite, tmp_path, capsys):
    folder = named_suite.save(tmp_path / "named")
    assert main(["systems", str(folder)]) == 0
    table = capsys.readouterr().out
    assert "a tie counts as half a win" in table
    assert "| sys-z | 3 | 83.3% |" in table and "| sys-y | 3 | 16.7% |" in table
    assert "1 comparison(s) of a system with itself are in no row" in table


@pytest.fixture(scope="module")
def three_models(named_suite, tmp_path_factory) -> list[Path]:
    """Three tiny random models, one seed each (their correlations mean nothing)."""
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    folder, texts = tmp_path_factory.mktemp("three"), suite_texts([named_suite])
    shape = {"vocab_size": 128, "n_layer": 1, "n_embd": 16, "n_head": 2, "n_positions": 64}
    return [tiny_causal_lm(folder / f"m{seed}", texts, seed=seed, **shape) for seed in range(3)]


def test_verify_and_place_run_on_a_pairwise_suite(named_suite, three_models, tmp_path, capsys):
    folder = named_suite.save(tmp_path / "named")
    fast = ["--quiet", "--no-cache", "--device", "cpu"]
    systems = [f"--system=sys-{s}={m}" for s, m in zip("xyz", three_models, strict=True)]
    out = tmp_path / "verify"
    argv = ["verify", str(folder), *systems, "--out", str(out), "--resamples", "40", *fast]
    assert main([*argv, "--json"]) == 0
    overall = json.loads(capsys.readouterr().out)["overall"]
    by_hand = {"sys-x": 2 / 3, "sys-y": 1 / 6, "sys-z": 5 / 6}
    assert overall["human_scores"] == pytest.approx(by_hand)
    run = tmp_path / "run"
    evaluate = ["evaluate", "--suite", str(folder), "--model", str(three_models[0])]
    assert main([*evaluate, "--out", str(run), *fast]) == 0
    capsys.readouterr()
    # sys-x's own model is a point of the fit: placing it would be circular
    assert main(["place", str(out), str(run), "--json"]) == 2
    assert "sys-x" in capsys.readouterr().err
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    shape = {"vocab_size": 128, "n_layer": 1, "n_embd": 16, "n_head": 2, "n_positions": 64}
    newcomer = tiny_causal_lm(tmp_path / "m3", suite_texts([named_suite]), seed=3, **shape)
    evaluate = ["evaluate", "--suite", str(folder), "--model", str(newcomer)]
    assert main([*evaluate, "--out", str(tmp_path / "run3"), *fast]) == 0
    capsys.readouterr()
    assert main(["place", str(out), str(tmp_path / "run3"), "--json"]) == 0
    placed = json.loads(capsys.readouterr().out)["overall"]
    own = json.loads((tmp_path / "run3" / "report.json").read_text())["suites"]
    assert placed["pass_rate"] == pytest.approx(own[named_suite.name]["overall"]["pass_rate"])


def test_a_pairwise_suite_naming_no_system_is_refused_in_one_line(capsys):
    assert main(["systems", "hh_rlhf"]) == NoSystemsError.exit_status
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("nnd-suites systems: error: suite hh_rlhf: ")
    assert "its source names no systems" in err


def test_a_damaged_pairwise_suite_is_named(named_suite):
    """Rows that are not a judgment's two responses in a row cannot give win rates."""
    swapped = named_suite.candidates[1:] + named_suite.candidates[:1]
    damaged = Suite(named_suite.manifest, named_suite.pairs, swapped)
    with pytest.raises(SuiteValidationError, match="not the two responses of one judgment"):
        human_scores(damaged)
