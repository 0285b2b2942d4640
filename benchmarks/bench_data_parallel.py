"""Data-parallel agreement and timing: one process vs ``--data-parallel N`` on the same model.

A tiny GPT-2-shaped model with random weights (built here, nothing downloaded) scores Quiz Design
and Challenge 300 in one process and in N gloo processes on CPU. Printed: wall time of each run
(each is a fresh ``python -m nnd_suites`` command, so both include interpreter start-up and model
loading, which dominate on a small machine and a tiny model), the number of tests whose outcome
differs (must be 0) and the largest difference of a mean log-likelihood. Exit status 1 when any
outcome differs.

Run: ``python benchmarks/bench_data_parallel.py [--processes 2] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

SUITES = ("quiz_design", "challenge300")


def _outcomes(folder: Path) -> dict[str, list[dict]]:
    return {p.stem: pq.read_table(p).to_pylist() for p in sorted((folder / "outcomes").glob("*"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from nnd_suites import load_suite
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    work = Path(tempfile.mkdtemp(prefix="bench_dp_"))
    model = tiny_causal_lm(work / "model", suite_texts([load_suite(s) for s in SUITES]))
    base = ["evaluate", *[a for s in SUITES for a in ("--suite", s)], "--model", str(model)]
    base += ["--quiet", "--no-cache", "--json"]
    times: dict[str, list[float]] = {"one": [], "parallel": []}
    differ, worst = 0, 0.0
    for repeat in range(args.repeats):
        runs = {"one": [], "parallel": ["--data-parallel", str(args.processes)]}
        for name, extra in runs.items():
            out = work / f"{name}{repeat}"
            started = time.perf_counter()
            # both runs start a fresh interpreter, so both pay the same start-up (torch import)
            command = [sys.executable, "-m", "nnd_suites", *base, *extra, "--out", str(out)]
            status = subprocess.run(command, stdout=subprocess.DEVNULL).returncode
            if status != 0:
                raise SystemExit(f"the {name} run failed")
            times[name].append(time.perf_counter() - started)
        one, par = _outcomes(work / f"one{repeat}"), _outcomes(work / f"parallel{repeat}")
        for suite in one:
            for a, b in zip(one[suite], par[suite], strict=True):
                differ += a["outcome"] != b["outcome"]
                worst = max(worst, abs(a["ll_high"] - b["ll_high"]), abs(a["ll_low"] - b["ll_low"]))
    tests = sum(len(rows) for rows in _outcomes(work / "one0").values())
    print(f"tests per run: {tests:,} ({', '.join(SUITES)}), repeats: {args.repeats}")
    for name, values in times.items():
        runs = ", ".join(f"{v:.1f}" for v in values)
        print(f"{name:>9}: median {statistics.median(values):.1f} s  ({runs})")
    print(f"outcomes differing: {differ}; largest |mean LL difference|: {worst:.2e}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
