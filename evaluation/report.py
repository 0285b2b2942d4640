"""The typed evaluation report, and the per-test outcomes of a suite from a score lookup.

Which tests count and how (pass, fail, tie, degenerate, skipped) is decided once, in
:mod:`nnd_suites.statistics.outcomes`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field, PrivateAttr, model_validator

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.backend import Score
from nnd_suites.evaluation.baselines import BaselineOutcomes, BaselineRates, baseline_rates
from nnd_suites.evaluation.limits import RecordedLimit, SuiteLimit, suite_limit
from nnd_suites.evaluation.samples import Sample
from nnd_suites.evaluation.scorers import DEFAULT_SCORER, Scorer, make_scorer
from nnd_suites.evaluation.scorers.base import CandidateScores
from nnd_suites.evaluation.sensitivity import Sensitivity
from nnd_suites.evaluation.slicing import slice_rates
from nnd_suites.evaluation.task_grouping import TaskGrouping
from nnd_suites.evaluation.templates import neutral_context
from nnd_suites.human.agreement import (
    AgreementCeiling,
    MarginStrata,
    agreement_ceiling,
    margin_strata,
)
from nnd_suites.infra.output_kinds import register_model
from nnd_suites.infra.validation import StrictModel
from nnd_suites.records.pairs import Pair, is_degenerate
from nnd_suites.records.templates import render_template as render
from nnd_suites.statistics.outcomes import (
    Rate,
    TestOutcome,
    outcome_map,
    rate,
    rates_by,
    test_outcome,
)
from nnd_suites.suite import Suite


class SuiteResult(StrictModel):
    suite: str
    adapter: str
    content_hash: str
    section_hashes: dict[str, str] | None = Field(
        None, description="the suite's section_hashes (as content_hash): what two differ in"
    )
    transformation: str | None = Field(None, description="name of the transformation, if any")
    suite_name: str | None = Field(
        None,
        description="the suite's own name, set when other suites of the run have it (the "
        "report calls the second NAME_2, the third NAME_3); null: no other suite has its name",
    )
    given_as: str | None = Field(
        None,
        description="where the suite came from, as a spec that names it again (a folder's "
        "absolute path, builtin:NAME, hub:...); null: a Suite object in memory",
    )
    template_name: str
    template: str
    pairs: int = Field(description="tests in the suite (as scored: after --limit)")
    limited: SuiteLimit | None = Field(
        None,
        description="--limit left tests out: the whole suite's test count and the categories "
        "left with no test (null: the suite was scored whole)",
    )
    overall: Rate = Field(description="every test: the pass rate over the rated ones")
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
        description="bias baselines (shorter, longer, overlap) on the same tests: exactly those "
        "the model rated (see each one's left_out)",
    )
    by_margin: MarginStrata | None = Field(
        None,
        description="pass rates by human margin band (null: no test has a margin, or the "
        "report predates margins)",
    )
    agreement_ceiling: AgreementCeiling | None = Field(
        None,
        description="how often one rater agrees with the majority of the others (leave one "
        "out), beside the model's pass rate on the same tests (null: no test has 2 votes)",
    )
    truncated_tests: int = Field(description="tests with a context cut to fit the window")
    truncated_tokens: int = Field(description="context tokens cut, summed over its requests")
    outcomes_file: str | None = None
    samples_file: str | None = Field(
        None,
        description="samples/SUITE.jsonl, relative to the report folder: what the model saw and "
        "every score it gave, test by test (null: the run did not log samples, --log-samples)",
    )

    #: the suite as scored and its baselines' per-test outcomes (None: not computed yet), kept
    #: in memory for the figures taken over several runs (a leaderboard's baselines on the tests
    #: every model rated); a report read back from its files has none
    _scored: tuple[Suite, BaselineOutcomes | None] | None = PrivateAttr(None)

    def __eq__(self, other: object) -> bool:
        """Equal by their fields: the suite kept in memory is how the result was computed, not
        part of it (a result read back from its report file equals the one written)."""
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def baselines_with(self, runs: Sequence[Mapping[str, str]]) -> dict[str, BaselineRates]:
        """The bias baselines on the tests every one of ``runs`` (pair id -> outcome) rated."""
        if self._scored is None:
            raise NNDError(
                f"{self.suite}: this result was read back from a report file, without its "
                "suite; score the models again to set their baselines side by side"
            )
        suite, outcomes = self._scored
        return baseline_rates(suite, *runs, outcomes=outcomes)

    @model_validator(mode="before")
    @classmethod
    def _overall_from_flat_counts(cls, data: Any) -> Any:
        """Reports written before 0.2 held the overall rate as flat fields: still read them."""
        if isinstance(data, dict) and "overall" not in data and "passed" in data:
            data = dict(data)
            flat = {k: data.pop(k) for k in _FLAT if k in data}
            flat["n"] = flat["passed"] + flat["ties"] + flat["failed"]
            data["overall"] = flat
        return data

    # The overall figures, read through ``overall`` (one Rate, never rebuilt by a consumer).
    @property
    def passed(self) -> int:
        return self.overall.passed

    @property
    def ties(self) -> int:
        return self.overall.ties

    @property
    def failed(self) -> int:
        return self.overall.failed

    @property
    def degenerate(self) -> int:
        return self.overall.degenerate

    @property
    def skipped(self) -> int:
        return self.overall.skipped

    @property
    def pass_rate(self) -> float | None:
        return self.overall.pass_rate

    @property
    def ci(self) -> tuple[float, float] | None:
        return self.overall.ci


_FLAT = ("passed", "ties", "failed", "degenerate", "skipped", "pass_rate", "ci")


class RequestCounts(StrictModel):
    tests: int = Field(description="tests over all suites")
    unique: int = Field(description="distinct (template, context, candidate) requests")
    cached: int = Field(description="found in the score cache")
    scored: int = Field(description="distinct (context, candidate) requests sent to the model")


class EvaluationReport(StrictModel):
    """What ``nnd_suites.evaluate`` returns; ``outcomes`` holds the per-test rows by suite."""

    nnd_suites_version: str
    created: str
    run_id: str | None = Field(
        None, description="random, one per run (a copy keeps it); null: written before run ids"
    )
    model: str
    backend: dict[str, Any] = Field(description="backend identity and run settings")
    mode: str = Field(description="scoring mode: default, or reference (--compat reference)")
    scorer: str = Field(
        DEFAULT_SCORER,
        description="how two scored candidates are compared (mean: the paper's mean "
        "log-likelihood); every pass rate of the report uses it",
    )
    reference_model: str | None = Field(
        None, description="the reference model of the ratio scorer, when one was used"
    )
    reference_identity: dict[str, str] | None = Field(
        None,
        description="what the reference model is by its content (nnd_suites.evaluation.identity: "
        "its files' hashes or Hub commit, dtype, backend, mode; not the path it was given by): "
        "runs are compared by it (null: no reference model, or a report written before it)",
    )
    suites: dict[str, SuiteResult]
    sensitivity: dict[str, Sensitivity] = Field(
        default_factory=dict,
        description="suite -> the same tests under every scorer asked for (--scorer, several): "
        "pass rates, flipped verdicts, length-controlled view",
    )
    requests: RequestCounts
    reference_requests: RequestCounts | None = Field(
        None, description="the same requests under the reference model (null: none was used)"
    )
    seconds: float
    limit: RecordedLimit = Field(
        None,
        description="only the first N context groups of each suite (or that fraction of its "
        "groups, 0 < limit < 1) were scored (--limit); the unit is a context group",
    )
    parameters: int | None = Field(
        None, description="the model's parameter count (shared weights once), when known"
    )
    architecture: str | None = Field(
        None, description="the model's architecture (its config's model_type), when known"
    )
    random_weights: bool | None = Field(
        None,
        description="a tiny model with random weights (nnd-suites:tiny-random, or one `python -m "
        "nnd_suites.evaluation.tiny` wrote): a pipeline check (null: written before this field; "
        "its name and folder decide)",
    )
    left_out_of_all: list[str] = Field(
        default_factory=list, description="--suite all: built-in suites left out, not shipped"
    )
    by_task: TaskGrouping | None = Field(
        None,
        description="the suites by task type, and the catalogue suites not evaluated with why, "
        "when they come from the catalogue (--suite catalogue or a build --catalogue folder)",
    )
    _outcomes: dict[str, list[TestOutcome]] = PrivateAttr(default_factory=dict)
    _samples: dict[str, list[Sample]] = PrivateAttr(default_factory=dict)

    @property
    def outcomes(self) -> dict[str, list[TestOutcome]]:
        return self._outcomes

    @property
    def samples(self) -> dict[str, list[Sample]]:
        """Suite -> what the model saw per test (``log_samples=True``; empty otherwise)."""
        return self._samples

    def summary(self) -> dict[str, Any]:
        """The ``--json`` object: every suite's counts, pass rate and per-category rates, with
        every field that changes what the figures mean (--limit, the scorers' sensitivity, the
        reference model), so a script can tell a smoke test from a full run."""
        return {
            "nnd_suites_version": self.nnd_suites_version,
            "created": self.created,
            "run_id": self.run_id,
            "model": self.model,
            "mode": self.mode,
            "limit": self.limit,
            "reference_model": self.reference_model,
            "reference_identity": self.reference_identity,
            "architecture": self.architecture,
            "random_weights": self.random_weights,
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
            "reference_requests": self.reference_requests and self.reference_requests.model_dump(),
            "seconds": self.seconds,
            "parameters": self.parameters,
            "scorer": self.scorer,
            "sensitivity": {n: s.model_dump(mode="json") for n, s in self.sensitivity.items()},
            "by_task": None if self.by_task is None else self.by_task.model_dump(mode="json"),
            "left_out_of_all": self.left_out_of_all,
        }


def test_outcomes(
    pairs: Sequence[Pair],
    template: str,
    contexts: Sequence[str] | None,
    lookup: Callable[[str, str], Score],
    scorer: Scorer | None = None,
    reference: Callable[[str, str], Score] | None = None,
) -> list[TestOutcome]:
    """Per-test outcomes from a lookup ``(rendered context, candidate) -> Score``, compared by
    ``scorer`` (the paper's mean log-likelihood by default); ``contexts``: the pairs' contexts as
    ``template`` renders them (None: rendered here); ``reference``: a reference model's (ratio).

    The robustness runner reuses this with the lookups of a parent and a transformed suite."""
    chosen = scorer or make_scorer(DEFAULT_SCORER)
    if chosen.needs_reference and reference is None:
        raise NNDError(f"scorer {chosen.spec} needs a reference model (reference_model=...)")
    if contexts is None:
        contexts = [render(template, pair.context) for pair in pairs]
    results = []
    for pair, context in zip(pairs, contexts, strict=True):
        empty = neutral_context(template, pair.context) if chosen.needs_neutral else None
        texts = (pair.high.text, pair.low.text)
        found = [
            CandidateScores(
                lookup(context, text),
                lookup(empty, text) if empty is not None else None,
                reference(context, text) if chosen.needs_reference and reference else None,
            )
            for text in texts
        ]
        high, low = found[0].model, found[1].model
        skipped = any(f.skipped for f in found)
        score_high, score_low = (
            (math.nan, math.nan)
            if skipped
            else (chosen.compared_value(f, t, pair.id) for f, t in zip(found, texts, strict=True))
        )
        outcome = test_outcome(
            score_high, score_low, degenerate=is_degenerate(pair), skipped=skipped
        )
        results.append(
            TestOutcome(
                pair_id=pair.id,
                parent_id=pair.parent_id,
                group_id=pair.group_id,
                category=pair.category,
                label=pair.label,
                ll_high=score_high,
                ll_low=score_low,
                n_high=high.n_targets,
                n_low=low.n_targets,
                truncated=any(f.truncated_tokens for f in found),
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
    baselines: BaselineOutcomes | None = None,
    content_hash: str | None = None,
) -> SuiteResult:
    """A suite's figures from its outcomes; ``baselines``: the baselines' per-test outcomes when
    already computed for the suite (model-independent), rated here on the tests the model rated.
    ``content_hash``: the identity of the tests when ``suite`` carries a per-run rendering of
    them (a model's chat prompts) that must not enter it; the suite's own otherwise."""
    manifest = suite.manifest
    overall = rate(o.outcome for o in outcomes)
    by_pair = {o.pair_id: o for o in outcomes}
    breakdowns: dict[str, Callable[[Pair], str]] = {"label": lambda p: p.label}
    if any(p.aspect for p in suite.pairs):
        breakdowns["aspect"] = lambda p: p.aspect or ""
    for field in manifest.breakdown_fields:
        breakdowns[field] = lambda p, field=field: p.breakdown.get(field, "")
    by_breakdown = {
        field: rates_by(suite.pairs, key, lambda p: by_pair[p.id].outcome)
        for field, key in breakdowns.items()
    }
    result = SuiteResult(
        suite=name,
        adapter=manifest.adapter.name,
        content_hash=content_hash or manifest.content_hash,
        transformation=manifest.transformation.name if manifest.transformation else None,
        template_name=template_name,
        template=template,
        pairs=len(outcomes),
        limited=suite_limit(suite),
        overall=overall,
        by_category=rates_by(suite.pairs, lambda p: p.category, lambda p: by_pair[p.id].outcome),
        by_breakdown=by_breakdown,
        by_slice=slice_rates(suite, outcomes),
        baselines=baseline_rates(suite, outcome_map(outcomes), outcomes=baselines),
        by_margin=margin_strata(suite.pairs, lambda p: by_pair[p.id].outcome, manifest.margin_kind),
        agreement_ceiling=agreement_ceiling(
            suite.pairs, {pair_id: o.outcome for pair_id, o in by_pair.items()}
        ),
        truncated_tests=sum(o.truncated for o in outcomes),
        truncated_tokens=truncated_tokens,
    )
    result._scored = (suite, baselines)
    return result


register_model("report", EvaluationReport)
