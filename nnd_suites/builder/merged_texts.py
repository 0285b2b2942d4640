"""The pair builder's unit: a distinct (text, quality) of one group and view, and how many pairs
a group's entries give (counted before they are built, to refuse a group over the pair budget)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from nnd_suites.quality_map import Assessment, QualityMap
from nnd_suites.records.groups import Candidate


@dataclass
class Merged:
    """A distinct (text, quality) within a group and view, with every candidate that gave it."""

    assessment: Assessment
    #: the annotated candidates with this text and quality (one may list several systems)
    records: list[Candidate] = field(default_factory=list)

    @property
    def candidate(self) -> Candidate:
        return self.records[0]

    @property
    def text(self) -> str:
        return self.records[0].text

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(s for record in self.records for s in record.systems))


def count_pairs(entries: list[Merged], quality_map: QualityMap, per_record: bool) -> int:
    """How many pairs the builder makes of ``entries`` (one view), without making them: entries
    of one quality are counted together, so the cost is that of sorting the qualities (numeric
    maps) or of comparing the few labels, never one step per pair."""
    weights: Counter = Counter()
    for entry in entries:
        weights[entry.assessment] += len(entry.records) if per_record else 1
    qualities = list(weights)
    better = quality_map.better
    if not quality_map.numeric:
        pairs = (weights[h] * weights[lo] for h in qualities for lo in qualities if better(h, lo))
        return sum(pairs) - _self_pairs(entries, quality_map, per_record)
    # h.score - l.score is monotonic in l.score, so one pass over the sorted scores suffices.
    qualities.sort(key=lambda a: a.score)
    total = below = low = 0
    for high in qualities:
        while low < len(qualities) and better(high, qualities[low]):
            below += weights[qualities[low]]
            low += 1
        total += weights[high] * below
    return total - _self_pairs(entries, quality_map, per_record)


def _self_pairs(entries: list[Merged], quality_map: QualityMap, per_record: bool) -> int:
    """What :func:`count_pairs` counted of an entry with itself, which the builder never pairs
    (only a numeric map whose minimum gap is within rounding of 0 beats its own quality)."""
    return sum(
        len(entry.records) ** 2 if per_record else 1
        for entry in entries
        if quality_map.better(entry.assessment, entry.assessment)
    )
