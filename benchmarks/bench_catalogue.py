"""The whole catalogue: its distinct scoring requests, the minimal tokens to score them, and the
time to score them with the bench-shaped model through Hugging Face and as an f32 GGUF in process.

The suites are those ``evaluate --suite catalogue`` scores (every catalogue suite whose source
ships, built here, its declared figures checked), or with ``--suite DIR`` every suite of a folder
written by ``nnd-suites build --catalogue --out DIR --source-dir SOURCES``; each catalogue suite
left out is printed with why. The requests are the evaluator's own (:func:`prepare_suites`: each
suite under its default template, each distinct (context, candidate) once across the catalogue).

The model is ``bench_llama_cpp.py``'s bench model (``bench_evaluator.py``'s shape: 4 layers,
width 256, 4 heads, vocabulary 8,192, random weights) with a BOS-adding byte-level BPE tokenizer
trained on the selected suites' text and a window of 2,048 tokens (longer contexts are cut from
the left, as in any run; the count is printed). *Minimal tokens* are each distinct context once
plus every candidate's tokens, after that cut: what any scorer must push through the model.

Timing (``--backends hf,gguf``): every distinct request scored through the HF backend (fp32,
``torch.set_num_threads(threads)``, the evaluator's default strategy) and through the in-process
llama.cpp backend on the same model converted to GGUF f32 by llama.cpp's converter (weights loaded
before the clock starts), alternated, medians of ``--repeats``. ``--max-requests K`` times a
sample instead: whole contexts drawn at random (seed 0) until K requests, every candidate of each;
the whole catalogue's time is then extrapolated from the sample's rate in minimal tokens/s, and
printed as such.

Run: ``. .ci/engine_setup.sh && python benchmarks/bench_catalogue.py`` (``--backends hf`` needs no
llama.cpp); ``--help`` for options.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from bench_llama_cpp import BENCH_SHAPE, WINDOW, minimal_tokens, ours

from nnd_suites.evaluation import ScoreRequest
from nnd_suites.evaluation.catalogue_suites import CATALOGUE, catalogue_selection
from nnd_suites.evaluation.prepared import Plan, prepare_suites
from nnd_suites.infra.atomic import atomic_write_text

BACKENDS = ("hf", "gguf")


@dataclass(frozen=True)
class Counts:
    """What one suite (or the whole selection) asks of a model."""

    name: str
    tests: int
    requests: int
    contexts: int
    minimal_tokens: int
    #: requests whose candidate alone does not fit the window: skipped (and counted) by any run
    unscorable: int
    #: requests whose context was cut from the left to fit the window
    truncated: int


def selected_plans(folder: Path | None) -> tuple[list[Plan], dict[str, str]]:
    """The plans ``evaluate --suite catalogue`` (or ``--suite folder``) scores, and each
    catalogue suite left out with why."""
    if folder is not None and not folder.is_dir():
        raise SystemExit(f"--suite {folder}: not a folder; give one written by `build --catalogue`")
    spec = CATALOGUE if folder is None else str(folder)
    selection = catalogue_selection([spec])
    if selection is None:
        raise SystemExit(
            f"--suite {folder}: no catalogue suite in it; give a folder written by "
            "`nnd-suites build --catalogue --out DIR --source-dir SOURCES`"
        )
    skipped = {name: why.reason for name, why in selection.grouping.skipped.items()}
    return prepare_suites(selection.suites).plans, skipped


def distinct_requests(plans: list[Plan]) -> list[ScoreRequest]:
    """Every distinct (context, candidate) of the plans, in first-seen order: what the evaluator
    sends to the backend (a request two suites share is scored once)."""
    found: dict[ScoreRequest, None] = {}
    for plan in plans:
        found.update(dict.fromkeys(ScoreRequest(c, x) for c, x in plan.requests()))
    return list(found)


def count(name: str, tests: int, requests: list[ScoreRequest], layout_of: dict) -> Counts:
    """``requests``' figures from their layouts (``layout_of[request]``: a layout, or a string
    saying why the request cannot be scored)."""
    layouts = [layout_of[request] for request in requests]
    scorable = [layout for layout in layouts if not isinstance(layout, str)]
    return Counts(
        name=name,
        tests=tests,
        requests=len(requests),
        contexts=len({request.context for request in requests}),
        minimal_tokens=minimal_tokens(scorable),
        unscorable=len(layouts) - len(scorable),
        truncated=sum(bool(layout.truncated) for layout in scorable),
    )


def catalogue_counts(plans: list[Plan], backend) -> tuple[list[Counts], Counts, dict]:
    """Per suite and in total (requests shared by suites counted once), with ``backend``'s
    tokenisation; also each distinct request's layout."""
    requests = distinct_requests(plans)
    layout_of = dict(zip(requests, backend.layouts(requests), strict=True))
    per_suite = [
        count(
            plan.name,
            len(plan.suite.pairs),
            [ScoreRequest(c, x) for c, x in plan.requests()],
            layout_of,
        )
        for plan in plans
    ]
    tests = sum(len(plan.suite.pairs) for plan in plans)
    return per_suite, count("total", tests, requests, layout_of), layout_of


def sample(requests: list[ScoreRequest], limit: int | None) -> list[ScoreRequest]:
    """Whole contexts drawn at random (seed 0) until ``limit`` requests, every candidate of each,
    in the catalogue's order (None: all of them)."""
    if limit is None or limit >= len(requests):
        return requests
    contexts = list(dict.fromkeys(request.context for request in requests))
    random.Random(0).shuffle(contexts)
    per_context: dict[str, int] = {}
    for request in requests:
        per_context[request.context] = per_context.get(request.context, 0) + 1
    chosen, total = set(), 0
    for context in contexts:
        if total >= limit:
            break
        chosen.add(context)
        total += per_context[context]
    return [request for request in requests if request.context in chosen]


def print_counts(per_suite: list[Counts], total: Counts, skipped: dict[str, str]) -> None:
    width = max(len(c.name) for c in per_suite)
    print(f"{'suite':<{width}}    tests  requests  contexts  minimal tokens  truncated  unscorable")
    for c in [*per_suite, total]:
        print(
            f"{c.name:<{width}}  {c.tests:>7,}  {c.requests:>8,}  {c.contexts:>8,}  "
            f"{c.minimal_tokens:>14,}  {c.truncated:>9,}  {c.unscorable:>10,}"
        )
    shared = sum(c.requests for c in per_suite) - total.requests
    print(
        f"total: {total.tests:,} tests in {len(per_suite)} suites, {total.requests:,} distinct "
        f"requests ({shared:,} more are asked by more than one suite and scored once), "
        f"{total.minimal_tokens:,} minimal tokens"
    )
    for name, reason in skipped.items():
        print(f"left out: {name}: {reason}")
    sys.stdout.flush()


def hf_run(backend, requests: list[ScoreRequest]) -> float:
    """Seconds for the HF backend to score ``requests`` (no cache: the backend itself)."""
    from bench_evaluator import timed

    return timed(backend, backend.strategy, requests)[0]


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: give a whole number >= 1")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, help="a folder written by build --catalogue")
    parser.add_argument("--backends", default="hf,gguf", help="hf, gguf or both (hf,gguf)")
    parser.add_argument("--threads", type=positive, default=2, help="threads of each backend")
    parser.add_argument("--repeats", type=positive, default=3, help="timed runs (median)")
    parser.add_argument("--max-requests", type=positive, help="time a sample of about this many")
    parser.add_argument("--counts-only", action="store_true", help="no model scoring")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--sdist", help="llama-cpp-python's sdist (default: .ci/engine_setup.sh's)")
    args = parser.parse_args(argv)
    backends = args.backends.split(",")
    if unknown := sorted(set(backends) - set(BACKENDS)):
        parser.error(f"--backends: unknown {unknown}; give hf, gguf or hf,gguf")
    if "gguf" in backends and not args.counts_only:  # said now, not after the counting
        from tiny_gguf import sdist_or_exit  # beside bench_llama_cpp (tests/support)

        args.sdist = sdist_or_exit(args.sdist)

    import torch

    from nnd_suites.evaluation import load_backend
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    torch.set_num_threads(args.threads)
    plans, skipped = selected_plans(args.suite)
    with tempfile.TemporaryDirectory(prefix="nnd-bench-catalogue-") as tmp:
        shape = {**BENCH_SHAPE, "n_positions": WINDOW}
        texts = suite_texts(plan.suite for plan in plans)
        folder = tiny_causal_lm(Path(tmp) / "bench", texts, bos=True, **shape)
        hf = load_backend(str(folder), dtype="fp32", device="cpu")
        per_suite, total, layout_of = catalogue_counts(plans, hf)
        print(
            f"bench model: {shape['n_layer']} layers, width {shape['n_embd']}, vocabulary "
            f"{shape['vocab_size']} (tokenizer learned {len(hf.tokenizer):,} entries), window "
            f"{WINDOW}; {args.threads} threads; HF strategy {hf.strategy}"
        )
        print_counts(per_suite, total, skipped)
        figures: dict = {
            "suites": [asdict(c) for c in per_suite],
            "total": asdict(total),
            "left_out": skipped,
            "threads": args.threads,
        }
        if not args.counts_only:
            figures["timing"] = timing(args, backends, hf, folder, list(layout_of), total)
    if args.json:
        atomic_write_text(args.json, json.dumps(figures, indent=2) + "\n")
    return 0


def timing(args, backends: list[str], hf, folder: Path, requests, total: Counts) -> dict:
    """Median seconds of each backend over the requests (or their sample), with rates."""
    timed = sample(requests, args.max_requests)
    if len(timed) < len(requests):
        part = count("sample", 0, timed, dict(zip(timed, hf.layouts(timed), strict=True)))
        print(
            f"timing a SAMPLE of {part.requests:,} of the {total.requests:,} requests "
            f"({part.contexts:,} whole contexts drawn at random, {part.minimal_tokens:,} of "
            f"{total.minimal_tokens:,} minimal tokens)"
        )
    else:
        part = total
    gguf, tokens = None, {"hf": part.minimal_tokens}
    if "gguf" in backends:
        from tiny_gguf import converter_root, hf_to_gguf

        from nnd_suites.evaluation.backends.llama_cpp import SEQUENCES, LlamaCppBackend

        root = converter_root(args.sdist, folder.parent)
        gguf = hf_to_gguf(folder, folder.parent / "bench.gguf", root)
        # llama.cpp tokenises with the GGUF's own vocabulary: its rate is in its own tokens
        layouts = LlamaCppBackend.load(str(gguf), n_ctx=WINDOW).layouts(timed)
        tokens["gguf"] = minimal_tokens([x for x in layouts if not isinstance(x, str)])
        print(f"GGUF f32 {gguf.stat().st_size / 2**20:.1f} MiB; {tokens['gguf']:,} minimal tokens")
    if "hf" in backends:
        hf.score(timed[:50])  # warm-up
    runs: dict[str, list[float]] = {name: [] for name in backends}
    for run in range(args.repeats):  # alternated: both see the same machine load
        for name in backends:
            if name == "hf":
                seconds = hf_run(hf, timed)
            else:
                seconds = ours(gguf, timed, args.threads, SEQUENCES)[0]
            runs[name].append(seconds)
            print(f"  {name} run {run + 1}: {seconds:.2f} s", flush=True)
    figures = {"requests": part.requests, "minimal_tokens": part.minimal_tokens}
    for name in backends:
        median = statistics.median(runs[name])
        rate = tokens[name] / median
        line = (
            f"{name:4}: {median:8.2f} s for {part.requests:,} requests (median of "
            f"{args.repeats}), {rate:,.0f} minimal tokens/s, {part.requests / median:,.1f} "
            "requests/s"
        )
        entry = {"seconds": runs[name], "median": median, "minimal_tokens_per_s": rate}
        if part is not total:
            whole = median * total.minimal_tokens / part.minimal_tokens
            line += f"; the whole catalogue at that rate (EXTRAPOLATED): {whole / 60:,.1f} min"
            entry["extrapolated_whole_seconds"] = whole
        print(line, flush=True)
        figures[name] = entry
    return figures


if __name__ == "__main__":
    sys.exit(main())
