"""The leaderboard of several models' reports on the same suites: its data and how it is
computed (the runs must have been scored the same way on the same tests)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr

from nnd_suites import __version__
from nnd_suites.errors import NNDError
from nnd_suites.evaluation.baselines import BaselineRates
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.evaluation.run_differences import scoring_differences
from nnd_suites.evaluation.sensitivity import Sensitivity
from nnd_suites.evaluation.task_grouping import TaskGrouping
from nnd_suites.human.agreement import AgreementCeiling
from nnd_suites.infra.output_kinds import register_model
from nnd_suites.infra.validation import StrictModel
from nnd_suites.records.margins import MarginKind
from nnd_suites.statistics.outcomes import Rate, outcome_map, rate, rated_by_all, rows_of

TIE_RULE = "a tie is not a pass"
#: the row (leaderboard.png) and column (leaderboard.md) of each model's rate on the tests every
#: model rated, which ranks the models when they rated different tests
COMMON_ROW = "overall, rated by every model"


class LeaderboardModel(StrictModel):
    label: str = Field(description="column name and the model's report sub-folder")
    model: str
    mode: str
    parameters: int | None = None
    architecture: str | None = None
    random_weights: bool | None = Field(
        None,
        description="the model is a tiny one with random weights: a pipeline check (as its run's "
        "report records; null: written before this field, its name and folder decide)",
    )


class MarginBandRates(StrictModel):
    """One human margin band of a suite (the same tests for every model) and each model's rate."""

    label: str
    low: float | None = Field(description="the smallest margin in the band (null: no margin)")
    high: float | None = Field(description="the largest margin in the band (null: no margin)")
    rates: dict[str, Rate] = Field(description="model label -> pass rate in the band")


class LeaderboardMargins(StrictModel):
    """Pass rates by human margin band, models side by side (see ``agreement.margin_strata``)."""

    kind: MarginKind | None
    rule: str
    bands: list[MarginBandRates] = Field(description="in order of margin, 'no margin' last")


class SuiteRanking(StrictModel):
    """How a suite's table is ordered when the models rated different tests (a model skipped
    tests whose candidate did not fit its window): by each model's pass rate on the tests every
    model rated, the same tests ``compare`` pairs (:func:`rated_by_all`), not by each model's
    own rate over its own tests."""

    tests: int = Field(ge=0, description="the tests every model rated: the ranking's n")
    left_out: int = Field(
        ge=0, description="tests some model rated but not every model: left out of the ranking"
    )
    skipped: dict[str, int] = Field(
        description="model label -> the tests it skipped (a candidate did not fit its window)"
    )
    rates: dict[str, Rate] = Field(
        description="model label -> pass rate on the tests every model rated, in model order"
    )
    order: list[str] = Field(description="the model labels, best first on those tests")


class Leaderboard(StrictModel):
    """Pass rates of several models on the same suites, and what bias baselines achieve."""

    nnd_suites_version: str
    created: str
    models: list[LeaderboardModel]
    family: bool = Field(
        description="the models share one architecture and their (known) parameter counts "
        "span at least a factor 1.5: scaling.png plots pass rate against size"
    )
    suites: dict[str, dict[str, dict[str, Rate]]] = Field(
        description="suite -> row (overall, then each category) -> model label -> rate"
    )
    baselines: dict[str, dict[str, dict[str, float | None]]] = Field(
        description="suite -> bias baseline -> row (overall, then each category) -> pass rate, "
        "on the tests every model rated (a model's own report counts the tests it rated)"
    )
    baseline_tests: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="suite -> row (overall, then each category) -> the tests the baselines "
        "count: those every model rated",
    )
    agreement: dict[str, dict[str, AgreementCeiling]] = Field(
        default_factory=dict,
        description="suite -> model label -> the raters' agreement ceiling on the tests that "
        "model rated, its pass rate there and the paired difference (suites with tests of >= 2 "
        "votes only)",
    )
    by_margin: dict[str, LeaderboardMargins] = Field(
        default_factory=dict,
        description="suite -> pass rates by human margin band (suites with margins only)",
    )
    ranking: dict[str, SuiteRanking] = Field(
        default_factory=dict,
        description="suite -> its ranking on the tests every model rated, for the suites whose "
        "models rated different tests (absent: every model rated the same tests, and the "
        "table ranks by each model's overall rate)",
    )
    scorer: str | None = Field(
        None,
        description="the scorer of every rate (the first --scorer; null: written before this "
        "field)",
    )
    sensitivity: dict[str, dict[str, Sensitivity]] = Field(
        default_factory=dict,
        description="suite -> model label -> the model's rates under each --scorer and its "
        "verdict flips against the first (several --scorer only: every other figure of the "
        "leaderboard is the first scorer's)",
    )
    limit: int | float | None = None
    by_task: TaskGrouping | None = Field(
        None,
        description="the suites by task type, and the catalogue suites not evaluated with why, "
        "when they come from the catalogue (--suite catalogue or a build --catalogue folder)",
    )
    _reports: list[EvaluationReport] = PrivateAttr(default_factory=list)

    @property
    def reports(self) -> list[EvaluationReport]:
        """Each model's full report, in the order of ``models``."""
        return self._reports

    def summary(self) -> dict[str, Any]:
        """The leaderboard and each model's report summary, by label (``evaluate --json``)."""
        reports = zip(self.models, self.reports, strict=True)
        return {
            "leaderboard": self.model_dump(mode="json"),
            "reports": {model.label: report.summary() for model, report in reports},
        }


def model_labels(models: Sequence[str]) -> list[str]:
    """A short, file-safe, distinct label per model: a local folder's name, a local file's stem
    (a GGUF: ``tiny-f32``), a Hub id with ``/`` as ``__``; local models that share a name are told
    apart by their parent folder (``runs__tiny``, ``copy__tiny``); what still repeats gets
    ``_2``, ``_3``..."""

    def safe(text: str) -> str:
        return re.sub(r"[^\w.+-]", "_", text).strip(".") or "model"

    paths = [Path(model) for model in models]
    bases = [
        safe(p.name) if p.is_dir() else safe(p.stem) if p.is_file() else safe(m.replace("/", "__"))
        for p, m in zip(paths, map(str, models), strict=True)
    ]
    labels: list[str] = []
    for path, base in zip(paths, bases, strict=True):
        local = path.is_dir() or path.is_file()
        if bases.count(base) > 1 and local and path.resolve().parent.name:
            base = f"{safe(path.resolve().parent.name)}__{base}"
        label, number = base, 1
        while label in labels:
            number += 1
            label = f"{base}_{number}"
        labels.append(label)
    return labels


#: the smallest ratio of the largest to the smallest parameter count that makes a scaling curve
#: (checkpoints of about one size are not a family: their differences are not an effect of size)
FAMILY_SIZE_RATIO = 1.5


def is_family(models: Sequence[LeaderboardModel]) -> bool:
    """One architecture, every size known, the largest at least ``FAMILY_SIZE_RATIO`` times the
    smallest."""
    sizes = {m.parameters for m in models}
    kinds = {m.architecture for m in models}
    if None in sizes or len(kinds) != 1 or None in kinds or len(sizes) < 2:
        return False
    known = [s for s in sizes if s is not None]
    return max(known) >= FAMILY_SIZE_RATIO * min(known)


def leaderboard(
    reports: Sequence[EvaluationReport], labels: Sequence[str] | None = None
) -> Leaderboard:
    """The leaderboard of reports over the same suites (each model's report is kept)."""
    if not reports:
        raise NNDError("a leaderboard needs at least one report")
    labels = list(labels) if labels is not None else model_labels([r.model for r in reports])
    suites = list(reports[0].suites)
    for label, report in zip(labels, reports, strict=True):
        if list(report.suites) != suites:
            raise NNDError(
                f"{label}: scored suites {list(report.suites)}, not {suites}; a leaderboard "
                "compares models on the same suites"
            )
        differences = scoring_differences(reports[0], report, suites)
        if differences:
            raise NNDError(
                f"{label} was scored differently from {labels[0]}: "
                + "; ".join(differences)
                + "; a leaderboard ranks models scored the same way on the same tests"
            )
    models = [
        LeaderboardModel(
            label=label,
            model=r.model,
            mode=r.mode,
            parameters=r.parameters,
            architecture=r.architecture,
            random_weights=r.random_weights,
        )
        for label, r in zip(labels, reports, strict=True)
    ]
    runs = {name: [outcome_map(report.outcomes[name]) for report in reports] for name in suites}
    shared = {name: reports[0].suites[name].baselines_with(found) for name, found in runs.items()}
    baselines = {name: baseline_pass_rates(found) for name, found in shared.items()}
    # every baseline counts the same tests: the first one's sizes stand for all of them
    baseline_tests = {
        name: {row: r.n for row, r in rows_of(first.overall, first.by_category).items()}
        for name, found in shared.items()
        if (first := next(iter(found.values()), None)) is not None
    }
    board = Leaderboard(
        nnd_suites_version=__version__,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        models=models,
        family=is_family(models),
        suites=leaderboard_rates(reports, labels),
        baselines=baselines,
        baseline_tests=baseline_tests,
        agreement=leaderboard_agreement(reports, labels),
        by_margin=leaderboard_margins(reports, labels),
        ranking={
            name: ranked
            for name, found in runs.items()
            if (ranked := suite_ranking(found, labels)) is not None
        },
        scorer=reports[0].scorer,  # the same for all: scoring_differences
        sensitivity=_sensitivity(reports, labels, suites),
        limit=reports[0].limit,
        by_task=reports[0].by_task,
    )
    board._reports = list(reports)
    return board


def _sensitivity(
    reports: Sequence[EvaluationReport], labels: Sequence[str], suites: Sequence[str]
) -> dict[str, dict[str, Sensitivity]]:
    """Suite -> model label -> its run under every --scorer (the suites runs have it for)."""
    found: dict[str, dict[str, Sensitivity]] = {}
    for name in suites:
        for label, report in zip(labels, reports, strict=True):
            if name in report.sensitivity:
                found.setdefault(name, {})[label] = report.sensitivity[name]
    return found


def baseline_pass_rates(
    baselines: dict[str, BaselineRates],
) -> dict[str, dict[str, float | None]]:
    """Bias baseline -> row (``overall``, then each category) -> pass rate: a leaderboard's
    ``baselines`` entry for one suite, and what its charts mark."""
    return {
        baseline: {
            row: rate.pass_rate
            for row, rate in rows_of(figures.overall, figures.by_category).items()
        }
        for baseline, figures in baselines.items()
    }


def suite_ranking(runs: Sequence[Mapping[str, str]], labels: Sequence[str]) -> SuiteRanking | None:
    """The ranking of one suite's models (``runs``: each model's test id -> outcome) on the tests
    every model rated, or None when every model rated the same tests: each model's own rate then
    counts those very tests, and ranks them."""
    rated = [set(rated_by_all(run)) for run in runs]
    if all(tests == rated[0] for tests in rated):
        return None
    common = rated_by_all(*runs)
    rates = {
        label: rate(run[pair_id] for pair_id in common)
        for label, run in zip(labels, runs, strict=True)
    }
    return SuiteRanking(
        tests=len(common),
        left_out=len(set().union(*rated)) - len(common),
        skipped={
            label: sum(outcome == "skipped" for outcome in run.values())
            for label, run in zip(labels, runs, strict=True)
        },
        rates=rates,
        order=sorted(labels, key=lambda label: -(rates[label].pass_rate or 0.0)),
    )


def leaderboard_rates(
    reports: Sequence[EvaluationReport], labels: Sequence[str] | None = None
) -> dict[str, dict[str, dict[str, Rate]]]:
    """suite -> row (``overall`` then each category) -> model label -> rate, over all reports.

    Labels default to the models' names, numbered when the same model appears twice."""
    if labels is None:
        labels, seen = [], {}
        for report in reports:
            seen[report.model] = seen.get(report.model, 0) + 1
            number = seen[report.model]
            labels.append(report.model if number == 1 else f"{report.model} #{number}")
    if len(labels) != len(reports):
        raise NNDError(f"{len(labels)} label(s) for {len(reports)} report(s)")
    table: dict[str, dict[str, dict[str, Rate]]] = {}
    for label, report in zip(labels, reports, strict=True):
        for name, result in report.suites.items():
            rows = table.setdefault(name, {})
            for row, found in rows_of(result.overall, result.by_category).items():
                rows.setdefault(row, {})[label] = found
    return table


def leaderboard_agreement(
    reports: Sequence[EvaluationReport], labels: Sequence[str]
) -> dict[str, dict[str, AgreementCeiling]]:
    """suite -> model label -> its report's agreement ceiling (each on the tests that model
    rated, so models that rated the same tests share one ceiling)."""
    table: dict[str, dict[str, AgreementCeiling]] = {}
    for label, report in zip(labels, reports, strict=True):
        for name, result in report.suites.items():
            if result.agreement_ceiling is not None:
                table.setdefault(name, {})[label] = result.agreement_ceiling
    return table


def leaderboard_margins(
    reports: Sequence[EvaluationReport], labels: Sequence[str]
) -> dict[str, LeaderboardMargins]:
    """suite -> its margin bands with every model's rate; the bands are cut from the suite's
    margins, which no model changes, so every report of a suite has the same bands."""
    table: dict[str, LeaderboardMargins] = {}
    for label, report in zip(labels, reports, strict=True):
        for name, result in report.suites.items():
            strata = result.by_margin
            if strata is None:
                continue
            found = table.setdefault(
                name,
                LeaderboardMargins(
                    kind=strata.kind,
                    rule=strata.rule,
                    bands=[
                        MarginBandRates(label=b.label, low=b.low, high=b.high, rates={})
                        for b in strata.bands
                    ],
                ),
            )
            if [b.label for b in found.bands] != [b.label for b in strata.bands]:
                raise NNDError(
                    f"{label}: suite {name} has margin bands {[b.label for b in strata.bands]}, "
                    f"another model's report {[b.label for b in found.bands]}; the reports "
                    "were made from different builds of the suite"
                )
            for column, band in zip(found.bands, strata.bands, strict=True):
                column.rates[label] = band.rate
    return table


register_model("leaderboard", Leaderboard)
