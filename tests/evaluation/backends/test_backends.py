"""The fast paths against the naive loop: same scores (1e-4, fp32) and same per-test outcomes,
whatever the batch size; order, deduplication, out-of-memory back-off, LM head placement."""

from __future__ import annotations

import pytest
import torch

from nnd_suites.errors import NNDError
from nnd_suites.evaluation import BACKENDS, ScoreRequest, load_backend, verdict
from nnd_suites.evaluation.batching import Budget, Chunk, plan_batches, run_with_backoff

TOLERANCE = 1e-4


def _requests(suite, pairs=None) -> list[ScoreRequest]:
    template = suite.manifest.default_template
    found: dict[ScoreRequest, None] = {}
    for pair in suite.pairs[:pairs]:
        for text in (pair.high.text, pair.low.text):
            found[ScoreRequest(template.format(**pair.context), text)] = None
    return list(found)


class Passes:
    """The forward passes a backend runs, counted by hooks on its networks: a causal backend's
    body (every strategy runs it once a pass, the naive one inside the whole model), a seq2seq
    model and its encoder (the shared path runs the encoder alone, then the model on its
    output)."""

    def __init__(self, *networks: torch.nn.Module):
        self.n = 0
        for network in networks:
            network.register_forward_pre_hook(self._count)

    def _count(self, *_) -> None:
        self.n += 1


def _outcomes(suite, requests, scores, pairs=None) -> list[str]:
    by_request = dict(zip(requests, scores, strict=True))
    template = suite.manifest.default_template
    results = []
    for pair in suite.pairs[:pairs]:
        context = template.format(**pair.context)
        high = by_request[ScoreRequest(context, pair.high.text)]
        low = by_request[ScoreRequest(context, pair.low.text)]
        results.append(verdict(high.mean, low.mean))
    return results


@pytest.fixture(scope="module")
def workload(challenge300_suite, quiz_design_suite):
    """All of Challenge 300 (short contexts, the empty candidate) and the first 150 Quiz Design
    tests (long contexts, up to 16 candidates per context)."""
    return [
        (challenge300_suite, None, _requests(challenge300_suite)),
        (quiz_design_suite, 150, _requests(quiz_design_suite, 150)),
    ]


@pytest.mark.parametrize("mode", ["default", "reference"])
def test_causal_fast_paths_equal_the_naive_loop(tiny_causal_model, workload, mode):
    backend = load_backend(str(tiny_causal_model), mode=mode)
    assert backend.strategy == "packed"  # GPT-2 passes the load-time probe
    passes = Passes(backend.body)
    for suite, pairs, requests in workload:
        backend.strategy, passes.n = "naive", 0
        naive = backend.score(requests)
        assert passes.n == len(requests)
        for strategy in ("packed", "kv", "expand"):
            backend.strategy, passes.n = strategy, 0
            fast = backend.score(requests)
            assert 0 < passes.n < len(requests) / 3
            worst = max(abs(a.mean - b.mean) for a, b in zip(naive, fast, strict=True))
            assert worst < TOLERANCE, (strategy, suite.name, worst)
            assert [s.n_targets for s in fast] == [s.n_targets for s in naive]
            assert _outcomes(suite, requests, fast, pairs) == _outcomes(
                suite, requests, naive, pairs
            )


@pytest.mark.parametrize("mode", ["default", "reference"])
def test_seq2seq_fast_path_equals_the_naive_loop(tiny_seq2seq_model, workload, mode):
    backend = load_backend(str(tiny_seq2seq_model), mode=mode)
    assert backend.strategy == "shared"
    passes = Passes(backend.model, backend.model.get_encoder())
    for suite, pairs, requests in workload:
        backend.strategy = "naive"
        naive = backend.score(requests)
        backend.strategy, passes.n = "shared", 0
        fast = backend.score(requests)
        assert 0 < passes.n < len(requests) / 3
        worst = max(abs(a.mean - b.mean) for a, b in zip(naive, fast, strict=True))
        assert worst < TOLERANCE, (suite.name, worst)
        assert _outcomes(suite, requests, fast, pairs) == _outcomes(suite, requests, naive, pairs)


@pytest.mark.parametrize("model", ["tiny_causal_model", "tiny_seq2seq_model"])
def test_batch_size_invariance(request, model, quiz_design_suite):
    folder = str(request.getfixturevalue(model))
    requests = _requests(quiz_design_suite, 120)
    results = {
        size: load_backend(folder, batch_size=size).score(requests) for size in ("auto", 1, 3, 17)
    }
    reference = results["auto"]
    for size, scores in results.items():
        worst = max(abs(a.mean - b.mean) for a, b in zip(reference, scores, strict=True))
        assert worst < 1e-5, (size, worst)


def test_order_and_duplicates_are_preserved(tiny_causal_model, challenge300_suite):
    backend = load_backend(str(tiny_causal_model))
    requests = _requests(challenge300_suite, 60)
    forward = backend.score(requests)
    shuffled = requests[::-1] + requests[:5]  # reversed, with repeats
    backward = backend.score(shuffled)
    assert len({round(s.mean, 4) for s in forward}) > len(forward) // 2  # scores tell apart
    expected = forward[::-1] + forward[:5]
    for request, got, want in zip(shuffled, backward, expected, strict=True):
        assert abs(got.mean - want.mean) < 1e-5, request
        assert got.n_targets == want.n_targets


def test_each_context_is_one_row_and_the_head_runs_at_targets_only(
    tiny_causal_model, quiz_design_suite
):
    backend = load_backend(str(tiny_causal_model))
    requests = _requests(quiz_design_suite, 200)
    layouts = backend.layouts(requests)
    # one row per context; a context cut to fit the window (512 tokens) differs per candidate
    whole = [
        (r, layout) for r, layout in zip(requests, layouts, strict=True) if not layout.truncated
    ]
    assert len({r.context for r, _ in whole}) == len({layout.prefix for _, layout in whole}) > 20
    assert len(backend.chunks(layouts, "packed")) == len({layout.prefix for layout in layouts})
    assert backend.strategy == "packed"  # the load-time probe runs before the hook is set
    rows_seen = []
    hook = backend.model.get_output_embeddings().register_forward_hook(
        lambda module, args, output: rows_seen.append(
            args[0].reshape(-1, args[0].shape[-1]).shape[0]
        )
    )
    try:
        backend.score(requests)
    finally:
        hook.remove()
    assert sum(rows_seen) == sum(len(layout.targets) for layout in layouts)


def test_sink_and_progress_see_every_request_once(tiny_causal_model, challenge300_suite):
    backend = load_backend(str(tiny_causal_model), batch_size=4)
    requests = _requests(challenge300_suite, 80)
    seen, progressed = [], []
    scores = backend.score(
        requests, sink=lambda idx, s: seen.extend(idx), progress=progressed.append
    )
    assert sorted(seen) == list(range(len(requests)))
    assert sum(progressed) == len(requests) and len(progressed) > 1
    assert len(scores) == len(requests)


def test_out_of_memory_halves_batches_without_splitting_chunks(
    tiny_causal_model, quiz_design_suite
):
    backend = load_backend(str(tiny_causal_model), batch_size=8)
    requests = _requests(quiz_design_suite, 150)
    expected = backend.score(requests)
    real_run = backend.run_batch
    sizes = []

    def run_batch(batch, layouts, budget, strategy):
        if len(batch) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        sizes.append(len(batch))
        return real_run(batch, layouts, budget, strategy)

    backend.run_batch = run_batch
    scores = backend.score(requests)
    assert sizes and max(sizes) <= 2
    assert all(abs(a.mean - b.mean) < 1e-5 for a, b in zip(expected, scores, strict=True))


def test_backoff_never_splits_a_chunk_and_gives_up_on_one():
    chunks = [Chunk((i,), [i], ((1, 10 + i, 10 + i),)) for i in range(7)]
    batches = plan_batches(chunks, Budget(chunks=4))
    assert [len(b) for b in batches] == [4, 3]
    ran: list[int] = []

    def run(batch):
        if len(batch) > 1:
            raise MemoryError
        ran.extend(c.requests[0] for c in batch)

    assert len(list(run_with_backoff(batches, run))) == 7
    assert sorted(ran) == list(range(7))

    def always(batch):
        raise torch.OutOfMemoryError("out of memory")

    with pytest.raises(NNDError, match="out of memory on a single context"):
        list(run_with_backoff([[chunks[0]]], always))


def test_token_budget_bounds_padded_tokens():
    chunks = [
        Chunk((i,), [i], ((1, length, length),))
        for i, length in enumerate([5, 50, 7, 48, 9, 60, 6])
    ]
    batches = plan_batches(chunks, Budget(tokens=120))
    for batch in batches:
        assert len(batch) * max(c.passes[0][1] for c in batch) <= 120
    assert sorted(c.requests[0] for b in batches for c in b) == list(range(7))
    lengths = [c.passes[0][1] for b in batches for c in b]
    assert lengths == sorted(lengths)  # length-sorted


def test_backends_are_registered_and_picked_from_the_config(tiny_causal_model, tiny_seq2seq_model):
    assert {"hf_causal", "hf_seq2seq"} <= set(BACKENDS.names())
    assert load_backend(str(tiny_seq2seq_model)).name == "hf_seq2seq"
    with pytest.raises(NNDError, match="encoder-decoder model"):
        load_backend(str(tiny_seq2seq_model), backend="hf_causal")


def test_auto_strategy_falls_back_when_the_probe_disagrees(tiny_causal_model, challenge300_suite):
    backend = load_backend(str(tiny_causal_model))
    real_packed = backend._run_packed

    def wrong_packed(batch, layouts, budget):  # e.g. a model that ignores 4-D masks
        return [(index, total + 0.5) for index, total in real_packed(batch, layouts, budget)]

    def failing_kv(batch, layouts, budget):  # e.g. a model that rejects position ids
        raise TypeError("forward() got an unexpected keyword argument 'position_ids'")

    backend._run_packed, backend._run_kv = wrong_packed, failing_kv
    assert backend.strategy == "expand"
    assert backend.probe_report["packed"].startswith("max difference 5.00e-01")
    assert "TypeError" in backend.probe_report["kv"]
    requests = _requests(challenge300_suite, 40)
    fast = backend.score(requests)
    backend.strategy = "naive"
    naive = backend.score(requests)
    assert max(abs(a.mean - b.mean) for a, b in zip(fast, naive, strict=True)) < TOLERANCE


def test_a_row_longer_than_the_token_budget_runs_alone(
    tiny_causal_model, quiz_design_suite, monkeypatch
):
    from nnd_suites.evaluation.backends import hf

    monkeypatch.setattr(hf, "CPU_TOKENS", 64)  # far below one context with its candidates
    backend = load_backend(str(tiny_causal_model))
    requests = _requests(quiz_design_suite, 40)
    layouts = backend.layouts(requests)
    chunks = backend.chunks(layouts, "packed")
    assert len(chunks) == len({layout.prefix for layout in layouts})  # the context is not repeated
    batches = plan_batches(chunks, backend.budget())
    assert all(len(batch) == 1 for batch in batches) and len(batches) == len(chunks)
    fast = backend.score(requests)
    backend.strategy = "naive"
    naive = backend.score(requests)
    assert max(abs(a.mean - b.mean) for a, b in zip(fast, naive, strict=True)) < TOLERANCE


def test_the_readme_backend_example_scores_what_its_formula_says():
    """evaluation/README.md's "Writing a backend" example, run as a user would (own process:
    the decorator registers into the global registry); its pass rate is recomputed here from
    the suite's pairs with the same formula."""
    import math
    import re
    import subprocess
    import sys
    from collections import Counter
    from pathlib import Path

    from nnd_suites import load_suite

    readme = (Path(__file__).resolve().parents[3] / "evaluation" / "README.md").read_text()
    section = readme[readme.index("## Writing a backend") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr

    def mean(context: str, candidate: str) -> float:
        text, counts, total = candidate + "\n", Counter(context), len(context) + 256
        return sum(math.log((counts[c] + 1) / total) for c in text) / len(text)

    pairs = load_suite("challenge300").pairs
    passed = sum(
        mean(p.context["question"], p.high.text) > mean(p.context["question"], p.low.text)
        for p in pairs
    )
    assert done.stdout.strip() == f"{passed / len(pairs):.3f}"


def test_row_span_is_the_cheapest_row_by_brute_force():
    """A row of P context and S candidate tokens costs a(P + S) + b(P + S)**2 (linear work per
    token, attention per pair); row_span gives the S that is cheapest per candidate token."""
    from nnd_suites.evaluation.backends.packing import row_span

    for prefix, a, b in ((2, 1536.0, 1.0), (180, 1536.0, 1.0), (40, 384.0, 1.0), (1, 6.0, 1.0)):

        def per_token(s: int, p: int = prefix, a: float = a, b: float = b) -> float:
            return (a * (p + s) + b * (p + s) ** 2) / s

        best = min(range(1, 5000), key=per_token)
        span = row_span(prefix, a / b)
        assert abs(span - best) <= 1, (prefix, span, best)
    assert row_span(2, 1536) == 55  # pmi's 2-token neutral context on the bench model
    assert row_span(180, 1536) == 555  # a Quiz Design context keeps its candidates in one row


def test_a_short_context_shared_by_many_candidates_runs_in_short_rows(
    tiny_causal_model, quiz_design_suite
):
    """pmi's neutral context (the template with empty fields, a few tokens) is shared by every
    distinct candidate: packed in rows of about row_span candidate tokens, not in rows thousands
    of tokens long whose attention is mostly masked out; scores still equal the naive loop."""
    from nnd_suites.evaluation.backends.packing import row_span
    from nnd_suites.evaluation.templates import neutral_context

    suite = quiz_design_suite
    neutral = neutral_context(suite.manifest.default_template, suite.manifest.context_fields)
    texts = dict.fromkeys(x for pair in suite.pairs[:400] for x in (pair.high.text, pair.low.text))
    requests = [ScoreRequest(neutral, text) for text in texts]
    backend = load_backend(str(tiny_causal_model))
    layouts = backend.layouts(requests)
    prefix = layouts[0].prefix
    assert {layout.prefix for layout in layouts} == {prefix} and len(prefix) < 10
    span = row_span(len(prefix), 6 * backend.model.get_input_embeddings().weight.shape[1])
    candidate_tokens = sum(len(layout.inputs) for layout in layouts)
    for strategy, start in (("packed", len(prefix)), ("kv", 0)):
        chunks = backend.chunks(layouts, strategy)
        assert sorted(i for chunk in chunks for i in chunk.requests) == list(range(len(requests)))
        assert len(chunks) >= candidate_tokens // span
        for chunk in chunks:
            row = chunk.passes[-1][1] - start
            assert row <= span or len(chunk.requests) == 1, (strategy, row, span)
    backend.strategy = "naive"
    naive = backend.score(requests)
    passes = Passes(backend.body)
    for strategy in ("packed", "kv"):
        backend.strategy, passes.n = strategy, 0
        fast = backend.score(requests)
        assert 0 < passes.n < len(requests) / 3
        assert max(abs(a.mean - b.mean) for a, b in zip(naive, fast, strict=True)) < TOLERANCE


@pytest.fixture(scope="module")
def sliding_window_model(tmp_path_factory, challenge300_suite):
    """Folder of a tiny Mistral with a sliding window of 12 tokens."""
    from transformers import MistralConfig, MistralForCausalLM

    from nnd_suites.evaluation.tiny import suite_texts, train_tokenizer

    folder = tmp_path_factory.mktemp("sliding_window")
    tokenizer = train_tokenizer(suite_texts([challenge300_suite]), 512)
    tokenizer.model_max_length = 256
    config = MistralConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        sliding_window=12,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    MistralForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_sliding_window_model_scores_past_its_window_as_the_plain_forward(
    sliding_window_model, challenge300_suite
):
    """Sliding-window attention (a window of 12 here; Mistral's 4096, Gemma 3's 1024): the fast
    path must give the plain forward's scores on sequences longer than the window, which the
    load-time probe (10 tokens) never reaches. Before, expand read each candidate against a copy
    of the sliding layers' own cache, which keeps only the last 11 keys: 0.08 nats off."""
    backend = load_backend(str(sliding_window_model))
    requests = _requests(challenge300_suite, 40)
    assert sum(len(x.prefix) + len(x.inputs) > 12 for x in backend.layouts(requests)) > 20
    fast = backend.score(requests)
    assert backend.strategy == "expand"  # packed's and kv's 4-D masks know no window
    backend.strategy = "naive"
    naive = backend.score(requests)
    worst = max(abs(a.mean - b.mean) for a, b in zip(naive, fast, strict=True))
    assert worst < TOLERANCE, worst


@pytest.mark.parametrize("strategy", ["packed", "kv"])
def test_a_strategy_that_cannot_score_a_sliding_window_model_is_refused_before_scoring(
    sliding_window_model, challenge300_suite, tmp_path, capsys, strategy
):
    """--strategy kv on a sliding-window model ended in a tensor-size RuntimeError traceback
    (exit 1) and --strategy packed scored it with no window at all (wrong figures, exit 0)."""
    from nnd_suites.cli import main

    suite = tmp_path / "suite"
    challenge300_suite.save(suite)
    out = tmp_path / "run"
    cli = ["evaluate", "--suite", str(suite), "--model", str(sliding_window_model), "--quiet"]
    assert main([*cli, "--strategy", strategy, "--no-cache", "--out", str(out)]) == 2
    assert f"strategy {strategy!r} cannot score model" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(
        NNDError, match="sliding-window .* strategies that can: auto, expand, naive"
    ):
        load_backend(str(sliding_window_model), strategy=strategy)
