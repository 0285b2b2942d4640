"""--log-samples: what the model saw per test, as the backend received it, joinable with the
outcomes (lm-evaluation-harness's --log_samples / --write_out)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

import nnd_suites
from nnd_suites.cli import main
from nnd_suites.errors import NNDError
from nnd_suites.evaluation import Backend, Score, ScoreRequest, load_backend
from nnd_suites.evaluation.outputs import read_outcomes
from nnd_suites.evaluation.samples import read_samples
from nnd_suites.suite import Suite


def _first(suite: Suite, n: int) -> Suite:
    return Suite(suite.manifest, suite.pairs[:n], suite.candidates)


class RecordingBackend(Backend):
    """Wraps a real backend and keeps every request it is asked to score, as it received it."""

    name = "test_recording"
    description = "test double"

    def __init__(self, inner: Backend) -> None:
        self.inner, self.mode = inner, inner.mode
        self.received: list[ScoreRequest] = []

    @classmethod
    def load(cls, model, **options):  # pragma: no cover - never loaded by name
        raise NotImplementedError

    @property
    def identity(self) -> dict[str, str]:
        return self.inner.identity

    def score(self, requests: Sequence[ScoreRequest], *, sink=None, progress=None):
        self.received += requests
        return self.inner.score(requests, sink=sink, progress=progress)


class LengthBackend(Backend):
    """Scores a candidate by its length without a model; one candidate cannot be scored."""

    name = "test_length"
    description = "test double"

    def __init__(self, unscorable: str) -> None:
        self.unscorable = unscorable

    @classmethod
    def load(cls, model, **options):  # pragma: no cover - never loaded by name
        raise NotImplementedError

    @property
    def identity(self) -> dict[str, str]:
        return {"backend": self.name, "unscorable": self.unscorable}

    def score(self, requests: Sequence[ScoreRequest], *, sink=None, progress=None):
        scores = [
            Score.skip("too long")
            if r.candidate == self.unscorable
            else Score(-len(r.candidate), 2)
            for r in requests
        ]
        if sink is not None:
            sink(list(range(len(requests))), scores)
        return scores


@pytest.fixture(scope="module")
def small_suites(quiz_design_suite, challenge300_suite):
    return [_first(quiz_design_suite, 40), _first(challenge300_suite, 30)]


def test_samples_hold_what_the_backend_received_and_join_the_outcomes(
    tiny_causal_model, small_suites, tmp_path
):
    recorder = RecordingBackend(load_backend(str(tiny_causal_model), batch_size=8))
    out = tmp_path / "run"
    report = nnd_suites.evaluate(
        recorder, small_suites, out=out, cache=False, progress=False, log_samples=True
    )
    received = {(r.context, r.candidate) for r in recorder.received}
    assert len(received) == len(recorder.received)  # each distinct request sent once
    seen: set[tuple[str, str]] = set()
    for suite in small_suites:
        samples = read_samples(out / "samples" / f"{suite.name}.jsonl")
        assert [s.model_dump() for s in samples] == [
            s.model_dump() for s in report.samples[suite.name]
        ]
        assert len(samples) == len(suite.pairs) == report.suites[suite.name].pairs
        assert [s.pair_id for s in samples] == [p.id for p in suite.pairs]  # suite order
        outcomes = {o.pair_id: o for o in read_outcomes(out / "outcomes" / f"{suite.name}.parquet")}
        assert set(outcomes) == {s.pair_id for s in samples}  # 1:1 on pair_id
        for sample, pair in zip(samples, suite.pairs, strict=True):
            # the context and candidates exactly as the backend got them
            assert (sample.context, sample.high.text) in received
            assert (sample.context, sample.low.text) in received
            assert (sample.high.text, sample.low.text) == (pair.high.text, pair.low.text)
            seen |= {(sample.context, sample.high.text), (sample.context, sample.low.text)}
            joined = outcomes[sample.pair_id]
            assert sample.outcome == joined.outcome
            assert (sample.high.score, sample.low.score) == (joined.ll_high, joined.ll_low)
            assert (sample.high.n_targets, sample.low.n_targets) == (joined.n_high, joined.n_low)
            # the mean scorer: sum over targets (tokens + EOS) / their number
            assert sample.high.score == pytest.approx(
                sample.high.logprob_sum / sample.high.n_targets
            )
            assert sample.category == pair.category and sample.suite == suite.name
            assert sample.tokens is None  # a wrapper does not tokenise in process
    assert seen == received  # no request the samples do not show, none they invent
    # the rendered contexts differ from the raw fields: the template was applied
    qd = report.samples[small_suites[0].name][0]
    assert qd.context != small_suites[0].pairs[0].context.get("paragraph")


def test_tokens_show_the_leading_space_and_the_eos_the_model_was_scored_on(
    tiny_causal_model, challenge300_suite
):
    backend = load_backend(str(tiny_causal_model), batch_size=8)
    suite = _first(challenge300_suite, 12)
    report = nnd_suites.evaluate(backend, suite, cache=False, progress=False, log_samples=True)
    tokenizer = backend.tokenizer
    eos = tokenizer.eos_token
    samples = report.samples[suite.name]
    assert len(samples) == 12
    for sample in samples:
        assert sample.tokens is not None
        assert sample.tokens.context == sample.context.rstrip(" \t")
        for side, scored in ((sample.high, sample.tokens.high), (sample.low, sample.tokens.low)):
            # byte-level BPE: the candidate is scored as " " + text, then EOS
            assert scored == " " + side.text + eos
            ids = tokenizer(" " + side.text, add_special_tokens=False)["input_ids"]
            assert side.n_targets == len(ids) + 1


def test_a_skipped_candidate_has_no_score_in_its_sample(challenge300_suite, tmp_path):
    suite = _first(challenge300_suite, 10)
    unscorable = suite.pairs[0].low.text
    report = nnd_suites.evaluate(
        LengthBackend(unscorable), suite, out=tmp_path / "r", progress=False, log_samples=True
    )
    lines = (tmp_path / "r" / "samples" / f"{suite.name}.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 10
    first = json.loads(lines[0])  # plain JSON: no NaN a JSON reader would refuse
    assert first["outcome"] == "skipped"
    assert first["low"] == {
        "text": unscorable,
        "logprob_sum": None,
        "n_targets": 0,
        "score": None,
        "truncated_tokens": 0,
        "skipped": "too long",
        "neutral": None,  # the mean scorer reads neither of the other scores
        "reference": None,
    }
    assert first["neutral_context"] is None
    assert first["high"]["score"] is None  # a skipped test has no verdict on either side
    others = report.samples[suite.name][1:]
    # the pairs that share the unscorable candidate are skipped too; every other one is rated
    assert all(
        (s.outcome == "skipped") == (unscorable in (s.high.text, s.low.text)) for s in others
    )
    rated = [s for s in others if s.outcome != "skipped"]
    assert rated and all(s.high.score == -len(s.high.text) / 2 for s in rated)
    assert report.suites[suite.name].skipped == 1 + sum(s.outcome == "skipped" for s in others)


def test_a_damaged_samples_file_is_named_with_its_line(tmp_path, challenge300_suite):
    suite = _first(challenge300_suite, 3)
    nnd_suites.evaluate(
        LengthBackend("-"), suite, out=tmp_path / "r", progress=False, log_samples=True
    )
    path = tmp_path / "r" / "samples" / f"{suite.name}.jsonl"
    lines = path.read_text("utf-8").splitlines()
    path.write_text("\n".join([lines[0], '{"suite": 1}', lines[2]]) + "\n", "utf-8")
    with pytest.raises(NNDError, match=r"challenge300\.jsonl, line 2: not a sample"):
        read_samples(path)


def test_samples_written_before_the_neutral_and_reference_fields_still_read(
    tmp_path, challenge300_suite
):
    suite = _first(challenge300_suite, 3)
    report = nnd_suites.evaluate(
        LengthBackend("-"), suite, out=tmp_path / "r", progress=False, log_samples=True
    )
    path = tmp_path / "r" / "samples" / f"{suite.name}.jsonl"
    old = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    for line in old:  # as written before every score a scorer reads was logged
        del line["neutral_context"]
        for side in (line["high"], line["low"]):
            del side["neutral"], side["reference"]
    path.write_text("".join(json.dumps(line) + "\n" for line in old), "utf-8")
    assert read_samples(path) == report.samples[suite.name]


def test_without_log_samples_nothing_is_kept(challenge300_suite, tmp_path):
    suite = _first(challenge300_suite, 3)
    report = nnd_suites.evaluate(LengthBackend("-"), suite, out=tmp_path / "r", progress=False)
    assert report.samples == {}
    assert not (tmp_path / "r" / "samples").exists()


@pytest.mark.parametrize("option", ["--log-samples", "--log_samples", "--write_out"])
def test_the_cli_option_and_its_lm_eval_spellings(option, tiny_causal_model, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["evaluate", "--suite", "challenge300", "--model", str(tiny_causal_model)]
    assert main([*argv, "--limit", "3", "--quiet", "--out", str(out), option]) == 0
    assert "outcomes/, samples/" in capsys.readouterr().out
    samples = read_samples(out / "samples" / "challenge300.jsonl")
    outcomes = read_outcomes(out / "outcomes" / "challenge300.parquet")
    assert [s.pair_id for s in samples] == [o.pair_id for o in outcomes]
    assert all(s.tokens is not None for s in samples)


def test_the_cli_needs_an_out_folder_for_samples(capsys):
    argv = ["evaluate", "--suite", "challenge300", "--model", "no-such-model", "--log-samples"]
    assert main(argv) == NNDError.exit_status
    assert "--log-samples writes samples/SUITE.jsonl" in capsys.readouterr().err


def test_another_command_suggests_evaluate_log_samples(capsys):
    argv = ["robustness", "--suite", "quiz_design", "--transform", "lowercase", "--model", "m"]
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--log_samples"])
    assert stopped.value.code == 2
    assert "only `nnd-suites evaluate ... --out DIR --log-samples`" in capsys.readouterr().err


def test_several_models_each_get_their_samples(
    tiny_causal_model, tiny_seq2seq_model, tmp_path, capsys
):
    out = tmp_path / "board"
    argv = ["evaluate", "--suite", "challenge300", "--limit", "2", "--quiet", "--out", str(out)]
    models = ["--model", str(tiny_causal_model), "--model", str(tiny_seq2seq_model)]
    assert main([*argv, *models, "--log-samples"]) == 0
    from transformers import AutoTokenizer

    for model in (tiny_causal_model, tiny_seq2seq_model):
        folder = out / model.name  # a local model's report sub-folder is named after it
        samples = read_samples(folder / "samples" / "challenge300.jsonl")
        outcomes = read_outcomes(folder / "outcomes" / "challenge300.parquet")
        assert [s.pair_id for s in samples] == [o.pair_id for o in outcomes]
        eos = AutoTokenizer.from_pretrained(model).eos_token
        assert all(s.tokens and s.tokens.high.endswith(eos) for s in samples)
        named = json.loads((folder / "report.json").read_text("utf-8"))  # each report its own
        assert named["suites"]["challenge300"]["samples_file"] == "samples/challenge300.jsonl"


def test_tokens_show_a_context_cut_to_fit_the_window(tiny_causal_model, challenge300_suite):
    from nnd_suites.evaluation.samples import decoded_tokens

    backend = load_backend(str(tiny_causal_model), batch_size=8)
    words = " ".join(p.high.text for p in challenge300_suite.pairs[:300])  # > 512 tokens
    assert len(backend.tokenizer(words)["input_ids"]) > backend.window
    decoded = decoded_tokens(backend, [(words, "a candidate")])
    assert decoded is not None
    context, targets = decoded[(words, "a candidate")]
    assert targets == " a candidate" + backend.tokenizer.eos_token
    assert len(context) < len(words) and words.endswith(context)  # cut from the left
    score = backend.score([ScoreRequest(words, "a candidate")])[0]
    assert score.truncated_tokens > 0
    kept = len(backend.tokenizer(context, add_special_tokens=False)["input_ids"])
    assert kept + score.n_targets - 1 == backend.window  # context + candidate fill the window
