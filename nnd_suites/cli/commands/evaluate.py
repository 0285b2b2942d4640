"""nnd-suites evaluate: score a model on one or more suites and report pass rates."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="score a model on suites (log-likelihood NND tests) and report",
        description="Score a Hugging Face model (Hub id or local folder) on NND suites: a test "
        "passes when the better candidate gets the higher mean log-probability.",
    )
    parser.add_argument(
        "--suite",
        action="append",
        required=True,
        metavar="SUITE",
        help="suite folder or built-in adapter name (repeatable)",
    )
    add_scoring_options(parser)
    parser.add_argument(
        "--normalize",
        action="append",
        default=[],
        metavar="TRANSFORM",
        help="transformation spec applied to every suite before scoring (repeatable)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="write report.json, report.md, pass_rates.png and per-test outcomes there",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object (progress goes to stderr)"
    )
    parser.set_defaults(func=run)


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    """The model and scoring options shared by `evaluate` and `robustness`."""
    parser.add_argument(
        "--model", required=True, help="Hub model id (e.g. distilgpt2) or a local model folder"
    )
    parser.add_argument(
        "--compat", choices=["reference"], help="reproduce the paper's reference scoring exactly"
    )
    parser.add_argument(
        "--template",
        help="template name of the suite (e.g. macaw) or a format string over "
        "its context fields (default: the suite's default template)",
    )
    parser.add_argument(
        "--batch-size",
        default="auto",
        help="'auto' (token budget, halved on out-of-memory) or N contexts per "
        "batch (default: auto)",
    )
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N, mps")
    parser.add_argument(
        "--dtype",
        default="auto",
        choices=["auto", "fp32", "bf16", "fp16"],
        help="weights dtype; the softmax is always fp32 (auto: bf16 on GPUs "
        "that support it, else fp16; fp32 on CPU)",
    )
    parser.add_argument("--backend", help="backend name (default: chosen from the model config)")
    parser.add_argument("--revision", help="Hub revision (branch, tag or commit)")
    parser.add_argument(
        "--strategy",
        default="auto",
        help="batching strategy: auto, packed, kv, shared or naive (the "
        "reference loop); auto picks the fastest one that passes a probe",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="do not read or write the score cache"
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="folder of the score cache (default: $NND_SUITES_CACHE or ~/.cache/nnd_suites)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def scoring_options(args: argparse.Namespace) -> dict:
    """Keyword arguments of ``nnd_suites.evaluate`` from :func:`add_scoring_options`."""
    return {
        "template": args.template,
        "compat": args.compat,
        "batch_size": args.batch_size,
        "device": args.device,
        "dtype": args.dtype,
        "cache": not args.no_cache,
        "cache_dir": args.cache_dir,
        "progress": not args.quiet,
        "backend": args.backend,
        "revision": args.revision,
        "strategy": args.strategy,
    }


def run(args: argparse.Namespace) -> int:
    from nnd_suites.evaluation import evaluate

    report = evaluate(
        args.model, args.suite, out=args.out, normalize=args.normalize, **scoring_options(args)
    )
    if args.json:
        print(json.dumps(report.summary(), ensure_ascii=False))
        return 0
    print(
        f"model {report.model} ({report.backend.get('backend')}, {report.mode} scoring, "
        f"{report.backend.get('dtype')}): {report.requests.scored:,} requests scored, "
        f"{report.requests.cached:,} from the cache, {report.seconds:.1f} s"
    )
    for name, result in report.suites.items():
        print(
            f"{name}: {_rate(result.pass_rate, result.ci)} of {result.pairs:,} tests "
            f"({result.passed:,} passed, {result.ties:,} ties"
            + (f", {result.degenerate:,} degenerate" if result.degenerate else "")
            + ")"
        )
        for category, rate in result.by_category.items():
            print(f"  {category:<24} {_rate(rate.pass_rate, rate.ci)}  n={rate.n:,}")
        if result.truncated_tests:
            print(f"  contexts cut to fit the window: {result.truncated_tests:,} tests")
    if args.out:
        print(f"wrote {args.out}/report.json, report.md, pass_rates.png, outcomes/")
    return 0


def _rate(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None or ci is None:
        return "n/a"
    return f"{100 * value:5.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
