"""The examples harness of the scorers and backends, like that of the other plugin kinds: one test
case per registered plugin, run from the examples.json beside its module, and a check that every
plugin class in the package is registered and has its cases (the NL-Augmenter flaw: a plugin
nobody listed must fail the tests, not drop out of them)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import textwrap
from pathlib import Path

import pytest
import served_fake

from nnd_suites.evaluation.backend import (
    BACKENDS,
    Backend,
    BackendMetadata,
    Score,
    ScoreRequest,
    load_backend,
)
from nnd_suites.evaluation.report import test_outcomes as outcomes_of
from nnd_suites.evaluation.scorers import SCORERS, Scorer, ScorerMetadata
from nnd_suites.evaluation.templates import neutral_context
from nnd_suites.plugins.harness import plugin_problems
from nnd_suites.plugins.registry import Registry
from nnd_suites.records.pairs import Pair, PairCandidate
from nnd_suites.records.templates import render_template

OUTCOMES = {"pass", "fail", "tie", "skipped"}


# ---------------------------------------------------------------------------------- scorers
def _score(given: list[float] | dict[str, str] | None) -> Score | None:
    if given is None:
        return None
    if isinstance(given, dict):
        return Score.skip(given["skipped"])
    return Score(logprob_sum=given[0], n_targets=int(given[1]))


@pytest.mark.parametrize("name", SCORERS.names())
def test_scorer_examples(name):
    """Known scores of a test's two candidates -> the verdict, through the evaluator's own
    outcome rule (report.test_outcomes: neutral context, reference model, skipped tests)."""
    cls = SCORERS.get(name)
    examples = cls.examples()
    assert len(examples) >= 2, f"{name}: add at least two cases to {cls.folder()}/examples.json"
    for example in examples:
        scorer = cls(**example.get("params", {}))
        template = "\n".join(f"{field}: {{{field}}}" for field in example["context"])
        rendered = render_template(template, example["context"])
        neutral = neutral_context(template, example["context"])
        sides = {example[side]["text"]: example[side] for side in ("high", "low")}

        def lookup(context: str, text: str, sides=sides, rendered=rendered, neutral=neutral):
            key = {rendered: "model", neutral: "neutral"}[context]
            return _score(sides[text].get(key))

        def reference(context: str, text: str, sides=sides, rendered=rendered):
            assert context == rendered
            return _score(sides[text].get("reference"))

        pair = Pair(
            id="0" * 16,
            group_id="g",
            context=example["context"],
            high=PairCandidate(text=example["high"]["text"], label="better", systems=["a"]),
            low=PairCandidate(text=example["low"]["text"], label="worse", systems=["b"]),
            label="worse",
            category="worse",
            category_path=["worse"],
        )
        (outcome,) = outcomes_of([pair], template, None, lookup, scorer, reference)
        assert example["verdict"] in OUTCOMES, example
        assert outcome.outcome == example["verdict"], example
        if "values" in example:
            assert [outcome.ll_high, outcome.ll_low] == pytest.approx(example["values"]), example
    verdicts = {example["verdict"] for example in examples}
    assert len(verdicts) >= 2, f"{name}: its cases all end in {verdicts}; add one that differs"


# --------------------------------------------------------------------------------- backends
@pytest.fixture
def harness_model(request):
    """``make(kind) -> (model reference, extra options)``: the tiny model an example names."""
    servers = []

    def make(kind: str) -> tuple[str, dict]:
        if kind == "fake_server":
            servers.append(served_fake.FakeServer())
            return "fake", {
                "base_url": servers[-1].url,
                "eos_text": "</s>",
                "tokenizer": "no-such-tokenizer",
                "backoff": 0.01,
            }
        if kind == "tiny_gguf":
            if importlib.util.find_spec("llama_cpp") is None:
                pytest.skip("llama-cpp-python is not installed (run .ci/engine_setup.sh)")
            return str(request.getfixturevalue("ggufs")["f32"]), {}
        fixture = {
            "tiny_causal": "tiny_causal_model",
            "tiny_seq2seq": "tiny_seq2seq_model",
            "tiny_reward": "reward_model",
        }[kind]
        return str(request.getfixturevalue(fixture)), {}

    yield make
    for server in servers:
        server.close()


def _backend_cases() -> list:
    cases = []
    for name in BACKENDS.names():
        # the llama.cpp engine is slow to build: its cases run with the engine tests
        marks = [pytest.mark.engine, pytest.mark.slow] if name == "llama_cpp" else []
        cases.append(pytest.param(name, marks=marks, id=name))
    return cases


def _same(one: Score, other: Score) -> bool:
    """Equal up to batching noise (padding and packing change fp32 sums in the last digits)."""
    return (
        one.n_targets == other.n_targets
        and one.skipped == other.skipped
        and one.truncated_tokens == other.truncated_tokens
        and math.isclose(one.logprob_sum, other.logprob_sum, rel_tol=1e-4, abs_tol=1e-4)
    )


@pytest.mark.parametrize("name", _backend_cases())
def test_backend_examples(name, harness_model):
    """Each case scores a tiny model and checks the one contract of every backend."""
    cls = BACKENDS.get(name)
    examples = cls.examples()
    assert len(examples) >= 2, f"{name}: add at least two cases to {cls.folder()}/examples.json"
    for example in examples:
        model, extra = harness_model(example["model"])
        backend = load_backend(model, name, **extra, **example["options"])
        requests = [ScoreRequest(context, candidate) for context, candidate in example["requests"]]
        delivered: dict[int, Score] = {}

        def sink(indices: list[int], scores: list[Score], delivered=delivered) -> None:
            for index, score in zip(indices, scores, strict=True):
                assert index not in delivered, f"{name}: request {index} delivered twice"
                delivered[index] = score

        scores = backend.score(requests, sink=sink)
        assert len(scores) == len(requests), example
        # every request scored, and delivered to the sink exactly once with the score returned
        assert sorted(delivered) == list(range(len(requests))), example
        assert all(delivered[i] == score for i, score in enumerate(scores)), example
        for score in scores:
            assert score.skipped or (score.n_targets >= 1 and math.isfinite(score.logprob_sum))
        # order preserved: each score is the request's own, whatever its batch or position
        reversed_scores = backend.score(requests[::-1])[::-1]
        alone = [backend.score([request])[0] for request in requests]
        for i, score in enumerate(scores):
            assert _same(score, alone[i]), (example["requests"][i], score, alone[i])
            assert _same(score, reversed_scores[i]), (example["requests"][i], score)
        first = {request: scores[requests.index(request)] for request in requests}
        for request, score in zip(requests, scores, strict=True):
            assert _same(score, first[request]), f"{name}: a repeated request scored apart"
        # different candidates get different scores: a backend returning constants fails
        distinct = {r.candidate: s.logprob_sum for r, s in zip(requests, scores, strict=True)}
        assert len(set(distinct.values())) == len(distinct), (name, distinct)


# ------------------------------------------------------------------------------- coverage
@pytest.mark.parametrize("registry", [SCORERS, BACKENDS], ids=["scorers", "backends"])
def test_every_plugin_is_registered_and_has_harness_cases(registry):
    assert plugin_problems(registry) == []


def test_every_plugin_of_every_kind_declares_a_summary_and_a_description():
    from nnd_suites.builder.adapter import ADAPTERS
    from nnd_suites.slices import SLICES
    from nnd_suites.transformations import TRANSFORMATIONS

    for name, cls in BACKENDS.items():
        assert isinstance(cls.metadata, BackendMetadata), name
    for name, cls in SCORERS.items():
        assert isinstance(cls.metadata, ScorerMetadata), name
    for registry in (ADAPTERS, TRANSFORMATIONS, SLICES, SCORERS, BACKENDS):
        for name, cls in registry.items():
            summary, description = cls.metadata.summary, cls.metadata.description
            assert 0 < len(summary) <= 72 and "\n" not in summary, (registry.kind, name)
            assert description.strip(), (registry.kind, name)


def _package(root: Path, name: str, files: dict[str, str]) -> str:
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for file, text in files.items():
        (folder / file).write_text(textwrap.dedent(text))
    return name


SCORER_MODULE = """
    from nnd_suites.evaluation.scorers import Scorer, ScorerMetadata

    class Forgotten(Scorer):
        metadata = ScorerMetadata(summary="forgotten", description="Never registered.")

        def value(self, scores, text):
            return scores.model.logprob_sum
"""
BACKEND_MODULE = """
    from nnd_suites.evaluation.backend import Backend, BackendMetadata

    class Stray(Backend):
        metadata = BackendMetadata(summary="stray", description="Never registered.")

        @classmethod
        def load(cls, model, *, mode="default", **options):
            return cls()

        @property
        def identity(self):
            return {"backend": "stray"}

        def score(self, requests, *, sink=None, progress=None):
            return []
"""


@pytest.mark.parametrize(
    ("base", "source", "kind"),
    [(Scorer, SCORER_MODULE, "scorer"), (Backend, BACKEND_MODULE, "backend")],
    ids=["scorer", "backend"],
)
def test_an_unregistered_or_untested_plugin_fails_the_harness(
    tmp_path, monkeypatch, base, source, kind
):
    monkeypatch.syspath_prepend(str(tmp_path))
    package = _package(tmp_path, f"harness_{kind}s", {"plugin.py": source})
    registry: Registry = Registry(
        kind, "nnd_suites.no_such_group", base=lambda: base, builtin_package=package
    )
    try:
        problems = plugin_problems(registry)
        module = vars(sys.modules[f"{package}.plugin"])
        cls = module["Forgotten"] if kind == "scorer" else module["Stray"]
        target = f"{package}.plugin:{cls.__name__}"
        assert problems == [
            f"{package} registers no {kind}",
            f"{target} is a {kind} registered under no name: decorate it with "
            f"@register_{kind}(NAME) (or add it as a lazy entry)",
        ]
        # registered but without harness cases or a README: still failures, naming what to write
        registry.register("mine")(cls)
        no_cases, no_readme = plugin_problems(registry)
        assert no_cases.startswith(f"{kind} mine: 0 harness case(s) in {tmp_path / package}")
        assert no_readme.startswith(f"{(tmp_path / package).resolve()}: no README.md; write one")
        (tmp_path / package / "README.md").write_text("# mine\n")
        (problem,) = plugin_problems(registry)
        assert problem == no_cases
        # cases for a plugin that is not registered are named too
        examples = {"examples": [{kind: "mine"}, {kind: "mine", "n": 2}, {kind: "gone"}]}
        (tmp_path / package / "examples.json").write_text(json.dumps(examples))
        (problem,) = plugin_problems(registry)
        assert problem.endswith(
            f"example for 'gone', which is no registered {kind}; remove it or fix its name"
        )
    finally:
        for module in [m for m in sys.modules if m.startswith(package)]:
            del sys.modules[module]


def test_a_lazy_summary_must_be_the_backends_metadata_summary(monkeypatch):
    registry: Registry = Registry(
        "backend",
        "nnd_suites.no_such_group",
        base=lambda: Backend,
        builtin_package="nnd_suites.evaluation.backends",
        import_builtins=False,
    )
    registry.add_lazy(
        "hf_causal",
        "nnd_suites.evaluation.backends.hf_causal:HFCausalBackend",
        summary="an old summary",
    )
    problems = plugin_problems(registry)
    assert (
        "backend hf_causal: the lazy entry's summary 'an old summary' is not its metadata.summary "
        f"{BACKENDS.get('hf_causal').metadata.summary!r}; make them the same (listings show the "
        "first)"
    ) in problems
