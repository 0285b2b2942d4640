"""Loading Hugging Face models for scoring: devices and dtypes, configs, tokenizers, weights,
revisions, and the errors that say what went wrong (a missing folder, the Hub out of reach, a
tokenizer that encodes text to nothing). Remote model code runs only when asked for."""

from __future__ import annotations

import contextlib
import hashlib
import re
import socket
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field

from nnd_suites.errors import ModelLoadError, NNDError
from nnd_suites.evaluation.backend import BackendParams, backend_name
from nnd_suites.evaluation.identity import WEIGHT_FILES
from nnd_suites.evaluation.progress import quiet_transformers_off_terminal
from nnd_suites.evaluation.tiny import EMBEDDED, embedded_or
from nnd_suites.sources.download import file_stamp

DTYPES = {
    "fp32": torch.float32,
    "float32": torch.float32,
    "bf16": torch.bfloat16,
    "bfloat16": torch.bfloat16,
    "fp16": torch.float16,
    "float16": torch.float16,
}
DTYPE_NAMES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}
#: What to try when a model gives a non-finite number: half precision overflows first.
FP32 = "; with bf16/fp16 try --dtype fp32"
WINDOW_ATTRIBUTES = (
    "n_positions",
    "max_position_embeddings",
    "n_ctx",
    "seq_length",
    "max_sequence_length",
)


class HFParams(BackendParams):
    """The options of the Hugging Face backends."""

    trust_remote_code: bool = Field(
        False, description="run the model repository's own code (never by default)"
    )
    device_map: Literal["auto"] | None = Field(
        None, description="auto: spread a model larger than one device with accelerate"
    )
    config: Any = Field(None, description="the model's config, when already read (hf does)")


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    if str(device) == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise NNDError(f"unknown device {device!r}: use auto, cpu, cuda, cuda:N or mps") from exc
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise NNDError(f"device {device!r} asked for, but torch sees no CUDA device")
    return resolved


def resolve_dtype(dtype: str | torch.dtype, device: torch.device) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        if dtype not in DTYPE_NAMES:
            raise NNDError(f"unsupported dtype {dtype}; use fp32, bf16 or fp16")
        return dtype
    if dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if dtype not in DTYPES:
        raise NNDError(f"unknown dtype {dtype!r}: use auto, fp32, bf16 or fp16")
    return DTYPES[dtype]


def load_error(model: str, exc: Exception) -> ModelLoadError:
    offline = hub_offline()
    where = (
        "it is not a local folder"
        if not Path(model).exists()
        else "the folder holds no loadable model (config.json, weights, tokenizer files)"
    )
    hint = (
        " The Hub is not reachable in offline mode (HF_HUB_OFFLINE=1): download the model "
        "first or pass a local folder."
        if offline and not Path(model).exists()
        else " Pass a Hub model id (e.g. distilgpt2) or a folder written by save_pretrained()."
        if not Path(model).exists()
        # a folder that exists but does not load: its files are damaged or incomplete
        else " Check its files (a copy cut short or a truncated weights file): write it again "
        "with save_pretrained(), or download it again."
    )
    detail = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else ""
    return ModelLoadError(
        f"cannot load model {model!r}: {where} ({type(exc).__name__}: {detail}).{hint}"
    )


def load_config(model: str, revision: str | None = None, trust_remote_code: bool = False):
    """The model's config; a path-like reference that does not exist, or a local folder with a
    revision, fails at once."""
    check_model_reference(model, revision)
    # lazy: transformers loads with a model only (`import nnd_suites` stays torch-free)
    from transformers import AutoConfig

    quiet_transformers_off_terminal()
    try:
        return AutoConfig.from_pretrained(
            model, revision=revision, trust_remote_code=trust_remote_code
        )
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError, ...
        raise load_error(model, exc) from exc


#: The backends that load a model reference through transformers (a folder or a Hub id).
HF_BACKENDS = frozenset({"hf", "hf_causal", "hf_seq2seq"})


def check_model_references(
    models: Iterable[object],
    backend: str | None,
    options: Mapping[str, Any] | None = None,
    revision: str | None = None,
) -> None:
    """Before a run that scores several models one after another: every reference an HF backend
    will load must be there (and take ``revision``), so that a typo in the last one fails at once
    rather than after the others were scored. ``options`` are the backend options (a
    ``base_url``: served models)."""
    if backend_name("", backend, **(options or {})) in HF_BACKENDS:
        for model in models:
            if isinstance(model, str | Path):
                check_model_reference(str(model), revision)


def check_model_reference(model: str, revision: str | None = None) -> None:
    """A reference that looks like a local path (``./m``, ``/m``, ``~/m``, ``a/b/m``,
    ``models/m`` where ``models/`` exists here) must exist: it is never sent to the Hub, which
    would retry for long and then blame the Hub. A Hub id is refused quickly when the Hub is
    unreachable and the model is not cached. The embedded model (made on the spot) passes."""
    try:
        model.encode("utf-8")
    except UnicodeEncodeError:  # a byte not UTF-8 on the command line: a lone surrogate
        raise ModelLoadError(
            f"model {model!r}: the name is not valid UTF-8, which transformers cannot read "
            "(it said the folder held no loadable model); rename the folder, or link it under "
            "a UTF-8 name"
        ) from None
    refuse_revision_of_folder(model, revision)
    path = Path(model).expanduser()
    if model == EMBEDDED or path.exists():
        return
    parent = path.parent
    # A Hub id is NAME or ORG/NAME: more than one "/" (or a backslash) can only be a path.
    looks_local = (
        model.startswith((".", "/", "~"))
        or model.count("/") > 1
        or "\\" in model
        or (str(parent) not in ("", ".") and parent.is_dir())
    )
    if looks_local:
        near = ""
        if parent.is_dir():
            folders = sorted(p.name for p in parent.iterdir() if p.is_dir())[:8]
            near = f" ({parent} holds: {', '.join(folders) or 'no folders'})"
        raise ModelLoadError(
            f"model {model!r}: no such folder{near}; pass an existing model folder or a Hub "
            "model id such as ORG/NAME"
        )
    if not hub_offline() and not hub_reachable() and not cached_on_this_machine(model):
        # lazy: huggingface_hub imports only when the Hub is asked
        from huggingface_hub import constants

        raise ModelLoadError(
            f"model {model!r}: the Hugging Face Hub ({constants.ENDPOINT}) cannot be reached "
            "from this machine and the model is not in the local cache; pass a local model "
            "folder, or download the model where the Hub is reachable and run with "
            "HF_HUB_OFFLINE=1 to use the cache"
        )


def hub_offline() -> bool:
    # lazy: huggingface_hub imports only when the Hub is asked
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


@lru_cache(maxsize=1)
def hub_reachable(timeout: float = 3.0) -> bool:
    """One quick TCP connection to the Hub's host (once per process)."""
    # lazy: huggingface_hub imports only when the Hub is asked
    from huggingface_hub import constants

    parsed = urllib.parse.urlparse(constants.ENDPOINT)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def cached_on_this_machine(model: str) -> bool:
    # lazy: huggingface_hub imports only when the Hub is asked
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(model, "config.json"), str)
    except Exception:  # an id the cache cannot even parse is not cached
        return False


_file_hashes: dict[tuple[str, tuple[int, ...]], str] = {}
#: a folder's hash (:func:`folder_fingerprint`) -> the hash of its weight files alone, both
#: taken from one listing of the folder, so each names the same files
_weight_hashes: dict[str, str] = {}
#: The files of a model folder that hold its weights (shards too), by suffix: a README, a
#: config, a tokenizer or nnd-suites' marker beside them leave the weights the same.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf")
#: Files with a weight suffix that hold no weights: the Trainer's arguments, saved beside them.
NOT_WEIGHTS = frozenset({"training_args.bin"})


def folder_fingerprint(folder: Path) -> str:
    """sha256 over the names and contents of a model folder's files (weights, config, tokenizer).
    Memoised per path and :func:`file_stamp` (size, times, inode) within the process. The hash of
    its weight files alone is kept for :func:`weight_files`, from the same files' hashes."""
    digest, weights = hashlib.sha256(), list[bytes]()
    for path in sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")):
        stat = path.stat()
        memo = (str(path.resolve()), tuple(file_stamp(stat).values()))
        if memo not in _file_hashes:
            with path.open("rb") as handle:
                _file_hashes[memo] = hashlib.file_digest(handle, "sha256").hexdigest()
        line = f"{path.name}\0{_file_hashes[memo]}\n".encode()
        digest.update(line)
        if path.suffix in WEIGHT_SUFFIXES and path.name not in NOT_WEIGHTS:
            weights.append(line)
    if weights:
        _weight_hashes[digest.hexdigest()] = hashlib.sha256(b"".join(weights)).hexdigest()
    return digest.hexdigest()


def weight_files(revision: str) -> dict[str, str]:
    """``{WEIGHT_FILES: "sha256:..."}``: the weight files alone (:data:`WEIGHT_SUFFIXES`) of the
    local folder whose files hash to ``revision`` (:func:`model_revision`), for its report:
    ``place`` knows a system's model by them, whatever else its folder holds. Empty for a Hub
    commit or a folder with no weight file. Not part of the identity: the score cache's scope
    stays the whole folder's hash."""
    found = _weight_hashes.get(revision.removeprefix("sha256:"))
    return {} if found is None else {WEIGHT_FILES: f"sha256:{found}"}


def check_unchanged(model: str, identified: str) -> None:
    """A local folder's files must still be those its identity hashed (``identified``, taken
    when the backend was made): weights load on first use, so a folder rewritten in between (a
    new checkpoint saved over it) would be scored, and its scores filed in the score cache and
    the report, under the hash of the files it replaced."""
    path = Path(model)
    if not identified.startswith("sha256:") or not path.is_dir():
        return  # a Hub commit names files that never change
    now = "sha256:" + folder_fingerprint(path)
    if now != identified:
        raise ModelLoadError(
            f"model folder {model!r} changed after it was identified (its files hashed "
            f"{identified[:19]}..., now {now[:19]}...): its new files would be scored under the "
            "old ones' identity. Load the model again (a new run, or load_backend again) once "
            "the folder is written"
        )


def refuse_revision_of_folder(model: str, revision: str | None) -> None:
    """A revision names a branch, tag or commit of a Hub repository: given with a local folder it
    would be ignored while the run seemed to honour it, so it is a usage error."""
    if revision is not None and (model == EMBEDDED or Path(model).expanduser().is_dir()):
        raise NNDError(
            f"model {model!r} is a local folder, and revision {revision!r} names a Hub revision "
            "(branch, tag or commit): a folder has none. Drop the revision (--revision) to "
            "score the folder, or pass the model's Hub id to score that revision"
        )


def model_revision(model: str, revision: str | None) -> str:
    """A local folder's content hash, or the commit a Hub id resolves to (from the local cache
    when offline). A revision given with a local folder is refused."""
    refuse_revision_of_folder(model, revision)
    path = Path(model)
    if path.is_dir():
        return "sha256:" + folder_fingerprint(path)
    # lazy: huggingface_hub imports only when the Hub is asked
    from huggingface_hub import hf_hub_download

    try:
        config_path = hf_hub_download(model, "config.json", revision=revision)
    except Exception as exc:
        raise load_error(model, exc) from exc
    found = re.search(r"snapshots[/\\]([0-9a-f]{40})[/\\]", str(config_path))
    return found.group(1) if found else (revision or "unknown")


def load_tokenizer(model: str, revision: str | None = None, trust_remote_code: bool = False):
    """The model's tokenizer, refused when it encodes ordinary text to (almost) nothing: a model
    folder without its tokenizer files gets a placeholder tokenizer that ties every test. The
    embedded model's name is its folder; a revision given with a local folder, a missing folder
    or a Hub id that cannot be fetched is refused at once (:func:`check_model_reference`)."""
    # lazy: transformers loads with a model only (`import nnd_suites` stays torch-free)
    from transformers import AutoTokenizer

    model = embedded_or(model)
    check_model_reference(model, revision)
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            model, revision=revision, trust_remote_code=trust_remote_code
        )
    except Exception as exc:
        raise load_error(model, exc) from exc
    sample = "The committee approved the new budget on Tuesday afternoon."
    ids = tokenizer(sample, add_special_tokens=False)["input_ids"]
    if len(ids) < 3 or len(set(ids)) < 2:
        raise ModelLoadError(
            f"model {model!r}: its tokenizer encodes ordinary text to {len(ids)} token(s) "
            f"({len(set(ids))} distinct), so every candidate would get the same score; the "
            "folder probably lacks its tokenizer files (tokenizer.json, vocab/merges): save "
            "them with tokenizer.save_pretrained(folder)"
        )
    return tokenizer


def config_window(config) -> int | None:
    for name in WINDOW_ATTRIBUTES:
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


@contextlib.contextmanager
def scoring_mode(model: Any) -> Iterator[None]:
    """Eval mode while scoring (no dropout), the caller's mode restored after, even on error."""
    was_training = bool(model.training)
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)
