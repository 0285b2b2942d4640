"""The JSON Schema of every report kind, from the pydantic model its main file holds: the one
table that the `schema` command writes and the staleness test compares with nnd_suites/schemas/.
Importing it imports every report model."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from nnd_suites.evaluation.comparison.paired import Comparison
from nnd_suites.evaluation.multi import Leaderboard
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.evaluation.robustness.models import RobustnessReport
from nnd_suites.evaluation.verify.models import PlacementReport, VerifyReport
from nnd_suites.infra.output_file import write_schema_files
from nnd_suites.infra.output_kinds import kind_of, model_schema

#: output kind -> the model of its main file
REPORT_MODELS: dict[str, type[BaseModel]] = {
    "report": EvaluationReport,
    "leaderboard": Leaderboard,
    "comparison": Comparison,
    "verify": VerifyReport,
    "placement": PlacementReport,
    "robustness": RobustnessReport,
}


def report_schemas() -> dict[str, dict]:
    """Shipped file name -> JSON Schema of every report kind."""
    return {kind_of(kind).schema_file: model_schema(model) for kind, model in REPORT_MODELS.items()}


def export_report_schemas(folder: str | Path) -> list[Path]:
    return write_schema_files(folder, report_schemas())
