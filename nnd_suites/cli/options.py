"""Command-line options shared by several commands (model loading and scoring)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_scoring_options(parser: argparse.ArgumentParser, several_models: bool = False) -> None:
    """The model and scoring options shared by `evaluate` and `robustness` (``several_models``:
    ``--model`` may repeat, and ``args.model`` is a list)."""
    parser.add_argument(
        "--model",
        required=True,
        action="append" if several_models else "store",
        help="Hub model id (e.g. distilgpt2) or a local model folder"
        + (" (repeatable: a report per model and one leaderboard)" if several_models else ""),
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
    parser.add_argument(
        "--backend",
        help="backend name (see `nnd-suites list`; default: hf, which picks hf_causal or "
        "hf_seq2seq from the model's config)",
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="run the model repository's own Python code (off by default: a model from "
        "elsewhere is data, not code)",
    )
    parser.add_argument(
        "--device-map",
        choices=["auto"],
        help="spread a model larger than one device over every GPU (and the CPU) with accelerate",
    )
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
    parser.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="score only the first N context groups of each suite (a smoke test)",
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
        "limit": args.limit,
        "trust_remote_code": args.trust_remote_code,
        "device_map": args.device_map,
    }


def expand_suite_specs(specs: list[str]) -> list[str]:
    """``all`` stands for every built-in suite whose source ships with nnd-suites."""
    from nnd_suites.adapter import ADAPTERS

    expanded: list[str] = []
    for spec in specs:
        if spec == "all":
            shipped = [n for n, cls in ADAPTERS.items() if cls.default_source_path() is not None]
            expanded += [name for name in shipped if name not in expanded]
        else:
            expanded.append(spec)
    return expanded
