"""Quality maps: declared partial orders of quality over labels (paper step 2, "assign quality").

Maps are data files in ``quality_maps/`` (YAML or JSON), validated by
``schemas/quality_map.schema.json``. Loading also checks what a schema cannot: unknown labels,
contradictions and cycles, each named in the error.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from nnd_suites.errors import QualityMapError, UnknownItemError
from nnd_suites.groups import Candidate

SCHEMA_FILE = "quality_map.schema.json"
_AGGREGATES = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "min": min,
    "max": max,
    "sum": sum,
}


def quality_map_schema() -> dict[str, Any]:
    text = resources.files("nnd_suites.schemas").joinpath(SCHEMA_FILE).read_text("utf-8")
    return json.loads(text)


def builtin_quality_maps() -> dict[str, Path]:
    """Name -> file of every map shipped in ``quality_maps/``."""
    folder = resources.files("nnd_suites.quality_maps")
    found = {}
    for entry in folder.iterdir():
        if entry.name.endswith((".yaml", ".yml", ".json")) and not entry.name.startswith("_"):
            found[entry.name.rsplit(".", 1)[0]] = Path(str(entry))
    return found


def level_key(value: float | str) -> str:
    """Canonical text of a credit level: 1, 1.0 and "1" are all "1"; 0.5 is "0.5"."""
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return str(value)


@dataclass(frozen=True)
class Assessment:
    """The quality a map gives one candidate in one view (an aspect, or the only view)."""

    label: str | None = None
    score: float | None = None
    excluded: str | None = None  # reason the candidate takes no part, if any


class QualityMap:
    """A validated quality map. Build with :meth:`load` (a name or a path) or :meth:`from_dict`."""

    def __init__(self, data: dict[str, Any], origin: str) -> None:
        self.origin = origin
        self.data = data
        self.name: str = data["name"]
        self.description: str = data["description"]
        self.labels: list[str] = list(data["labels"])
        self.exclude: set[str] = set(data.get("exclude", []))
        self.pairs_per: str = data.get("pairs_per", "candidate")
        self.conflicting_labels: str = data.get("conflicting_labels", "exclude")
        self.rule: dict[str, Any] | None = data.get("rating_rule")
        self.hierarchy: dict[str, Any] = data.get("hierarchy", {})
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
        if not path.is_file():
            raise QualityMapError(text, "file not found; pass a map name or an existing file")
        raw = path.read_text("utf-8")
        try:
            data = json.loads(raw) if path.suffix == ".json" else yaml.safe_load(raw)
        except (json.JSONDecodeError, yaml.YAMLError) as exc:
            raise QualityMapError(str(path), f"cannot parse: {exc}") from exc
        return cls.from_dict(data, origin=str(path))

    @classmethod
    def from_dict(cls, data: Any, origin: str = "<dict>") -> QualityMap:
        errors = sorted(
            jsonschema.Draft202012Validator(quality_map_schema()).iter_errors(data),
            key=lambda e: list(e.absolute_path),
        )
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "(top level)"
            raise QualityMapError(
                origin, f"does not match the quality-map schema at {where}: {first.message}"
            )
        return cls(data, origin)

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.data, sort_keys=True).encode()).hexdigest()

    # -------------------------------------------------------------- validation
    def _fail(self, message: str, labels: list[str] | None = None) -> None:
        raise QualityMapError(f"{self.name} ({self.origin})", message, labels)

    def _check(self) -> None:
        known = set(self.labels)
        tiers = self.data.get("tiers", [])
        edges = [tuple(edge) for edge in self.data.get("better_than", [])]
        used = [label for tier in tiers for label in tier] + [x for e in edges for x in e]
        used += list(self.exclude)
        unknown = sorted({label for label in used if label not in known})
        if unknown:
            self._fail(
                f"unknown label(s) {unknown}: add them to 'labels' or fix the spelling", unknown
            )
        seen: dict[str, int] = {}
        for index, tier in enumerate(tiers):
            for label in tier:
                if label in seen:
                    self._fail(
                        f"contradiction: label {label!r} is in tiers {seen[label]} and {index}",
                        [label],
                    )
                seen[label] = index
        ordered = set(seen) | {x for e in edges for x in e}
        both = sorted(ordered & self.exclude)
        if both:
            self._fail(f"contradiction: label(s) {both} are both ordered and excluded", both)
        for better, worse in edges:
            if better == worse:
                self._fail(f"cycle: {better!r} is declared better than itself", [better])
        graph: dict[str, set[str]] = {label: set() for label in self.labels}
        for upper in range(len(tiers)):
            for lower in range(upper + 1, len(tiers)):
                for better in tiers[upper]:
                    graph[better].update(tiers[lower])
        for better, worse in edges:
            graph[better].add(worse)
        self._graph = graph
        cycle = _find_cycle(graph)
        if cycle:
            self._fail("cycle in the order: " + " > ".join(cycle), cycle)
        self._better = {label: _reachable(graph, label) for label in graph}
        self._check_rule(known)
        self._check_hierarchy()

    def _check_rule(self, known: set[str]) -> None:
        rule = self.rule
        if not rule:
            return
        kind = rule["kind"]
        if kind == "majority_top":
            produced = [rule["high_label"], rule["low_label"]]
        elif kind == "graded":
            produced = list(rule["levels"].values())
            overlap = sorted(
                set(map(level_key, rule["levels"])) & set(map(level_key, rule.get("exclude", [])))
            )
            if overlap:
                self._fail(
                    f"contradiction: credit level(s) {overlap} are both compared and excluded",
                    overlap,
                )
        else:
            produced = [rule["low_label"]]
        missing = sorted({label for label in produced if label not in known})
        if missing:
            self._fail(f"rating_rule produces label(s) {missing} absent from 'labels'", missing)

    def _check_hierarchy(self) -> None:
        parents = self.hierarchy.get("parents", {})
        for start in parents:
            seen = [start]
            node = start
            while node in parents:
                node = parents[node]
                if node in seen:
                    self._fail("cycle in the hierarchy: " + " -> ".join([*seen, node]), seen)
                seen.append(node)

    # ------------------------------------------------------------------ views
    @property
    def views(self) -> list[str | None]:
        """Independent quality views: one per Likert aspect, else a single unnamed view."""
        if self.rule and self.rule["kind"] == "majority_top":
            return list(self.rule["aspects"])
        return [None]

    @property
    def numeric(self) -> bool:
        return bool(self.rule and self.rule["kind"] == "numeric")

    def assess(self, candidate: Candidate, view: str | None) -> Assessment:
        """Turn a candidate's annotation into a label (or score) for one view; unknown -> error."""
        rule = self.rule
        if rule is None:
            if candidate.label is None:
                self._data_error(candidate, "has no label and the map has no rating_rule")
            return self._labelled(candidate, candidate.label)
        kind = rule["kind"]
        key = view if kind == "majority_top" else rule["rating"]
        values = (candidate.ratings or {}).get(key)
        if not values:
            self._data_error(candidate, f"has no {key!r} ratings, which the rating_rule needs")
        if kind == "majority_top":
            tops = sum(1 for v in values if v == rule["top"])
            high = tops * 2 > len(values)
            return self._labelled(candidate, rule["high_label"] if high else rule["low_label"])
        if kind == "graded":
            level = level_key(values[0])
            if len(values) != 1:
                self._data_error(candidate, f"has {len(values)} {key!r} values; graded needs one")
            if level in {level_key(x) for x in rule.get("exclude", [])}:
                return Assessment(excluded=f"{key} {level} takes no part (quality map {self.name})")
            levels = {level_key(k): v for k, v in rule["levels"].items()}
            if level not in levels:
                self._data_error(
                    candidate,
                    f"has {key} level {level!r}, which the map neither "
                    f"compares {sorted(levels)} nor excludes",
                    [level],
                )
            return self._labelled(candidate, levels[level])
        score = float(_AGGREGATES[rule["aggregate"]](values))
        return Assessment(label=rule["low_label"], score=score)

    def _labelled(self, candidate: Candidate, label: str) -> Assessment:
        if label not in self._better:
            self._data_error(
                candidate,
                f"has label {label!r}, which is absent from the map; add "
                "it to 'labels' (and order or exclude it) or fix the data",
                [label],
            )
        if label in self.exclude:
            return Assessment(excluded=f"label {label!r} takes no part (quality map {self.name})")
        return Assessment(label=label)

    def _data_error(
        self, candidate: Candidate, message: str, labels: list[str] | None = None
    ) -> None:
        where = candidate.where or f"candidate of {candidate.systems}"
        self._fail(f"{where}: candidate {message}", labels)

    def better(self, high: Assessment, low: Assessment) -> bool:
        """Is ``high`` of known strictly better quality than ``low``?"""
        if self.numeric:
            assert high.score is not None and low.score is not None
            return high.score - low.score >= self.rule["minimum_gap"] - 1e-12
        return low.label in self._better[high.label]

    # -------------------------------------------------------------- hierarchy
    def category_path(self, label: str, category: str | None = None) -> list[str]:
        """Top-down path of the error category of a low candidate (root first)."""
        leaf = category if category is not None else label
        separator = self.hierarchy.get("separator")
        parents = self.hierarchy.get("parents", {})
        path = leaf.split(separator) if separator else [leaf]
        node = path[0]
        while node in parents:
            node = parents[node]
            path.insert(0, node)
        if parents and self.hierarchy.get("strict", True):
            roots = set(self.hierarchy.get("roots", [])) | set(parents.values())
            if path[0] not in roots:
                self._fail(
                    f"category {leaf!r} is not in the hierarchy; add it to "
                    "'hierarchy.parents' or fix the data",
                    [leaf],
                )
        return path

    def ordered_labels(self) -> list[tuple[str, list[str]]]:
        """(label, labels it beats) for every label that beats something, for descriptions."""
        return [(label, sorted(worse)) for label, worse in self._better.items() if worse]


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = list(graph[start])
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(graph[node])
    return seen


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """Return one cycle (as a label path closing on itself) if the graph has any."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None
