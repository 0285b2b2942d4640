"""Benchmark of the evaluator's fast path against the naive loop and a lower bound.

Issue 3's setting: the full Quiz Design suite (2,686 tests, 1,860 distinct requests), a 4-layer,
256-wide, 4-head GPT-2-shaped model with random weights, a byte-level BPE tokenizer trained on the
suite's text with an 8,192-entry target (the model's vocabulary is 8,192), fp32, 2 CPU threads.

- naive: one plain forward per distinct request, full context, batch 1, logits everywhere
  (what the reference implementation does); same model, same run.
- fast: the evaluator's default path (``auto`` strategy: shared-prefix rows, LM head at targets).
- lower bound: the distinct context tokens and the distinct candidate tokens pushed once through
  the model at its peak batched throughput, measured here: contexts through the transformer body
  only, candidate tokens through the body and the LM head (+ fp32 log-softmax) at every scored
  position. A second, looser bound (every token through the full model) is printed too.
- agreement: per-test outcomes and scores of fast vs naive, and the same for a 3+3-layer
  BART-shaped model.
- peak memory: resident set size of a fresh process running each path.

Run: ``python benchmarks/bench_evaluator.py`` (about 6 minutes on 2 cores); ``--help`` for options.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from nnd_suites import build_suite
from nnd_suites.evaluation import ScoreRequest, load_backend, verdict
from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm, tiny_seq2seq_lm
from nnd_suites.records.templates import render_template

THREADS = 2
GPT2_SHAPE = {"vocab_size": 8192, "n_layer": 4, "n_embd": 256, "n_head": 4, "n_positions": 1024}
BART_SHAPE = {
    "vocab_size": 8192,
    "layers": 3,
    "d_model": 256,
    "heads": 4,
    "ffn": 1024,
    "max_positions": 1024,
}


def requests_of(suite) -> list[ScoreRequest]:
    template = suite.manifest.default_template
    found: dict[ScoreRequest, None] = {}
    for pair in suite.pairs:
        for text in (pair.high.text, pair.low.text):
            found[ScoreRequest(render_template(template, pair.context), text)] = None
    return list(found)


def outcomes(suite, scores: dict[ScoreRequest, float]) -> list[str]:
    template = suite.manifest.default_template
    result = []
    for pair in suite.pairs:
        context = render_template(template, pair.context)
        result.append(
            verdict(
                scores[ScoreRequest(context, pair.high.text)],
                scores[ScoreRequest(context, pair.low.text)],
            )
        )
    return result


def timed(backend, strategy: str, requests: list[ScoreRequest]) -> tuple[float, list]:
    backend.strategy = strategy
    start = time.perf_counter()
    scores = backend.score(requests)
    return time.perf_counter() - start, scores


def peak_throughput(
    backend, lengths=(128, 256, 512), batches=(1, 4, 16, 64), repeats: int = 3
) -> dict[str, float]:
    """Tokens per second of the transformer body, and scored positions per second of the LM head
    with fp32 log-softmax, at the best batch shape (fixed-length random sequences)."""
    model, body = backend.model, backend.model.base_model
    head = model.get_output_embeddings()
    vocab = head.weight.shape[0]
    best_body = 0.0
    with torch.inference_mode():
        for length in lengths:
            for batch in batches:
                if batch * length > 16384:
                    continue
                ids = torch.randint(0, vocab, (batch, length))
                body(input_ids=ids, use_cache=False)  # warm-up
                times = []
                for _ in range(repeats):
                    start = time.perf_counter()
                    body(input_ids=ids, use_cache=False)
                    times.append(time.perf_counter() - start)
                best_body = max(best_body, batch * length / min(times))
        hidden = torch.randn(4096, head.weight.shape[1])
        targets = torch.randint(0, vocab, (4096,))
        times = []
        for _ in range(repeats + 1):
            start = time.perf_counter()
            backend.target_logprobs(head(hidden), targets)
            times.append(time.perf_counter() - start)
        best_head = 4096 / min(times[1:])
        ids = torch.randint(0, vocab, (16, 256))
        model(input_ids=ids, use_cache=False)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            model(input_ids=ids, use_cache=False)
            times.append(time.perf_counter() - start)
        best_full = 16 * 256 / min(times)
    return {
        "body_tokens_per_s": best_body,
        "head_positions_per_s": best_head,
        "full_model_tokens_per_s": best_full,
    }


def token_counts(backend, requests: list[ScoreRequest]) -> dict[str, int]:
    layouts = backend.layouts(requests)
    return {
        "context_tokens": sum(len(p) for p in {layout.prefix for layout in layouts}),
        "candidate_tokens": sum(len(layout.inputs) for layout in layouts),
        "scored_positions": sum(len(layout.targets) for layout in layouts),
        "naive_tokens": sum(len(layout.prefix) + len(layout.inputs) for layout in layouts),
        "contexts": len({r.context for r in requests}),
        "requests": len(requests),
    }


def _rss_mib() -> float:
    """Current resident set size of this process (Linux /proc)."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def _memory_child(folder: str, strategy: str, limit: int | None, queue) -> None:
    """Score in a fresh process, sampling its RSS every 2 ms: peak and increase over the RSS
    after loading (the model, the suite, the interpreter)."""
    import threading

    torch.set_num_threads(THREADS)
    suite = build_suite("quiz_design")
    requests = requests_of(suite)[:limit]
    backend = load_backend(folder, dtype="fp32", device="cpu", strategy=strategy)
    backend.score(requests[:2])
    baseline = _rss_mib()
    peak = [baseline]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_mib())
            time.sleep(0.002)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    backend.score(requests)
    done.set()
    sampler.join()
    queue.put(
        {
            "strategy": strategy,
            "requests": len(requests),
            "rss_after_load_mib": baseline,
            "peak_rss_mib": peak[0],
            "increase_mib": peak[0] - baseline,
        }
    )


def peak_memory(folder: str, strategy: str, limit: int | None) -> dict:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_memory_child, args=(folder, strategy, limit, queue))
    child.start()
    result = queue.get()
    child.join()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="fast-path runs (median)")
    parser.add_argument("--naive-repeats", type=int, default=3, help="naive-loop runs (median)")
    parser.add_argument("--skip-memory", action="store_true", help="no peak-memory children")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    torch.set_num_threads(THREADS)
    suite = build_suite("quiz_design")
    requests = requests_of(suite)
    texts = suite_texts([suite])
    work = Path(tempfile.mkdtemp(prefix="nnd-bench-"))
    figures: dict = {"threads": THREADS, "torch": torch.__version__, "tests": len(suite.pairs)}

    gpt2 = tiny_causal_lm(work / "gpt2", texts, **GPT2_SHAPE)
    backend = load_backend(str(gpt2), dtype="fp32", device="cpu")
    fast_strategy = backend.strategy
    figures["tokenizer_entries_learned"] = len(backend.tokenizer)
    figures["fast_strategy"] = fast_strategy
    figures["tokens"] = token_counts(backend, requests)
    print(
        f"quiz_design: {len(suite.pairs):,} tests, {len(requests):,} distinct requests, "
        f"{figures['tokens']['contexts']} contexts; tokenizer learned "
        f"{len(backend.tokenizer):,} of 8,192 entries (the suite's text saturates BPE), model "
        f"vocabulary 8,192; fast strategy: {fast_strategy}",
        flush=True,
    )
    print(f"tokens: {figures['tokens']}", flush=True)

    timed(backend, fast_strategy, requests[:50])  # warm-up
    fast_times, naive_times = [], []
    fast_scores = naive_scores = None
    for run in range(max(args.repeats, args.naive_repeats)):
        if run < args.naive_repeats:
            seconds, naive_scores = timed(backend, "naive", requests)
            naive_times.append(seconds)
            print(f"  naive run {run + 1}: {seconds:.2f} s", flush=True)
        if run < args.repeats:
            seconds, fast_scores = timed(backend, fast_strategy, requests)
            fast_times.append(seconds)
            print(f"  fast run {run + 1}: {seconds:.2f} s", flush=True)
    throughput = peak_throughput(backend)
    counts = figures["tokens"]
    strict_bound = (counts["context_tokens"] + counts["candidate_tokens"]) / throughput[
        "body_tokens_per_s"
    ] + counts["scored_positions"] / throughput["head_positions_per_s"]
    loose_bound = (counts["context_tokens"] + counts["candidate_tokens"]) / throughput[
        "full_model_tokens_per_s"
    ]
    fast, naive = statistics.median(fast_times), statistics.median(naive_times)
    differences = [abs(a.mean - b.mean) for a, b in zip(fast_scores, naive_scores, strict=True)]
    fast_outcomes = outcomes(suite, {r: s.mean for r, s in zip(requests, fast_scores, strict=True)})
    naive_outcomes = outcomes(
        suite, {r: s.mean for r, s in zip(requests, naive_scores, strict=True)}
    )
    figures["gpt2"] = {
        "fast_seconds": fast_times,
        "naive_seconds": naive_times,
        "fast_median": fast,
        "naive_median": naive,
        "speedup_vs_naive": naive / fast,
        "throughput": throughput,
        "lower_bound_seconds": strict_bound,
        "fast_over_lower_bound": fast / strict_bound,
        "loose_lower_bound_seconds": loose_bound,
        "fast_over_loose_bound": fast / loose_bound,
        "max_abs_score_difference": max(differences),
        "tests_with_different_outcome": sum(
            a != b for a, b in zip(fast_outcomes, naive_outcomes, strict=True)
        ),
        "pass_rate": fast_outcomes.count("pass") / len(fast_outcomes),
    }
    g = figures["gpt2"]
    print(
        f"GPT-2 4x256: naive {naive:.2f} s, fast {fast:.2f} s (medians): "
        f"{g['speedup_vs_naive']:.2f}x faster (target >= 6x)"
    )
    print(
        f"  lower bound {strict_bound:.2f} s (body {throughput['body_tokens_per_s']:,.0f} tok/s, "
        f"head {throughput['head_positions_per_s']:,.0f} pos/s): fast is "
        f"{g['fast_over_lower_bound']:.2f}x the bound (target <= 1.5x); looser bound (every "
        f"token through the full model, {throughput['full_model_tokens_per_s']:,.0f} tok/s) "
        f"{loose_bound:.2f} s: {g['fast_over_loose_bound']:.2f}x"
    )
    print(
        f"  agreement: max |mean LL difference| {g['max_abs_score_difference']:.2e}, "
        f"{g['tests_with_different_outcome']} of {len(suite.pairs)} tests differ",
        flush=True,
    )

    bart = tiny_seq2seq_lm(work / "bart", texts, **BART_SHAPE)
    seq2seq = load_backend(str(bart), dtype="fp32", device="cpu")
    timed(seq2seq, "shared", requests[:50])
    shared_seconds, shared_scores = timed(seq2seq, "shared", requests)
    naive_seconds, naive_s2s = timed(seq2seq, "naive", requests)
    differences = [abs(a.mean - b.mean) for a, b in zip(shared_scores, naive_s2s, strict=True)]
    shared_out = outcomes(suite, {r: s.mean for r, s in zip(requests, shared_scores, strict=True)})
    naive_out = outcomes(suite, {r: s.mean for r, s in zip(requests, naive_s2s, strict=True)})
    figures["bart"] = {
        "shared_seconds": shared_seconds,
        "naive_seconds": naive_seconds,
        "speedup_vs_naive": naive_seconds / shared_seconds,
        "max_abs_score_difference": max(differences),
        "tests_with_different_outcome": sum(
            a != b for a, b in zip(shared_out, naive_out, strict=True)
        ),
    }
    b = figures["bart"]
    print(
        f"BART 3+3x256: naive {naive_seconds:.2f} s, shared encoder {shared_seconds:.2f} s "
        f"({b['speedup_vs_naive']:.2f}x); max |mean LL difference| "
        f"{b['max_abs_score_difference']:.2e}, {b['tests_with_different_outcome']} of "
        f"{len(suite.pairs)} tests differ",
        flush=True,
    )

    if not args.skip_memory:
        figures["memory"] = [
            peak_memory(str(gpt2), fast_strategy, None),
            peak_memory(str(gpt2), "naive", 200),
        ]
        for entry in figures["memory"]:
            print(
                f"  peak RSS while scoring, {entry['strategy']} ({entry['requests']} requests): "
                f"{entry['peak_rss_mib']:.0f} MiB, {entry['increase_mib']:.0f} MiB above the "
                f"{entry['rss_after_load_mib']:.0f} MiB after loading"
            )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    ok = (
        g["speedup_vs_naive"] >= 6
        and g["fast_over_lower_bound"] <= 1.5
        and g["tests_with_different_outcome"] == 0
        and g["max_abs_score_difference"] <= 1e-4
        and b["tests_with_different_outcome"] == 0
        and b["max_abs_score_difference"] <= 1e-4
    )
    print("targets met" if ok else "TARGETS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
