"""Tiny models with random weights and a byte-level BPE tokenizer trained on the fly.

For tests, benchmarks and offline smoke runs: nothing is downloaded. The tokenizer is trained on
the given texts (typically every context field and candidate of a suite), so a vocabulary target
larger than what the text supports saturates; the model's embedding still has ``vocab_size``
rows, so its LM head costs what a model of that vocabulary costs.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterable
from pathlib import Path

from nnd_suites.errors import NNDError, UnknownItemError
from nnd_suites.evaluation.progress import quiet_transformers_off_terminal
from nnd_suites.evaluation.tiny.stamp import random_weights, stamp_problem, write_stamp
from nnd_suites.infra.atomic import atomic_directory, folder_lock
from nnd_suites.infra.builtin_models import BUILTIN_MODELS, BUILTIN_PREFIX, EMBEDDED
from nnd_suites.infra.output_folder import check_output_folder, output_folder
from nnd_suites.infra.paths import cache_root
from nnd_suites.resolve import BUILTIN_PREFIX as SUITE_PREFIX
from nnd_suites.resolve import builtin_suite, load_suite
from nnd_suites.suite import Suite

logger = logging.getLogger(__name__)

GPT2_SPECIAL = "<|endoftext|>"
BART_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")

#: Folder name of the embedded model: the path is what reports show as the model.
EMBEDDED_FOLDER = "tiny-random-PIPELINE-CHECK-figures-mean-nothing"
#: What every output says when a tiny random model (:func:`.stamp.random_weights`) was scored.
EMBEDDED_NOTE = (
    f"PIPELINE CHECK: a tiny model with random weights ({EMBEDDED}, made on the spot, or one "
    "`python -m nnd_suites.evaluation.tiny` wrote); its pass rates mean nothing. Score a real "
    "model with MODEL=... (or --model ID_OR_FOLDER)."
)


def suite_texts(suites: Iterable[Suite]) -> list[str]:
    """Every distinct context field value and candidate text of the suites, in order."""
    texts: dict[str, None] = {}
    for suite in suites:
        for pair in suite.pairs:
            for value in (*pair.context.values(), pair.high.text, pair.low.text):
                if value:
                    texts[value] = None
    return list(texts)


def train_tokenizer(texts: Iterable[str], vocab_size: int, style: str = "gpt2"):
    """A byte-level BPE tokenizer (GPT-2 style: one ``<|endoftext|>``; BART style:
    ``<s> text </s>``; ``bos`` style: ``<s> text`` with a distinct ``</s>`` EOS, as Llama adds a
    BOS) as a transformers fast tokenizer."""
    # lazy: transformers loads with a model only (`import nnd_suites` stays torch-free)
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = [GPT2_SPECIAL] if style == "gpt2" else list(BART_SPECIALS)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(list(texts), trainer)
    if style == "gpt2":
        return PreTrainedTokenizerFast(
            tokenizer_object=tokenizer,
            bos_token=GPT2_SPECIAL,
            eos_token=GPT2_SPECIAL,
            unk_token=GPT2_SPECIAL,
        )
    if style not in ("bart", "bos"):
        raise ValueError(f"unknown tokenizer style {style!r}: gpt2, bart or bos")
    bos, pad, eos, unk = BART_SPECIALS
    ids = [(bos, tokenizer.token_to_id(bos)), (eos, tokenizer.token_to_id(eos))]
    tokenizer.post_processor = (
        processors.TemplateProcessing(
            single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}", special_tokens=ids
        )
        if style == "bart"
        else processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A $B", special_tokens=ids
        )
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token=bos, eos_token=eos, pad_token=pad, unk_token=unk
    )


def tiny_causal_lm(
    folder: str | Path,
    texts: Iterable[str],
    *,
    vocab_size: int = 1024,
    n_layer: int = 2,
    n_embd: int = 64,
    n_head: int = 4,
    n_positions: int = 1024,
    seed: int = 0,
    bos: bool = False,
) -> Path:
    """Save a GPT-2-shaped model with random weights and its tokenizer into ``folder``
    (``bos``: a Llama-like tokenizer that puts ``<s>`` before every text and ends with ``</s>``)."""
    # lazy: transformers loads with a model only (`import nnd_suites` stays torch-free)
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    folder = Path(folder)
    tokenizer = train_tokenizer(texts, vocab_size, "bos" if bos else "gpt2")
    config = GPT2Config(
        vocab_size=max(vocab_size, len(tokenizer)),
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    GPT2LMHeadModel(config).eval().save_pretrained(folder)
    tokenizer.model_max_length = n_positions
    tokenizer.save_pretrained(folder)
    return folder


def tiny_seq2seq_lm(
    folder: str | Path,
    texts: Iterable[str],
    *,
    vocab_size: int = 1024,
    layers: int = 2,
    d_model: int = 64,
    heads: int = 4,
    ffn: int = 128,
    max_positions: int = 1024,
    seed: int = 0,
) -> Path:
    """Save a BART-shaped encoder-decoder with random weights and its tokenizer into ``folder``."""
    # lazy: transformers loads with a model only (`import nnd_suites` stays torch-free)
    import torch
    from transformers import BartConfig, BartForConditionalGeneration

    folder = Path(folder)
    tokenizer = train_tokenizer(texts, vocab_size, "bart")
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in BART_SPECIALS}
    config = BartConfig(
        vocab_size=max(vocab_size, len(tokenizer)),
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=ffn,
        decoder_ffn_dim=ffn,
        max_position_embeddings=max_positions,
        bos_token_id=ids["<s>"],
        pad_token_id=ids["<pad>"],
        eos_token_id=ids["</s>"],
        decoder_start_token_id=ids["</s>"],
        forced_bos_token_id=None,
    )
    torch.manual_seed(seed)
    BartForConditionalGeneration(config).eval().save_pretrained(folder)
    tokenizer.model_max_length = max_positions
    tokenizer.save_pretrained(folder)
    return folder


def embedded_folder(cache: Path | None = None) -> Path:
    """Where the embedded model is made (nothing is made here)."""
    return (cache or cache_root()) / "models" / EMBEDDED_FOLDER


def embedded_model(cache: Path | None = None) -> Path:
    """The embedded model's folder (``EMBEDDED``), made on first use under the nnd-suites cache
    from the shipped Quiz Design and Challenge 300 texts; later calls reuse it while its stamp
    (:mod:`.stamp`: every file's sha256) holds, and remake it when not (a truncated weights
    file, a build cut short). Concurrent callers (data-parallel ranks) take turns on the
    models folder's lock: the first makes it, the others find it whole."""
    folder = embedded_folder(cache)
    if stamp_problem(folder) is None:
        return folder
    with folder_lock(folder.parent):
        problem = stamp_problem(folder)
        if problem is None:  # another process made it while this one waited
            return folder
        if folder.exists():
            logger.warning("%s: %s; the embedded model is made again", folder, problem)
        _make_embedded(folder)
    return folder


def _make_embedded(folder: Path) -> None:
    """Build the embedded model beside ``folder`` and swap it in whole (io.atomic_directory: the
    damaged one, in the cache's own models folder, is removed; a killed build's leftovers are
    recovered by the next one)."""
    quiet_transformers_off_terminal()
    suites = ["quiz_design", "challenge300"]
    texts = suite_texts(builtin_suite(name) for name in suites)  # whatever folders are here
    with atomic_directory(folder) as tmp:
        tiny_causal_lm(tmp, texts)
        write_stamp(tmp, "gpt2", 0, suites)


def embedded_or(model: str) -> str:
    """``model``, or for the embedded model's name (:data:`EMBEDDED`) its folder, made on first
    use. Every loader of a model reference calls it (``load_backend``, ``load_tokenizer``), so the
    name works wherever a model is taken. Another name in our namespace (``nnd-suites:...``,
    never a Hub id: those have no ``:``) is unknown, with the closest built-in name suggested."""
    # the suites' prefix is no Hub id either: taken for ours
    if model.startswith((BUILTIN_PREFIX, SUITE_PREFIX)) and model not in BUILTIN_MODELS:
        hint = "nnd-suites list names them"
        if model.startswith(SUITE_PREFIX):
            named = f"{BUILTIN_PREFIX}NAME ({SUITE_PREFIX}NAME names a built-in suite)"
            hint = f"built-in models are named {named}; {hint}"
        raise UnknownItemError("built-in model", model, list(BUILTIN_MODELS), hint=hint)
    return str(embedded_model()) if model == EMBEDDED else model


def resolve_embedded(models: list[str]) -> tuple[list[str], bool]:
    """``models`` with the embedded model's name (:data:`EMBEDDED`, the README's default, no
    download) replaced by its folder, made on first use; and whether one of them is a tiny model
    with random weights (that one, or a folder :func:`main` wrote)."""
    named = EMBEDDED in models
    if any(model.startswith((BUILTIN_PREFIX, SUITE_PREFIX)) for model in models):
        models = [embedded_or(model) for model in models]
    return models, named or any(map(random_weights, models))


def main(argv: list[str] | None = None) -> int:
    """``python -m nnd_suites.evaluation.tiny OUT``: a tiny random model for offline smoke runs,
    written as a whole into a new or empty folder (or over an earlier tiny model: never into a
    folder holding anything else, :mod:`nnd_suites.infra.output_folder`)."""
    parser = argparse.ArgumentParser(
        prog="python -m nnd_suites.evaluation.tiny", description=main.__doc__
    )
    parser.add_argument("out", type=Path, help="folder to write the model and tokenizer to")
    parser.add_argument(
        "--suite",
        action="append",
        default=[],
        help="suite whose text trains the tokenizer (default: quiz_design, challenge300)",
    )
    parser.add_argument("--seq2seq", action="store_true", help="a BART-shaped model")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random weights (models that differ)"
    )
    args = parser.parse_args(argv)
    suites = args.suite or ["builtin:quiz_design", "builtin:challenge300"]  # not ./quiz_design
    try:
        written = write_tiny_model(args.out, suites, seq2seq=args.seq2seq, seed=args.seed)
    except NNDError as exc:  # a foreign --out folder, an unknown suite: named, no traceback
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return exc.exit_status
    print(f"wrote {written}")
    return 0


def write_tiny_model(out: Path, suites: list[str], *, seq2seq: bool, seed: int) -> Path:
    """A stamped tiny model in ``out``, through the output guard: a new or empty folder, or an
    earlier tiny model (replaced as a whole); any other folder is refused, nothing written."""
    check_output_folder(out, "tiny-model")  # before the work: nothing written
    quiet_transformers_off_terminal()
    texts = suite_texts(load_suite(s) for s in suites)
    build = tiny_seq2seq_lm if seq2seq else tiny_causal_lm
    with output_folder(out, "tiny-model") as tmp:
        build(tmp, texts, seed=seed)
        write_stamp(tmp, "bart" if seq2seq else "gpt2", seed, suites)
    return out
