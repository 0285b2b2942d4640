"""Shared fixtures. Suites are built once per session from the shipped annotation files."""

from __future__ import annotations

import functools
import itertools
import os
import re
from pathlib import Path

import pytest
from hypothesis import settings
from served_fake import FakeServer

# Tests never reach the Hugging Face Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# Fuzzing profiles for every hypothesis test: `ci` (the test command: fixed seed, 200 examples per
# target) and `thorough` (HYPOTHESIS_PROFILE=thorough: 5,000 fresh examples per target).
settings.register_profile("ci", max_examples=200, derandomize=True, deadline=None)
settings.register_profile("thorough", max_examples=5000, deadline=None)


@pytest.fixture
def fake_server():
    """A fake OpenAI-compatible server on 127.0.0.1 (tests/support/served_fake.py), closed
    after the test."""
    running = FakeServer()
    yield running
    running.close()


@pytest.fixture(scope="session")
def quiz_design_suite():
    from nnd_suites import build_suite

    return build_suite("quiz_design")


@pytest.fixture(scope="session")
def challenge300_suite():
    from nnd_suites import build_suite

    return build_suite("challenge300")


@pytest.fixture(scope="session")
def hh_suite():
    """The Anthropic HH-RLHF suite (hh_rlhf)."""
    from nnd_suites import build_suite

    return build_suite("hh_rlhf")


@pytest.fixture(scope="session")
def wmt_mqm_suite():
    """The largest built-in suite (17,722 tests: a few seconds to build)."""
    from nnd_suites import build_suite

    return build_suite("wmt_mqm")


@pytest.fixture(scope="session")
def shipped_suite_builds(quiz_design_suite, challenge300_suite, hh_suite, wmt_mqm_suite):
    """{name: suite} of every suite whose source ships with nnd-suites, each built once per
    session per worker (a few seconds each: the tests that only read them share one build).
    (An xdist_group would keep them on one worker, but pytest 9 ignores the group name xdist
    3.8 appends to a test's id: --dist loadgroup splits the group.)"""
    from nnd_suites import build_suite
    from nnd_suites.resolve import shipped_suites

    built = {
        "quiz_design": quiz_design_suite,
        "challenge300": challenge300_suite,
        "hh_rlhf": hh_suite,
        "wmt_mqm": wmt_mqm_suite,
    }
    for name in shipped_suites():
        built.setdefault(name, build_suite(name))
    return built


#: the session fixture holding each shipped suite built once per worker, by the suite's name
SESSION_BUILDS = {
    "quiz_design": "quiz_design_suite",
    "challenge300": "challenge300_suite",
    "hh_rlhf": "hh_suite",
    "wmt_mqm": "wmt_mqm_suite",
}


@pytest.fixture
def builtin_names_give_session_builds(monkeypatch, request):
    """A command given the built-in name of a suite in :data:`SESSION_BUILDS` (`publish
    quiz_design`) resolves it to a copy of the session's build (a suite object of its own each
    time, as a build gives) instead of building it again (a second or more each): for tests
    about what the command does with the suite, not how it is built."""
    from nnd_suites import Suite, resolve

    build = resolve._build_shipped

    def session_build(name: str) -> Suite:
        if name not in SESSION_BUILDS:
            return build(name)
        built = request.getfixturevalue(SESSION_BUILDS[name])
        return Suite(built.manifest, list(built.pairs), built.candidates)

    monkeypatch.setattr(resolve, "_build_shipped", session_build)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own nnd-suites cache folder (downloads, scores)."""
    monkeypatch.setenv("NND_SUITES_CACHE", str(tmp_path_factory.mktemp("nnd_cache")))


@pytest.fixture(scope="session")
def tiny_causal_model(tmp_path_factory, quiz_design_suite, challenge300_suite):
    """Folder of a 2-layer GPT-2-shaped model with random weights and a byte-level BPE tokenizer
    trained on the built-in suites' text (window 512 tokens)."""
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    texts = suite_texts([quiz_design_suite, challenge300_suite])
    return tiny_causal_lm(
        tmp_path_factory.mktemp("tiny_causal"),
        texts,
        vocab_size=1024,
        n_layer=2,
        n_embd=64,
        n_head=4,
        n_positions=512,
    )


@pytest.fixture(scope="session")
def tiny_seq2seq_model(tmp_path_factory, quiz_design_suite, challenge300_suite):
    """Folder of a 2+2-layer BART-shaped model with random weights (same kind of tokenizer)."""
    from nnd_suites.evaluation.tiny import suite_texts, tiny_seq2seq_lm

    texts = suite_texts([quiz_design_suite, challenge300_suite])
    return tiny_seq2seq_lm(
        tmp_path_factory.mktemp("tiny_seq2seq"),
        texts,
        vocab_size=1024,
        layers=2,
        d_model=64,
        heads=4,
        ffn=128,
        max_positions=512,
    )


@pytest.fixture(scope="session")
def reward_model(tiny_causal_model, tmp_path_factory):
    """A tiny reward model: the tiny LM's body with a one-output head (random weights)."""
    import torch
    from transformers import AutoConfig, AutoTokenizer, GPT2ForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_model)
    config = AutoConfig.from_pretrained(tiny_causal_model, num_labels=1)
    config.pad_token_id = tokenizer.pad_token_id or tokenizer.eos_token_id
    torch.manual_seed(0)
    model = GPT2ForSequenceClassification(config)
    folder = tmp_path_factory.mktemp("reward") / "reward"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def ggufs(tmp_path_factory, tiny_causal_model):
    """{"f32": path, "q8_0": path} of the tiny causal model (window 512) as GGUF files."""
    from tiny_gguf import (
        converter_root,
        find_sdist,
        hf_to_gguf,
        quantize_gguf,
    )

    sdist = find_sdist()
    if sdist is None:
        if os.environ.get("NND_REQUIRE_ENGINE") == "1":
            raise RuntimeError("NND_REQUIRE_ENGINE=1 but LLAMA_CPP_SDIST names no sdist")
        pytest.skip("the llama-cpp-python sdist (its GGUF converter) was not found")
    folder = tmp_path_factory.mktemp("gguf")
    f32 = hf_to_gguf(tiny_causal_model, folder / "tiny-f32.gguf", converter_root(sdist, folder))
    return {"f32": f32, "q8_0": quantize_gguf(f32, folder / "tiny-q8_0.gguf", "Q8_0")}


@pytest.fixture(scope="session")
def heuristic_report():
    """``build(suites, model, score)``: an evaluation report whose 'model' scores each candidate
    by ``score(text)``, made by the evaluator's own outcome and report code (no model needed);
    a candidate ``score`` gives None is skipped, as one too long for a model's window."""
    from nnd_suites import __version__
    from nnd_suites.evaluation.backend import TOO_LONG, Score

    def scored(value: float | None) -> Score:
        return Score.skip(TOO_LONG) if value is None else Score(value, 1)

    from nnd_suites.evaluation.report import EvaluationReport, RequestCounts, suite_result
    from nnd_suites.evaluation.report import test_outcomes as outcomes_of

    def build(suites, model, score):
        report = EvaluationReport(
            nnd_suites_version=__version__,
            created="2024-01-01T00:00:00+00:00",
            model=model,
            backend={"backend": "heuristic"},
            mode="default",
            suites={},
            requests=RequestCounts(tests=0, unique=0, cached=0, scored=0),
            seconds=0.0,
        )
        for suite in suites:
            template = suite.manifest.default_template
            outcomes = outcomes_of(suite.pairs, template, None, lambda c, x: scored(score(x)))
            report.suites[suite.name] = suite_result(
                suite.name, suite, "default", template, outcomes, 0
            )
            report.outcomes[suite.name] = outcomes
        return report

    return build


#: fixtures that build a model (random weights, a tokenizer trained on the fly)
MODEL_FIXTURES = {"tiny_causal_model", "tiny_seq2seq_model", "reward_model", "ggufs"}
#: what a test module that builds or loads a model itself names
BUILDS_A_MODEL = re.compile(
    r"tiny-random|evaluation\.tiny|evaluation import tiny|GPT2Config|BartConfig|AutoModel|"
    r"from_pretrained|llama_cpp|import torch|in_memory|NNDCallback|\bevaluate\(|"
    r"[\"']evaluate[\"']|[\"']robustness[\"']|[\"']verify[\"']|[\"']export-lm-eval[\"']"
)


@functools.cache
def _module_builds_a_model(path: str) -> bool:
    return bool(BUILDS_A_MODEL.search(Path(path).read_text(encoding="utf-8")))


@functools.cache
def _deselects_every_model_test(markexpr: str) -> bool:
    """Whether ``-m markexpr`` deselects every test marked ``model``, whatever other marks it
    has (every combination of the other names in the expression is tried)."""
    called = re.findall(r"([\w.+-]+)\s*\(", markexpr)  # a mark with arguments, or not (...)
    if not markexpr or set(called) - {"and", "or", "not"}:
        return False
    try:  # pytest's own parser of -m expressions (no public API): without it, collect all
        from _pytest.mark.expression import Expression
    except ImportError:
        return False

    expression = Expression.compile(markexpr)
    others = sorted(set(re.findall(r"[\w.+-]+", markexpr)) - {"and", "or", "not", "model"})
    if len(others) > 8:
        return False

    def selects(marks: set[str]) -> bool:
        return expression.evaluate(lambda name, **_: name in marks)

    choices = itertools.product([False, True], repeat=len(others))
    return not any(selects({"model", *itertools.compress(others, choice)}) for choice in choices)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A module whose tests all build or load a model is not imported where `-m` deselects
    them all (`-m "not model"`): its imports (torch, transformers) and its assertion rewriting
    cost seconds in every xdist worker. Its tests are then not counted as deselected."""
    is_test_module = collection_path.suffix == ".py" and collection_path.name.startswith("test_")
    if (
        is_test_module
        and _deselects_every_model_test(config.option.markexpr)
        and _module_builds_a_model(str(collection_path))
    ):
        return True
    return None


#: tests of 10 s or more on two cores that no marker names: run first with the ``slow`` ones, as
#: xdist hands tests out in collection order and a long test started last is the run's tail
RUN_FIRST = (
    "tests/hub/test_built_dataset_folder.py::test_build_all_then_one_more_build_through_the_cli",
)


def _runs_first(item: pytest.Item) -> bool:
    return bool(item.get_closest_marker("slow")) or item.nodeid in RUN_FIRST


def pytest_collection_modifyitems(items):
    """Crash and engine tests are slow too: `-m "not slow"` (the quick loop) leaves them out.
    Tests that build or load a model are marked ``model``: `-m "not model"` is the loop of pure
    logic (readers, builders, quality maps, statistics, reports from Score records). The long
    tests come first (:data:`RUN_FIRST`)."""
    for item in items:
        if item.get_closest_marker("crash") or item.get_closest_marker("engine"):
            item.add_marker(pytest.mark.slow)
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & MODEL_FIXTURES or _module_builds_a_model(str(item.path)):
            item.add_marker(pytest.mark.model)
    items.sort(key=lambda item: not _runs_first(item))  # stable: the rest keep their order
