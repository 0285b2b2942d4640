"""The loaded quality map: validation beyond the schema, assessment of candidates, the order."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from nnd_suites.errors import QualityMapError, UnknownItemError
from nnd_suites.quality_map.loading import Lines, place, read_map_file, schema_error
from nnd_suites.quality_map.model import QualityMapDefinition
from nnd_suites.quality_map.order import Order, hierarchy_cycle, show_chain
from nnd_suites.quality_map.rule_base import Assessment, BaseRule, RatingFault
from nnd_suites.records.groups import Candidate


def builtin_quality_maps() -> dict[str, Path]:
    """Name -> file of every map shipped in ``quality_maps/``."""
    folder = resources.files("nnd_suites.quality_maps")
    found = {}
    for entry in folder.iterdir():
        if entry.name.endswith((".yaml", ".yml", ".json")) and not entry.name.startswith("_"):
            found[entry.name.rsplit(".", 1)[0]] = Path(str(entry))
    return found


class QualityMap:
    """A validated quality map. Build with :meth:`load` (a name or a path) or :meth:`from_dict`."""

    def __init__(
        self, definition: QualityMapDefinition, data: dict[str, Any], origin: str, lines: Lines
    ) -> None:
        self.definition = definition
        self.data = data  # as written: the manifest records it and its hash
        self.origin = origin
        self._lines = lines
        self.name = definition.name
        self.description = definition.description
        self.labels = list(definition.labels)
        self.exclude = set(definition.exclude)
        self.pairs_per = definition.pairs_per
        self.conflicting_labels = definition.conflicting_labels
        self.rule = definition.rating_rule
        #: what the map's candidates mean: its rule, else the base rule's (labels, top tier);
        #: the pooled candidates of identical texts (which tests and human scores judge those
        #: texts on) and each candidate's value for its systems' human score come from it
        self.meaning: BaseRule = self.rule or BaseRule()
        #: set for sources that judge pairs of responses (the adapter emits judgments)
        self.pairwise = definition.pairwise
        self.hierarchy = definition.hierarchy
        self._check_known_labels()  # before the order is built from them
        self._order = Order(self.labels, definition.tiers, definition.better_than)
        self._check()

    # ----------------------------------------------------------------- loading
    @classmethod
    def load(cls, name_or_path: str | Path) -> QualityMap:
        text = str(name_or_path)
        path = Path(text)
        if not path.suffix:
            shipped = builtin_quality_maps()
            if text not in shipped:
                raise UnknownItemError("quality map", text, list(shipped))
            path = shipped[text]
        if not path.exists():  # a folder, fifo or device is named by read_map_file
            raise QualityMapError(text, "file not found; pass a map name or an existing file")
        data, lines = read_map_file(path)
        return cls.from_dict(data, origin=str(path), lines=lines)

    @classmethod
    def from_dict(cls, data: Any, origin: str = "<dict>", lines: Lines | None = None) -> QualityMap:
        lines = lines or {}
        if not isinstance(data, dict):
            found = "empty" if data is None else f"a {type(data).__name__}"
            raise QualityMapError(
                origin, f"is {found}, not a mapping of keys; write name, description, labels, ..."
            )
        try:
            definition = QualityMapDefinition.model_validate(data)
        except ValidationError as exc:
            raise schema_error(exc, data, origin, lines) from exc
        return cls(definition, data, origin, lines)

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.data, sort_keys=True).encode()).hexdigest()

    # -------------------------------------------------------------- validation
    def _fail(
        self, message: str, labels: list[str] | None = None, at: tuple[str | int, ...] = ()
    ) -> NoReturn:
        where = place(self.origin, self._lines, at)
        raise QualityMapError(f"{self.name} ({where})", message, labels)

    def _check_known_labels(self) -> None:
        known = set(self.labels)
        tiers, edges = self.definition.tiers, self.definition.better_than
        for key, used in (
            ("tiers", [label for tier in tiers for label in tier]),
            ("better_than", [label for edge in edges for label in edge]),
            ("exclude", list(self.exclude)),
        ):
            unknown = sorted(set(used) - known)
            if unknown:
                self._fail(
                    f"unknown label(s) {unknown}: add them to 'labels' or fix the spelling",
                    unknown,
                    (key,),
                )

    def _check(self) -> None:
        tiers, edges = self.definition.tiers, self.definition.better_than
        seen: dict[str, int] = {}
        for index, tier in enumerate(tiers):
            for label in tier:
                if label in seen:
                    self._fail(
                        f"contradiction: label {label!r} is in tiers {seen[label]} and {index}; "
                        "keep it in one",
                        [label],
                        ("tiers", index),
                    )
                seen[label] = index
        both = sorted((set(seen) | {x for e in edges for x in e}) & self.exclude)
        if both:
            self._fail(
                f"contradiction: label(s) {both} are both ordered and excluded; drop one",
                both,
                ("exclude",),
            )
        for index, (better, worse) in enumerate(edges):
            if better == worse:
                self._fail(
                    f"cycle: {better!r} is declared better than itself; remove the edge",
                    [better],
                    ("better_than", index),
                )
        cycle = self._order.find_cycle()
        if cycle:
            self._fail(
                f"cycle in the order: {show_chain(cycle)}; remove one of its edges",
                cycle[:-1],
                ("better_than",) if edges else ("tiers",),
            )
        self._check_rule(set(self.labels))
        self._check_pairwise()
        scored = self.rule.scored_labels() if self.rule else set()
        unordered = [x for x in self._order.unordered() if x not in self.exclude | scored]
        if unordered:
            self._fail(
                f"label(s) {unordered} take part in no order, so their candidates would never "
                "pair: order it (tiers or better_than) or declare it in 'exclude'",
                unordered,
                ("labels",),
            )
        cycle = hierarchy_cycle(self.hierarchy.parents)
        if cycle:
            self._fail(
                f"cycle in the hierarchy: {show_chain(cycle, ' -> ')}; remove one parent link",
                cycle[:-1],
                ("hierarchy", "parents"),
            )

    def _check_rule(self, known: set[str]) -> None:
        if self.rule is None:
            return
        missing = sorted(set(self.rule.produces()) - known)
        if missing:
            self._fail(
                f"rating_rule produces label(s) {missing} absent from 'labels'; add them",
                missing,
                ("rating_rule",),
            )

    def _check_pairwise(self) -> None:
        rule = self.pairwise
        if rule is None:
            return
        if self.rule is not None:
            self._fail(
                "a map has either a rating_rule (candidates judged one by one) or a pairwise "
                "rule (pairs judged together), not both; remove one",
                at=("pairwise",),
            )
        missing = [x for x in (rule.high_label, rule.low_label) if x not in self.labels]
        if missing:
            self._fail(
                f"pairwise labels {missing} absent from 'labels'; add them", missing, ("pairwise",)
            )
        if not self._order.beats(rule.high_label, rule.low_label):
            self._fail(
                f"pairwise high_label {rule.high_label!r} must beat low_label "
                f"{rule.low_label!r} in the order; put them in tiers, best first",
                [rule.high_label, rule.low_label],
                ("pairwise",),
            )

    def check_ratings_carried(self, carried: Collection[str]) -> None:
        """Refuse a rule that reads a rating (an aspect) no candidate of the whole source
        carries (``carried``: every rating key of every candidate read): a misspelt aspect
        would otherwise leave out its whole view, counted as "no rating" under a build that
        succeeds. Some candidates lacking it stays a counted skip."""
        if self.rule is None or self.pairwise is not None:
            return
        read = dict.fromkeys(map(self.rule.rating_key, self.views))
        missing = [key for key in read if key not in carried]
        if missing:
            given = sorted(carried)
            self._fail(
                f"rating_rule reads {missing}, which no candidate of the source carries (its "
                f"candidates carry {given if given else 'no ratings'}); fix the spelling in the "
                "map, or make the adapter give that rating",
                missing,
                ("rating_rule", "aspects" if getattr(self.rule, "aspects", None) else "rating"),
            )

    # ------------------------------------------------------------------ views
    @property
    def views(self) -> list[str | None]:
        """Independent quality views: one per aspect of the rule, else a single unnamed view."""
        return self.meaning.views()

    @property
    def numeric(self) -> bool:
        """Candidates carry scores compared by the rule's gap, not labels in the order."""
        return self.meaning.scored

    @property
    def rated(self) -> bool:
        """A system's human score averages ratings rather than counting its top-tier share."""
        return self.meaning.rated

    def human_measure(self) -> str:
        """What a system's human score is under this map, in few words."""
        return self.meaning.measure_description(self.top_labels())

    def top_labels(self) -> list[str]:
        """The labels no other label beats (the best tier): a human score counts these."""
        return [
            label
            for label in self.labels
            if label not in self.exclude
            and not any(self._order.beats(other, label) for other in self.labels)
        ]

    def assess(self, candidate: Candidate, view: str | None) -> Assessment:
        """A candidate's label (or score) in one view; no rating -> excluded with the reason."""
        if self.rule is None:
            if candidate.label is None:
                self._data_error(candidate, "has no label and the map has no rating_rule")
            return self._labelled(candidate, candidate.label)
        key = self.rule.rating_key(view)
        values = (candidate.ratings or {}).get(key)
        if not values:
            return Assessment(excluded="no rating" if view else f"no {key!r} rating")
        try:
            assessment = self.rule.rate(values, key)
        except RatingFault as fault:
            self._data_error(candidate, str(fault), fault.labels)
        if assessment.excluded:
            return Assessment(excluded=f"{assessment.excluded} (quality map {self.name})")
        if assessment.score is not None:
            return assessment
        assert assessment.label is not None
        return self._labelled(candidate, assessment.label)

    def _labelled(self, candidate: Candidate, label: str) -> Assessment:
        if label not in self._order.graph:
            self._data_error(
                candidate,
                f"has label {label!r}, which is absent from the map (its labels: "
                f"{', '.join(map(repr, self.labels))}); add "
                "it to 'labels' (and order or exclude it) or fix the data",
                [label],
            )
        if label in self.exclude:
            return Assessment(excluded=f"label {label!r} takes no part (quality map {self.name})")
        return Assessment(label=label)

    def _data_error(
        self, candidate: Candidate, message: str, labels: list[str] | None = None
    ) -> NoReturn:
        where = candidate.where or f"candidate of {candidate.systems}"
        self._fail(f"{where}: candidate {message}", labels)

    def better(self, high: Assessment, low: Assessment) -> bool:
        """Is ``high`` of known strictly better quality than ``low``?"""
        return self.meaning.better(high, low, self._order.beats)

    # -------------------------------------------------------------- hierarchy
    def category_path(self, label: str, category: str | None = None) -> list[str]:
        """Top-down path of the error category of a low candidate (root first)."""
        leaf = category if category is not None else label
        separator, parents = self.hierarchy.separator, self.hierarchy.parents
        path = leaf.split(separator) if separator else [leaf]
        node = path[0]
        while node in parents:
            node = parents[node]
            path.insert(0, node)
        if parents and self.hierarchy.strict:
            roots = set(self.hierarchy.roots) | set(parents.values())
            if path[0] not in roots:
                self._fail(
                    f"category {leaf!r} is not in the hierarchy; add it to "
                    "'hierarchy.parents' or fix the data",
                    [leaf],
                    ("hierarchy", "parents"),
                )
        return path
