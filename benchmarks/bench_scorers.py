"""Benchmark: what a scorer costs on top of the paper's mean.

On the full Quiz Design suite with the GPT-2-small-shaped bench model of ``bench_evaluator.py``
(4 layers, 256 wide, random weights, a BPE tokenizer trained on the suite), no score cache:

- one scorer (``mean``) against three (``mean``, ``sum``, ``per_byte``), which read the same
  scores: target within 5%;
- ``pmi`` against ``mean``: ``pmi`` also scores every distinct candidate after the neutral
  context; target at most that extra share of tokens (printed beside the time ratio). Printed
  too: the extra share of the model's work, counted in multiply-adds from the tokens the model
  reads (12 width**2 per token and layer) and the positions the LM head scores (width x vocab
  each). Nearly every token of a neutral request is a scored target, so the LM head makes its
  share of the work larger than its share of tokens: that work share is the floor of the ratio.

Each configuration runs ``--repeats`` times, alternating, in one process; medians of wall time
and of the process's CPU time (steadier on a machine others are using) are printed, and each
ratio as the median over the repeats of the two times taken back to back.
Run: ``python benchmarks/bench_scorers.py`` (about 5 minutes on 2 cores); on a busy machine
``--threads 1`` (two threads waiting on each other turn every stall of one into a stall of both).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

import nnd_suites
from nnd_suites import build_suite
from nnd_suites.evaluation import ScoreRequest, load_backend
from nnd_suites.evaluation.templates import neutral_context
from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm
from nnd_suites.records.templates import render_template

sys.path.insert(0, str(Path(__file__).parent))
from bench_evaluator import GPT2_SHAPE, THREADS

RUNS = {"mean": ["mean"], "three": ["mean", "sum", "per_byte"], "pmi": ["pmi"]}


def tokens(backend, requests: list[ScoreRequest]) -> int:
    """Context + candidate tokens of the distinct requests (what the model reads)."""
    encode = backend.tokenizer
    total = 0
    for context in {r.context for r in requests}:
        total += len(encode(context, add_special_tokens=False)["input_ids"])
    return total + sum(
        len(encode(r.candidate, add_special_tokens=False)["input_ids"]) for r in requests
    )


def work(backend, requests: list[ScoreRequest]) -> float:
    """Multiply-adds of the distinct requests: each distinct context and each candidate through
    the body (projections and a 4x-wide MLP: 12 width**2 per token and layer; attention left
    out), and the LM head at every scored position (width x vocab)."""
    layouts = backend.layouts(requests)
    read = sum(len(p) for p in {layout.prefix for layout in layouts})
    read += sum(len(layout.inputs) for layout in layouts)
    scored = sum(len(layout.targets) for layout in layouts)
    vocab, width = backend.model.get_output_embeddings().weight.shape
    return read * 12 * width**2 * backend.config.num_hidden_layers + scored * width * vocab


def paired(runs: dict[str, list[float]], name: str) -> float:
    """Median over the repeats of ``name``'s time / ``mean``'s time in the same repeat (run back
    to back, so both saw about the same load)."""
    return statistics.median(a / b for a, b in zip(runs[name], runs["mean"], strict=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--threads",
        type=int,
        default=THREADS,
        help="torch threads (1 gives steadier ratios on a machine others are using)",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    suite = build_suite("quiz_design")
    with tempfile.TemporaryDirectory() as tmp:
        folder = tiny_causal_lm(Path(tmp) / "bench", suite_texts([suite]), **GPT2_SHAPE)
        backend = load_backend(str(folder), batch_size="auto")
        # untimed: loads the weights, runs the strategy probe and tokenises every request (the
        # backend keeps the layouts), which the first timed runs would otherwise pay unequally
        nnd_suites.evaluate(backend, [suite], scorers=RUNS["pmi"], cache=False, progress=False)
        seconds: dict[str, list[float]] = {name: [] for name in RUNS}
        cpu: dict[str, list[float]] = {name: [] for name in RUNS}
        for _ in range(args.repeats):
            for name, scorers in RUNS.items():
                started, cpu_started = time.perf_counter(), time.process_time()
                report = nnd_suites.evaluate(
                    backend, [suite], scorers=scorers, cache=False, progress=False
                )
                seconds[name].append(time.perf_counter() - started)
                cpu[name].append(time.process_time() - cpu_started)
                if name == "pmi":
                    pmi_requests = report.requests.unique
        template = suite.manifest.default_template
        plain = {
            ScoreRequest(render_template(template, p.context), x)
            for p in suite.pairs
            for x in (p.high.text, p.low.text)
        }
        neutral = {
            ScoreRequest(neutral_context(template, p.context), x)
            for p in suite.pairs
            for x in (p.high.text, p.low.text)
        }
        extra_share = tokens(backend, list(neutral)) / tokens(backend, list(plain))
        work_share = work(backend, list(neutral)) / work(backend, list(plain))
    median = {name: statistics.median(values) for name, values in seconds.items()}
    median_cpu = {name: statistics.median(values) for name, values in cpu.items()}
    print(f"quiz_design, {len(suite.pairs):,} tests, {len(plain):,} distinct requests")
    for name, scorers in RUNS.items():
        runs = ", ".join(f"{s:.2f}" for s in seconds[name])
        print(
            f"  {name:6s} {'+'.join(scorers):20s} median {median[name]:.2f} s ({runs}); "
            f"CPU {median_cpu[name]:.2f} s"
        )
    for label, runs_of in (("wall", seconds), ("CPU", cpu)):
        three, pmi = paired(runs_of, "three"), paired(runs_of, "pmi")
        print(f"three scorers / one ({label}): {three:.3f} (target <= 1.05)")
        print(
            f"pmi / mean ({label}): {pmi:.3f}; pmi scored {pmi_requests:,} requests; its extra "
            f"tokens are {extra_share:.3f} of mean's (target: time ratio <= 1 + "
            f"{extra_share:.3f}); its extra model work {work_share:.3f} (floor: 1 + "
            f"{work_share:.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
