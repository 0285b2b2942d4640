"""Command-line options shared by several commands (model loading and scoring), and their
range checks (the parser they are added to is :mod:`nnd_suites.cli.parser`)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from nnd_suites.cli.habits import DTYPE_ALIASES, parse_model_args
from nnd_suites.errors import NNDError
from nnd_suites.infra.batching_strategies import strategy_help
from nnd_suites.infra.builtin_models import EMBEDDED

# Range checks run while the command line is parsed (a usage error, exit 2), never after scoring.


#: the help of every command's suite argument: the resolver's forms (nnd_suites/resolve.py)
SUITE_HELP = (
    "suite folder, built-in adapter name (builtin:NAME when a folder here has that name), "
    "FOLDER/CONFIG or hub:ORG/NAME/CONFIG"
)


def add_suites_argument(parser: argparse.ArgumentParser) -> None:
    """The positional ``SUITE ...`` of the commands that write several suites as one folder or
    repository (export, export-lm-eval, publish)."""
    parser.add_argument(
        "suites",
        nargs="+",
        metavar="SUITE",
        help=SUITE_HELP + ", all (every shipped suite) or a dataset folder (every config)",
    )


def suite_name(text: str) -> str:
    """``--name``, checked while parsing: a name the manifest refuses stops the command before
    the build (a usage error, exit status 2), not after it."""
    # lazy: the build imports the suite package (pyarrow, numpy); --help needs none
    from nnd_suites.builder.suites import check_suite_name

    try:
        return check_suite_name(text)
    except NNDError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive_int(text: str) -> int:
    """An integer >= 1."""
    return _int_at_least(text, 1)


def group_limit(text: str) -> int | float:
    """``--limit``: a number of context groups >= 1, or a fraction strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if 0 < value < 1:
        return value
    how = "give a number of context groups (an integer >= 1) or a fraction between 0 and 1"
    if math.isnan(value) or (math.isfinite(value) and value.is_integer()):
        # 2.0 is two groups, as 2 is; 0, -3 or a word are refused as integers are, with both ways
        try:
            return positive_int(text if math.isnan(value) else str(int(value)))
        except argparse.ArgumentTypeError as error:
            raise argparse.ArgumentTypeError(f"{str(error).split(';')[0]}; {how}") from None
    raise argparse.ArgumentTypeError(f"{text!r}: {how}")


def non_negative_int(text: str) -> int:
    """An integer >= 0."""
    return _int_at_least(text, 0)


def _int_at_least(text: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"{value} is below {low}; give an integer >= {low}")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0 (nan and inf are refused: a request must end)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds > 0")
    return value


#: verify's bootstrap: 40 resamples put one in each 2.5% tail of a 95% interval.
MIN_RESAMPLES = 40


def resamples(text: str) -> int:
    """Bootstrap resamples: fewer than :data:`MIN_RESAMPLES` give an interval that may not even
    contain its estimate."""
    value = _int_at_least(text, -(2**63))
    if value < MIN_RESAMPLES:
        raise argparse.ArgumentTypeError(
            f"{value} resamples cannot give a 95% interval; give {MIN_RESAMPLES} or more "
            "(default: 1000)"
        )
    return value


def probability(text: str) -> float:
    """A number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number between 0 and 1")
    return value


def batch_size(text: str) -> int | str:
    """``auto`` (lm-eval's ``auto:N`` too: our auto already retries smaller) or N >= 1."""
    if text == "auto" or text.startswith("auto:"):
        return "auto"
    return positive_int(text)


def dtype(text: str) -> str:
    """Our dtype names, or torch's / lm-eval's (bfloat16, float16, half, float32, float)."""
    value = DTYPE_ALIASES.get(text, text)
    if value not in ("auto", "fp32", "bf16", "fp16"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give auto, fp32, bf16 or fp16 (or bfloat16, float16, float32)"
        )
    return value


def add_scoring_options(
    parser: argparse.ArgumentParser, model: bool = True, several_models: bool = False
) -> None:
    """The model and scoring options shared by `evaluate`, `robustness` (and, without --model,
    `verify`); ``several_models``: ``--model`` may repeat, and ``args.model`` is a list."""
    if model:
        parser.add_argument(
            "--model",
            action="append" if several_models else "store",
            help="Hub model id (e.g. distilgpt2), a local model folder or .gguf file, or "
            f"{EMBEDDED} (random weights, nothing downloaded: a pipeline check) (required, "
            "here or as --model_args pretrained=...)"
            + (" (repeatable: a report per model and one leaderboard)" if several_models else ""),
        )
        parser.add_argument(
            "--model_args",
            "--model-args",
            type=parse_model_args,
            metavar="KEY=VALUE,...",
            help="lm-evaluation-harness style: pretrained, dtype, revision, trust_remote_code, "
            "parallelize (= --device-map auto), base_url, num_concurrent (= --concurrency), "
            "max_retries (= --retries), tokenizer",
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
        "--scorer",
        action="append",
        metavar="NAME",
        help="how a test's two candidates are compared: mean (the paper's, default), sum, "
        "per_char, per_byte, pmi (see `nnd-suites list`); repeat to compare scorers: the "
        "first gives the pass rates, the report adds which verdicts flip under the others",
    )
    parser.add_argument(
        "--reference-model",
        metavar="MODEL",
        help="the ratio scorer's reference model (Hub id or folder), e.g. the model a DPO model "
        "was tuned from: ratio = log p(model) - log p(reference)",
    )
    parser.add_argument(
        "--batch-size",
        type=batch_size,
        default="auto",
        help="'auto' (token budget, halved on out-of-memory) or N contexts per "
        "batch (default: auto)",
    )
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N, mps")
    parser.add_argument(
        "--dtype",
        default="auto",
        type=dtype,
        help="weights dtype: auto, fp32, bf16, fp16 (or bfloat16, float16, float32); the "
        "softmax is always fp32 (auto: bf16 on GPUs that support it, else fp16; fp32 on CPU)",
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
        help=strategy_help(),
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="do not read or write the score cache"
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="folder of the score cache (default: $NND_SUITES_CACHE, else the user cache "
        "folder: ~/.cache/nnd_suites on Linux; see README)",
    )
    parser.add_argument(
        "--limit",
        type=group_limit,
        metavar="N",
        help="score only the first N context groups with tests of each suite, or that fraction "
        "of them (0.1: the first 10%% of the context groups with tests; groups whose candidates "
        "make no test are not counted; the unit is a context group: one input with all its "
        "candidates, several tests; a smoke test)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    served = parser.add_argument_group("served backend (--backend served)")
    served.add_argument(
        "--base-url",
        help="OpenAI-compatible server, e.g. http://localhost:8000/v1 (implies --backend served)",
    )
    served.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the API key (default: OPENAI_API_KEY); the key is "
        "never written to a report, cache key or log",
    )
    served.add_argument("--concurrency", type=positive_int, help="requests in flight (default: 16)")
    served.add_argument(
        "--tokenizer",
        help="Hub id or folder of the served model's tokenizer, to read its BOS/EOS texts "
        "(default: the --model id); with a .gguf model, a Hugging Face tokenizer for templates, "
        "checked against the GGUF's own",
    )
    served.add_argument("--eos-text", help="the served model's end-of-sequence text, e.g. '</s>'")
    served.add_argument(
        "--request-timeout",
        type=positive_seconds,
        metavar="S",
        help="total seconds one request may take, retries included (default: 300)",
    )
    served.add_argument(
        "--retries",
        type=non_negative_int,
        help="retries on 429/5xx/connection errors (default: 5)",
    )


#: The backend options of :func:`add_scoring_options`: option dest -> the backend's parameter.
#: Only those given are passed: the library picks the backend (``base_url`` alone: served) and
#: its defaults, and a backend that does not take one refuses it with a usage error.
BACKEND_OPTIONS = {
    "base_url": "base_url",
    "api_key_env": "api_key_env",
    "concurrency": "concurrency",
    "tokenizer": "tokenizer",
    "eos_text": "eos_text",
    "request_timeout": "timeout",
    "retries": "retries",
}


def backend_options(args: argparse.Namespace) -> dict:
    """The backend options given on the command line, by the backend's parameter names."""
    given = {key: getattr(args, dest, None) for dest, key in BACKEND_OPTIONS.items()}
    return {key: value for key, value in given.items() if value is not None}


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
        "backend_options": backend_options(args),
        "revision": args.revision,
        "strategy": args.strategy,
        "limit": args.limit,
        "trust_remote_code": args.trust_remote_code,
        "device_map": args.device_map,
        **({"scorers": args.scorer} if args.scorer else {}),
        **({"reference_model": args.reference_model} if args.reference_model else {}),
    }


def add_data_parallel_option(parser: argparse.ArgumentParser, command: str) -> None:
    parser.add_argument(
        "--data-parallel",
        type=positive_int,
        metavar="N",
        help="score in N local processes (one model copy each, requests sharded by context); "
        f"for several nodes use `accelerate launch -m nnd_suites {command} ...`",
    )


def rank_zero() -> bool:
    """True unless this process is a data-parallel rank other than 0 (which neither writes nor
    prints)."""
    # lazy: the evaluator package is slow to import; `nnd-suites list` stays < 1 s
    from nnd_suites.evaluation.parallel import current_rank

    rank = current_rank()
    return rank is None or rank.main
