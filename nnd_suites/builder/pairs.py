"""The pair builder (paper section 2.1, step 3: all pairs of known differing quality); the test
records it emits are :mod:`nnd_suites.records.pairs`.

The builder is generic over adapters: it validates each group, lets the quality map assess every
candidate, merges identical texts, and emits every (high, low) pair the map orders. Whatever it
leaves out is counted in a :class:`~nnd_suites.sources.log.SkipLog` with its reason. Under a
numeric rule that pools them, identical texts are judged on their pooled ratings
(:mod:`nnd_suites.records.pooled_ratings`, the ones human scores use); each test keeps its raters'
votes and gets the suite's kind of human margin (:mod:`nnd_suites.records.margins`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping

from nnd_suites.builder.budget import PairBudget, check_pair_budget
from nnd_suites.builder.judged_pairs import is_judged, judged_group_pairs
from nnd_suites.builder.merged_texts import Merged, count_pairs
from nnd_suites.builder.result import BuildResult
from nnd_suites.errors import SourceFormatError
from nnd_suites.infra.formatting import clip
from nnd_suites.quality_map import Assessment, QualityMap
from nnd_suites.records.groups import (
    Candidate,
    Group,
    breakdown_values,
    first_spelling,
    group_location,
)
from nnd_suites.records.judgments import JudgedGroup, named_systems
from nnd_suites.records.margins import MarginKind, with_margins
from nnd_suites.records.pairs import Pair, PairCandidate, pair_id
from nnd_suites.records.texts import equivalence_key, is_blank, same_text
from nnd_suites.records.votes import votes_from_ratings
from nnd_suites.sources.log import SkipLog


def build_pairs(
    groups: Iterable[Group | JudgedGroup],
    quality_map: QualityMap,
    breakdown_fields: tuple[str, ...] = (),
    skipped: SkipLog | None = None,
    allow_empty: bool = False,
    budget: PairBudget | None = None,
    optional_context: Collection[str] = (),
) -> BuildResult:
    """Turn adapter groups into validated NND tests, in source order: labelled candidates
    (:class:`Group`), or judgments (:class:`JudgedGroup`, :mod:`nnd_suites.builder.judged_pairs`)
    when the map has a pairwise rule.

    Empty candidate texts are left out (and counted) unless ``allow_empty``: some sources judged
    an empty output as a real answer (Challenge 300 graded an empty answer as incorrect). A group
    with an empty context field makes no tests (counted) unless the field is in
    ``optional_context`` (an empty suffix: the cursor at the end of the file). Each
    group's pairs are counted and refused over ``budget`` (:class:`PairBudget`; its defaults
    unless given). ``counts["candidates"]`` counts a judgment's responses as judged (two each).
    """
    result = BuildResult(pairs=[], skipped=skipped if skipped is not None else SkipLog())
    seen_groups: dict[str, str] = {}
    carried: set[str] = set()  # every rating key a candidate of the source carries
    spellings: dict[str, tuple[str, str]] = {}  # each category as first seen: _one_spelling
    for group in groups:
        judged = is_judged(group, quality_map)
        if not judged:
            carried.update(
                key
                for cand in group.candidates
                for key, values in (cand.ratings or {}).items()
                if values  # an empty list is no rating: assess leaves such a candidate out
            )
        where = group.where or clip(group.id)
        if group.id in seen_groups:
            raise SourceFormatError.at(
                where,
                f"group id {clip(repr(group.id))} repeats the group at {seen_groups[group.id]}",
                "each context must be one group, with every candidate or judgment on it",
            )
        seen_groups[group.id] = where
        for item in group.judgments if judged else group.candidates:  # type: ignore[union-attr]
            _one_spelling(spellings, item.category, item.where or where)
        result.counts["groups"] += 1
        size = len(group.judgments) if judged else len(group.candidates)
        result.counts["candidates"] += 2 * size if judged else size
        if _skips_empty_context(group.context, optional_context, where, size, result.skipped):
            made: list[Pair] = []
        elif judged:
            made = judged_group_pairs(
                group, quality_map, breakdown_fields, allow_empty, result, budget
            )
        else:
            made = _build_group(group, quality_map, breakdown_fields, allow_empty, result, budget)
        result.pairs.extend(made)
        result.counts["groups_without_pairs"] += not made
    if result.counts["candidates"]:  # an empty source is named by the build's "no pair"
        quality_map.check_ratings_carried(carried)
    result.counts["pairs"] = len(result.pairs)
    kinds: list[MarginKind] = ["rater_share"]
    if quality_map.pairwise is not None:
        kinds.append("confidence")
    elif quality_map.numeric:
        kinds.append("score_gap")
    result.margin_kind = with_margins(result.pairs, kinds)
    return result


def _one_spelling(spellings: dict[str, tuple[str, str]], category: str | None, where: str) -> None:
    """A category from the data (MQM's error path, Challenge 300's question category) written
    another way than before is the fault of the candidate or judgment at ``where``: read as
    written, its tests would be a category apart (a source.yaml's rows are refused as read)."""
    found = None if category is None else first_spelling(spellings, "category", category, where)
    if found is not None:
        raise SourceFormatError.at(
            where,
            f"category {clip(repr(category))} is {clip(repr(found[0]))} (first at {found[1]}) "
            "written another way: read as written, two categories, the tests of one counted "
            "apart",
            "write each category one way in the source",
        )


def _skips_empty_context(
    context: Mapping[str, str],
    optional: Collection[str],
    where: str,
    n: int,
    log: SkipLog,
) -> bool:
    """Whether a group makes no tests because a context field that must hold text is empty;
    its ``n`` candidates or judgments are counted in ``log``."""
    empty_fields = [
        name for name, value in context.items() if is_blank(value) and name not in optional
    ]
    if empty_fields:
        log.add(f"empty context field(s) {empty_fields}", where, n=n)
    return bool(empty_fields)


def _usable_candidates(group: Group, log: SkipLog, allow_empty: bool) -> list[Candidate]:
    usable, seen = [], {}
    for cand in group.candidates:
        if is_blank(cand.text) and not allow_empty:
            log.add("empty candidate text", cand.where or f"group {clip(group.id)} {cand.systems}")
            continue
        # outputs of unnamed systems that read the same are not a repeated row: the map's
        # identical_texts rule decides about them
        for system in named_systems(cand.systems):
            key = (system, equivalence_key(cand.text))
            if key in seen:
                raise SourceFormatError.at(
                    cand.where or clip(group.id),
                    f"duplicate candidate: system {clip(repr(system))} gives the same text twice "
                    f"in group {clip(repr(group.id))} (first at {seen[key]})",
                    "remove the repeated row; where each such row is another rater's rating of "
                    "that output, gather them into one candidate (a source.yaml: name the rater "
                    "column in candidates.rater)",
                )
            seen[key] = cand.where or clip(group.id)
        usable.append(cand)
    return usable


def _merge(
    group: Group,
    candidates: list[Candidate],
    quality_map: QualityMap,
    view: str | None,
    result: BuildResult,
    pooled: dict[str, Candidate],
) -> list[Merged]:
    """One entry per distinct (text, quality), texts compared by their equivalence key. A text
    given conflicting labels (or scores) is left out and counted, or kept and counted when the
    map says ``conflicting_labels: keep``. A text in ``pooled`` is judged on its pooled ratings
    (:mod:`nnd_suites.records.pooled_ratings`), so identical texts share one quality."""
    merged: dict[tuple[str, Assessment], Merged] = {}
    suffix = f" [{view}]" if view else ""
    for cand in candidates:
        assessment = quality_map.assess(pooled.get(equivalence_key(cand.text), cand), view)
        if assessment.excluded:
            result.skipped.add(
                assessment.excluded + suffix, cand.where or f"group {clip(group.id)}"
            )
            continue
        key = (equivalence_key(cand.text), assessment)
        merged.setdefault(key, Merged(assessment)).records.append(cand)
    qualities = Counter(text for text, _ in merged)
    reason = "same text given conflicting " + ("ratings" if quality_map.numeric else "labels")
    for text in (t for t, n in qualities.items() if n > 1):
        entries = [e for (t, _), e in merged.items() if t == text]
        records = [r for e in entries for r in e.records]
        where = (
            f"group {clip(group.id)}: {records[0].text[:60]!r} by {[r.systems for r in records]}"
        )
        if quality_map.conflicting_labels == "keep":
            result.counts["conflicting_texts"] += 1
            result.conflicts.add(reason + suffix, where)
            continue
        for entry in entries:
            del merged[(text, entry.assessment)]
        result.skipped.add(reason + suffix, where, n=len(records))
    return list(merged.values())


def _build_group(
    group: Group,
    quality_map: QualityMap,
    breakdown_fields: tuple[str, ...],
    allow_empty: bool,
    result: BuildResult,
    budget: PairBudget | None,
) -> list[Pair]:
    """The tests of one labelled group (skips and conflicts counted in ``result``), counted
    against ``budget`` before they are made."""
    made: list[Pair] = []
    candidates = _usable_candidates(group, result.skipped, allow_empty)
    if not candidates:
        return made
    per_record = quality_map.pairs_per == "candidate"
    pooled = quality_map.meaning.pooled(candidates)
    views = [
        (v, _merge(group, candidates, quality_map, v, result, pooled)) for v in quality_map.views
    ]
    expected = sum(count_pairs(entries, quality_map, per_record) for _, entries in views)
    check_pair_budget(expected, group_location(group), len(result.pairs), budget)
    for view, entries in views:
        seen_texts: set[tuple[str, str]] = set()
        for high in entries:
            for low in entries:
                if high is low or not quality_map.better(high.assessment, low.assessment):
                    continue
                if per_record:
                    sides = [
                        ((high, a, a.systems), (low, b, b.systems))
                        for a in high.records
                        for b in low.records
                    ]
                else:
                    sides = [
                        ((high, high.candidate, high.systems), (low, low.candidate, low.systems))
                    ]
                for high_side, low_side in sides:
                    texts = (high.text, low.text)
                    result.counts["pairs_repeating_texts"] += texts in seen_texts
                    result.counts["degenerate_pairs"] += same_text(high.text, low.text)
                    seen_texts.add(texts)
                    pair = _make_pair(group, view, high_side, low_side, quality_map)
                    low_record = low_side[1]
                    pair.breakdown = breakdown_values(
                        breakdown_fields,
                        group.breakdown,
                        low_record.breakdown,
                        low_record.where or group.id,
                    )
                    # a test of two records is voted on by their own raters, else by every
                    # rater of the two (pooled or merged) texts
                    whole = not per_record or bool(pooled)
                    pair.votes = votes_from_ratings(
                        high.records if whole else [high_side[1]],
                        low.records if whole else [low_side[1]],
                        quality_map.rule.rating_key(view) if quality_map.rule else None,
                    )
                    made.append(pair)
    return made


#: one side of a pair in the making: the merged entry, the record it stands for, its systems
_Side = tuple[Merged, Candidate, list[str]]


def _side(side: _Side, label: str | None = None) -> PairCandidate:
    entry, _, systems = side
    return PairCandidate(
        text=entry.text,
        label=label or entry.assessment.label or "",
        systems=systems,
        score=entry.assessment.score,
    )


def _make_pair(
    group: Group,
    view: str | None,
    high: _Side,
    low: _Side,
    quality_map: QualityMap,
) -> Pair:
    low_entry, low_record, _ = low
    label = low_entry.assessment.label or ""
    path = quality_map.category_path(label, low_record.category)
    if view is not None:  # a Likert aspect is the error category: "not consistent", ...
        path = [view, *path]
    high_entry = high[0]
    high_label = quality_map.rule.pair_high_label() if quality_map.rule else None
    gap = None
    if high_entry.assessment.score is not None and low_entry.assessment.score is not None:
        gap = high_entry.assessment.score - low_entry.assessment.score
    return Pair(
        id=pair_id(group.id, group.context, view, high_entry.text, low_entry.text, high[2], low[2]),
        group_id=group.id,
        context=dict(group.context),
        high=_side(high, high_label),
        low=_side(low),
        label=label,
        category=path[0],
        category_path=path,
        aspect=view,
        score_gap=gap,
    )
