"""Read back what ``nnd-suites evaluate --out DIR`` wrote: the report and its per-test outcomes."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.outputs import read_outcomes
from nnd_suites.evaluation.report import EvaluationReport


def report_file(path: str | Path) -> Path:
    """``DIR/report.json`` for a run folder, or the path itself when it names a file."""
    path = Path(path)
    found = path / "report.json" if path.is_dir() else path
    if not found.is_file():
        raise NNDError(
            f"{found}: no evaluation report there; give the folder written by "
            "`nnd-suites evaluate --out DIR` (or its report.json)"
        )
    return found


def load_report(path: str | Path) -> EvaluationReport:
    """The report of a saved run, with ``report.outcomes`` read from its outcome files."""
    file = report_file(path)
    try:
        report = EvaluationReport.model_validate_json(file.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise NNDError(
            f"{file}: not an nnd-suites evaluation report ({exc.error_count()} problem(s), "
            f"first: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']})"
        ) from exc
    for name, result in report.suites.items():
        if result.outcomes_file is None:
            raise NNDError(
                f"{file}: suite {name} has no per-test outcomes file; re-run "
                "`nnd-suites evaluate --out DIR` to write them"
            )
        outcomes_path = file.parent / result.outcomes_file
        if not outcomes_path.is_file():
            raise NNDError(
                f"{outcomes_path}: per-test outcomes of suite {name} named by {file} are "
                "missing; copy the whole run folder, or re-run the evaluation"
            )
        outcomes = read_outcomes(outcomes_path)
        if len(outcomes) != result.pairs:
            raise NNDError(
                f"{outcomes_path}: {len(outcomes)} outcomes, but {file} reports {result.pairs} "
                f"tests for suite {name}; the folder mixes two runs: re-run the evaluation"
            )
        report.outcomes[name] = outcomes
    return report
