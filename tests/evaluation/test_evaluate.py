"""nnd_suites.evaluate: reports, the score cache (hits, resume, scope), templates, bad input."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import jsonschema
import pytest

import nnd_suites
from nnd_suites.errors import NNDError, TemplateError, UnknownItemError
from nnd_suites.evaluation import Backend, EvaluationReport, Score, load_backend
from nnd_suites.evaluation.outputs import read_outcomes
from nnd_suites.suite import Suite


def _subset(suite: Suite, n: int, start: int = 0) -> Suite:
    return Suite(suite.manifest, suite.pairs[start : start + n], suite.candidates)


class CountingBackend(Backend):
    """Wraps a real backend; counts the requests it is asked to score, and can stop (like a
    Ctrl-C) after a number of batches."""

    name = "test_counting"
    description = "test double"

    def __init__(self, inner: Backend, stop_after_batches: int | None = None) -> None:
        self.inner, self.stop_after = inner, stop_after_batches
        self.mode = inner.mode
        self.requested = 0

    @classmethod
    def load(cls, model, **options):  # pragma: no cover - never loaded by name
        raise NotImplementedError

    @property
    def identity(self) -> dict[str, str]:
        return self.inner.identity

    def score(self, requests: Sequence, *, sink=None, progress=None):
        self.requested += len(requests)
        batches = 0

        def counted_sink(indices, scores):
            nonlocal batches
            sink(indices, scores)
            batches += 1
            if self.stop_after is not None and batches >= self.stop_after:
                raise KeyboardInterrupt

        return self.inner.score(requests, sink=counted_sink, progress=progress)


@pytest.fixture(scope="module")
def backend(tiny_causal_model):
    return load_backend(str(tiny_causal_model), batch_size=8)


def test_report_on_challenge300(backend, challenge300_suite, tmp_path):
    report = nnd_suites.evaluate(backend, challenge300_suite, out=tmp_path, progress=False)
    assert isinstance(report, EvaluationReport)
    result = report.suites["challenge300"]
    assert result.pairs == 807 and result.passed + result.ties + result.failed == 807
    assert result.degenerate == 0
    assert result.pass_rate == pytest.approx(result.passed / 807)
    assert result.ci[0] < result.pass_rate < result.ci[1]
    assert sum(r.n for r in result.by_category.values()) == 807
    assert set(result.by_category) == {
        "Common Sense",
        "Science",
        "Entity",
        "Creativity",
        "Comparison",
    }
    assert set(result.by_breakdown) == {"label", "group", "question_category"}
    assert sum(r.passed for r in result.by_breakdown["question_category"].values()) == (
        result.passed
    )
    outcomes = report.outcomes["challenge300"]
    assert [o.pair_id for o in outcomes] == [p.id for p in challenge300_suite.pairs]
    for outcome in outcomes:
        assert (outcome.outcome == "pass") == (outcome.ll_high > outcome.ll_low)
    # one empty candidate: scored on EOS alone, a finite score
    empty = [o for o, p in zip(outcomes, challenge300_suite.pairs, strict=True) if not p.low.text]
    assert len(empty) >= 1 and all(o.n_low == 1 for o in empty)
    assert report.requests.unique == 772 and report.requests.scored == 772

    saved = json.loads((tmp_path / "report.json").read_text())
    jsonschema.validate(saved, json.loads((tmp_path / "report.schema.json").read_text()))
    assert saved["suites"]["challenge300"]["outcomes_file"] == "outcomes/challenge300.parquet"
    assert read_outcomes(tmp_path / "outcomes" / "challenge300.parquet") == outcomes
    markdown = (tmp_path / "report.md").read_text()
    assert "| challenge300 | 807 |" in markdown and "| Common Sense | 518 |" in markdown
    assert (tmp_path / "pass_rates.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_second_run_and_shared_candidates_cost_nothing(backend, quiz_design_suite):
    first_part, second_part = _subset(quiz_design_suite, 60), _subset(quiz_design_suite, 60, 30)
    counting = CountingBackend(backend)
    first = nnd_suites.evaluate(counting, first_part, progress=False)
    assert counting.requested == first.requests.scored == first.requests.unique
    second = nnd_suites.evaluate(counting, first_part, progress=False)
    assert counting.requested == first.requests.scored  # nothing new asked of the model
    assert second.requests.cached == second.requests.unique and second.requests.scored == 0
    assert second.suites["quiz_design"] == first.suites["quiz_design"]
    # a second suite sharing half its tests only pays for the new half
    both = nnd_suites.evaluate(counting, [first_part, second_part], progress=False)
    new = both.requests.unique - first.requests.unique
    assert both.requests.scored == new and counting.requested == first.requests.scored + new
    assert list(both.suites) == ["quiz_design", "quiz_design_2"]


def test_two_builds_of_one_source_are_said_to_hold_identical_tests(
    backend, quiz_design_suite, tmp_path, caplog
):
    """`build X --out suites/c300` beside suites/X (its source read from another path: another
    content hash) was scored and reported as X and X_2 without a word."""
    part, folder = quiz_design_suite.derive(quiz_design_suite.pairs[:20]), tmp_path / "suites"
    part.save(folder / "quiz_design")
    moved = [s.model_copy(update={"path": f"elsewhere/{s.path}"}) for s in part.manifest.sources]
    quiz_design_suite.derive(part.pairs, sources=moved).save(folder / "qd")
    counting = CountingBackend(backend)
    with caplog.at_level("WARNING", logger="nnd_suites.evaluation.prepared"):
        both = nnd_suites.evaluate(counting, folder, progress=False)
    assert list(both.suites) == ["quiz_design", "quiz_design_2"]
    said = " ".join(caplog.text.split())
    assert (
        f"suites quiz_design ({folder / 'quiz_design'}) and quiz_design_2 ({folder / 'qd'}) hold "
        "identical tests (the same pairs and candidates; their manifests differ in sources)"
    ) in said
    one = nnd_suites.evaluate(backend, part, progress=False, cache=False)
    assert both.requests.unique == counting.requested == one.requests.unique  # each text once


def test_the_same_suite_given_twice_is_refused(backend, quiz_design_suite):
    """Two different suites of one name are both reported (above); the same tests twice would be
    one result reported twice, so they are refused, as robustness and verify refuse a repeat."""
    part = _subset(quiz_design_suite, 20)
    counting = CountingBackend(backend)
    again = Suite(part.manifest, list(part.pairs), part.candidates)  # another object, same tests
    with pytest.raises(NNDError, match="suite 'quiz_design' is given twice: suites 1 and 3"):
        nnd_suites.evaluate(counting, [part, _subset(quiz_design_suite, 20, 20), again])
    assert counting.requested == 0  # refused before anything was scored


def test_interrupted_run_resumes(backend, challenge300_suite, tmp_path):
    part = _subset(challenge300_suite, 200)
    stopping = CountingBackend(backend, stop_after_batches=3)
    with pytest.raises(KeyboardInterrupt):
        nnd_suites.evaluate(stopping, part, cache_dir=tmp_path, progress=False)
    with sqlite3.connect(tmp_path / "scores.sqlite") as db:
        kept = db.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
    assert 0 < kept < stopping.requested  # every finished batch was written
    resumed = CountingBackend(backend)
    report = nnd_suites.evaluate(resumed, part, cache_dir=tmp_path, progress=False)
    assert report.requests.cached == kept
    assert resumed.requested == report.requests.unique - kept
    fresh = nnd_suites.evaluate(backend, part, cache=False, progress=False)
    assert fresh.suites["challenge300"] == report.suites["challenge300"]


def test_no_cache_writes_nothing(backend, challenge300_suite, tmp_path, monkeypatch):
    monkeypatch.setenv("NND_SUITES_CACHE", str(tmp_path))
    nnd_suites.evaluate(backend, _subset(challenge300_suite, 20), cache=False, progress=False)
    assert not (tmp_path / "scores.sqlite").exists()
    nnd_suites.evaluate(backend, _subset(challenge300_suite, 20), progress=False)
    assert (tmp_path / "scores.sqlite").exists()


def test_cache_scope_separates_modes_and_templates(tiny_causal_model, challenge300_suite):
    part = _subset(challenge300_suite, 30)
    default = nnd_suites.evaluate(str(tiny_causal_model), part, progress=False)
    reference = nnd_suites.evaluate(
        str(tiny_causal_model), part, compat="reference", progress=False
    )
    assert reference.requests.cached == 0 and reference.mode == "reference"
    assert default.backend["mode"] == "default"
    macaw = nnd_suites.evaluate(str(tiny_causal_model), part, template="macaw", progress=False)
    assert macaw.requests.cached == 0
    result = macaw.suites["challenge300"]
    assert result.template_name == "macaw" and result.template.startswith("$answer$")
    again = nnd_suites.evaluate(str(tiny_causal_model), part, progress=False)
    assert again.requests.cached == again.requests.unique
    assert again.backend["strategy"].startswith("auto (model not loaded")


def test_templates_are_validated(backend, challenge300_suite):
    custom = nnd_suites.evaluate(
        backend, _subset(challenge300_suite, 5), template="Q: {question}\nA:", progress=False
    )
    assert custom.suites["challenge300"].template_name == "custom"
    with pytest.raises(UnknownItemError, match="macaw"):
        nnd_suites.evaluate(backend, challenge300_suite, template="prophetnet", progress=False)
    with pytest.raises(TemplateError, match="unknown context field"):
        nnd_suites.evaluate(backend, challenge300_suite, template="{paragraph}", progress=False)


def test_normalize_applies_transformations_first(backend, challenge300_suite):
    report = nnd_suites.evaluate(
        backend, _subset(challenge300_suite, 40), normalize=["lowercase"], progress=False
    )
    (result,) = report.suites.values()
    assert result.transformation == "lowercase"


def test_bad_input_gets_clear_errors(backend, tmp_path, monkeypatch):
    with pytest.raises(UnknownItemError, match="unknown suite 'no_such_suite'"):
        nnd_suites.evaluate(backend, "no_such_suite", progress=False)
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(NNDError, match=r"cannot load model .*no loadable model"):
        nnd_suites.evaluate(str(tmp_path), "challenge300", progress=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(NNDError, match=r"'nnd-test/no-such-model'.*offline mode"):
        nnd_suites.evaluate("nnd-test/no-such-model", "challenge300", progress=False)
    with pytest.raises(NNDError, match="compat"):
        nnd_suites.evaluate(backend, "challenge300", compat="paper", progress=False)
    with pytest.raises(NNDError, match="mode"):
        nnd_suites.evaluate(backend, "challenge300", compat="reference", progress=False)


def test_a_window_too_small_for_any_candidate_is_an_error(tmp_path, challenge300_suite):
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    folder = tiny_causal_lm(
        tmp_path / "m",
        suite_texts([challenge300_suite]),
        vocab_size=300,
        n_layer=1,
        n_embd=16,
        n_head=2,
        n_positions=4,
    )
    with pytest.raises(NNDError, match="skipped because a candidate alone does not fit"):
        nnd_suites.evaluate(str(folder), challenge300_suite, progress=False)


class ConstantBackend(Backend):
    """Gives every candidate the same score: what a tokenizer that encodes text to nothing does."""

    name = "test_constant"
    description = "test double"
    mode = "default"

    @classmethod
    def load(cls, model, **options):  # pragma: no cover - never loaded by name
        raise NotImplementedError

    @property
    def identity(self) -> dict[str, str]:
        return {"backend": self.name, "model": "constant"}

    def score(self, requests: Sequence, *, sink=None, progress=None):
        scores = [Score(-1.0, 1) for _ in requests]
        if sink is not None:
            sink(list(range(len(requests))), scores)
        return scores


def test_a_run_of_ties_is_an_error_not_a_result(challenge300_suite, tmp_path):
    from nnd_suites.errors import ScoringError

    with pytest.raises(ScoringError, match=r"807 of 807 tests are ties .* tokenizer"):
        nnd_suites.evaluate(ConstantBackend(), challenge300_suite, progress=False, out=tmp_path)
    assert not (tmp_path / "report.json").exists()  # no report of a meaningless run


def test_a_candidate_longer_than_the_window_is_a_skipped_test(tiny_causal_model, tmp_path):
    """One test whose candidate alone overflows the window: counted, the rest still scored."""
    from nnd_suites.builder.suites import build_suite

    suite = build_suite("challenge300")
    pairs = suite.pairs[:30]
    first = pairs[0]
    huge = " ".join(["word"] * 3000)  # far beyond the tiny model's 512-token window
    pairs[0] = first.model_copy(update={"low": first.low.model_copy(update={"text": huge})})
    pairs[0] = pairs[0].model_copy(update={"id": "f" * 16})
    report = nnd_suites.evaluate(
        str(tiny_causal_model), Suite(suite.manifest, pairs), progress=False, out=tmp_path / "r"
    )
    result = report.suites["challenge300"]
    assert result.skipped == 1 and result.passed + result.failed + result.ties == 29
    assert report.outcomes["challenge300"][0].outcome == "skipped"
    rerun = nnd_suites.evaluate(
        str(tiny_causal_model), Suite(suite.manifest, pairs), progress=False, out=tmp_path / "r"
    )
    assert rerun.requests.scored == 0 and rerun.suites["challenge300"].skipped == 1


def test_the_package_exposes_the_evaluation_entry_points_lazily() -> None:
    from nnd_suites.evaluation.comparison import compare_reports
    from nnd_suites.evaluation.multi import evaluate_models
    from nnd_suites.evaluation.verify import place_in_verify, verify_suite

    assert nnd_suites.evaluate_models is evaluate_models
    assert nnd_suites.compare_reports is compare_reports
    assert nnd_suites.verify_suite is verify_suite
    assert nnd_suites.place_in_verify is place_in_verify
    assert {"evaluate", "verify_suite", "NNDCallback"} <= set(dir(nnd_suites))
    with pytest.raises(AttributeError, match=r"\bevaluat\b"):
        nnd_suites.evaluat  # noqa: B018
