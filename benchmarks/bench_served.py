"""Served (llama.cpp server) vs in-process HF scoring of the same tiny model on CPU.

A 2-layer, 64-wide GPT-2-shaped model with random weights and a BOS-adding tokenizer (the shape
llama-cpp-python scores correctly), converted to GGUF with llama.cpp's own converter; the first
``--groups`` groups of Quiz Design scored by ``hf_causal`` and by ``served`` against
``python -m llama_cpp.server`` on localhost. Reported: requests/s for each, and the engine's own
prompt throughput (llama.cpp's ``prompt eval`` timings from the server log) as the ceiling of
what the engine can do, beside the prompt tokens/s the served backend achieved; and the server
alone (raw HTTP, one request at a time, no nnd-suites code) with and without ``echo``, which
shows where a served request's time goes.

Run: ``python benchmarks/bench_served.py --sdist llama_cpp_python-0.3.36.tar.gz``
(needs ``.ci/engine_setup.sh``).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

#: the tests' GGUF helper, imported from there (it is not shipped in the package)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))


def _raw_request_ms(url: str, prompts: list[str], echo: bool) -> float:
    """Median milliseconds of one bare completion request to the server (urllib, sequential)."""
    import json
    import urllib.request

    times = []
    for prompt in prompts:
        body = {"model": "tiny", "prompt": prompt, "max_tokens": 1, "temperature": 0}
        if echo:
            body |= {"echo": True, "logprobs": 1}
        request = urllib.request.Request(
            url + "/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        started = time.perf_counter()
        urllib.request.urlopen(request, timeout=120).read()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", help="llama-cpp-python's sdist (default: .ci/engine_setup.sh's)")
    parser.add_argument("--groups", type=int, default=30)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each; medians reported")
    args = parser.parse_args()
    from tiny_gguf import converter_root, hf_to_gguf, sdist_or_exit, start_llama_server

    sdist = sdist_or_exit(args.sdist)
    import torch

    from nnd_suites import build_suite
    from nnd_suites.evaluation import evaluate
    from nnd_suites.evaluation.backend import load_backend
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    torch.set_num_threads(args.threads)
    suite = build_suite("quiz_design")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = tiny_causal_lm(folder / "hf", suite_texts([suite]), n_positions=2048, bos=True)
        gguf = hf_to_gguf(model, folder / "model.gguf", converter_root(sdist, folder))
        log = folder / "server.log"
        process, url = start_llama_server(gguf, log, window=2048, threads=args.threads)
        try:
            common = {"limit": args.groups, "cache": False, "progress": False}
            hf_runs, served_runs = [], []
            served = load_backend(
                "tiny", "served", base_url=url, tokenizer=str(model), concurrency=args.concurrency
            )
            before = len(PROMPT_EVAL.findall(log.read_text(errors="replace")))
            for _ in range(args.repeats):  # alternated, so both see the same machine load
                started = time.perf_counter()
                hf = evaluate(str(model), suite, backend="hf_causal", device="cpu", **common)
                hf_runs.append(time.perf_counter() - started)
                started = time.perf_counter()
                ours = evaluate(served, suite, **common)
                served_runs.append(time.perf_counter() - started)
            hf_s, served_s = statistics.median(hf_runs), statistics.median(served_runs)
            prompts = [f"{' '.join(p.context.values())} {p.high.text}" for p in suite.pairs[:20]]
            raw_echo = _raw_request_ms(url, prompts, echo=True)
            raw_plain = _raw_request_ms(url, prompts, echo=False)
        finally:
            process.terminate()
            process.wait(timeout=30)
        timings = PROMPT_EVAL.findall(log.read_text(errors="replace"))[before:]
    ms = sum(float(t) for t, _ in timings)
    total = sum(int(n) for _, n in timings)
    tokens = total // args.repeats  # per run
    n = ours.requests.scored
    same = [r.outcome for r in next(iter(ours.outcomes.values()))] == [
        r.outcome for r in next(iter(hf.outcomes.values()))
    ]
    print(
        f"Quiz Design, first {args.groups} groups: {n} distinct requests, {args.threads} threads, "
        f"medians of {args.repeats} alternated runs"
    )
    print(f"hf_causal : {hf.requests.scored / hf_s:8.1f} requests/s ({hf_s:.1f} s)")
    print(
        f"served    : {n / served_s:8.1f} requests/s ({served_s:.1f} s, concurrency "
        f"{args.concurrency}); prompt tokens/s achieved {tokens / served_s:,.0f}"
    )
    if total:
        print(
            f"engine    : prompt eval {total * 1000 / ms:,.0f} tokens/s over {len(timings)} "
            f"evaluations ({total:,} tokens; the ceiling for served scoring)"
        )
    print(
        f"server alone: {raw_echo:.1f} ms per echo+logprobs request, {raw_plain:.1f} ms without "
        "echo (median of 20 sequential raw requests: the server's own echo path sets the pace)"
    )
    print(f"per-test outcomes identical: {same}")


if __name__ == "__main__":
    main()
