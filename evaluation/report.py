"""Per-test outcomes, pass rates with Wilson 95% intervals, and the typed evaluation report.

A test passes iff LL(high) > LL(low); equal scores are a tie (not a pass). A test whose two
candidates are the same text (a transformation erased the difference) is *degenerate*: it is
counted apart and left out of pass rates, never counted as a silent failure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from nnd_suites.evaluation.backend import Score
from nnd_suites.evaluation.templates import render
from nnd_suites.pairs import Pair, is_degenerate
from nnd_suites.suite import Suite

Outcome = Literal["pass", "fail", "tie", "degenerate", "skipped"]


class Rate(BaseModel):
    """Pass rate of a set of tests; ``n`` excludes degenerate and skipped tests."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(ge=0, description="tests scored (degenerate tests excluded)")
    passed: int = Field(ge=0)
    ties: int = Field(ge=0)
    failed: int = Field(ge=0)
    degenerate: int = Field(0, ge=0, description="tests whose two candidates are the same text")
    skipped: int = Field(
        0, ge=0, description="tests not scored: a candidate alone does not fit the model's window"
    )
    pass_rate: float | None = Field(description="passed / n; null when n is 0")
    ci: tuple[float, float] | None = Field(description="Wilson 95% interval of pass_rate")


class TestOutcome(BaseModel):
    """One test's scores and outcome (one row of the saved outcomes parquet)."""

    model_config = ConfigDict(extra="forbid")
    __test__ = False  # not a pytest class

    pair_id: str
    parent_id: str | None = None
    group_id: str
    category: str
    label: str
    ll_high: float = Field(description="mean log-probability per target token, high candidate")
    ll_low: float
    n_high: int = Field(description="targets scored for the high candidate (tokens + EOS)")
    n_low: int
    truncated: bool = Field(description="the context was cut from the left to fit the window")
    outcome: Outcome


class BaselineRates(BaseModel):
    """What one bias baseline (a heuristic, no model) achieves on a suite's tests."""

    model_config = ConfigDict(extra="forbid")

    description: str
    overall: Rate
    by_category: dict[str, Rate]


class SuiteResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: str
    adapter: str
    content_hash: str
    transformation: str | None = Field(None, description="name of the transformation, if any")
    template_name: str
    template: str
    pairs: int
    passed: int
    ties: int
    failed: int
    degenerate: int
    skipped: int = Field(
        0, description="tests not scored because a candidate alone does not fit the window"
    )
    pass_rate: float | None
    ci: tuple[float, float] | None
    by_category: dict[str, Rate]
    by_breakdown: dict[str, dict[str, Rate]] = Field(
        description="field -> value -> rate: the low candidate's label, the aspect (when "
        "present) and each of the adapter's breakdown fields"
    )
    by_slice: dict[str, dict[str, Rate]] = Field(
        default_factory=dict,
        description="slice set -> subset -> rate, for every registered slice plugin (length "
        "relation, context length quartiles, worse system, breakdown fields...)",
    )
    baselines: dict[str, BaselineRates] = Field(
        default_factory=dict,
        description="bias baselines (shorter, longer, overlap) on the same tests",
    )
    truncated_tests: int = Field(description="tests with a context cut to fit the window")
    truncated_tokens: int = Field(description="context tokens cut, summed over its requests")
    outcomes_file: str | None = None


class RequestCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tests: int = Field(description="tests over all suites")
    unique: int = Field(description="distinct (template, context, candidate) requests")
    cached: int = Field(description="found in the score cache")
    scored: int = Field(description="distinct (context, candidate) requests sent to the model")


class EvaluationReport(BaseModel):
    """What ``nnd_suites.evaluate`` returns; ``outcomes`` holds the per-test rows by suite."""

    model_config = ConfigDict(extra="forbid")

    nnd_suites_version: str
    created: str
    model: str
    backend: dict[str, Any] = Field(description="backend identity and run settings")
    mode: str = Field(description="scoring mode: default, or reference (--compat reference)")
    suites: dict[str, SuiteResult]
    requests: RequestCounts
    seconds: float
    limit: int | None = Field(
        None, description="only the first N context groups of each suite were scored (--limit)"
    )
    parameters: int | None = Field(
        None, description="the model's parameter count (shared weights once), when known"
    )
    architecture: str | None = Field(
        None, description="the model's architecture (its config's model_type), when known"
    )
    _outcomes: dict[str, list[TestOutcome]] = PrivateAttr(default_factory=dict)

    @property
    def outcomes(self) -> dict[str, list[TestOutcome]]:
        return self._outcomes

    def summary(self) -> dict[str, Any]:
        """The ``--json`` object: every suite's counts, pass rate and per-category rates."""
        return {
            "model": self.model,
            "mode": self.mode,
            "backend": self.backend,
            "suites": {
                name: result.model_dump(mode="json", exclude={"by_breakdown"})
                | {
                    "by_breakdown": {
                        f: {v: r.model_dump(mode="json") for v, r in values.items()}
                        for f, values in result.by_breakdown.items()
                    }
                }
                for name, result in self.suites.items()
            },
            "requests": self.requests.model_dump(),
            "seconds": self.seconds,
            "parameters": self.parameters,
        }


def wilson(passed: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of a pass rate (None when there is nothing to rate)."""
    if n == 0:
        return None
    from scipy.stats import binomtest  # scipy.stats takes 0.5 s to import: not for `list`

    interval = binomtest(passed, n).proportion_ci(confidence, method="wilson")
    return float(interval.low), float(interval.high)


def compare(ll_high: float, ll_low: float) -> Outcome:
    if ll_high > ll_low:
        return "pass"
    return "tie" if ll_high == ll_low else "fail"


def rate(outcomes: Iterable[Outcome]) -> Rate:
    counts = {"pass": 0, "fail": 0, "tie": 0, "degenerate": 0, "skipped": 0}
    for outcome in outcomes:
        counts[outcome] += 1
    n = counts["pass"] + counts["fail"] + counts["tie"]
    return Rate(
        n=n,
        passed=counts["pass"],
        ties=counts["tie"],
        failed=counts["fail"],
        degenerate=counts["degenerate"],
        skipped=counts["skipped"],
        pass_rate=counts["pass"] / n if n else None,
        ci=wilson(counts["pass"], n),
    )


def test_outcomes(
    pairs: Iterable[Pair], template: str, lookup: Callable[[str, str], Score]
) -> list[TestOutcome]:
    """Per-test outcomes from a score lookup ``(rendered context, candidate) -> Score``.

    The robustness runner reuses this with the lookups of a parent and a transformed suite."""
    results = []
    for pair in pairs:
        context = render(template, pair.context)
        high, low = lookup(context, pair.high.text), lookup(context, pair.low.text)
        outcome: Outcome
        if is_degenerate(pair):
            outcome = "degenerate"
        elif high.skipped or low.skipped:
            outcome = "skipped"
        else:
            outcome = compare(high.mean, low.mean)
        results.append(
            TestOutcome(
                pair_id=pair.id,
                parent_id=pair.parent_id,
                group_id=pair.group_id,
                category=pair.category,
                label=pair.label,
                ll_high=high.mean,
                ll_low=low.mean,
                n_high=high.n_targets,
                n_low=low.n_targets,
                truncated=bool(high.truncated_tokens or low.truncated_tokens),
                outcome=outcome,
            )
        )
    return results


def suite_result(
    name: str,
    suite: Suite,
    template_name: str,
    template: str,
    outcomes: list[TestOutcome],
    truncated_tokens: int,
) -> SuiteResult:
    # imported here: both build on this module's Rate
    from nnd_suites.evaluation.baselines import baseline_rates
    from nnd_suites.evaluation.slicing import slice_rates

    manifest = suite.manifest
    overall = rate(o.outcome for o in outcomes)
    by_pair = {o.pair_id: o for o in outcomes}
    breakdowns: dict[str, Callable[[Pair], str]] = {"label": lambda p: p.label}
    if any(p.aspect for p in suite.pairs):
        breakdowns["aspect"] = lambda p: p.aspect or ""
    for field in manifest.breakdown_fields:
        breakdowns[field] = lambda p, field=field: p.breakdown.get(field, "")
    by_breakdown = {field: _rates(suite.pairs, key, by_pair) for field, key in breakdowns.items()}
    return SuiteResult(
        suite=name,
        adapter=manifest.adapter.name,
        content_hash=manifest.content_hash,
        transformation=manifest.transformation.name if manifest.transformation else None,
        template_name=template_name,
        template=template,
        pairs=len(outcomes),
        passed=overall.passed,
        ties=overall.ties,
        failed=overall.failed,
        degenerate=overall.degenerate,
        skipped=overall.skipped,
        pass_rate=overall.pass_rate,
        ci=overall.ci,
        by_category=_rates(suite.pairs, lambda p: p.category, by_pair),
        by_breakdown=by_breakdown,
        by_slice=slice_rates(suite, outcomes),
        baselines=baseline_rates(suite),
        truncated_tests=sum(o.truncated for o in outcomes),
        truncated_tokens=truncated_tokens,
    )


def _rates(
    pairs: list[Pair], key: Callable[[Pair], str], by_pair: dict[str, TestOutcome]
) -> dict[str, Rate]:
    grouped: dict[str, list[Outcome]] = {}
    for pair in pairs:
        grouped.setdefault(key(pair), []).append(by_pair[pair.id].outcome)
    ordered = sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0]))
    return {value: rate(outcomes) for value, outcomes in ordered}
