"""The kinds of folder nnd-suites writes: each kind's main file, the pydantic model it holds, and
its shipped JSON Schema (the one table the `schema` command and the staleness test read)."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from nnd_suites.errors import NNDError
from nnd_suites.io import atomic_write_text

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class OutputKind:
    """A kind of output folder: its main file and the pydantic model that file holds."""

    name: str
    title: str  # for messages: "an evaluation report"
    main_file: str
    model_path: str  # "module:Class", imported only when needed (keeps `nnd-suites list` fast)
    schema_file: str | None = None  # the shipped copy in nnd_suites/schemas/
    marked: bool = True  # suites and export configs are published as they are: no marker
    #: unmarked kinds: the names their writer puts in the folder (fnmatch patterns)
    layout: tuple[str, ...] = ()

    def model(self) -> type[BaseModel]:
        module, _, name = self.model_path.partition(":")
        return getattr(importlib.import_module(module), name)

    def schema(self) -> dict:
        schema = self.model().model_json_schema(mode="serialization")
        schema["$schema"] = JSON_SCHEMA_DIALECT
        return schema


_REPORT = "nnd_suites.evaluation"
#: what Suite.save writes (nnd_suites/suite/storage.py), and the pairs file of older suites
_SUITE_LAYOUT = ("manifest.json", "candidates.parquet", "pairs.parquet", "*-of-*.parquet")
KINDS: dict[str, OutputKind] = {
    kind.name: kind
    for kind in [
        OutputKind(
            "suite",
            "a suite",
            "manifest.json",
            "nnd_suites.suite:SuiteManifest",
            None,
            False,
            _SUITE_LAYOUT,
        ),
        OutputKind(
            "export-config",
            "an exported suite config",
            "manifest.json",
            "nnd_suites.suite:SuiteManifest",
            None,
            False,
            _SUITE_LAYOUT,
        ),
        OutputKind(
            "report",
            "an evaluation report",
            "report.json",
            f"{_REPORT}.report:EvaluationReport",
            "evaluation_report.schema.json",
        ),
        OutputKind(
            "leaderboard",
            "a leaderboard",
            "leaderboard.json",
            f"{_REPORT}.multi:Leaderboard",
            "leaderboard.schema.json",
        ),
        OutputKind(
            "comparison",
            "a comparison report",
            "comparison.json",
            f"{_REPORT}.comparison.paired:Comparison",
            "comparison.schema.json",
        ),
        OutputKind(
            "verify",
            "a verify report",
            "verify.json",
            f"{_REPORT}.verify.run:VerifyReport",
            "verify.schema.json",
        ),
        OutputKind(
            "placement",
            "a placement report",
            "placement.json",
            f"{_REPORT}.verify.place:PlacementReport",
            "placement.schema.json",
        ),
        OutputKind(
            "robustness",
            "a robustness report",
            "robustness.json",
            f"{_REPORT}.robustness.report:RobustnessReport",
            "robustness.schema.json",
        ),
        # a tiny random model (python -m nnd_suites.evaluation.tiny); its stamp has no
        # shipped schema
        OutputKind(
            "tiny-model",
            "a tiny random model",
            "tiny_model.json",
            "nnd_suites.evaluation.tiny.stamp:TinyModelStamp",
        ),
        # an lm-evaluation-harness task folder (nnd-suites export-lm-eval); no shipped schema
        OutputKind(
            "lm-eval-task",
            "an lm-eval task folder",
            "nnd_lm_eval.json",
            "nnd_suites.hub.lm_eval_task:LmEvalExport",
        ),
    ]
}


def kind_of(name: str) -> OutputKind:
    try:
        return KINDS[name]
    except KeyError:
        raise NNDError(f"no output kind {name!r} (known: {', '.join(KINDS)})") from None


def report_schemas() -> dict[str, dict]:
    """Shipped file name -> JSON Schema of every report kind: the one table that the `schema`
    command writes and the staleness test compares with nnd_suites/schemas/."""
    return {kind.schema_file: kind.schema() for kind in KINDS.values() if kind.schema_file}


def export_report_schemas(folder: str | Path) -> list[Path]:
    written = []
    for name, schema in report_schemas().items():
        atomic_write_text(Path(folder) / name, json.dumps(schema, indent=2) + "\n")
        written.append(Path(folder) / name)
    return written
