"""A declared comparison table's rows -> judgments: one row's verdict on two responses, and one
vote per named rater on each pair of texts of a group."""

from __future__ import annotations

from pathlib import Path

from nnd_suites.declarative.loading import Declared
from nnd_suites.declarative.model import Comparisons
from nnd_suites.declarative.table import Row, fixed_or_cell, name_cell, text_cell
from nnd_suites.errors import DeclarationError, SourceFormatError
from nnd_suites.infra.formatting import clip
from nnd_suites.records.judgments import Judgment
from nnd_suites.records.texts import equivalence_key


def one_vote_each(
    judged: dict[tuple[tuple[str, ...], str, frozenset[str]], str],
    group: tuple[str, ...],
    judgment: Judgment,
    at: tuple[Path, int],
) -> None:
    """A named rater's second verdict on the same two texts of one ``group`` is the row's (at
    ``at``: file, line) fault: counted twice, it would outvote another rater. ``judged``:
    (group, rater, the two texts) -> where the rater first judged them."""
    if judgment.rater is None or not judgment.rater.strip():
        return  # an empty rater cell names no one: two of them are not one person's repeat
    texts = frozenset(map(equivalence_key, (judgment.response_a, judgment.response_b)))
    first = judged.setdefault((group, judgment.rater, texts), judgment.where)
    if first != judgment.where:
        hint = "keep one of the two rows (--skip-malformed counts the repeat instead)"
        if judgment.category is None:  # rows of one rater on several aspects read as repeats
            hint += "; if they judge different aspects, name that column comparisons.category"
        raise SourceFormatError(
            str(at[0]),
            at[1],
            "a rater judged these two responses again",
            hint,
            f"rater {clip(repr(judgment.rater))}, first at {first}",
        )


def judgment_of(declared: Declared, spec: Comparisons, row: Row, path: Path, line: int) -> Judgment:
    """The judgment of one row; a winner value ``verdicts`` does not declare is the
    declaration's fault (a skip would hide it), save one that is a declared value with spaces
    around it: a typo in that row's cell."""
    winner = text_cell(declared, row, spec.winner, path, line, ("comparisons", "winner"))
    verdict = spec.verdicts.get(winner)
    if verdict is None and winner.strip() in spec.verdicts:  # a typo in this row's cell
        raise SourceFormatError(
            str(path),
            line,
            f"winner value with spaces around a declared verdict (column {spec.winner!r}; "
            f"verdicts {sorted(spec.verdicts)})",
            "correct the cell (--skip-malformed counts the row instead)",
            clip(repr(winner)),
        )
    if verdict is None:
        raise DeclarationError(
            f"{declared.at('comparisons', 'verdicts')}: {path.name}:{line}: winner "
            f"{clip(repr(winner))} (column {spec.winner!r}) is not declared in verdicts "
            f"{sorted(spec.verdicts)}; declare what it means (a, b or tie), or filter such rows"
        )
    where = f"{path.name}:{line}"
    optional = {
        name: read(declared, row, column, path, line, ("comparisons", name))
        for name, column, read in (
            ("rater", spec.rater, name_cell),
            ("category", spec.category, text_cell),
        )
        if column is not None
    }
    return Judgment(
        response_a=text_cell(declared, row, spec.text_a, path, line, ("comparisons", "text_a")),
        response_b=text_cell(declared, row, spec.text_b, path, line, ("comparisons", "text_b")),
        verdict=verdict,
        systems_a=[fixed_or_cell(declared, spec.system_a, row, path, line, "system_a")],
        systems_b=[fixed_or_cell(declared, spec.system_b, row, path, line, "system_b")],
        where=where,
        **optional,
    )
