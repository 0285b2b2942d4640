"""The completion stamp of a tiny model folder: written last, with every file's sha256, so a
folder cut short (a killed build) or damaged later (a truncated model.safetensors) is told from a
whole one, and the embedded model in the cache is remade instead of failing to load."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from nnd_suites import __version__
from nnd_suites.infra.atomic import atomic_write_text
from nnd_suites.infra.output_kinds import register_model
from nnd_suites.infra.reading import sha256_file
from nnd_suites.infra.validation import StrictModel

STAMP_FILE = "tiny_model.json"
#: the output folder's marker (nnd_suites.infra.output_folder), rewritten after the stamp: not
#: hashed
_MARKER_FILE = "nnd-suites-output.json"


class TinyModelStamp(StrictModel):
    """What ``tiny_model.json`` holds: how the model was made and the sha256 of each file."""

    architecture: str = Field(description="gpt2 (causal) or bart (encoder-decoder)")
    seed: int = Field(description="seed of the random weights")
    suites: list[str] = Field(description="the suites whose texts trained the tokenizer")
    nnd_suites_version: str
    files: dict[str, str] = Field(description="file name -> sha256 of every file of the model")


def write_stamp(folder: Path, architecture: str, seed: int, suites: list[str]) -> Path:
    """Stamp ``folder`` once its model and tokenizer are written (the stamp comes last)."""
    files = {
        path.name: sha256_file(path)
        for path in sorted(folder.iterdir())
        if path.is_file() and path.name not in (STAMP_FILE, _MARKER_FILE)
    }
    stamp = TinyModelStamp(
        architecture=architecture,
        seed=seed,
        suites=suites,
        nnd_suites_version=__version__,
        files=files,
    )
    atomic_write_text(folder / STAMP_FILE, stamp.model_dump_json(indent=2) + "\n")
    return folder / STAMP_FILE


def random_weights(model: str) -> bool:
    """Whether ``model`` is a folder this package stamped: a tiny model with random weights
    (the embedded one, or ``python -m nnd_suites.evaluation.tiny OUT``'s), whose figures are a
    pipeline check and must say so wherever its name is shown."""
    try:
        return (Path(model).expanduser() / STAMP_FILE).is_file()
    except (OSError, ValueError):  # a Hub id or a name no folder can have
        return False


def stamp_problem(folder: Path) -> str | None:
    """Why ``folder`` is not a whole stamped tiny model (None when it is)."""
    path = folder / STAMP_FILE
    if not path.is_file():
        return f"no {STAMP_FILE} (the build did not finish, or an older version made it)"
    try:
        stamp = TinyModelStamp.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        return f"{STAMP_FILE} is unreadable ({type(exc).__name__})"
    for name, digest in stamp.files.items():
        file = folder / name
        if Path(name).name != name or not file.is_file():
            return f"{name} is missing"
        if sha256_file(file) != digest:
            return f"{name} is not the file that was written (damaged or replaced)"
    return None


register_model("tiny-model", TinyModelStamp)
