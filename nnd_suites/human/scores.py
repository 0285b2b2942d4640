"""Human score per annotated system, derived from a suite alone (its candidates and quality map).

The measure follows the quality map, whatever the adapter:

- labels in tiers (or a graded rating turned into labels): the share of the system's candidates
  in the best tier (Quiz Design: "No error"; Challenge 300: credit 1). A candidate the map
  leaves out (partial credit, an excluded label) is in the denominator: it is not top quality;
- numeric and Likert ratings: the mean rating of the system's candidates (a numeric rule's own
  aggregate per candidate, on the pooled ratings its tests use where it pools identical texts;
  the mean of the annotators' scores for Likert), over the aspects;
- pairwise judgments: the share of the comparisons the system took part in that it won, a tie
  counting as half a win (:mod:`nnd_suites.human.pairwise_scores`); no categories.

Per category, over the categories the suite's tests are split by:

- an *error* category (one no top candidate carries: Quiz Design's "disfluent", an MQM error
  type) scores the share of the system's candidates *without* that error;
- a *context* category (the question category of Challenge 300, an aspect of SummEval) scores
  the system's candidates in that category with the overall measure.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Literal

from pydantic import Field

from nnd_suites.errors import NoSystemsError
from nnd_suites.human.pairwise_scores import WIN_RATE_MEASURE, win_rates
from nnd_suites.infra.formatting import count
from nnd_suites.infra.markdown import render
from nnd_suites.infra.validation import StrictModel
from nnd_suites.quality_map import QualityMap
from nnd_suites.records.groups import Candidate
from nnd_suites.records.judgments import UNKNOWN_SYSTEM, named_systems
from nnd_suites.records.texts import equivalence_key, is_blank
from nnd_suites.suite import Suite, SuiteCandidate
from nnd_suites.suite.pooled_texts import pooling_rule, takes_part

CategoryKind = Literal["error", "context"]
TEMPLATE = Path(__file__).parent / "report_templates" / "human_scores.md.j2"


class SystemScore(StrictModel):
    human_score: float = Field(description="share in the top tier, or mean rating")
    candidates: int = Field(ge=1, description="annotated candidates the system produced")
    by_category: dict[str, float] = Field(
        description="category -> share without that error (error categories) or the measure "
        "over the system's candidates in that category (context categories)"
    )
    unrated: int = Field(0, ge=0, description="candidates with no rating in some aspect")


class HumanScores(StrictModel):
    """``nnd-suites systems SUITE --json``: one object keyed by system name, best first."""

    suite: str
    measure: str = Field(description="what human_score is, in words")
    categories: dict[str, CategoryKind] = Field(
        description="each test category and how it is scored (error: share without it)"
    )
    systems: dict[str, SystemScore]
    score_range: tuple[float, float] | None = Field(
        None,
        description="lowest and highest value one candidate was given (0 and 1 for a share): "
        "every human score lies within it",
    )
    unattributed: int = Field(
        0,
        ge=0,
        description="candidates that name no system (the source left it out): in no system's "
        "score, as an 'unknown' row would pool outputs of different systems",
    )
    self_comparisons: int = Field(
        0,
        ge=0,
        description="pairwise suites: comparisons with one system on both sides, in no "
        "system's win rate",
    )
    empty_texts: int = Field(
        0,
        ge=0,
        description="candidates with an empty text, left out of the tests (the source did not "
        "judge empty outputs as answers) but in their systems' scores as the raters judged "
        "them: a system's human score is about all its judged outputs",
    )


class _Judged:
    """One candidate's value per view and the root category it carries in each view."""

    def __init__(self, values: dict[str | None, float | None], roots: dict[str | None, str]):
        self.values = values
        self.roots = roots

    @property
    def value(self) -> float | None:
        rated = [v for v in self.values.values() if v is not None]
        return statistics.fmean(rated) if rated else None


def _judge(
    quality_map: QualityMap, top: set[str], candidate: SuiteCandidate, annotated: Candidate
) -> _Judged:
    """``candidate`` judged as ``annotated``: itself, or the pooled candidate of its text."""
    values: dict[str | None, float | None] = {}
    roots: dict[str | None, str] = {}
    for view in quality_map.views:
        assessment = quality_map.assess(annotated, view)  # a data error is raised, named
        # the rule says what the candidate is worth to a human score (rating, share of the top)
        values[view] = quality_map.meaning.human_value(annotated.ratings, assessment, view, top)
        label = assessment.label or candidate.label or ""
        if view is not None:
            roots[view] = view
        elif candidate.category is None and (assessment.label is None or label in top):
            # a top or excluded label is no error category: a strict hierarchy (FRANK's) does
            # not list it, and it must not stop the scores
            roots[view] = label
        else:
            roots[view] = quality_map.category_path(label, candidate.category)[0]
    return _Judged(values, roots)


def human_scores(suite: Suite) -> HumanScores:
    """Every annotated system's human score, overall and per test category. A suite whose
    candidates name no system (HH-RLHF's pairwise preferences) is a NoSystemsError: one "unknown"
    system pooling every candidate would print a score of the pairing (half chosen, half
    rejected)."""
    quality_map = QualityMap.from_dict(
        suite.manifest.quality_map.definition, origin=f"quality map of suite {suite.name}"
    )
    empty = sum(is_blank(c.text) for c in suite.candidates)
    empty *= not suite.manifest.allow_empty_candidates  # kept as answers: in tests too
    if quality_map.pairwise is not None:
        return _pairwise_scores(suite, quality_map).model_copy(update={"empty_texts": empty})
    check_has_systems(suite)
    rated = quality_map.rated
    top = set(quality_map.top_labels())
    annotated = _as_judged(suite, quality_map)
    judged = [
        (c, _judge(quality_map, top, c, a))
        for c, a in zip(suite.candidates, annotated, strict=True)
    ]
    tested = list(suite.manifest.counts.breakdowns.get("category", {}))
    # A category some top-quality candidate carries describes the context, not an error.
    carried_by_top = {
        root for _, j in judged for view, root in j.roots.items() if rated or j.values[view] == 1.0
    }
    kinds: dict[str, CategoryKind] = {
        name: "context" if name in carried_by_top else "error" for name in tested
    }
    by_system: dict[str, list[_Judged]] = defaultdict(list)
    for candidate, judgement in judged:
        for system in named_systems(candidate.systems):
            by_system[system].append(judgement)
    unattributed = sum(not named_systems(c.systems) for c in suite.candidates)
    scores = {system: _system_score(judgements, kinds) for system, judgements in by_system.items()}
    ordered = sorted(scores.items(), key=lambda item: (-item[1].human_score, item[0]))
    values = [v for _, j in judged for v in j.values.values() if v is not None]
    return HumanScores(
        suite=suite.name,
        measure=quality_map.human_measure(),
        categories=kinds,
        systems=dict(ordered),
        score_range=(0.0, 1.0) if not rated else (min(values), max(values)) if values else None,
        unattributed=unattributed,
        empty_texts=empty,
    )


def _as_judged(suite: Suite, quality_map: QualityMap) -> list[Candidate]:
    """Each suite candidate as its tests judged it: identical texts of one group the map pools
    by their pooled candidate (so a system's human score and its tests agree on the text), the
    others by themselves."""
    annotated = [c.as_candidate() for c in suite.candidates]
    if pooling_rule(suite.manifest) is None:  # a numeric map's suite built before pooling too
        return annotated
    # the build never pools an empty text it left out
    poolable = [takes_part(c, suite.manifest) for c in suite.candidates]
    by_group: dict[str, list[Candidate]] = defaultdict(list)
    for candidate, record, pools in zip(suite.candidates, annotated, poolable, strict=True):
        if pools:
            by_group[candidate.group_id].append(record)
    pooled = {
        (group, text): candidate
        for group, records in by_group.items()
        for text, candidate in quality_map.meaning.pooled(records).items()
    }
    return [
        pooled.get((c.group_id, equivalence_key(c.text)), record) if pools else record
        for c, record, pools in zip(suite.candidates, annotated, poolable, strict=True)
    ]


def _pairwise_scores(suite: Suite, quality_map: QualityMap) -> HumanScores:
    """Each named system's win rate over its comparisons (ties: half a win), best first."""
    assert quality_map.pairwise is not None
    check_has_systems(suite)
    rates = win_rates(suite, quality_map.pairwise)
    systems = {
        system: SystemScore(
            human_score=rates.rate(system), candidates=rates.comparisons[system], by_category={}
        )
        for system in rates.comparisons
    }
    ordered = sorted(systems.items(), key=lambda item: (-item[1].human_score, item[0]))
    return HumanScores(
        suite=suite.name,
        measure=WIN_RATE_MEASURE,
        categories={},
        systems=dict(ordered),
        score_range=(0.0, 1.0),
        unattributed=rates.unattributed,
        self_comparisons=rates.self_comparisons,
    )


def check_has_systems(suite: Suite) -> None:
    """Refuse a suite none of whose candidates names the system that generated it."""
    if not any(named_systems(c.systems) for c in suite.candidates):
        raise NoSystemsError(
            f"suite {suite.name}: its {count(len(suite.candidates))} candidates name no system "
            f"that generated them: its source names no systems (every one is {UNKNOWN_SYSTEM!r}; a "
            "source of pairwise preferences such as HH-RLHF records none), so there are no "
            "systems to score or verify; `systems` and `verify` need a suite whose source names "
            "each output's system (quiz_design, challenge300, wmt_mqm; a pairwise source that "
            "names each response's system gets win rates)"
        )


def _system_score(judgements: list[_Judged], kinds: dict[str, CategoryKind]) -> SystemScore:
    values = [j.value for j in judgements if j.value is not None]
    by_category: dict[str, float] = {}
    for name, kind in kinds.items():
        if kind == "error":
            without = [name not in j.roots.values() for j in judgements]
            by_category[name] = statistics.fmean(without)
            continue
        inside = [
            j.values[view]
            for j in judgements
            for view, root in j.roots.items()
            if root == name and j.values[view] is not None
        ]
        if inside:  # a system with no candidate in this context category has no score there
            by_category[name] = statistics.fmean(inside)
    return SystemScore(
        human_score=statistics.fmean(values) if values else float("nan"),
        candidates=len(judgements),
        by_category=by_category,
        unrated=sum(any(v is None for v in j.values.values()) for j in judgements),
    )


def _cell(value: float | None, share: bool) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.1f}%" if share else f"{value:.3f}"


def human_scores_markdown(scores: HumanScores) -> str:
    """A table: one row per system (best first), overall then each category."""
    share = scores.measure.startswith("share")
    categories = list(scores.categories)
    # "without X": share of candidates free of error X; a bare name: the score inside that
    # context category (an aspect, a question type)
    heads = [f"without {c}" if k == "error" else c for c, k in scores.categories.items()]
    # rated measures can miss an aspect's rating: show how many candidates did
    unrated = not share or any(system.unrated for system in scores.systems.values())
    rows = [
        [
            name,
            system.candidates,
            *([system.unrated] if unrated else []),
            _cell(system.human_score, share),
            *(_cell(system.by_category.get(c), share) for c in categories),
        ]
        for name, system in scores.systems.items()
    ]
    header = ["system", "candidates", *(["unrated"] if unrated else []), "human score", *heads]
    return render(TEMPLATE, scores=scores, unrated=unrated, header=header, rows=rows)
