"""The one number formatter of every report and chart: percent, signed points, a rate with its
interval, p-values, counts, plurals, the one Markdown cell escaper and inline code span, and the
one shortener of long values an error quotes (:func:`clip`).

Every renderer (report.md, leaderboard.md, comparison.md, robustness.md, verify.md, placement.md,
the bias baselines' table and the charts) formats through here, so one figure reads the same in
every file. A leaf module: it imports nothing of ours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

NA = "n/a"


def percent(value: float | None, digits: int = 1) -> str:
    """A share as a percentage: ``0.123`` -> ``12.3%``."""
    return NA if value is None else f"{100 * value:.{digits}f}%"


def points(value: float | None, digits: int = 1) -> str:
    """A difference of two shares in signed percentage points: ``-0.05`` -> ``-5.0``."""
    return NA if value is None else f"{100 * value:+.{digits}f}"


def interval(ci: Sequence[float] | None, signed: bool = False) -> str:
    """A 95% interval of a share, in percent (``[12.0, 15.5]``) or signed points."""
    if ci is None:
        return NA
    low, high = ci
    if signed:
        return f"[{points(low)}, {points(high)}]"
    return f"[{100 * low:.1f}, {100 * high:.1f}]"


def rate_with_interval(value: float | None, ci: Sequence[float] | None) -> str:
    """A pass rate and its interval: ``12.3% [10.1, 14.8]`` (``n/a`` when there is none)."""
    if value is None:
        return NA
    return percent(value) if ci is None else f"{percent(value)} {interval(ci)}"


def difference_with_interval(value: float | None, ci: Sequence[float] | None) -> str:
    """A difference in points and its interval: ``+4.2 [+1.0, +7.3]``."""
    if value is None:
        return NA
    return points(value) if ci is None else f"{points(value)} {interval(ci, signed=True)}"


def p_value(value: float | None) -> str:
    """A p-value: two significant digits, scientific notation below 0.0001."""
    if value is None:
        return NA
    return f"{value:.2g}" if value >= 1e-4 else f"{value:.1e}"


def number(value: float | None, digits: int = 2) -> str:
    """A statistic such as a correlation, signed: ``+0.42``."""
    if value is None:
        return NA
    return f"{value:+.{digits}f}"


def number_interval(ci: Sequence[float] | None, digits: int = 2) -> str:
    """An interval of a statistic such as a correlation: ``[-0.12, +0.80]``."""
    return NA if ci is None else f"[{number(ci[0], digits)}, {number(ci[1], digits)}]"


def count(value: int) -> str:
    """A count with thousands separators: ``12,345``."""
    return f"{value:,}"


def clip(text: str, limit: int = 100) -> str:
    """``text`` (a value as an error quotes it: ``repr(group_id)``) cut to its first ``limit``
    characters, saying how long it was, so a group id that is a whole dialogue keeps an error to
    one readable line: ``'so , i \\'m reading...'... (2,684 characters)``."""
    return text if len(text) <= limit else f"{text[:limit]}... ({count(len(text))} characters)"


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``1 group``, ``2 groups``, ``1 match``, ``3 matches`` (counts with separators)."""
    if n == 1:
        return f"1 {singular}"
    if plural_form is None:
        ends_in_s = singular.endswith(("s", "x", "z", "ch", "sh"))
        plural_form = singular + ("es" if ends_in_s else "s")
    return f"{count(n)} {plural_form}"


def code(value: object) -> str:
    """Any text as one Markdown inline code span (CommonMark): fenced by one backtick more than
    its longest run of them, padded with a space where it starts or ends with a backtick (or
    with a space at both ends, which the span would strip), so a model folder named
    ``my`model`` reads as itself; line breaks become spaces."""
    text = " ".join(str(value).splitlines())
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    spaced = text[:1] == text[-1:] == " " and text.strip()
    pad = " " if not text or "`" in text[:1] + text[-1:] or spaced else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def cell(value: object) -> str:
    """Text made safe for one Markdown table cell: a ``|`` is escaped and line breaks become
    spaces, so a category or system name cannot break the table."""
    text = " ".join(str(value).splitlines())
    return text.replace("\\|", "|").replace("|", "\\|")


def row(values: Sequence[object]) -> str:
    """One Markdown table row; every value goes through :func:`cell`."""
    return "| " + " | ".join(cell(v) for v in values) + " |"


def table(
    header: Sequence[object], rows: Iterable[Sequence[object]], align: str | list[str] = ""
) -> str:
    """A Markdown table, every cell through :func:`cell`; ``align`` gives the separator of the
    columns after the first: one for all (``"---:"`` for numbers, plain ``---`` when empty) or
    a list, one per column."""
    aligns = [align] * (len(header) - 1) if isinstance(align, str) else align
    if len(aligns) != len(header) - 1:
        raise ValueError(
            f"{len(aligns)} alignments for the {len(header) - 1} columns after the first"
        )
    separator = "|---|" + "".join(f"{a or '---'}|" for a in aligns)
    return "\n".join([row(header), separator, *(row(values) for values in rows)])
