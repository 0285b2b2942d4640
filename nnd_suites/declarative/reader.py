"""A declared table's rows -> groups of rated candidates, or groups of judged pairs.

A row's own fault (a rating that is not a number, a text that is a list) goes to
``log.malformed`` (an error naming the data line, or with ``--skip-malformed`` a counted record); a
fault of the declaration (a column the file lacks, a winner value it does not declare, groups
that hold one candidate) is a :class:`DeclarationError` naming the ``source.yaml`` line and the
data line: skipping rows would hide it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nnd_suites.declarative.comparisons import judgment_of, one_vote_each
from nnd_suites.declarative.loading import Declared
from nnd_suites.declarative.model import Candidates, Fixed
from nnd_suites.declarative.ratings import parse_rating, rating_cell
from nnd_suites.declarative.table import (
    MISSING,
    Row,
    cell,
    fixed_or_cell,
    key_cells,
    key_group_id,
    name_cell,
    one_spelling,
    table_rows,
    text_cell,
    written_one_way,
)
from nnd_suites.errors import DeclarationError, SourceFormatError
from nnd_suites.infra.formatting import clip
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.records.judgments import JudgedGroup, Judgment
from nnd_suites.sources import ReadLog, unattributable

ONE_CANDIDATE = "group with one candidate"
ONE_CANDIDATE_LEFT = "group with one candidate once its malformed rows are left out"
#: A gathered output judged without one of its rows would be rated by fewer raters than rated it
#: (a mean, a majority moved) with nothing to tell: it is left out with that row.
GATHERED_LEFT_OUT = "output left out whole: a row of its ratings is malformed (counted apart)"
RATERS_UNNAMED = "raters not named: a rater left an aspect of this output unrated"


@dataclass
class _Gathered:
    text: str
    system: str
    where: str
    ratings: dict[str, list[float]] = field(default_factory=dict)
    #: with a rater column: rater -> aspect -> (rating, where), in the order first seen
    by_rater: dict[str, dict[str, tuple[float, str]]] = field(default_factory=dict)
    #: gathered with no rater column: aspect -> where its one rating is
    rated_at: dict[str, str] = field(default_factory=dict)

    def candidate(self, log: ReadLog) -> Candidate:
        if not self.by_rater:
            return Candidate(
                text=self.text, systems=[self.system], ratings=self.ratings, where=self.where
            )
        aspects = list(dict.fromkeys(a for given in self.by_rater.values() for a in given))
        ratings = {
            aspect: [given[aspect][0] for given in self.by_rater.values() if aspect in given]
            for aspect in aspects
        }
        # Candidate pairs raters[i] with ratings[aspect][i] in every aspect: named only when
        # every rater rated every aspect of the output
        complete = all(len(given) == len(aspects) for given in self.by_rater.values())
        if not complete:
            log.skip(RATERS_UNNAMED, self.where)
        return Candidate(
            text=self.text,
            systems=[self.system],
            ratings=ratings,
            raters=list(self.by_rater) if complete else None,
            where=self.where,
        )


@dataclass
class _Bucket:
    """One group as it fills: its id, its context, where it starts, its candidates or judgments."""

    id: str
    context: dict[str, str]
    where: str
    candidates: dict[tuple[str, ...], _Gathered] = field(default_factory=dict)
    judgments: list[Judgment] = field(default_factory=list)


def read_declared(declared: Declared, path: Path, log: ReadLog) -> Iterator[Group | JudgedGroup]:
    """Every group of the table at ``path``, in the order each first appears."""
    spec = declared.spec
    buckets: dict[tuple[str, ...], _Bucket] = {}
    malformed: Counter[tuple[str, ...]] = Counter()  # rows left out (--skip-malformed), by group
    # group key -> the gathered outputs (text, system) one of whose rows was left out
    incomplete: dict[tuple[str, ...], set[tuple[str, str]]] = {}
    # each aspect of the aspect column, or category of the category column, as first seen
    spellings: dict[str, tuple[str, str]] = {}
    judged: dict[tuple[tuple[str, ...], str, frozenset[str]], str] = {}  # see one_vote_each
    name = path.name
    gathered = spec.candidates is not None and spec.candidates.gathered
    log.gathers_rows = gathered
    unnamed = gathered and spec.candidates is not None and spec.candidates.rater is None
    # a row repeated exactly that nothing else refuses (a rater's second verdict or rating, a
    # named system's text twice): a copy or a second vote, never told apart
    votes = spec.comparisons is not None and spec.comparisons.rater is None
    outputs = not gathered and spec.candidates is not None
    outputs = outputs and isinstance(spec.candidates.system, Fixed)
    rows_seen: dict[bytes, str] | None = {} if votes or outputs else None
    keys_seen: dict[tuple[str, ...], tuple[tuple[str, ...], str]] = {}  # see one_spelling
    for line, row in table_rows(declared, path, log):
        where = f"{name}:{line}"
        key: tuple[str, ...] | None = None  # known once the row's key cells are read
        rated = None  # the row's cells, once read: a fault after that is a repeated rating
        try:
            declared_key = key_cells(declared, spec.group.key, row, path, line)
            key = declared_key or None  # without group.key, known once the context is read
            context = {
                name: text_cell(declared, row, column, path, line, ("group", "context", name))
                for name, column in spec.group.context.items()
            }
            # no key: the rows of one context are one group, so that verdicts on one pair
            # combine (one group a row held a pair judged both ways as two opposite tests)
            key = declared_key or tuple(context.values())
            category = spec.comparisons.category if spec.comparisons is not None else None
            if category is not None:
                value = text_cell(declared, row, category, path, line, ("comparisons", "category"))
                written_one_way(spellings, value, category, "category", (path, line))
                if category not in spec.group.key:
                    # verdicts on one pair combine within a group: never across aspects judged
                    key = (*key, value)
            if spec.group.key:
                one_spelling(keys_seen, key, where, (path, line))
            bucket = buckets.get(key)
            if bucket is not None and bucket.context != context:
                raise DeclarationError(
                    f"{declared.at('group', 'key')}: {where} and {bucket.where} share the group "
                    f"key {list(key)} but not their context; add the columns that tell them "
                    "apart to group.key"
                )
            if rows_seen is not None:
                _not_repeated(rows_seen, row, where, (path, line))
            # the row is read whole before it joins a group: a malformed row makes none
            if spec.comparisons is not None:
                judgment = judgment_of(declared, spec.comparisons, row, path, line)
                one_vote_each(judged, key, judgment, (path, line))
            else:
                assert spec.candidates is not None  # the model requires one of the two
                at = (path, line, where)
                rated = _candidate_row(declared, spec.candidates, row, at, spellings)
            if bucket is None:
                group_id = key_group_id(key) if spec.group.key else f"line {line}"
                bucket = buckets[key] = _Bucket(group_id, context, where)
            if spec.comparisons is not None:
                bucket.judgments.append(judgment)
            else:
                _add_candidate(bucket, *rated, gathered=spec.candidates.gathered, at=(path, line))
        except SourceFormatError as exc:  # this row's own fault: an error, or counted
            log.malformed(exc)
            output = None
            # a row read whole is at fault as a repeat: a named rater's is one person's, kept
            # once; an unnamed one may be a second rater, so its output is left out whole
            if gathered and (rated is None or unnamed):
                assert spec.candidates is not None
                output = _output_of(declared, spec.candidates, row, path, line)
                if key is None or output is None:  # the output it rated cannot be told
                    raise unattributable(exc) from None
            if key is not None:
                malformed[key] += 1
                if output is not None:
                    incomplete.setdefault(key, set()).add(output)
    # groups short of candidates with no row of their own left out: as many unreadable rows
    # (whose group cannot be read) left out may be theirs, more cannot (a key fault)
    short = [k for k, b in buckets.items() if len(b.candidates) < 2 and not malformed[k]]
    unread = [at for at in log.unreadable_at if at[0] == str(path)]
    unread = unread if spec.candidates is not None and len(short) <= len(unread) else []
    for key, bucket in buckets.items():
        group_id = bucket.id
        if spec.comparisons is not None:
            yield JudgedGroup(
                id=group_id, context=bucket.context, judgments=bucket.judgments, where=bucket.where
            )
            continue
        for output in incomplete.get(key, ()):
            left_out = bucket.candidates.pop(output, None)
            if left_out is not None:
                log.skip(GATHERED_LEFT_OUT, left_out.where)
        if len(bucket.candidates) < 2:
            if malformed[key] or unread:  # --skip-malformed left its other rows out
                log.skip(
                    ONE_CANDIDATE_LEFT,
                    bucket.where + _nearest(unread, malformed[key], bucket.where),
                )
                continue
            if spec.group.single_candidate == "skip":
                log.skip(ONE_CANDIDATE, bucket.where)
                continue
            raise DeclarationError(
                f"{declared.at('group', 'key')}: group {clip(repr(group_id))} ({bucket.where}) "
                "has one candidate; check group.key (is a column that varies per output in "
                "it?), or set group.single_candidate: skip to count such groups and leave them out"
            )
        yield Group(
            id=group_id,
            context=bucket.context,
            where=bucket.where,
            candidates=[c.candidate(log) for c in bucket.candidates.values()],
        )


def _not_repeated(seen: dict[bytes, str], row: Row, where: str, at: tuple[Path, int]) -> None:
    """A row equal in every cell to an earlier one (``seen``: digest -> where) is this row's
    fault: pooled as an identical output or counted as a second vote, it would move a mean or a
    majority, and with no rater column a copy cannot be told from a second rater's judgment."""
    cells = json.dumps(row, sort_keys=True, ensure_ascii=False, default=repr)
    first = seen.setdefault(hashlib.sha256(cells.encode()).digest(), where)
    if first != where:
        raise SourceFormatError(
            str(at[0]),
            at[1],
            "this row repeats an earlier row in every cell; with no rater column a copy cannot "
            "be told from a second rater's judgment",
            "delete the copy, or name each row's rater in a rater column; --skip-malformed "
            "counts the repeat and leaves it out",
            f"first at {first}",
        )


def _nearest(unread: list[tuple[str, int | None]], own: int, where: str) -> str:
    """Name (and take from ``unread``) the unreadable row nearest the group starting at
    ``where`` (``file:line``), for a short group with no malformed row of its ``own``."""
    if own:
        return ""
    name, _, line = where.rpartition(":")  # line: '3', or '3 (item 7)' (an ItemLine)
    at = min(unread, key=lambda at: abs((at[1] or 0) - int(line.split(" ")[0])))
    unread.remove(at)
    return f" (its other rows may be the unreadable row left out at {name}:{at[1]})"


def _output_of(
    declared: Declared, spec: Candidates, row: Row, path: Path, line: int
) -> tuple[str, str] | None:
    """The gathered output (text, system) a malformed row rated, or None when its own text or
    system cell is at fault (then it names no output)."""
    try:
        text = text_cell(declared, row, spec.text, path, line, ("candidates", "text"))
        return text, fixed_or_cell(declared, spec.system, row, path, line, "system")
    except SourceFormatError:
        return None


def _candidate_row(
    declared: Declared,
    spec: Candidates,
    row: Row,
    at: tuple[Path, int, str],
    spellings: dict[str, tuple[str, str]],
) -> tuple[str, str, str, dict[str, list[float]], str | None]:
    """(text, system, where, ratings, rater) of one row (``at``: file, line, ``file:line``),
    every cell checked; ``spellings`` holds each aspect of the aspect column seen so far."""
    path, line, where = at
    text = text_cell(declared, row, spec.text, path, line, ("candidates", "text"))
    system = fixed_or_cell(declared, spec.system, row, path, line, "system")
    rater = None
    if spec.rater is not None:
        rater = name_cell(declared, row, spec.rater, path, line, ("candidates", "rater"))
        if not rater.strip():
            # an empty cell is no one: read as a rater named '', it would meet every other
            # empty cell as one person, and their ratings of two outputs would make a vote
            raise SourceFormatError(
                str(path),
                line,
                f"empty rater cell (column {spec.rater!r}, named at "
                f"{declared.at('candidates', 'rater')})",
                f"fill it, or leave such rows out with a filter: {{column: {spec.rater}, "
                "not: '', reason: no rater}; --skip-malformed counts them instead",
            )
    ratings: dict[str, list[float]] = {}
    if spec.aspect_column is not None and spec.value is not None:
        column, keys = spec.aspect_column, ("candidates", "aspect_column")
        aspect = text_cell(declared, row, column, path, line, keys)
        written_one_way(spellings, aspect, column, "aspect", (path, line))
        ratings[aspect] = [rating_cell(declared, spec, row, spec.value, path, line, ("value",))]
    for aspect, columns in (spec.ratings or {}).items():
        keys = ("ratings", aspect)
        if isinstance(columns, list):  # one column per rater
            cells = [row.get(column, MISSING) for column in columns]  # flat columns: most tables
            if any(value is MISSING for value in cells):  # a dotted path, or the column's error
                cells = [cell(declared, row, c, path, line, ("candidates", *keys)) for c in columns]
            ratings[aspect] = [
                parse_rating(declared, spec, value, column, path, line, keys)
                for value, column in zip(cells, columns, strict=True)
            ]
            continue
        value = cell(declared, row, columns, path, line, ("candidates", *keys))
        values = value if isinstance(value, list) else [value]  # a list column: every rater
        ratings[aspect] = [
            parse_rating(declared, spec, v, columns, path, line, keys) for v in values
        ]
    if rater is not None and any(len(values) != 1 for values in ratings.values()):
        raise SourceFormatError(
            str(path),
            line,
            f"rater {clip(repr(rater))}: a row of one rater gives one rating per aspect, not a "
            "list",
            "point each aspect at one column, or leave candidates.rater out",
        )
    return text, system, where, ratings, rater


def _add_candidate(
    bucket: _Bucket,
    text: str,
    system: str,
    where: str,
    ratings: dict[str, list[float]],
    rater: str | None,
    *,
    gathered: bool,
    at: tuple[Path, int],
) -> None:
    """Add one row's ratings (the row at ``at``: file and line) to its candidate in ``bucket``."""
    # not gathered, each row is a candidate of its own (rows may share a line: a minified list)
    identity = (text, system) if gathered else (str(len(bucket.candidates)),)
    candidate = bucket.candidates.setdefault(identity, _Gathered(text, system, where))
    if rater is None:
        if gathered:  # one row per aspect: a second is a repeat or a rater it cannot name
            _rated_once(candidate.rated_at, ratings, where, at)
        for aspect, values in ratings.items():
            candidate.ratings.setdefault(aspect, []).extend(values)
        return
    given = candidate.by_rater.setdefault(rater, {})
    for aspect in ratings:
        if aspect in given:  # counted twice, it would weigh twice in the mean
            raise SourceFormatError(
                str(at[0]),
                at[1],
                f"a rater rated {aspect!r} of this output again",
                "keep one of the two rows",
                f"rater {clip(repr(rater))}, first at {given[aspect][1]}",
            )
    given.update((aspect, (values[0], where)) for aspect, values in ratings.items())


def _rated_once(
    rated_at: dict[str, str], ratings: dict[str, list[float]], where: str, at: tuple[Path, int]
) -> None:
    """With no rater column, a second row rating an aspect of one output cannot be told from a
    repeated row (an identical row would weigh twice in a mean or a majority): malformed, as a
    named rater's second rating is. ``rated_at``: aspect -> where the output's rating is."""
    for aspect in ratings:
        first = rated_at.setdefault(aspect, where)
        if first != where:
            raise SourceFormatError(
                str(at[0]),
                at[1],
                f"{aspect!r} of this output is rated again; with no rater column a second "
                "rater cannot be told from a repeated row",
                "keep one of the two rows, or name each row's rater with candidates.rater",
                f"first at {first}",
            )
