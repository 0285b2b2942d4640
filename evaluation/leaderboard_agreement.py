"""leaderboard.md's human lines of a suite: the raters' agreement ceiling as a reference row of the
suite's table, each model's paired gap to it, and the pass rates by human margin band.

The ceiling of each model is computed on the tests that model rated (its report's
``agreement_ceiling``); models that rated the same tests share one ceiling, which the reference
row shows. When they differ (a model skipped or found degenerate other tests), the reference row
says so and the gap table gives each model's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nnd_suites.evaluation.agreement_markdown import band_heading, ceiling_gap
from nnd_suites.evaluation.leaderboard import Leaderboard, MarginBandRates
from nnd_suites.human.agreement import AgreementCeiling
from nnd_suites.infra.formatting import count, percent, rate_with_interval
from nnd_suites.statistics.outcomes import Rate

REFERENCE = "*raters' agreement (leave one out)*"


def reference_rows(board: Leaderboard, suite: str, columns: int) -> list[list[str]]:
    """The reference row under the suite's models and baselines (``columns``: the table's rate
    columns, overall first), or none when the suite has no ceiling."""
    found = board.agreement.get(suite)
    if not found:
        return []
    ceilings = {(c.tests, c.cases, c.agreed): c for c in found.values()}
    if len(ceilings) == 1:
        only = next(iter(ceilings.values()))
        text = f"{rate_with_interval(only.ceiling, only.ci)} (n={count(only.tests)})"
    else:
        text = "per model, below (the models rated different tests)"
    return [[REFERENCE, "", text, *[""] * (columns - 1)]]


def human_tables(board: Leaderboard, suite: str, order: Sequence[str]) -> dict[str, Any]:
    """Each model's gap to the ceiling (paired interval over the same tests: ``gaps`` and its
    ``level``), then its pass rates by human margin band (``margins``); models in the table's
    ``order``; None where the suite has neither."""
    found = board.agreement.get(suite)
    return {
        "gaps": [_gap_cells(found.get(label), label) for label in order] if found else None,
        "level": f"{100 * next(iter(found.values())).confidence:g}%" if found else None,
        "margins": _margin_table(board, suite, order),
    }


def _gap_cells(ceiling: AgreementCeiling | None, label: str) -> list[str]:
    if ceiling is None:  # a report that predates the ceiling
        return [label, "n/a", "n/a", "n/a", "n/a"]
    return [
        label,
        count(ceiling.tests),
        percent(ceiling.model.pass_rate),
        rate_with_interval(ceiling.ceiling, ceiling.ci),
        ceiling_gap(ceiling) if ceiling.difference is not None else "n/a",
    ]


def _margin_table(board: Leaderboard, suite: str, order: Sequence[str]) -> dict[str, Any] | None:
    strata = board.by_margin.get(suite)
    if strata is None:
        return None
    bands = [(band, _n(band)) for band in strata.bands]
    return {
        "kind": strata.kind or "kind not stated",
        "rule": strata.rule,
        "header": [
            "model",
            *(f"{band_heading(b.label, b.low, b.high)} (n={count(n)})" for b, n in bands),
        ],
        "rows": [[label, *(rate_cell(b.rates.get(label), n) for b, n in bands)] for label in order],
    }


def rate_cell(rate: Rate | None, column_n: int) -> str:
    """A model's pass rate in a column headed by its largest ``n``; a model that rated fewer of
    the column's tests (it skipped some) says its own ``n``, which its rate is over."""
    if rate is None:
        return "n/a"
    text = rate_with_interval(rate.pass_rate, rate.ci)
    if rate.n == column_n:
        return text
    skipped = f", {count(rate.skipped)} skipped" if rate.skipped else ""
    return f"{text} (n={count(rate.n)}{skipped})"


def _n(band: MarginBandRates) -> int:
    """The band's rated tests (the largest n of the models: one may have skipped some)."""
    return max((r.n for r in band.rates.values()), default=0)
