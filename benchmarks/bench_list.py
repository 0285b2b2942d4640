"""Wall time of `nnd-suites list` (a fresh process each time): median of 5, target < 1 s.

Listing plugins must not import torch or transformers (backends are lazy registry entries), so
it costs Python start-up plus nnd-suites' own light imports.

    python benchmarks/bench_list.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    command = [shutil.which("nnd-suites") or sys.executable, "list"]
    if command[0] == sys.executable:
        command = [sys.executable, "-m", "nnd_suites", "list"]
    subprocess.run(command, check=True, capture_output=True)  # warm the file cache
    times = []
    for _ in range(args.repeats):
        began = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - began)
    median = statistics.median(times)
    print(
        f"`nnd-suites list`: median {median:.2f} s over {args.repeats} runs "
        f"(min {min(times):.2f}, max {max(times):.2f}); target < 1 s"
    )
    return 0 if median < 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
