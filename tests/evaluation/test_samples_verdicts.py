"""A sample line holds every score the run's scorers read (pmi's neutral score, ratio's reference
score), so each verdict is recomputed from the line alone; report.json names its samples files."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

import nnd_suites
from nnd_suites.evaluation import ScoreRequest, load_backend
from nnd_suites.evaluation.outputs import read_outcomes
from nnd_suites.evaluation.saved import load_report
from nnd_suites.evaluation.templates import neutral_context
from nnd_suites.records.texts import same_text
from nnd_suites.suite import Suite


@pytest.fixture(scope="module")
def suites(quiz_design_suite, challenge300_suite) -> list[Suite]:
    return [
        Suite(suite.manifest, suite.pairs[:n], suite.candidates)
        for suite, n in ((quiz_design_suite, 40), (challenge300_suite, 30))
    ]


@pytest.fixture(scope="module")
def backend(tiny_causal_model):
    return load_backend(str(tiny_causal_model), batch_size=8)


@pytest.fixture(scope="module")
def reference_model(tmp_path_factory, quiz_design_suite, challenge300_suite) -> Path:
    """Another tiny causal model (other weights, a smaller vocabulary: other tokens, so other
    target counts than the model's), the reference of ratio."""
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    texts = suite_texts([quiz_design_suite, challenge300_suite])
    folder = tmp_path_factory.mktemp("reference_lm")
    return tiny_causal_lm(folder, texts, vocab_size=512, n_positions=512, seed=1)


def _value(side: dict, scorer: str) -> float:
    """A side's number under ``scorer``, by the scorer's formula over the logged numbers."""
    if scorer == "mean":
        return side["logprob_sum"] / side["n_targets"]
    if scorer == "pmi":  # log p(c | context) - log p(c | neutral context)
        return side["logprob_sum"] - side["neutral"]["logprob_sum"]
    reference = side["reference"]
    if scorer == "ratio":  # RewardBench's DPO reward: sums
        return side["logprob_sum"] - reference["logprob_sum"]
    assert scorer == "ratio:normalise=mean"
    return side["logprob_sum"] / side["n_targets"] - (
        reference["logprob_sum"] / reference["n_targets"]
    )


def _recomputed(line: dict, scorer: str) -> tuple[str, float | None, float | None]:
    """(outcome, high's number, low's number) of a sample line, from the line alone."""
    high, low = line["high"], line["low"]
    if same_text(high["text"], low["text"]):
        return "degenerate", None, None
    scores = [s for side in (high, low) for s in (side, side["neutral"], side["reference"]) if s]
    if any(s["skipped"] for s in scores):
        return "skipped", None, None
    h, w = _value(high, scorer), _value(low, scorer)
    return ("pass" if h > w else "tie" if h == w else "fail"), h, w


def _lines(out: Path, suite: str) -> list[dict]:
    return [
        json.loads(line)
        for line in (out / "samples" / f"{suite}.jsonl").read_text("utf-8").splitlines()
    ]


@pytest.mark.parametrize("scorer", ["pmi", "ratio", "ratio:normalise=mean"])
def test_each_verdict_is_recomputed_from_its_sample_line(
    scorer, backend, reference_model, suites, tmp_path
):
    out = tmp_path / "run"
    ratio = scorer.startswith("ratio")
    nnd_suites.evaluate(
        backend,
        suites,
        scorers=scorer,
        reference_model=reference_model if ratio else None,
        out=out,
        cache=False,
        progress=False,
        log_samples=True,
    )
    written = json.loads((out / "report.json").read_text("utf-8"))
    for suite in suites:
        lines = _lines(out, suite.name)
        outcomes = read_outcomes(out / "outcomes" / f"{suite.name}.parquet")
        assert [line["pair_id"] for line in lines] == [o.pair_id for o in outcomes]
        for line, row in zip(lines, outcomes, strict=True):
            outcome, high, low = _recomputed(line, scorer)
            assert outcome == line["outcome"] == row.outcome
            if high is not None:  # the same arithmetic on the same floats: exactly equal
                assert (high, low) == (row.ll_high, row.ll_low)
                assert (high, low) == (line["high"]["score"], line["low"]["score"])
            # only the scores this scorer reads are logged
            for side in (line["high"], line["low"]):
                assert (side["neutral"] is None) == ratio
                assert (side["reference"] is None) != ratio
            assert (line["neutral_context"] is None) == ratio
        recounted = [_recomputed(line, scorer)[0] for line in lines]
        overall = written["suites"][suite.name]["overall"]
        assert (overall["passed"], overall["failed"], overall["ties"]) == tuple(
            recounted.count(o) for o in ("pass", "fail", "tie")
        )
        assert recounted.count("pass") not in (0, len(lines))  # a real mix of verdicts
        if ratio:  # the reference model's tokens: other target counts than the model's
            assert any(
                line["high"]["reference"]["n_targets"] != line["high"]["n_targets"]
                for line in lines
            )


def test_the_logged_neutral_and_reference_scores_are_those_models_scores(
    backend, reference_model, suites, tmp_path
):
    """A run with several scorers logs what each one read; the neutral score is the model's
    after the template with empty fields, the reference score the reference model's."""
    suite = suites[1]
    scorers = ["mean", "pmi", "ratio:normalise=mean"]
    out = tmp_path / "run"
    report = nnd_suites.evaluate(
        backend,
        [suite],
        scorers=scorers,
        reference_model=reference_model,
        out=out,
        cache=False,
        progress=False,
        log_samples=True,
    )
    lines = _lines(out, suite.name)
    template = report.suites[suite.name].template
    reference = load_backend(str(reference_model), batch_size=8)
    for line, pair in list(zip(lines, suite.pairs, strict=True))[:8]:
        assert line["scorer"] == "mean"  # the sides' scores are the primary scorer's
        empty = neutral_context(template, pair.context)
        assert line["neutral_context"] == empty != line["context"]
        for side in (line["high"], line["low"]):
            neutral = backend.score([ScoreRequest(empty, side["text"])])[0]
            assert side["neutral"]["logprob_sum"] == pytest.approx(neutral.logprob_sum, abs=1e-4)
            assert side["neutral"]["n_targets"] == neutral.n_targets
            theirs = reference.score([ScoreRequest(line["context"], side["text"])])[0]
            assert side["reference"]["logprob_sum"] == pytest.approx(theirs.logprob_sum, abs=1e-4)
            assert side["reference"]["n_targets"] == theirs.n_targets
    # every scorer's figures in report.json are recounted from the lines
    written = json.loads((out / "report.json").read_text("utf-8"))
    for scorer in scorers:
        recounted = [_recomputed(line, scorer)[0] for line in lines]
        overall = written["sensitivity"][suite.name]["scorers"][scorer]["overall"]
        assert (overall["passed"], overall["failed"], overall["ties"]) == tuple(
            recounted.count(o) for o in ("pass", "fail", "tie")
        )


def test_report_json_names_its_samples_files_and_old_reports_still_load(backend, suites, tmp_path):
    shipped = resources.files("nnd_suites.schemas").joinpath("evaluation_report.schema.json")
    schema = json.loads(shipped.read_text("utf-8"))
    logged, plain = tmp_path / "logged", tmp_path / "plain"
    nnd_suites.evaluate(backend, suites, out=logged, progress=False, log_samples=True)
    nnd_suites.evaluate(backend, suites, out=plain, progress=False)
    with_samples = json.loads((logged / "report.json").read_text("utf-8"))
    without = json.loads((plain / "report.json").read_text("utf-8"))
    markdown = (logged / "report.md").read_text("utf-8")
    for suite in suites:
        named = with_samples["suites"][suite.name]["samples_file"]
        assert named == f"samples/{suite.name}.jsonl"
        assert len(_lines(logged, suite.name)) == len(suite.pairs)  # the file it names
        assert f"test by test: `{named}`" in markdown
        assert without["suites"][suite.name]["samples_file"] is None
    assert not (plain / "samples").exists()
    # each suite was given in part (no limit): the report says so, not the whole suite's figures
    assert "Part of a suite was scored (given so, not by `limit`): quiz_design: 40 of 2,686" in (
        " ".join(markdown.split())
    )
    assert "test by test" not in (plain / "report.md").read_text("utf-8")
    jsonschema.validate(with_samples, schema)  # the shipped schema knows the field
    jsonschema.validate(without, schema)
    # a report written before the field existed still loads (compare, leaderboards read them)
    for result in with_samples["suites"].values():
        del result["samples_file"]
    (logged / "report.json").write_text(json.dumps(with_samples), "utf-8")
    old = load_report(logged)
    assert all(result.samples_file is None for result in old.suites.values())
    assert list(old.outcomes) == [suite.name for suite in suites]
