"""A declared rating cell -> the number the quality map compares: checked on the file's own
scale (a fault is the row's, naming the ``source.yaml`` line that declares the rating)."""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

from nnd_suites.declarative.loading import Declared
from nnd_suites.declarative.model import Candidates
from nnd_suites.declarative.table import Row, cell
from nnd_suites.errors import SourceFormatError
from nnd_suites.infra.reading import MAX_NUMBER
from nnd_suites.sources import parse_number, read_number


def rating_cell(
    declared: Declared,
    spec: Candidates,
    row: Row,
    column: str,
    path: Path,
    line: int,
    keys: tuple[str, ...],
) -> float:
    value = cell(declared, row, column, path, line, ("candidates", *keys))
    return parse_rating(declared, spec, value, column, path, line, keys)


def parse_rating(
    declared: Declared,
    spec: Candidates,
    value: object,
    column: str,
    path: Path,
    line: int,
    keys: tuple[str, ...],
) -> float:
    """A rating as the map compares it: checked on the file's own scale, then negated when
    lower is better (0.0 - x: an error count of 0 stays 0.0, never -0.0)."""
    low, high = spec.scale(keys[-1])  # keys: ('ratings', aspect), or ('value',)
    number = math.nan
    # the common case without parse_number's message-building (which formats every value)
    if type(value) in (int, float) or type(value) is str:
        with contextlib.suppress(ValueError, OverflowError):
            number = read_number(value)  # type: ignore[arg-type]
    on_scale = (low is None or number >= low) and (high is None or number <= high)
    if not (abs(number) <= MAX_NUMBER and on_scale):  # nan too: parse_number names the fault
        try:
            number = parse_number(value, path, line, column, low=low, high=high)  # type: ignore[arg-type]
        except SourceFormatError as exc:
            raise exc.with_hint(
                f"a rating declared at {declared.at('candidates', *keys)}: fix the value, or "
                "leave such rows out with a filter (--skip-malformed counts them instead)",
            ) from None
    return number if spec.better == "higher" else 0.0 - number
