"""Cost of NND evaluation during training: the first call against the later ones.

The first call loads and prepares the suites (templates, deduplicated requests) and tokenises
every request; later calls on the same ``NNDCallback`` reuse all of that and only run the forward
passes. For comparison, ``cold`` is a fresh ``nnd_suites.evaluate`` each time (what evaluating
saved checkpoints from disk would cost, minus loading the weights). Medians of ``--repeats``.

    python benchmarks/bench_training.py --suite quiz_design --suite challenge300 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

import nnd_suites
from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm
from nnd_suites.evaluation.training import NNDCallback


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="append", default=[])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    suites = [nnd_suites.load_suite(s) for s in args.suite or ["quiz_design", "challenge300"]]
    with tempfile.TemporaryDirectory() as folder:
        path = tiny_causal_lm(folder, suite_texts(suites), n_positions=512)
        model = AutoModelForCausalLM.from_pretrained(path)
        tokenizer = AutoTokenizer.from_pretrained(path)
    torch.set_num_threads(torch.get_num_threads())
    callback = NNDCallback(suites, every_n_steps=1, batch_size="auto")

    def timed(call) -> float:
        began = time.perf_counter()
        call()
        return time.perf_counter() - began

    first = timed(lambda: callback.score(model, tokenizer, step=0))
    later = [timed(lambda: callback.score(model, tokenizer, step=1)) for _ in range(args.repeats)]
    cold = [
        timed(lambda: nnd_suites.evaluate((model, tokenizer), suites, cache=False, progress=False))
        for _ in range(args.repeats)
    ]
    tests = sum(len(s) for s in suites)
    print(f"suites {[s.name for s in suites]} ({tests:,} tests), tiny GPT-2, CPU")
    print(f"first call (prepare + tokenise + forward): {first:.2f} s")
    print(f"later calls, median of {args.repeats}:        {statistics.median(later):.2f} s")
    print(f"cold evaluate each time, median:        {statistics.median(cold):.2f} s")
    print(f"later vs cold: {statistics.median(cold) / statistics.median(later):.2f}x faster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
