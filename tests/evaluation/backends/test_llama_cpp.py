"""The llama_cpp backend against llama.cpp itself: the tests' tiny GPT-2-shaped model converted to
GGUF f32 by llama.cpp's own converter (and quantised to Q8_0 by its quantiser) must score as
``hf_causal`` scores the Hugging Face original.

Needs llama-cpp-python and its sdist (the converter): ``.ci/engine_setup.sh`` sets both up.
"""

from __future__ import annotations

import importlib.util
import os
import statistics

import pytest

from nnd_suites.errors import ModelLoadError, NNDError

REQUIRED = os.environ.get("NND_REQUIRE_ENGINE") == "1"
if REQUIRED and importlib.util.find_spec("llama_cpp") is None:
    raise RuntimeError("NND_REQUIRE_ENGINE=1 but llama-cpp-python is not installed")
pytestmark = [
    pytest.mark.engine,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="llama-cpp-python is not installed (run .ci/engine_setup.sh)",
    ),
]
#: Q8_0 against f32 on the tiny model: the largest mean |LL difference| per candidate accepted
#: (measured on Quiz Design's first 40 groups: 3.7e-4, largest 1.3e-3, every outcome the same;
#: on all of Challenge 300: 4.4e-4, largest 3.1e-3, 802 of 807 outcomes the same).
Q8_TOLERANCE = 2e-3
#: llama.cpp's and torch's fp32 kernels agree to about 1e-5 per mean log-likelihood.
NOISE = 1e-4


def _run(model, suite, **options):
    from nnd_suites.evaluation import evaluate

    options.setdefault("cache", False)
    report = evaluate(str(model), suite, progress=False, **options)
    [rows] = report.outcomes.values()
    return report, rows


def _ll_gaps(rows, reference) -> list[float]:
    assert [r.pair_id for r in rows] == [r.pair_id for r in reference]
    gaps = [abs(a.ll_high - b.ll_high) for a, b in zip(rows, reference, strict=True)]
    return gaps + [abs(a.ll_low - b.ll_low) for a, b in zip(rows, reference, strict=True)]


@pytest.mark.parametrize(
    ("suite_name", "limit", "mode"),
    [
        ("quiz_design_suite", 80, None),
        ("challenge300_suite", None, None),
        ("challenge300_suite", 60, "reference"),
    ],
)
def test_f32_scores_equal_hf_causal(ggufs, tiny_causal_model, request, suite_name, limit, mode):
    suite = request.getfixturevalue(suite_name)
    report, rows = _run(ggufs["f32"], suite, limit=limit, compat=mode)
    assert report.backend["backend"] == "llama_cpp"  # picked by the .gguf suffix
    assert report.backend["quantization"] == "ALL_F32"
    _, reference = _run(
        tiny_causal_model, suite, limit=limit, compat=mode, backend="hf_causal", device="cpu"
    )
    assert len(rows) > 100
    gaps = _ll_gaps(rows, reference)
    # Outcomes are equal wherever HF's two scores are further apart than numerical noise (two
    # engines' fp32 kernels differ around 1e-5; a random model's log-likelihoods all lie near
    # -log(vocabulary), so it has a few near-ties, which may flip).
    clear = [i for i, r in enumerate(reference) if abs(r.ll_high - r.ll_low) > NOISE]
    assert len(clear) >= 0.97 * len(rows)
    assert [rows[i].outcome for i in clear] == [reference[i].outcome for i in clear]
    assert statistics.mean(gaps) < 1e-3, max(gaps)
    assert max(gaps) < 1e-2


def test_each_context_is_decoded_once(ggufs, challenge300_suite):
    """Context sharing: the tokens through the model are at most the distinct contexts' tokens
    plus the candidates' (contexts that start alike share even more)."""
    from nnd_suites.evaluation import ScoreRequest, load_backend
    from nnd_suites.records.templates import render_template

    backend = load_backend(str(ggufs["f32"]), "llama_cpp")
    template = challenge300_suite.manifest.default_template
    requests = list(
        dict.fromkeys(
            ScoreRequest(render_template(template, pair.context), text)
            for pair in challenge300_suite.pairs[:200]
            for text in (pair.high.text, pair.low.text)
        )
    )
    layouts = backend.layouts(requests)
    contexts = {layout.prefix for layout in layouts}
    candidates = sum(len(layout.inputs) for layout in layouts)
    scores = backend.score(requests)
    assert len(contexts) < len(requests) / 2  # several candidates per context
    assert candidates <= backend.decoded_tokens <= sum(map(len, contexts)) + candidates
    # the same requests again, one at a time (no sequence beside them, each context decoded
    # anew): every score is reproduced to numerical noise
    again = [backend.score([r])[0] for r in reversed(requests[:40])]
    for first, second in zip(reversed(scores[:40]), again, strict=True):
        assert second.n_targets == first.n_targets
        assert second.mean == pytest.approx(first.mean, abs=NOISE)


def test_q8_0_is_close_to_f32_and_never_shares_its_cache(ggufs, quiz_design_suite, tmp_path):
    cache = {"cache": True, "cache_dir": tmp_path, "limit": 40}
    f32, rows = _run(ggufs["f32"], quiz_design_suite, **cache)
    q8, quantised = _run(ggufs["q8_0"], quiz_design_suite, **cache)
    assert q8.backend["quantization"] == "MOSTLY_Q8_0"
    assert q8.backend["sha256"] != f32.backend["sha256"]
    assert q8.requests.cached == 0 and q8.requests.scored == f32.requests.scored > 0
    gaps = _ll_gaps(quantised, rows)
    assert 0 < statistics.mean(gaps) < Q8_TOLERANCE, statistics.mean(gaps)
    agree = sum(a.outcome == b.outcome for a, b in zip(quantised, rows, strict=True))
    assert agree >= 0.9 * len(rows)
    # each file finds its own scores again, without loading its weights
    from nnd_suites.evaluation import evaluate, load_backend

    for name, first in (("f32", rows), ("q8_0", quantised)):
        backend = load_backend(str(ggufs[name]))
        again = evaluate(backend, quiz_design_suite, progress=False, **cache)
        assert again.requests.scored == 0 and not backend.loaded
        assert [r.ll_high for r in next(iter(again.outcomes.values()))] == [
            r.ll_high for r in first
        ]


def test_tokenizer_must_agree_with_the_gguf(ggufs, tiny_causal_model, tmp_path):
    from nnd_suites.evaluation import load_backend
    from nnd_suites.evaluation.tiny import tiny_causal_lm

    accepted = load_backend(str(ggufs["f32"]), tokenizer=str(tiny_causal_model))
    assert "agrees" in accepted.describe()["tokenizer"]
    other = tiny_causal_lm(tmp_path / "other", ["a different corpus, not the suites"] * 3)
    with pytest.raises(ModelLoadError, match=r"does not tokenise like the GGUF.*token \d+ is"):
        load_backend(str(ggufs["f32"]), tokenizer=str(other))


def test_hugging_face_options_are_refused(ggufs):
    from nnd_suites.evaluation import load_backend

    with pytest.raises(NNDError, match=r"--dtype.*quantise"):
        load_backend(str(ggufs["f32"]), dtype="fp16")
    with pytest.raises(NNDError, match="trust_remote_code"):
        load_backend(str(ggufs["f32"]), trust_remote_code=True)
    # past the trained window, GPT-2's learned positions run out and llama.cpp would abort
    with pytest.raises(NNDError, match=r"n_ctx 2048 is longer than the 512 tokens"):
        load_backend(str(ggufs["f32"]), n_ctx=2048)


def test_cli_evaluate_several_gguf_models(ggufs, tmp_path):
    """Routing by the .gguf suffix through the CLI, with two models (a leaderboard) and --limit."""
    import json

    from nnd_suites.cli import main

    out = tmp_path / "runs"
    status = main(
        [
            "evaluate",
            "--suite",
            "challenge300",
            "--model",
            str(ggufs["f32"]),
            "--model",
            str(ggufs["q8_0"]),
            "--limit",
            "10",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert status == 0
    board = json.loads((out / "leaderboard.json").read_text())
    assert len(json.dumps(board)) > 100
    reports = sorted(out.glob("*/report.json"))
    assert len(reports) == 2
    backends = [json.loads(p.read_text())["backend"] for p in reports]
    assert {b["quantization"] for b in backends} == {"ALL_F32", "MOSTLY_Q8_0"}


def test_a_gguf_rewritten_before_its_weights_load_is_refused_not_scored_as_the_old_one(
    ggufs, quiz_design_suite, tmp_path
):
    """The backend names a GGUF file by its sha256 and loads the weights on first use: a run
    answered by the cache loads nothing, so a file rewritten before the next run's first score
    would be scored, and filed in the cache, under the old file's hash."""
    import shutil

    from gguf import GGUFReader

    from nnd_suites.evaluation import evaluate, load_backend
    from nnd_suites.suite import Suite

    model, other = tmp_path / "model.gguf", tmp_path / "other.gguf"
    shutil.copy(ggufs["f32"], model)
    shutil.copy(ggufs["f32"], other)
    for tensor in GGUFReader(other, "r+").tensors:  # other weights of the same shapes
        tensor.data[...] *= 1.5
    first, second = (
        Suite(quiz_design_suite.manifest, pairs, quiz_design_suite.candidates)
        for pairs in (quiz_design_suite.pairs[:20], quiz_design_suite.pairs[20:40])
    )
    cache = {"cache": True, "cache_dir": tmp_path / "cache", "progress": False}
    evaluate(str(model), first, **cache)
    backend = load_backend(str(model))
    cached = evaluate(backend, first, **cache)
    assert cached.requests.scored == 0 and not backend.loaded  # answered without the weights
    shutil.copy(other, model)  # a new file over the old one
    with pytest.raises(ModelLoadError, match=r"GGUF model '.*model.gguf' changed after it was"):
        evaluate(backend, second, **cache)
    # nothing of the new weights is filed under the old file's hash: the old file, put back,
    # gets its own scores
    shutil.copy(ggufs["f32"], model)
    again = evaluate(str(model), second, **cache)
    fresh = evaluate(str(model), second, cache=False, progress=False)
    [again_rows], [fresh_rows] = again.outcomes.values(), fresh.outcomes.values()
    assert [r.ll_high for r in again_rows] == pytest.approx([r.ll_high for r in fresh_rows])
    assert [r.ll_low for r in again_rows] == pytest.approx([r.ll_low for r in fresh_rows])
