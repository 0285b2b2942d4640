"""The typed results of verification (verify.json) and placement (placement.json)."""

from __future__ import annotations

import hashlib
from typing import Annotated

from pydantic import ConfigDict, Field, field_validator

from nnd_suites.evaluation.limits import RecordedLimit, SuiteLimit
from nnd_suites.human.scores import CategoryKind
from nnd_suites.infra.output_kinds import register_model
from nnd_suites.infra.validation import StrictModel
from nnd_suites.statistics.outcomes import Outcome

# strict: an edited `true` is refused, not read as 1.0 (or 1)
Number = Annotated[float, Field(strict=True)]  # a human score
Share = Annotated[float, Field(ge=0, le=1, strict=True)]  # a pass rate
Coefficient = Annotated[float, Field(ge=-1, le=1, strict=True)]  # a correlation


def low_then_high(bounds: tuple[float, float] | None) -> tuple[float, float] | None:
    """An interval or range as [lowest, highest] (an edited one turned over is refused)."""
    if bounds is not None and bounds[0] > bounds[1]:
        raise ValueError("must be [lowest, highest]: its low end lies above its high end")
    return bounds


class Correlation(StrictModel):
    """Pass rates against human scores over one set of tests (the suite, or one category)."""

    model_config = ConfigDict(allow_inf_nan=False)  # an edited NaN score would place as null

    tests: int = Field(
        ge=1, strict=True, description="tests every system scored (no degenerate or skipped test)"
    )
    systems: int = Field(ge=2, strict=True)
    pass_rates: dict[str, Share]
    human_scores: dict[str, Number]
    kendall_tau: Coefficient | None = Field(description="Kendall's tau-b; null when undefined")
    kendall_tau_ci: tuple[Coefficient, Coefficient] | None
    gap_pearson: Coefficient | None = Field(
        description="Pearson r between the n(n-1)/2 pairwise gaps in pass rate and in human "
        "score; null when undefined (fewer than 3 systems, constant gaps)"
    )
    gap_pearson_ci: tuple[Coefficient, Coefficient] | None
    undefined_resamples: dict[str, Annotated[int, Field(ge=0, strict=True)]] = Field(
        description="resamples where a correlation was undefined, left out of its interval"
    )
    margin_weighted: Correlation | None = Field(
        None,
        description="the same correlations with each system's pass rate weighted by the tests' "
        "human margins (see VerifyReport.margins); its tests: those with a weight; null: the "
        "suite's margins give no weight",
    )

    _low_then_high = field_validator("kendall_tau_ci", "gap_pearson_ci")(low_then_high)


class VerifyReport(StrictModel):
    """What ``nnd-suites verify`` writes as verify.json."""

    model_config = ConfigDict(allow_inf_nan=False)

    nnd_suites_version: str
    created: str
    suite: str
    content_hash: str
    measure: str = Field(description="what the human score is (from the quality map)")
    score_range: tuple[Number, Number] | None = Field(
        None, description="the range every human score lies in (see `systems --json`)"
    )
    systems: dict[str, str] = Field(
        min_length=2, description="annotated system -> model scored for it (a fit needs two)"
    )
    limit: RecordedLimit = Field(
        None, description="only the first N context groups (or that fraction of them) were scored"
    )
    limited: SuiteLimit | None = Field(
        None,
        description="--limit left tests out: the whole suite's test count and the categories "
        "left with no test (null: scored whole)",
    )
    mode: str | None = Field(
        None, description="scoring mode of every system's model (null: written before 0.2)"
    )
    template: str | None = Field(
        None, description="the context template every model was scored with (null: before 0.2)"
    )
    scorer: str = Field(
        "mean", description="how each test's two candidates were compared (see `evaluate`)"
    )
    resamples: int = Field(ge=1, strict=True)
    seed: int = Field(ge=0, strict=True)
    confidence: Number = Field(gt=0, lt=1, description="the level of every interval (0.95)")
    note: str = Field(description="how much the number of systems lets one conclude")
    overall: Correlation
    by_category: dict[str, Correlation]
    category_kinds: dict[str, CategoryKind] = Field(description="error or context (see `systems`)")
    categories_left_out: dict[str, str] = Field(
        default_factory=dict, description="category -> why it has no correlation"
    )
    margins: str | None = Field(
        None,
        description="how the tests' human margins entered (the weight of a test), or why they "
        "did not; null: written before margins",
    )
    outcomes: dict[str, dict[str, Outcome]] | None = Field(
        None,
        description="system -> test id -> its model's outcome: what `place` refits on the tests "
        "a new model rated (null: written before this field)",
    )
    random_weights: bool | None = Field(
        None,
        description="a system's model was a tiny one with random weights, as its run recorded: "
        "the figures are a pipeline check (null: written before this field; the systems' names "
        "and folders decide)",
    )
    system_models: dict[str, dict[str, str]] | None = Field(
        None,
        description="system -> its model's weights by content (a folder's file hash and its "
        "weight files' hash, a Hub commit or a GGUF file's hash, else where it was found): "
        "`place` refuses a model that shares one of these values with a system's (null: "
        "written before this field)",
    )

    figures_digest: str | None = Field(
        None,
        description="sha256 of every other field but `created`, as verify wrote them: "
        "`place` refuses a file whose figures were changed after (null: not written by verify)",
    )

    _low_then_high = field_validator("score_range")(low_then_high)


def figures_digest(report: VerifyReport) -> str:
    """The digest of what ``report`` holds, as JSON, but when it was made and this digest (two
    runs that found the same figures have the same digest)."""
    text = report.model_dump_json(exclude={"created", "figures_digest"})
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def sealed(report: VerifyReport) -> VerifyReport:
    """``report`` with the digest of the figures it holds now, as verify writes it."""
    report.figures_digest = figures_digest(report)
    return report


class PlacedScore(StrictModel):
    pass_rate: float
    predicted_human_score: float
    prediction_interval: tuple[float, float] | None = Field(
        description="prediction interval of the fit (t distribution); null with 2 systems"
    )
    r_squared: float
    systems: int
    poor_fit: bool
    reason: str | None = Field(description="why the fit is flagged poor, if it is")
    extrapolated: bool = Field(
        description="the pass rate lies outside the annotated systems' range: the prediction "
        "extends the fitted line beyond what was observed"
    )
    clipped: bool = Field(
        False,
        description="the prediction or its interval reached beyond the range a human score can "
        "take and was cut to it",
    )


class PlacementReport(StrictModel):
    model: str
    random_weights: bool = Field(
        False,
        description="the new model is a tiny one with random weights, as its run's report "
        "records: the placement is a pipeline check",
    )
    suite: str
    measure: str
    confidence: float
    tests: int | None = Field(
        None,
        description="tests the placement compares on: those every annotated system's model and "
        "the new model rated (null: written before this field)",
    )
    system_pass_rates: dict[str, float] | None = Field(
        None,
        description="each annotated system's pass rate on those tests: the points of the "
        "overall fit (null: written before this field)",
    )
    not_rated: int = Field(
        0,
        ge=0,
        description="tests of the verify run's fit the new model did not rate (skipped: a "
        "candidate too long for its window): left out of the systems' pass rates too, the "
        "line refitted without them",
    )
    overall: PlacedScore
    by_category: dict[str, PlacedScore]
    skipped: dict[str, str] = Field(description="category -> why it could not be placed")


register_model("verify", VerifyReport)
register_model("placement", PlacementReport)
