"""Tests from pairwise judgments (see :mod:`nnd_suites.records.judgments`).

A test exists only where a human compared those two texts: tests are made from judgments, never
from labels given to candidates, so a response that won one comparison is never paired with a
response that lost another comparison on the same context. Several verdicts on the same two
texts combine by the map's ``pairwise.combine``; a pair judged both ways that still makes a test
is counted in the manifest's ``conflicts`` with the rule applied, and whatever is left out
(a pair judged both ways with no majority included) is counted in ``skipped``, once.

Every test keeps the verdicts on its two texts as votes (``Pair.votes``: the rater, ``high``,
``low`` or ``tie`` as the rule reads the verdict, so a weak preference under ``minimum_strength``
is a tie, and the stated strength); under ``combine: each`` every test of a pair holds all of the
pair's verdicts. Margins follow :mod:`nnd_suites.records.margins` (the share of the verdicts
preferring the high response, or the stated confidence).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from nnd_suites.builder.budget import PairBudget, check_pair_budget
from nnd_suites.builder.result import BuildResult
from nnd_suites.errors import QualityMapError
from nnd_suites.infra.formatting import clip
from nnd_suites.quality_map import QualityMap
from nnd_suites.quality_map.pairwise import PairwiseRule
from nnd_suites.records.groups import Group, breakdown_values, group_location
from nnd_suites.records.judgments import JudgedGroup, Judgment
from nnd_suites.records.pairs import Pair, PairCandidate, pair_id
from nnd_suites.records.texts import equivalence_key, is_blank, same_text
from nnd_suites.records.votes import Vote
from nnd_suites.sources import SkipLog
from nnd_suites.suite import SuiteCandidate


def is_judged(group: Group | JudgedGroup, quality_map: QualityMap) -> bool:
    """Whether ``group`` holds judgments; a group the map cannot make tests of is the map's
    mismatch with the source (a :class:`QualityMapError`, whichever way round)."""
    judged = isinstance(group, JudgedGroup)
    where = getattr(group, "where", None) or getattr(group, "id", group)  # whatever it is
    if judged and quality_map.pairwise is None:
        raise QualityMapError(
            quality_map.origin,
            f"{where}: the adapter emits judged pairs but quality map {quality_map.name} has "
            "no 'pairwise' rule saying what a verdict means; add one",
        )
    if not judged and quality_map.pairwise is not None:
        raise QualityMapError(
            quality_map.origin,
            f"{where}: quality map {quality_map.name} judges pairs, so the adapter must emit "
            "JudgedGroup objects (judgments of two responses), not labelled candidates: "
            "candidate labels such as chosen/rejected would pair a response that won one "
            "comparison with one that lost another",
        )
    return judged


def suite_candidates(group: Group | JudgedGroup, quality_map: QualityMap) -> list[SuiteCandidate]:
    """The annotated candidates a suite keeps for ``group``, judged pairs or labelled candidates."""
    if not is_judged(group, quality_map):
        return SuiteCandidate.from_group(group)  # type: ignore[arg-type]
    assert isinstance(group, JudgedGroup) and quality_map.pairwise is not None
    return judged_candidates(group, quality_map.pairwise)


def judged_candidates(group: JudgedGroup, rule: PairwiseRule) -> list[SuiteCandidate]:
    """Both responses of every judgment, as the suite keeps them (``candidates.parquet``): the
    preferred one labelled ``high_label``, the other ``low_label``, both unlabelled for a tie."""
    kept = []
    for judgment in group.judgments:
        labels = {"a": (rule.high_label, rule.low_label), "b": (rule.low_label, rule.high_label)}
        label_a, label_b = labels.get(judgment.verdict, (None, None))
        for text, systems, label in (
            (judgment.response_a, judgment.systems_a, label_a),
            (judgment.response_b, judgment.systems_b, label_b),
        ):
            kept.append(
                SuiteCandidate(group_id=group.id, text=text, systems=list(systems), label=label)
            )
    return kept


@dataclass(frozen=True)
class _Vote:
    """One judgment seen from the pair's first text: +1 it is better, -1 worse, 0 a tie."""

    sign: int
    judgment: Judgment
    index: int  # the judgment's place in its group (keeps the ids of combine: each distinct)


def _usable(
    group: JudgedGroup, rule: PairwiseRule, allow_empty: bool, log: SkipLog
) -> list[tuple[str, list[_Vote]]]:
    """The judgments that can take part, grouped by their (unordered) two texts: for each pair,
    the text its votes are seen from (the key of the first one judged) and the votes."""
    by_pair: dict[frozenset[str], list[_Vote]] = {}
    first_text: dict[frozenset[str], str] = {}
    for index, judgment in enumerate(group.judgments):
        where = judgment.where or f"group {clip(group.id)}"
        texts = (judgment.response_a, judgment.response_b)
        if not allow_empty and any(is_blank(text) for text in texts):
            log.add("empty candidate text", where)
            continue
        if same_text(*texts):  # the project's one rule (nnd_suites.records.texts)
            log.add("the two responses are the same text", where)
            continue
        if rule.minimum_strength is not None and judgment.strength is None:
            log.add("no strength (the quality map sets minimum_strength)", where)
            continue
        key = frozenset(map(equivalence_key, texts))  # the same two texts, however spelt
        first = first_text.setdefault(key, equivalence_key(texts[0]))
        weak = rule.minimum_strength is not None and judgment.strength < rule.minimum_strength
        sign = 0 if judgment.verdict == "tie" or weak else 1
        if sign and (judgment.verdict == "a") != (equivalence_key(texts[0]) == first):
            sign = -1
        by_pair.setdefault(key, []).append(_Vote(sign, judgment, index))
    return [(first_text[key], votes) for key, votes in by_pair.items()]


def judged_group_pairs(
    group: JudgedGroup,
    quality_map: QualityMap,
    breakdown_fields: tuple[str, ...],
    allow_empty: bool,
    result: BuildResult,
    budget: PairBudget | None,
) -> list[Pair]:
    """The tests of one group of judgments (skips and conflicts counted in ``result``), under
    a map with a pairwise rule; at most one test per judgment, so they are counted against
    ``budget`` once made."""
    rule = quality_map.pairwise
    assert rule is not None  # the builder sends judgments only under a pairwise rule
    made: list[Pair] = []
    seen_texts: set[tuple[str, str]] = set()
    for first, votes in _usable(group, rule, allow_empty, result.skipped):
        where = votes[0].judgment.where or f"group {clip(group.id)}"
        signs = Counter(vote.sign for vote in votes)
        both_ways = signs[1] > 0 and signs[-1] > 0
        counted = len(votes) - (signs[0] if rule.ties == "abstain" else 0)
        if not signs[1] and not signs[-1]:
            result.skipped.add("tie (or weak preference)", where, n=len(votes))
            continue
        if rule.combine == "each":
            winners = [vote for vote in votes if vote.sign]
            if signs[0]:
                result.skipped.add("tie (or weak preference)", where, n=signs[0])
        else:
            needed = counted if rule.combine == "unanimous" else counted // 2 + 1
            side = 1 if signs[1] >= needed else -1 if signs[-1] >= needed else 0
            if not side:
                reason = "raters disagree" if rule.combine == "unanimous" else "no majority"
                result.skipped.add(f"{reason} ({rule.combine})", where, n=len(votes))
                continue
            # the test stands for the verdicts that agree with the outcome
            winners = [next(vote for vote in votes if vote.sign == side)]
        if both_ways:
            # the rule made a test of it: a conflict the map kept; one it made no test of is
            # counted once, in skipped, above (reporting it in both read as kept and dropped)
            result.conflicts.add(f"pair judged both ways ({rule.combine} applied)", where)
        for vote in winners:
            pair = _make_pair(group, vote, first, rule, quality_map, breakdown_fields)
            pair.votes = _as_votes(votes, high_is_first=vote.sign == 1)
            texts = (pair.high.text, pair.low.text)
            result.counts["pairs_repeating_texts"] += texts in seen_texts
            seen_texts.add(texts)
            made.append(pair)
    check_pair_budget(len(made), group_location(group), len(result.pairs), budget)
    return made


def _as_votes(votes: list[_Vote], high_is_first: bool) -> list[Vote]:
    """Every verdict on a test's two texts, read from the test's high side."""
    return [
        Vote(
            rater=vote.judgment.rater,
            prefers="tie"
            if not vote.sign
            else "high"
            if (vote.sign == 1) == high_is_first
            else "low",
            strength=vote.judgment.strength,
        )
        for vote in votes
    ]


def _make_pair(
    group: JudgedGroup,
    vote: _Vote,
    first: str,
    rule: PairwiseRule,
    quality_map: QualityMap,
    breakdown_fields: tuple[str, ...],
) -> Pair:
    judgment = vote.judgment
    a_first = equivalence_key(judgment.response_a) == first
    a_wins = (vote.sign == 1) == a_first
    high, low = (judgment.response_a, judgment.response_b)[:: 1 if a_wins else -1]
    systems = (judgment.systems_a, judgment.systems_b)[:: 1 if a_wins else -1]
    path = quality_map.category_path(rule.low_label, judgment.category)
    # under combine: each, one test per verdict: the rater and its place keep the ids distinct
    extra = (judgment.rater, vote.index) if rule.combine == "each" else ()
    return Pair(
        id=pair_id(group.id, group.context, None, high, low, systems[0], systems[1], *extra),
        group_id=group.id,
        context=dict(group.context),
        high=PairCandidate(text=high, label=rule.high_label, systems=list(systems[0])),
        low=PairCandidate(text=low, label=rule.low_label, systems=list(systems[1])),
        label=rule.low_label,
        category=path[0],
        category_path=path,
        breakdown=breakdown_values(
            breakdown_fields, group.breakdown, judgment.breakdown, judgment.where or group.id
        ),
    )
