"""Start-up of the command line, each call a fresh process: medians of several runs of
`nnd-suites --help`, `nnd-suites list`, and the time from an `evaluate` call on the embedded model
(`nnd-suites:tiny-random`, `--limit 2`, no score cache) to its first scored request.

The first scored request is seen on stderr: off a terminal, the evaluator prints a progress line
(``nnd-suites: scoring 6/6 requests ...``) as soon as the first batch of scores is back, so the
time to that line is start-up, suite loading, model loading and the first batch; nothing in the
tool is changed to measure it. Wall time depends on what else runs on the machine, so CPU time
(user + sys of the child) is printed beside it: on a loaded machine compare that. Target: --help
and list under 1 s on an idle machine.

    python benchmarks/bench_startup.py [--repeats 5] [--json startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 1.0
FIRST_SCORE = "nnd-suites: scoring "
EVALUATE = ["evaluate", "--model", "nnd-suites:tiny-random", "--suite", "quiz_design"]
EVALUATE += ["--limit", "2", "--no-cache"]


def _command() -> list[str]:
    found = shutil.which("nnd-suites")
    return [found] if found else [sys.executable, "-m", "nnd_suites"]


def _run(argv: list[str], env: dict[str, str], until: str | None = None) -> tuple[float, float]:
    """(wall seconds to the end, or to the first stderr line starting with ``until``, where the
    child is stopped; its CPU seconds to that point) for one fresh process."""
    began = time.perf_counter()
    child = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    seen = None
    for line in child.stderr:
        if until is not None and line.startswith(until):
            seen = time.perf_counter() - began
            child.terminate()  # measured: its CPU time is counted up to here, not to the end
            break
    child.stderr.read()  # drain what is left, so the child is never stalled on a full pipe
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if seen is None and child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}")
    if until is not None and seen is None:
        raise SystemExit(f"{' '.join(argv)} printed no line starting {until!r} on stderr")
    wall = seen if until is not None else time.perf_counter() - began
    return wall, usage.ru_utime + usage.ru_stime


def _medians(runs: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "wall_s": statistics.median(wall for wall, _ in runs),
        "cpu_s": statistics.median(cpu for _, cpu in runs),
        "min_wall_s": min(wall for wall, _ in runs),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    command = _command()
    with tempfile.TemporaryDirectory(prefix="nnd-startup-") as cache:
        env = {**os.environ, "NND_SUITES_CACHE": cache}  # the embedded model is made here once
        # A user's Python writes bytecode once and reuses it; a shell that forbids it (some CI
        # and sandbox images set PYTHONDONTWRITEBYTECODE) recompiles every module on each call,
        # which would be timed as start-up.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        _run([*command, *EVALUATE], env, FIRST_SCORE)  # warm: file cache and embedded model
        figures = {}
        for name, argv, until in [
            ("--help", ["--help"], None),
            ("list", ["list"], None),
            ("evaluate to first scored request", EVALUATE, FIRST_SCORE),
        ]:
            runs = [_run([*command, *argv], env, until) for _ in range(args.repeats)]
            figures[name] = _medians(runs)
            print(
                f"{name:<34} median {figures[name]['wall_s']:.2f} s wall "
                f"(min {figures[name]['min_wall_s']:.2f}), {figures[name]['cpu_s']:.2f} s CPU, "
                f"over {args.repeats} runs"
            )
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs; target --help and list < 1 s")
    if args.json:
        args.json.write_text(json.dumps({"load": load, **figures}, indent=2) + "\n")
    fast = all(figures[name]["wall_s"] < TARGET_SECONDS for name in ("--help", "list"))
    return 0 if fast else 1


if __name__ == "__main__":
    raise SystemExit(main())
