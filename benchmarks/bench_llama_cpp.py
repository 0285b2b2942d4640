"""The in-process llama.cpp backend (``llama_cpp``) against llama.cpp's own prompt evaluation and
against the served path, on the same GGUF files.

Two GPT-2-shaped models with random weights and a BOS-adding byte-level BPE tokenizer trained on
Quiz Design's text (BOS, so that llama-cpp-python's server passes the served backend's probe),
converted to GGUF f32 by llama.cpp's converter: the tests' tiny model (2 layers, width 64,
vocabulary 1,024) and ``bench_evaluator.py``'s bench model (4 layers, width 256, vocabulary
8,192). For each, on every distinct request of Quiz Design (default template):

- ours: ``LlamaCppBackend.score`` (weights loaded before the clock starts); its rate is given in
  the suite's *minimal tokens* (each distinct context once, plus every candidate's tokens); and
  the same with one decode per candidate (the alternative to several candidates per batch).
- ceiling: llama.cpp's own prompt evaluation of the same token sequences through
  ``llama_cpp.Llama.eval`` (each context once, then each of its candidates on the context's
  cache, logits at the last token only), timed around the calls; and the engine's internal
  prompt-evaluation counter (``llama_perf_context``) over the same run.
- served: ``python -m llama_cpp.server`` on the same file, scored by the served backend on the
  first ``--served-groups`` groups, beside ours on the same groups (requests/s; per-test outcomes
  compared).
- peak RSS: a fresh process scoring the whole suite through ``evaluate`` (ru_maxrss), beside its
  RSS before the model loaded and the GGUF file's size.

Run: ``. .ci/engine_setup.sh && python benchmarks/bench_llama_cpp.py`` (about 5 minutes on 2
cores; ``--skip-served`` leaves the server out).
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

#: the tests' GGUF helper, imported from there (it is not shipped in the package)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

TINY_SHAPE = {"vocab_size": 1024, "n_layer": 2, "n_embd": 64, "n_head": 4}
#: bench_evaluator.py's GPT2_SHAPE (not imported: that script needs torch and its own imports)
BENCH_SHAPE = {"vocab_size": 8192, "n_layer": 4, "n_embd": 256, "n_head": 4}
WINDOW = 2048  # every Quiz Design prompt fits: the server refuses what HF would cut
PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")


def requests_of(suite) -> list:
    """Every distinct (context, candidate) of the suite under its default template."""
    from nnd_suites.evaluation import ScoreRequest
    from nnd_suites.records.templates import render_template

    template = suite.manifest.default_template
    return list(
        dict.fromkeys(
            ScoreRequest(render_template(template, pair.context), text)
            for pair in suite.pairs
            for text in (pair.high.text, pair.low.text)
        )
    )


def minimal_tokens(layouts) -> int:
    return sum(len(p) for p in {layout.prefix for layout in layouts}) + sum(
        len(layout.inputs) for layout in layouts
    )


def ours(gguf: Path, requests, threads: int, together: int) -> tuple[float, int]:
    """Seconds to score ``requests`` (weights already loaded) with up to ``together``
    candidates per decode (1: one decode per candidate on the rolled-back cache), tokens
    decoded."""
    from nnd_suites.evaluation.backends import llama_cpp as module

    shipped, module.SEQUENCES = module.SEQUENCES, together
    try:
        backend = module.LlamaCppBackend.load(str(gguf), threads=threads, n_ctx=WINDOW)
        backend.decoder  # noqa: B018 - load the weights before the clock starts
        started = time.perf_counter()
        backend.score(requests)
        return time.perf_counter() - started, backend.decoded_tokens
    finally:
        module.SEQUENCES = shipped


def ceiling(gguf: Path, layouts, threads: int) -> tuple[float, float]:
    """(tokens/s timed around ``Llama.eval``, tokens/s by llama.cpp's own prompt-eval counter)
    over each distinct context once and each candidate on its context's cache."""
    import llama_cpp

    llm = llama_cpp.Llama(
        model_path=str(gguf),
        n_ctx=WINDOW,
        n_batch=512,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    groups: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for layout in layouts:
        groups.setdefault(layout.prefix, []).append(layout.inputs)
    tokens = minimal_tokens(layouts)
    llama_cpp.llama_perf_context_reset(llm.ctx)
    started = time.perf_counter()
    for prefix in sorted(groups):
        llm.reset()
        llm.eval(prefix)
        llama_cpp.llama_synchronize(llm.ctx)  # wait for the work (and count it in the timings)
        for inputs in groups[prefix]:
            llm.n_tokens = len(prefix)  # Llama.eval drops the cache after n_tokens
            if inputs:
                llm.eval(inputs)
                llama_cpp.llama_synchronize(llm.ctx)
    wall = time.perf_counter() - started
    perf = llama_cpp.llama_perf_context(llm.ctx)
    # one-token candidates count as generation (n_eval) in llama.cpp's counters: both are prompt
    return tokens / wall, (perf.n_p_eval + perf.n_eval) * 1000 / (perf.t_p_eval_ms + perf.t_eval_ms)


def served_comparison(gguf: Path, hf_folder: Path, suite, groups: int, threads: int) -> dict:
    """Served backend vs ours on the first ``groups`` groups: requests/s and outcomes."""
    from tiny_gguf import start_llama_server

    from nnd_suites.evaluation import evaluate, load_backend

    log = gguf.with_suffix(".server.log")
    process, url = start_llama_server(gguf, log, window=WINDOW, threads=threads)
    common = {"limit": groups, "cache": False, "progress": False}
    try:
        served = load_backend(
            "tiny", "served", base_url=url, tokenizer=str(hf_folder), concurrency=4
        )
        started = time.perf_counter()
        theirs = evaluate(served, suite, **common)
        served_s = time.perf_counter() - started
    finally:
        process.terminate()
        process.wait(timeout=30)
    timings = PROMPT_EVAL.findall(log.read_text(errors="replace"))
    prompt_tokens = sum(int(n) for _, n in timings[-theirs.requests.scored :])
    local = load_backend(str(gguf), n_ctx=WINDOW, threads=threads)
    local.decoder  # noqa: B018 - weights loaded before the clock starts
    started = time.perf_counter()
    mine = evaluate(local, suite, **common)
    ours_s = time.perf_counter() - started
    [a] = theirs.outcomes.values()
    [b] = mine.outcomes.values()
    gaps = [abs(x.ll_high - y.ll_high) for x, y in zip(a, b, strict=True)]
    gaps += [abs(x.ll_low - y.ll_low) for x, y in zip(a, b, strict=True)]
    return {
        "requests": theirs.requests.scored,
        "served_rps": theirs.requests.scored / served_s,
        "served_tokens_s": prompt_tokens / served_s,
        "ours_rps": mine.requests.scored / ours_s,
        "same_outcomes": [r.outcome for r in a] == [r.outcome for r in b],
        "max_ll_gap": max(gaps),
    }


def _memory_child(gguf: str, threads: int, queue) -> None:
    from nnd_suites import build_suite
    from nnd_suites.evaluation import evaluate, load_backend

    suite = build_suite("quiz_design")
    backend = load_backend(gguf, n_ctx=WINDOW, threads=threads)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report = evaluate(backend, suite, cache=False, progress=False)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put({"before_mib": before, "peak_mib": peak, "tests": report.suites["quiz_design"].pairs})


def peak_rss(gguf: Path, threads: int) -> dict:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_memory_child, args=(str(gguf), threads, queue))
    child.start()
    result = queue.get()
    child.join()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="runs of ours and the ceiling")
    parser.add_argument("--served-groups", type=int, default=30)
    parser.add_argument("--skip-served", action="store_true")
    parser.add_argument("--models", default="tiny,bench", help="tiny, bench or both")
    args = parser.parse_args(argv)
    from tiny_gguf import converter_root, hf_to_gguf, sdist_or_exit

    from nnd_suites import build_suite
    from nnd_suites.evaluation.backends.llama_cpp import SEQUENCES, LlamaCppBackend
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    sdist = sdist_or_exit(None)
    suite = build_suite("quiz_design")
    requests = requests_of(suite)
    shapes = {"tiny": TINY_SHAPE, "bench": BENCH_SHAPE}
    met = True
    with tempfile.TemporaryDirectory() as tmp:
        root = converter_root(sdist, tmp)
        for name in args.models.split(","):
            shape = {**shapes[name], "n_positions": WINDOW}
            folder = tiny_causal_lm(Path(tmp) / name, suite_texts([suite]), bos=True, **shape)
            gguf = hf_to_gguf(folder, Path(tmp) / f"{name}.gguf", root)
            layouts = LlamaCppBackend.load(str(gguf), n_ctx=WINDOW).layouts(requests)
            tokens = minimal_tokens(layouts)
            runs, singles, ceilings, engine = [], [], [], []
            for _ in range(args.repeats):  # alternated: all see the same machine load
                seconds, decoded = ours(gguf, requests, args.threads, SEQUENCES)
                runs.append(seconds)
                singles.append(ours(gguf, requests, args.threads, 1)[0])
                wall_rate, engine_rate = ceiling(gguf, layouts, args.threads)
                ceilings.append(wall_rate)
                engine.append(engine_rate)
            ours_rate = tokens / statistics.median(runs)
            top = statistics.median(ceilings)
            print(
                f"{name} ({shape['n_layer']} layers, width {shape['n_embd']}, vocabulary "
                f"{shape['vocab_size']}; {gguf.stat().st_size / 2**20:.1f} MiB f32 GGUF), Quiz "
                f"Design: {len(requests):,} requests, {tokens:,} minimal tokens, "
                f"{args.threads} threads, medians of {args.repeats}"
            )
            print(
                f"  ours    : {ours_rate:9,.0f} minimal tokens/s ({statistics.median(runs):.2f} s; "
                f"up to {SEQUENCES} candidates per decode; {decoded:,} tokens decoded: contexts "
                "that start alike share their cache)"
            )
            print(
                f"  ours, 1 : {tokens / statistics.median(singles):9,.0f} minimal tokens/s with "
                f"one decode per candidate ({statistics.median(singles):.2f} s)"
            )
            print(
                f"  ceiling : {top:9,.0f} tokens/s (Llama.eval, same sequences, one eval per "
                f"candidate, logits at the last token); engine counter "
                f"{statistics.median(engine):,.0f} tokens/s"
            )
            ratio = top / ours_rate
            met &= ratio <= 1.3
            print(f"  ceiling / ours = {ratio:.2f} (target <= 1.3)")
            if not args.skip_served:
                s = served_comparison(gguf, folder, suite, args.served_groups, args.threads)
                speedup = s["ours_rps"] / s["served_rps"]
                met &= speedup >= 20 and s["same_outcomes"]
                print(
                    f"  served  : {s['served_rps']:.1f} requests/s ({s['served_tokens_s']:,.0f} "
                    f"prompt tokens/s) vs ours {s['ours_rps']:,.1f} requests/s on the first "
                    f"{args.served_groups} groups ({s['requests']} requests): {speedup:.0f}x "
                    f"(target >= 20); outcomes identical: {s['same_outcomes']} (largest LL "
                    f"difference {s['max_ll_gap']:.1e})"
                )
            memory = peak_rss(gguf, args.threads)
            print(
                f"  memory  : peak RSS {memory['peak_mib']:,.0f} MiB scoring all "
                f"{memory['tests']:,} tests ({memory['before_mib']:,.0f} MiB before the weights "
                f"loaded; file {gguf.stat().st_size / 2**20:.1f} MiB)"
            )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
