"""Scorers: hand-computed values, one model call for several scorers, flips counted by hand."""

from __future__ import annotations

import json
import math

import pytest

import nnd_suites
from nnd_suites.errors import NNDError, ParameterError, UnknownItemError
from nnd_suites.evaluation import Score, ScoreRequest, load_backend
from nnd_suites.evaluation.scorers import SCORERS, CandidateScores, make_scorer
from nnd_suites.records.pairs import is_degenerate
from nnd_suites.records.templates import render_template as render
from nnd_suites.statistics.outcomes import verdict
from nnd_suites.suite import Suite

SCORERS_ASKED = ["mean", "sum", "per_byte"]


def test_each_scorer_against_known_log_probabilities():
    score = Score(logprob_sum=-6.0, n_targets=3)  # e.g. two tokens + EOS
    text = "héllo"  # 5 characters, 6 UTF-8 bytes
    neutral = Score(logprob_sum=-9.5, n_targets=3)  # the same text after empty fields
    reference = Score(logprob_sum=-4.0, n_targets=4)  # under the reference model
    scores = CandidateScores(score, neutral, reference)
    values = {name: make_scorer(name).value(scores, text) for name in SCORERS.names()}
    assert values == {
        "mean": -2.0,
        "sum": -6.0,
        "per_char": -1.0,
        "per_byte": -6.0 / 7,
        "pmi": 3.5,  # log p(c | context) - log p(c | neutral context)
        "ratio": -2.0,  # log p_model(c) - log p_reference(c), summed (RewardBench's DPO reward)
        "reward": -6.0,  # a reward model's scalar, stored as the score's sum
    }
    assert make_scorer("ratio:normalise=mean").value(scores, text) == -2.0 - (-1.0)
    empty = CandidateScores(Score(logprob_sum=-0.5, n_targets=1))  # an empty candidate: EOS alone
    assert make_scorer("per_char").value(empty, "") == -0.5  # the end counts as one character
    assert make_scorer("per_byte").value(empty, "") == -0.5


def test_bad_scorers_are_named():
    with pytest.raises(UnknownItemError, match="unknown scorer 'meen'; did you mean 'mean'"):
        make_scorer("meen")
    with pytest.raises(ParameterError, match="scorer sum: unknown parameter 'x'"):
        make_scorer("sum:x=1")


@pytest.fixture(scope="module")
def suite(challenge300_suite) -> Suite:
    return Suite(
        challenge300_suite.manifest, challenge300_suite.pairs[:150], challenge300_suite.candidates
    )


@pytest.fixture(scope="module")
def backend(tiny_causal_model):
    return load_backend(str(tiny_causal_model), batch_size=8)


def test_three_scorers_cost_one_model_call_per_request_and_flips_match_a_hand_count(
    backend, suite, monkeypatch
):
    requested = []
    score = backend.score

    def counted(requests, **options):
        requested.extend(requests)
        return score(requests, **options)

    monkeypatch.setattr(backend, "score", counted)
    report = nnd_suites.evaluate(
        backend, [suite], scorers=SCORERS_ASKED, cache=False, progress=False
    )
    monkeypatch.undo()
    assert len(requested) == len(set(requested)) == report.requests.unique
    assert report.requests.scored == report.requests.unique
    assert report.scorer == "mean"
    alone = nnd_suites.evaluate(backend, [suite], cache=False, progress=False)
    name = suite.name
    assert report.suites[name].overall == alone.suites[name].overall  # mean: unchanged figures
    assert [o.outcome for o in report.outcomes[name]] == [o.outcome for o in alone.outcomes[name]]

    # by hand: score every distinct request once, apply each scorer's formula, count
    template = report.suites[name].template
    texts = {
        (render(template, p.context), x) for p in suite.pairs for x in (p.high.text, p.low.text)
    }
    requests = [ScoreRequest(c, x) for c, x in sorted(texts)]
    scored = dict(zip(sorted(texts), backend.score(requests), strict=True))
    formulas = {
        "mean": lambda s, text: s.logprob_sum / s.n_targets,
        "sum": lambda s, text: s.logprob_sum,
        "per_byte": lambda s, text: s.logprob_sum / (len(text.encode("utf-8")) + 1),
    }
    verdicts = {}
    for scorer, formula in formulas.items():
        verdicts[scorer] = []
        for pair in suite.pairs:
            context = render(template, pair.context)
            high, low = scored[(context, pair.high.text)], scored[(context, pair.low.text)]
            if is_degenerate(pair) or high.skipped or low.skipped:
                verdicts[scorer].append(None)
                continue
            verdicts[scorer].append(
                verdict(formula(high, pair.high.text), formula(low, pair.low.text))
            )
    table = report.sensitivity[name]
    assert table.primary == "mean" and list(table.scorers) == SCORERS_ASKED
    for scorer in SCORERS_ASKED:
        mine = table.scorers[scorer]
        assert mine.overall.passed == verdicts[scorer].count("pass")
        assert mine.overall.ties == verdicts[scorer].count("tie")
        if scorer == "mean":
            assert mine.flips is None
            continue
        both = [(a, b) for a, b in zip(verdicts["mean"], verdicts[scorer], strict=True) if a]
        only_mean = sum(a == "pass" and b != "pass" for a, b in both)
        only_this = sum(b == "pass" and a != "pass" for a, b in both)
        assert (mine.flips.only_primary, mine.flips.only_this) == (only_mean, only_this)
        assert mine.flips.flipped == only_mean + only_this and mine.flips.n == len(both)
        assert 0 <= mine.flips.p_value <= 1
        # length-controlled view: the subsets partition the rated tests
        assert sum(r.n for r in mine.by_length.values()) == mine.overall.n
    # sum prefers shorter texts: it passes more where the better candidate is the shorter
    by_length = table.scorers["sum"].by_length
    assert by_length["better shorter"].pass_rate > by_length["better longer"].pass_rate


def test_a_scorer_given_twice_or_none_is_refused(backend, suite):
    with pytest.raises(NNDError, match="scorer 'sum' is given twice"):
        nnd_suites.evaluate(backend, [suite], scorers=["sum", "sum"], cache=False)
    with pytest.raises(NNDError, match="no scorer given"):
        nnd_suites.evaluate(backend, [suite], scorers=[], cache=False)


def test_runs_scored_with_another_scorer_are_not_combined(backend, suite):
    from nnd_suites.evaluation.comparison import IncomparableRunsError, compare_reports

    mean = nnd_suites.evaluate(backend, [suite], cache=False, progress=False)
    summed = nnd_suites.evaluate(backend, [suite], scorers="sum", cache=False, progress=False)
    assert summed.scorer == "sum" and not math.isclose(
        summed.outcomes[suite.name][0].ll_high, mean.outcomes[suite.name][0].ll_high
    )
    with pytest.raises(IncomparableRunsError, match="scorer 'mean' vs 'sum'"):
        compare_reports(mean, summed)


def test_pmi_is_the_difference_of_two_scorings(backend, suite):
    report = nnd_suites.evaluate(
        backend, [suite], scorers=["pmi", "mean"], cache=False, progress=False
    )
    alone = nnd_suites.evaluate(backend, [suite], cache=False, progress=False)
    # one more request per distinct candidate: the candidate after the neutral context
    candidates = {x for p in suite.pairs for x in (p.high.text, p.low.text)}
    assert report.requests.unique == alone.requests.unique + len(candidates)
    assert report.scorer == "pmi"
    template = report.suites[suite.name].template
    neutral = render(template, dict.fromkeys(suite.manifest.context_fields, ""))
    for pair, row in list(zip(suite.pairs, report.outcomes[suite.name], strict=True))[:40]:
        context = render(template, pair.context)
        texts = [pair.high.text, pair.low.text]
        after = backend.score([ScoreRequest(context, t) for t in texts])
        alone_ = backend.score([ScoreRequest(neutral, t) for t in texts])
        expected = [a.logprob_sum - b.logprob_sum for a, b in zip(after, alone_, strict=True)]
        assert (row.ll_high, row.ll_low) == pytest.approx(expected, abs=1e-4)
    # the mean scorer's figures, read from the same run, are the plain run's
    mean = report.sensitivity[suite.name].scorers["mean"]
    assert mean.overall == alone.suites[suite.name].overall


def test_cli_takes_several_scorers_and_names_an_unknown_one(tiny_causal_model, capsys):
    from nnd_suites.cli import main

    argv = ["evaluate", "--suite", "challenge300", "--model", str(tiny_causal_model), "--quiet"]
    argv += ["--limit", "5", "--no-cache", "--scorer", "per_char", "--scorer", "mean", "--json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["scorer"] == "per_char"
    assert list(printed["sensitivity"]["challenge300"]["scorers"]) == ["per_char", "mean"]
    assert main([*argv[:-5], "--scorer", "per_word"]) == UnknownItemError.exit_status
    assert "unknown scorer 'per_word'" in capsys.readouterr().err


def test_the_console_gives_the_flips_report_md_lists(tiny_causal_model, tmp_path, capsys):
    """Several --scorer: the console once said nothing of the flips of report.md's sensitivity
    table; it now gives each scorer's flips, as the table and report.json count them."""
    from nnd_suites.cli import main

    out = tmp_path / "run"
    argv = ["evaluate", "--suite", "challenge300", "--model", str(tiny_causal_model), "--quiet"]
    argv += ["--limit", "5", "--no-cache", "--scorer", "mean", "--scorer", "sum", "--out", str(out)]
    assert main([*argv, "--scorer", "per_char"]) == 0
    printed = capsys.readouterr().out
    found = json.loads((out / "report.json").read_text("utf-8"))["sensitivity"]["challenge300"]
    table = (out / "report.md").read_text("utf-8")
    each = []
    for name in ("sum", "per_char"):
        flips = found["scorers"][name]["flips"]
        share = f"{100 * flips['share']:.1f}%"
        assert f"| `{name}` | " in table and f" | {flips['flipped']} | {share} | " in table
        each.append(f"{name} {flips['flipped']} of {flips['n']} ({share}, p ")
    line = next(x for x in printed.splitlines() if x.startswith("  flips vs mean "))
    assert all(part in line for part in each) and line.endswith("(report.md: Scorer sensitivity)")
    assert found["scorers"]["sum"]["flips"]["flipped"] > 0


@pytest.fixture(scope="module")
def reference_model(tiny_causal_model, tmp_path_factory):
    """The tiny model with perturbed weights: a 'reference' it was 'tuned' from."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_causal_model)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn(parameter.shape, generator=generator))
    folder = tmp_path_factory.mktemp("reference") / "reference"
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(tiny_causal_model).save_pretrained(folder)
    return folder


@pytest.mark.parametrize("normalise", ["none", "mean"])
def test_ratio_is_the_dpo_implicit_reward_against_the_reference(
    backend, suite, reference_model, normalise
):
    spec = "ratio" if normalise == "none" else "ratio:normalise=mean"
    report = nnd_suites.evaluate(
        backend,
        [suite],
        scorers=spec,
        reference_model=reference_model,
        cache=False,
        progress=False,
    )
    assert report.scorer == spec and report.reference_model == str(reference_model)
    reference = load_backend(str(reference_model), batch_size=8)
    template = report.suites[suite.name].template
    for pair, row in list(zip(suite.pairs, report.outcomes[suite.name], strict=True))[:40]:
        context = render(template, pair.context)
        requests = [ScoreRequest(context, pair.high.text), ScoreRequest(context, pair.low.text)]
        policy, ref = backend.score(requests), reference.score(requests)
        # RewardBench (rewardbench/dpo.py): sum log p_policy(y|x) - sum log p_ref(y|x)
        if normalise == "none":
            expected = [p.logprob_sum - r.logprob_sum for p, r in zip(policy, ref, strict=True)]
        else:
            expected = [p.mean - r.mean for p, r in zip(policy, ref, strict=True)]
        assert (row.ll_high, row.ll_low) == pytest.approx(expected, abs=1e-4)


def test_ratio_without_a_reference_model_is_refused(backend, suite, reference_model):
    with pytest.raises(NNDError, match="give one .*--reference-model"):
        nnd_suites.evaluate(backend, [suite], scorers="ratio", cache=False)
    with pytest.raises(NNDError, match="no scorer uses one"):
        nnd_suites.evaluate(backend, [suite], reference_model=reference_model, cache=False)


def test_reward_is_the_reward_models_scalar_for_each_candidate(reward_model, suite):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    small = Suite(suite.manifest, suite.pairs[:30], suite.candidates)
    report = nnd_suites.evaluate(reward_model, [small], scorers="reward", cache=False)
    assert report.scorer == "reward" and report.backend["backend"] == "hf_reward"
    tokenizer = AutoTokenizer.from_pretrained(reward_model)
    model = AutoModelForSequenceClassification.from_pretrained(reward_model).eval()
    template = report.suites[small.name].template
    for pair, row in zip(small.pairs, report.outcomes[small.name], strict=True):
        context = render(template, pair.context)
        expected = []
        for text in (pair.high.text, pair.low.text):  # one at a time: no padding
            with torch.no_grad():
                expected.append(model(**tokenizer(context, text, return_tensors="pt")).logits[0, 0])
        assert (row.ll_high, row.ll_low) == pytest.approx([float(v) for v in expected], abs=1e-4)
        assert row.outcome == verdict(row.ll_high, row.ll_low) or row.outcome == "degenerate"


def test_reward_and_log_likelihood_scorers_are_not_mixed(reward_model, backend, suite):
    with pytest.raises(NNDError, match="read different scores"):
        nnd_suites.evaluate(reward_model, [suite], scorers=["reward", "mean"], cache=False)
    with pytest.raises(NNDError, match="score it with --scorer reward"):
        nnd_suites.evaluate(reward_model, [suite], backend="hf_reward", cache=False)
    with pytest.raises(NNDError, match="reads backend hf_reward, not hf_causal"):
        nnd_suites.evaluate(backend, [suite], scorers="reward", cache=False)


def test_the_leaderboard_gives_each_models_flips_under_the_other_scorers(
    tiny_causal_model, reference_model, tmp_path, capsys
):
    """Several models and several --scorer: the leaderboard once gave the first scorer's rates
    only, with no word of the others asked for; it now gives each model's rate and flips under
    each other scorer, as that model's own report counts them."""
    from nnd_suites.cli import main

    out = tmp_path / "board"
    argv = ["evaluate", "--suite", "challenge300", "--limit", "5", "--quiet", "--no-cache"]
    argv += ["--model", str(tiny_causal_model), "--model", str(reference_model)]
    assert main([*argv, "--scorer", "mean", "--scorer", "sum", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    board = json.loads((out / "leaderboard.json").read_text("utf-8"))
    markdown = (out / "leaderboard.md").read_text("utf-8")
    assert "The rates above are under `mean`, the first scorer asked for." in printed
    assert "Pass rate [Wilson 95% interval] under scorer `mean`; a tie" in printed
    assert board["scorer"] == "mean"
    labels = [model["label"] for model in board["models"]]
    assert set(board["sensitivity"]["challenge300"]) == set(labels)
    for label in labels:
        report = json.loads((out / label / "report.json").read_text("utf-8"))
        found = report["sensitivity"]["challenge300"]
        assert board["sensitivity"]["challenge300"][label] == found
        flips = found["scorers"]["sum"]["flips"]
        share = f"{100 * flips['share']:.1f}%"
        cells = f" | {flips['flipped']} | {flips['n']} | {share} | "
        row = next(x for x in markdown.splitlines() if x.startswith(f"| {label} | `sum` | "))
        assert cells in row and row in printed
        rate = found["scorers"]["sum"]["overall"]["pass_rate"]
        assert f"| `sum` | {100 * rate:.1f}% [" in row
        assert not any(x.startswith(f"| {label} | `mean` | ") for x in markdown.splitlines())


def test_the_console_names_the_scorer_of_its_rates(tiny_causal_model, capsys):
    """`--scorer sum` alone: the console gave sum's rates with no word of the scorer."""
    from nnd_suites.cli import main

    argv = ["evaluate", "--suite", "challenge300", "--model", str(tiny_causal_model), "--quiet"]
    assert main([*argv, "--limit", "2", "--scorer", "sum"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"model {tiny_causal_model} (hf_causal, default scoring, scorer sum")


def test_a_scorer_value_that_is_not_a_finite_number_stops_the_run(quiz_design_suite):
    """A scorer giving nan made every test it touched a fail (nan > x and nan == x are false):
    quiz_design printed 0.0% of 2,686 tests with exit 0. It is now a named plugin error; a
    finite number of any real type (numpy's float32) is still compared as before."""
    import numpy as np

    from nnd_suites.errors import PluginError
    from nnd_suites.evaluation.report import test_outcomes
    from nnd_suites.evaluation.scorers.builtin import Mean

    class Breaking(Mean):
        broken: object = math.nan

        def value(self, scores, text):
            return self.broken if "?" in text else super().value(scores, text)

    pairs = quiz_design_suite.pairs[:50]
    template = quiz_design_suite.manifest.default_template

    def lookup(context, text):
        return Score(-float(len(text)), max(1, len(text.split())))

    first = next(p for p in pairs if "?" in p.high.text or "?" in p.low.text)
    for broken in (math.nan, math.inf, "0.5", None):
        Breaking.broken = broken
        with pytest.raises(
            PluginError, match=f"gave {broken!r} for candidate .* of test {first.id}"
        ):
            test_outcomes(pairs, template, None, lookup, Breaking())
    Breaking.broken = np.float32(-1.0)
    expected = test_outcomes(pairs, template, None, lookup, make_scorer("mean"))
    found = test_outcomes(pairs, template, None, lookup, Breaking())
    assert [o.outcome for o in found] != [o.outcome for o in expected]  # the values were used
    assert {o.ll_high for o, pair in zip(found, pairs, strict=True) if "?" in pair.high.text} == {
        -1.0
    }
