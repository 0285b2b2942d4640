"""The robustness report's data: one cell per (suite, transformation), and the cell's
computation from paired tests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, Field, model_validator

from nnd_suites.evaluation.limits import KeptTests, SuiteLimit
from nnd_suites.evaluation.robustness.stats import PairedTest, compare_to_parent
from nnd_suites.infra.output_kinds import register_model
from nnd_suites.infra.validation import StrictModel
from nnd_suites.statistics.outcomes import Rate
from nnd_suites.statistics.paired import PairedResult, holm

if TYPE_CHECKING:
    from nnd_suites.evaluation.report import EvaluationReport, SuiteResult

ALPHA = 0.05
#: a robustness cell: (suite, transformation, category or None for all the suite's tests)
CellKey = tuple[str, str, str | None]
#: the names robustness reports gave the paired fields before they shared compare's record
#: (A transformed, B untouched); older robustness.json files are read through them
OLDER_NAMES = {
    "passed": "passed_a",
    "parent_passed": "passed_b",
    "pass_rate": "pass_rate_a",
    "parent_pass_rate": "pass_rate_b",
    "delta": "difference",
    "delta_ci": "difference_ci",
    "gained": "a_only",
    "lost": "b_only",
}


def renamed_older(data: Any) -> Any:
    """A paired cell of an older robustness report under today's names: ``both`` and
    ``neither`` follow from its counts, its ties were not recorded (null)."""
    if not isinstance(data, dict) or "delta" not in data:
        return data
    new = {OLDER_NAMES.get(key, key): value for key, value in data.items()}
    counts = [new.get(key) for key in ("n", "passed_b", "a_only", "b_only")]
    if all(isinstance(value, int) for value in counts):  # else validation names what is wrong
        n, passed_b, a_only, b_only = counts
        new.setdefault("both", passed_b - b_only)
        new.setdefault("neither", n - (passed_b - b_only) - a_only - b_only)
    return {"ties_a": None, "ties_b": None} | new


PairedCell = Annotated[PairedResult, BeforeValidator(renamed_older)]


class RobustnessCell(PairedResult):
    """A suite under one transformation, compared test by test with the untouched suite."""

    suite: str
    transform: str = Field(description="canonical NAME[:param=value,...]")
    child_suite: str
    changed: int = Field(ge=0, description="tests with a text the transformation changed")
    identical: int = Field(ge=0, description="tests the transformation left as they were")
    kept_unchanged: dict[str, int] | None = Field(
        None,
        description="rewrites the transformation was refused, by reason: a text it would have "
        "emptied is kept as it was, so its test is scored with that text untransformed "
        "(null: written before this field)",
    )
    significant: bool = Field(
        description="p_holm < alpha: the cell's McNemar p after Holm's correction across the "
        "report's suite x transformation cells"
    )
    changed_only: PairedCell = Field(description="the same comparison on changed tests")
    by_category: dict[str, PairedCell]

    @model_validator(mode="before")
    @classmethod
    def _older_names(cls, data: Any) -> Any:
        return renamed_older(data)


class RobustnessReport(StrictModel):
    model: str
    random_weights: bool | None = Field(
        None,
        description="the model is a tiny one with random weights: a pipeline check (as its run's "
        "report records; null: written before this field, its name and folder decide)",
    )
    alpha: float = ALPHA
    suites: dict[str, Rate] = Field(
        description="each suite's untouched pass rate over all its tests (the run's own report)"
    )
    transforms: list[str]
    transform_params: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="each transformation of `transforms` with every parameter, defaults and "
        "seed included (empty in a report written before they were recorded)",
    )
    cells: list[RobustnessCell]
    evaluation: dict[str, Any] = Field(
        default_factory=dict, description="what the evaluator recorded (template, mode, cache)"
    )

    def cell(self, suite: str, transform: str) -> RobustnessCell:
        for cell in self.cells:
            if (cell.suite, cell.transform) == (suite, transform):
                return cell
        raise KeyError((suite, transform))

    def summary(self) -> dict[str, Any]:
        """What ``--json`` prints: the report, cells first-class."""
        return self.model_dump(mode="json")


def evaluation_record(report: EvaluationReport) -> dict[str, Any]:
    """What a robustness report records of the evaluator's report it was computed from (its
    ``evaluation`` field): enough to tell that report from any other run's."""
    return {
        "model": report.model,
        "mode": report.mode,
        "scorer": report.scorer,
        "backend": report.backend,
        "templates": {name: r.template_name for name, r in report.suites.items()},
        "requests": report.requests.model_dump(),
        # the ratio scorer's reference model and its own requests (absent: no reference model)
        **(
            {
                "reference_model": report.reference_model,
                "reference_requests": report.reference_requests.model_dump(),
            }
            if report.reference_requests is not None
            else {}
        ),
        "seconds": report.seconds,
        "limit": report.limit,
        # a limited run: per suite, the tests scored and its limit record (null: scored whole)
        **({"kept": kept_record(report.suites)} if report.limit else {}),
    }


def kept_record(suites: Mapping[str, SuiteResult]) -> dict[str, Any]:
    """Per suite, [tests scored, its limit record or None], as the evaluation record keeps it."""
    return {
        name: [r.pairs, r.limited.model_dump() if r.limited else None] for name, r in suites.items()
    }


def kept_of(report: RobustnessReport) -> KeptTests:
    """The parent suites' tests scored and limit records, read back from the evaluation record."""
    kept = report.evaluation.get("kept", {})
    return {
        name: (kept[name][0], SuiteLimit.model_validate(kept[name][1]) if kept[name][1] else None)
        for name in report.suites
        if name in kept
    }


def computed_from(report: RobustnessReport, evaluation: EvaluationReport) -> bool:
    """Whether ``report`` was computed from ``evaluation``: same model, scoring, limit, requests
    and time, and the same untouched pass rate for every suite of the report."""
    return (
        report.model == evaluation.model
        and _as_json(report.evaluation) == _as_json(evaluation_record(evaluation))
        and all(
            name in evaluation.suites and evaluation.suites[name].overall == rate
            for name, rate in report.suites.items()
        )
    )


def _as_json(value: dict[str, Any]) -> Any:
    """``value`` as JSON reads it back (a report read from robustness.json compares equal)."""
    return json.loads(json.dumps(value, default=str))


def make_cell(
    suite: str,
    transform: str,
    child_suite: str,
    tests: list[PairedTest],
    alpha: float = ALPHA,
    kept_unchanged: Mapping[str, int] | None = None,
) -> RobustnessCell:
    """The cell of ``tests``; ``kept_unchanged``: the child suite's refused rewrites by reason
    (``transformations.apply.refused_rewrites``), None when not known."""
    overall = compare_to_parent(tests)
    categories = sorted({t.category for t in tests})
    changed = sum(t.changed for t in tests)
    return RobustnessCell(
        **overall.model_dump(),
        suite=suite,
        transform=transform,
        child_suite=child_suite,
        changed=changed,
        identical=len(tests) - changed,
        kept_unchanged=None if kept_unchanged is None else dict(kept_unchanged),
        significant=overall.p_value is not None and overall.p_value < alpha,
        changed_only=compare_to_parent(t for t in tests if t.changed),
        by_category={c: compare_to_parent(t for t in tests if t.category == c) for c in categories},
    )


def holm_p_values(report: RobustnessReport) -> dict[CellKey, float | None]:
    """Each cell's exact McNemar p after Holm's correction across its family, as ``compare``
    corrects: the suite x transformation cells together, and each suite's category cells
    (every transformation) together."""
    families: dict[str | None, list[tuple[CellKey, float]]] = {}
    for cell in report.cells:
        if cell.p_value is not None:
            families.setdefault(None, []).append(((cell.suite, cell.transform, None), cell.p_value))
        for category, c in cell.by_category.items():
            if c.p_value is not None:
                key = (cell.suite, cell.transform, category)
                families.setdefault(cell.suite, []).append((key, c.p_value))
    adjusted: dict[CellKey, float | None] = {}
    for members in families.values():
        adjusted |= dict(zip([k for k, _ in members], holm([p for _, p in members]), strict=True))
    return adjusted


def corrected(report: RobustnessReport) -> RobustnessReport:
    """``report`` with every cell's ``p_holm`` and ``significant`` from Holm's correction."""
    adjusted = holm_p_values(report)
    for cell in report.cells:
        cell.p_holm = adjusted.get((cell.suite, cell.transform, None))
        cell.significant = cell.p_holm is not None and cell.p_holm < report.alpha
        for category, c in cell.by_category.items():
            c.p_holm = adjusted.get((cell.suite, cell.transform, category))
    return report


register_model("robustness", RobustnessReport)
