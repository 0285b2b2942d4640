"""The kinds of folder nnd-suites writes: each kind's name, main file, shipped JSON Schema file
and, for folders published without a marker (suites, export configs), the reader that recognises
one. The models each file holds live in the layers that write them: a kind's reader is registered
by its owner (:func:`register_reader`), and the report kinds' models and schemas are listed by
:mod:`nnd_suites.evaluation.report_schemas`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from nnd_suites.errors import NNDError

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class OutputKind:
    """A kind of output folder: its main file, and how an unmarked one is recognised."""

    name: str
    title: str  # for messages: "an evaluation report"
    main_file: str
    schema_file: str | None = None  # the shipped copy in nnd_suites/schemas/
    marked: bool = True  # suites and export configs are published as they are: no marker
    #: unmarked kinds: the names their writer puts in the folder (fnmatch patterns)
    layout: tuple[str, ...] = ()
    #: unmarked kinds: reads a folder, raising if it is not one of this kind (registered)
    readers: list[Callable[[Path], object]] = field(default_factory=list, compare=False)

    def reader(self) -> Callable[[Path], object]:
        if not self.readers:  # its owner registers it when imported: a wiring error
            raise NNDError(f"no reader registered for output kind {self.name!r}")
        return self.readers[-1]


def register_reader(kind: str, reader: Callable[[Path], object]) -> None:
    """How a folder of ``kind`` without a marker is recognised: ``reader(folder)`` raises
    (ValueError, OSError or NNDError) if the folder is not one."""
    kind_of(kind).readers.append(reader)


def register_model(kind: str, model: type[BaseModel]) -> None:
    """A folder of ``kind`` without a marker is one if its main file parses with ``model``."""
    main_file = kind_of(kind).main_file
    register_reader(
        kind, lambda folder: model.model_validate_json((folder / main_file).read_bytes())
    )


#: what Suite.save writes (nnd_suites/suite/storage.py), and the pairs file of older suites
_SUITE_LAYOUT = ("manifest.json", "candidates.parquet", "pairs.parquet", "*-of-*.parquet")
KINDS: dict[str, OutputKind] = {
    kind.name: kind
    for kind in [
        OutputKind("suite", "a suite", "manifest.json", None, False, _SUITE_LAYOUT),
        OutputKind(
            "export-config", "an exported suite config", "manifest.json", None, False, _SUITE_LAYOUT
        ),
        OutputKind(
            "report", "an evaluation report", "report.json", "evaluation_report.schema.json"
        ),
        OutputKind("leaderboard", "a leaderboard", "leaderboard.json", "leaderboard.schema.json"),
        OutputKind(
            "comparison", "a comparison report", "comparison.json", "comparison.schema.json"
        ),
        OutputKind("verify", "a verify report", "verify.json", "verify.schema.json"),
        OutputKind("placement", "a placement report", "placement.json", "placement.schema.json"),
        OutputKind(
            "robustness", "a robustness report", "robustness.json", "robustness.schema.json"
        ),
        # a tiny random model (python -m nnd_suites.evaluation.tiny); its stamp has no schema
        OutputKind("tiny-model", "a tiny random model", "tiny_model.json"),
        # an lm-evaluation-harness task folder (nnd-suites export-lm-eval); no shipped schema
        OutputKind("lm-eval-task", "an lm-eval task folder", "nnd_lm_eval.json"),
    ]
}


def kind_of(name: str) -> OutputKind:
    try:
        return KINDS[name]
    except KeyError:
        raise NNDError(f"no output kind {name!r} (known: {', '.join(KINDS)})") from None


def model_schema(model: type[BaseModel]) -> dict:
    """The JSON Schema of an output's model, as it is written beside the output and shipped in
    nnd_suites/schemas/."""
    schema = model.model_json_schema(mode="serialization")
    schema["$schema"] = JSON_SCHEMA_DIALECT
    return schema
