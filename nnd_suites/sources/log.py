"""What a build leaves out, counted by reason, and where the reader is (for error messages)."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from nnd_suites.errors import NNDError, SourceFormatError

#: How many example locators each skip reason keeps in a manifest.
SKIP_EXAMPLES = 20
T = TypeVar("T")


@dataclass
class SkipLog:
    """Counts everything left out of a suite, by reason, with example locators (file:line, ids)."""

    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, where: str, n: int = 1) -> None:
        self.counts[reason] += n
        kept = self.examples.setdefault(reason, [])
        if len(kept) < SKIP_EXAMPLES:
            kept.append(where)

    def records(self) -> list[dict[str, Any]]:
        return [
            {"reason": reason, "count": count, "examples": self.examples.get(reason, [])}
            for reason, count in sorted(self.counts.items())
        ]


@dataclass
class ReadLog:
    """Handed to an adapter's ``read``: where it reports what it leaves out.

    ``skip`` records a candidate or row left out on purpose; ``malformed`` raises the error
    (default) or, with ``skip_malformed``, records the row with its line number and goes on.
    The shared readers count the rows they hand out (``rows``) and keep the position of the last
    one (``at``), so that :meth:`guard` can name the row an adapter failed on.
    """

    skipped: SkipLog = field(default_factory=SkipLog)
    skip_malformed: bool = False
    rows: int = 0
    at: tuple[str, int | None] | None = None
    #: Every file the adapter read (path -> name to record, or None for the default name), in
    #: the order first read: the manifest hashes each, so a suite names all of its inputs.
    files: dict[Path, str | None] = field(default_factory=dict)
    #: At most this many rows are read (None: all); the next one raises ``over_max_rows(where)``.
    #: A pairwise build sets it to its pair budget (one judgment a row, at most one test each):
    #: adapters gather every group before yielding one, so only the reader can stop in time.
    max_rows: int | None = None
    over_max_rows: Callable[[str], Exception] | None = None
    #: Set by an adapter that gathers several rows into one candidate (a row per rater, per
    #: marked error): a malformed row whose candidate cannot be told then stops the build even
    #: with ``skip_malformed`` (:func:`unattributable`).
    gathers_rows: bool = False
    #: (file, line) of each row :meth:`unreadable` left out: a reader that groups rows names it
    #: as why a group it may have belonged to is short of candidates
    unreadable_at: list[tuple[str, int | None]] = field(default_factory=list)

    def note_file(self, path: Path, shown: str | None = None) -> None:
        """Record that ``path`` is read (the shared readers call this; an adapter reading a file
        by other means calls it too). ``shown`` is how to name it, e.g. the URL it came from."""
        self.files.setdefault(Path(path), shown)

    def skip(self, reason: str, where: str, n: int = 1) -> None:
        self.skipped.add(reason, where, n)

    def malformed(self, error: SourceFormatError) -> None:
        if not self.skip_malformed:
            raise error
        where = f"{Path(error.path).name}:{error.line}"
        detail = "".join(f" ({aside})" for aside in (error.value, error.detail) if aside)
        self.skipped.add(f"malformed row: {error.counted_as}", where + detail)

    def unreadable(self, error: SourceFormatError) -> None:
        """A row the reader cannot take apart into its fields (the wrong number of fields, an
        unbalanced quote, invalid JSON): :meth:`malformed`, unless the adapter gathers rows."""
        if self.gathers_rows:
            raise unattributable(error)
        self.malformed(error)
        self.unreadable_at.append((error.path, error.line))

    def row(self, path: Path, line: int | None) -> None:
        """Called by the readers for every row they hand out."""
        self.rows += 1
        self.at = (str(path), line)
        if self.max_rows is not None and self.rows > self.max_rows:
            where = f"{Path(path).name}:{line}" if line is not None else Path(path).name
            if self.over_max_rows is None:
                raise NNDError(f"{where}: more than {self.max_rows:,} rows; stopped reading")
            raise self.over_max_rows(where)

    def guard(self, items: Iterable[T]) -> Iterator[T]:
        """Pass ``items`` (an adapter's groups) through, turning a row whose values have the
        wrong types (pydantic refused a Candidate or Group built from it) into a file:line error.

        Every adapter builds its groups from rows the shared readers hand out, so this one place
        covers them all; the generator cannot go on after such an error, so it is never skipped.
        """
        try:
            yield from items
        except ValidationError as exc:
            raise self._wrong_type(exc) from None

    @contextlib.contextmanager
    def each_row(self) -> Iterator[None]:
        """Around an adapter's work on one row: a fault of the row (a SourceFormatError, or a
        value pydantic refuses) is an error, or with ``skip_malformed`` the row is left out
        (what the block had not yet yielded) and counted, and the adapter goes on."""
        try:
            yield
        except SourceFormatError as exc:
            self.malformed(exc)
        except ValidationError as exc:
            self.malformed(self._wrong_type(exc))

    def value_of(self, read: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        """What ``read(*args, **kwargs)`` gives, or None when it raises a row's fault, handled
        as in :meth:`each_row`: for an adapter that leaves out what the row was part of."""
        with self.each_row():
            return read(*args, **kwargs)
        return None

    def _wrong_type(self, exc: ValidationError) -> SourceFormatError:
        path, line = self.at or ("(source)", None)
        errors = exc.errors()[:3]
        if all(e["type"] == "value_error" for e in errors):  # the right type, a refused value
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg'].removeprefix('Value error, ')}"
                for e in errors
            )
            return SourceFormatError(path, line, f"a value of this row is refused: {problems}")
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']} "
            f"(got {type(e['input']).__name__})"
            for e in errors
        )
        return SourceFormatError(
            path,
            line,
            f"a value of this row has the wrong type for a {exc.title}: {problems}",
            "texts, labels and ids must be JSON strings",
        )


def unattributable(error: SourceFormatError) -> SourceFormatError:
    """The error of a malformed row whose candidate cannot be told, in a source that gathers
    several rows per candidate. ``--skip-malformed`` leaves such a row out only with the candidate
    it rates: one judged on its other rows could change its label (its worst error lost, a mean
    or a majority moved), with nothing to tell. So this row stops the build."""
    hint = "; ".join(
        part
        for part in (
            error.hint,
            "the output this row rates cannot be told, and rows are gathered per output: "
            "--skip-malformed leaves a row out only with the output it rates; mend the row",
        )
        if part
    )
    return error.with_hint(hint)
