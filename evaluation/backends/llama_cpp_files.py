"""What the llama.cpp backend knows about a GGUF file before it loads any weight.

- ``check_gguf``: a missing file or one that is not GGUF is a named ``ModelLoadError``.
- ``gguf_sha256``: the file's sha256, computed once and remembered by (path, size, mtime) in a
  small JSON beside the score cache, so a 5 GB model is not hashed again at every run.
- ``check_gguf_unchanged``: after a load, the file must still be the one its sha256 named.
- ``GGUFTokenizer``: the file's own tokenizer (llama.cpp's) behind the part of the transformers
  tokenizer interface that ``scoring.tokenizer_traits`` reads, so the scoring definition is
  shared with the Hugging Face backends instead of being written twice.
- ``check_tokenizer_agrees``: a Hugging Face ``--tokenizer`` must tokenise a probe text as the
  GGUF does.
- ``refuse_hf_options``: the Hugging Face options that mean nothing for a GGUF file are refused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from nnd_suites.errors import ModelLoadError, NNDError
from nnd_suites.infra.atomic import atomic_write_text
from nnd_suites.infra.paths import cache_root
from nnd_suites.infra.reading import sha256_file
from nnd_suites.sources.download import file_stamp

GGUF_MAGIC = b"GGUF"
#: Remembered hashes of GGUF files, beside the score cache (``$NND_SUITES_CACHE``).
HASHES_FILE = "gguf_sha256.json"
#: Words, punctuation, digits, a line break, runs of spaces and non-ASCII text: where two
#: tokenizers that differ usually disagree.
PROBE_TEXT = (
    "The quick brown fox, 1,234 times: can't stop!\nQ: What's 2+2?  A:  four.\n"
    "Naïve café — déjà vu; 東京 (Tokyo) 🙂"
)


def check_gguf(path: str | os.PathLike) -> Path:
    """``path`` as a Path if it names a readable GGUF file, else a ``ModelLoadError``."""
    path = Path(path)
    if not path.is_file():
        raise ModelLoadError(
            f"GGUF model {str(path)!r} does not exist or is not a file; give the path of a "
            ".gguf file (llama.cpp's convert_hf_to_gguf.py makes one from a Hugging Face model)"
        )
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ModelLoadError(f"cannot read GGUF model {str(path)!r}: {exc}") from None
    if magic != GGUF_MAGIC:
        raise ModelLoadError(
            f"{str(path)!r} is not a GGUF file (it starts with {magic!r}, not {GGUF_MAGIC!r}); "
            "convert the model with llama.cpp's convert_hf_to_gguf.py, or give a Hugging Face "
            "model folder with --backend hf"
        )
    return path


def gguf_sha256(path: Path, remembered: Path | None = None) -> str:
    """The file's sha256, read from ``remembered`` (default: beside the score cache) when the
    path and the file's stamp (:func:`file_stamp`: size, times, inode) are unchanged, else
    computed and remembered."""
    remembered = remembered or cache_root() / HASHES_FILE
    stat = path.stat()
    key = str(path.resolve())
    stamp = file_stamp(stat)
    try:
        known = json.loads(remembered.read_text(encoding="utf-8"))
        if not isinstance(known, dict):
            known = {}
    except (OSError, ValueError):
        known = {}  # absent or damaged: recompute, rewrite
    entry = known.get(key)
    if isinstance(entry, dict) and all(entry.get(k) == v for k, v in stamp.items()):
        digest = entry.get("sha256")
        if isinstance(digest, str) and len(digest) == 64:
            return digest
    digest = sha256_file(path)
    known[key] = {**stamp, "sha256": digest}
    try:
        remembered.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(remembered, json.dumps(known, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass  # a read-only cache folder only costs a new hash next time
    return digest


def check_gguf_unchanged(
    path: Path, model: str, identified: str, stamp: dict[str, int]
) -> dict[str, int]:
    """The file must still hold the content ``identified`` (its sha256, taken with ``stamp`` when
    the backend was made): the weights load on first use, so a file rewritten in between would
    be scored, and its scores filed in the score cache and the report, under the hash of the
    file it replaced. Returns the file's stamp now; an unchanged stamp is not hashed again."""
    try:
        now = file_stamp(path.stat())
    except OSError as exc:
        raise ModelLoadError(f"cannot read GGUF model {model!r}: {exc}") from None
    if now == stamp:
        return now
    digest = gguf_sha256(path)
    if digest != identified:
        raise ModelLoadError(
            f"GGUF model {model!r} changed after it was identified (its sha256 was "
            f"{identified[:12]}..., now {digest[:12]}...): the new file would be scored under "
            "the old one's identity. Load the model again (a new run, or load_backend again) "
            "once the file is written"
        )
    return now  # the same content, touched or copied back


class GGUFTokenizer:
    """llama.cpp's tokenizer of a GGUF file, called like a transformers tokenizer.

    ``add_special_tokens=True`` adds what the file says (``tokenizer.ggml.add_bos_token``,
    ``add_eos_token``); special-token texts in the input are parsed as special tokens, as
    transformers does.
    """

    def __init__(self, vocab: Any) -> None:
        self._vocab = vocab  # llama_cpp's LlamaModel, loaded with vocab_only
        self._buffer: Any = ()  # token buffer reused across calls (ctypes array)
        bos, eos = vocab.token_bos(), vocab.token_eos()
        self.bos_token_id = bos if bos >= 0 else None
        self.eos_token_id = eos if eos >= 0 else None

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        # lazy: optional extra (pip install 'nnd-suites[llama]'), only for GGUF models
        import llama_cpp

        data = text.encode("utf-8")
        room = len(data) + 8  # never more tokens than bytes, plus the special ones
        if len(self._buffer) < room:
            self._buffer = (llama_cpp.llama_token * (2 * room))()
        n = llama_cpp.llama_tokenize(
            self._vocab.vocab, data, len(data), self._buffer, room, add_special_tokens, True
        )
        if n < 0:  # cannot happen with that room; say so rather than return a cut text
            raise RuntimeError(f"llama_tokenize needed {-n} tokens for {len(data)} bytes")
        return self._buffer[:n]

    def __call__(self, text: str | list[str], add_special_tokens: bool = True, **_: Any):
        if isinstance(text, str):
            return {"input_ids": self.encode(text, add_special_tokens)}
        return {"input_ids": [self.encode(t, add_special_tokens) for t in text]}

    def convert_ids_to_tokens(self, token: int) -> str:
        """The token's vocabulary entry (``Ġthe``, ``▁the``), as transformers gives it."""
        return self._vocab.token_get_text(token)

    def piece(self, token: int) -> str:
        """The text the token stands for (for messages)."""
        return self._vocab.token_to_piece(token, True).rstrip(b"\0").decode("utf-8", "replace")


def check_tokenizer_agrees(name: str, hf_tokenizer: Any, gguf: GGUFTokenizer, model: str) -> None:
    """Refuse a Hugging Face tokenizer that tokenises the probe text differently from the GGUF
    file, naming the first token where they part."""
    theirs = list(hf_tokenizer(PROBE_TEXT, add_special_tokens=True)["input_ids"])
    ours = gguf.encode(PROBE_TEXT, add_special_tokens=True)
    if theirs == ours:
        return
    at = next(
        (i for i, (a, b) in enumerate(zip(theirs, ours, strict=False)) if a != b),
        min(len(theirs), len(ours)),
    )

    def token(ids: list[int], decode) -> str:
        return f"{ids[at]} ({decode(ids[at])!r})" if at < len(ids) else "nothing (it ended)"

    raise ModelLoadError(
        f"--tokenizer {name!r} does not tokenise like the GGUF file {model!r}: on the probe "
        f"text {PROBE_TEXT[:40]!r}..., token {at} is {token(theirs, hf_tokenizer.decode)} with "
        f"the tokenizer but {token(ours, gguf.piece)} in the GGUF ({len(theirs)} vs "
        f"{len(ours)} tokens); give the tokenizer the GGUF was converted from, or leave "
        "--tokenizer out (the GGUF's own tokenizer scores)"
    )


def refuse_hf_options(
    *, dtype: str, device: str, batch_size: int | str, revision: str | None, strategy: str, **rest
) -> None:
    """Refuse, by name, every option given that a GGUF file or llama.cpp cannot honour."""
    refused = {
        "--dtype": dtype != "auto"
        and "the GGUF file fixes the weights' type (quantise it "
        "instead, e.g. llama-quantize model.gguf out.gguf Q8_0)",
        "--device": device not in ("auto", "cpu") and "llama.cpp runs here on the CPU",
        "--batch-size": batch_size not in ("auto", None) and "llama.cpp batches itself",
        "--revision": revision is not None and "a GGUF file is a local path",
        "--strategy": strategy != "auto" and "llama.cpp has one strategy",
    }
    for option, value in rest.items():
        if value:  # unset options of other backends arrive as None or False
            hf = option in ("trust_remote_code", "device_map")
            refused[option] = "a Hugging Face option" if hf else "unknown option"
    said = [f"{name} ({why})" for name, why in refused.items() if why]
    if said:
        raise NNDError(f"the llama_cpp backend does not take {'; '.join(said)}")


def default_threads() -> int:
    """Half the CPUs this process may use (about the physical cores), for prompts too: llama.cpp's
    own default for prompts, every CPU, makes its threads spin against each other on a busy
    machine (on 2 shared cores a 20-token decode took 1 s with 2 threads, 1.2 ms with 1)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus // 2)
