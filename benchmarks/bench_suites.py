"""Building, saving, loading and exporting the shipped suites: what every command that reads a
suite pays before any model runs.

Per shipped suite (every built-in adapter whose source ships), the median of ``--repeats`` runs
of ``build_suite(name)``, ``suite.save(folder)``, ``Suite.load(folder)`` and
``export_suites([suite], folder)`` (the suite alone in its export folder), each in this process;
``--profile N`` also prints the N costliest calls of one more run of each (cProfile, cumulative
time). Then the export folder as it grows: ``--configs`` exports one after the other into one
folder, each of a 10-pair part of gpt3_summ (each config keeps the suite's 300 annotated
candidates), printing the time of every fifth export: an export validates every config already in
the folder under its lock and rewrites the card, whose YAML front matter grows with each config.

Run: ``python benchmarks/bench_suites.py`` (about a minute on 2 idle cores); ``--help`` for
options. Figures depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from nnd_suites import build_suite
from nnd_suites.hub import export_suites
from nnd_suites.resolve import shipped_suites
from nnd_suites.suite import Suite


def median_seconds(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def profile(label: str, run: Callable[[], object], top: int) -> None:
    profiler = cProfile.Profile()
    profiler.runcall(run)
    print(f"\n--- {label}")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def bench_suites(names: list[str], repeats: int, scratch: Path, top: int) -> None:
    operations = ("build", "save", "load", "export")
    print(f"{'suite':<18} {'pairs':>7}" + "".join(f" {op + ' s':>8}" for op in operations))
    for name in names:
        suite = build_suite(name)
        folder = scratch / "suites" / name
        runs = {
            "build": lambda name=name: build_suite(name),
            "save": lambda suite=suite, folder=folder: suite.save(folder),
            "load": lambda folder=folder: Suite.load(folder),
            "export": lambda suite=suite, name=name: export_suites([suite], scratch / name),
        }
        times = [median_seconds(runs[op], repeats) for op in operations]
        print(f"{name:<18} {len(suite):>7,}" + "".join(f" {t:>8.2f}" for t in times))
        for op in operations if top else ():
            profile(f"{name} {op}", runs[op], top)


def bench_exports(whole: Suite, configs: int, scratch: Path) -> None:
    folder = scratch / "export"
    total = 0.0
    print(f"\n{configs} exports into one folder, one 10-pair config each")
    for i in range(configs):
        part = whole.derive(whole.pairs[10 * i : 10 * i + 10], name=f"part{i:02d}")
        start = time.perf_counter()
        export_suites([part], folder)
        took = time.perf_counter() - start
        total += took
        if (i + 1) % 5 == 0 or i + 1 == configs:
            print(f"  export {i + 1:>3} ({i} configs already there): {took:.2f} s")
    print(f"  all {configs}: {total:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--configs", type=int, default=20, help="exports into one folder")
    parser.add_argument("--suite", action="append", help="only this shipped suite (repeatable)")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="print each run's N costliest calls"
    )
    args = parser.parse_args()
    names = args.suite or shipped_suites()
    unknown = sorted(set(names) - set(shipped_suites()))
    if unknown:
        raise SystemExit(f"--suite {', '.join(unknown)}: not a shipped suite (nnd-suites list)")
    if args.repeats < 1:
        raise SystemExit(f"--repeats {args.repeats}: give at least 1")
    # Checked before any figure is taken, so a wrong --configs does not cost the suites' half.
    whole = build_suite("gpt3_summ")
    if not 1 <= args.configs <= len(whole) // 10:
        raise SystemExit(
            f"--configs {args.configs}: give 1 to {len(whole) // 10} "
            f"(gpt3_summ has {len(whole)} pairs, 10 per config)"
        )
    with tempfile.TemporaryDirectory() as scratch:
        bench_suites(names, args.repeats, Path(scratch), args.profile)
        bench_exports(whole, args.configs, Path(scratch))


if __name__ == "__main__":
    main()
