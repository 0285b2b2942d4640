"""leaderboard.md's human lines of a suite: the raters' agreement ceiling as a reference row of the
suite's table, each model's paired gap to it, and the pass rates by human margin band.

The ceiling of each model is computed on the tests that model rated (its report's
``agreement_ceiling``); models that rated the same tests share one ceiling, which the reference
row shows. When they differ (a model skipped or found degenerate other tests), the reference row
says so and the gap table gives each model's own.
"""

from __future__ import annotations

from collections.abc import Sequence

from nnd_suites.evaluation.agreement_markdown import band_heading, ceiling_gap
from nnd_suites.evaluation.leaderboard import Leaderboard, MarginBandRates
from nnd_suites.infra.formatting import count, percent, rate_with_interval, row
from nnd_suites.statistics.outcomes import Rate

REFERENCE = "*raters' agreement (leave one out)*"


def ceiling_row(board: Leaderboard, suite: str, columns: int) -> list[str]:
    """The reference row under the suite's models and baselines (``columns``: the table's rate
    columns, overall first), or nothing when the suite has no ceiling."""
    found = board.agreement.get(suite)
    if not found:
        return []
    ceilings = {(c.tests, c.cases, c.agreed): c for c in found.values()}
    if len(ceilings) == 1:
        only = next(iter(ceilings.values()))
        text = f"{rate_with_interval(only.ceiling, only.ci)} (n={count(only.tests)})"
    else:
        text = "per model, below (the models rated different tests)"
    return [row([REFERENCE, "", text, *[""] * (columns - 1)])]


def human_sections(board: Leaderboard, suite: str, order: Sequence[str]) -> list[str]:
    """Each model's gap to the ceiling (paired interval over the same tests), then its pass
    rates by human margin band; models in the table's ``order``."""
    return _gap_table(board, suite, order) + _margin_table(board, suite, order)


def _gap_table(board: Leaderboard, suite: str, order: Sequence[str]) -> list[str]:
    found = board.agreement.get(suite)
    if not found:
        return []
    level = f"{100 * next(iter(found.values())).confidence:g}%"
    lines = [
        "",
        f"Model against the raters' agreement on the same tests (tests with >= 2 votes that the "
        f"model rated; model minus raters with a paired {level} bootstrap interval over tests):",
        "",
        row(["model", "tests", "model", "raters", "model - raters"]),
        "|---|---:|---:|---:|---|",
    ]
    for label in order:
        ceiling = found.get(label)
        if ceiling is None:  # a report that predates the ceiling
            lines.append(row([label, "n/a", "n/a", "n/a", "n/a"]))
            continue
        lines.append(
            row(
                [
                    label,
                    count(ceiling.tests),
                    percent(ceiling.model.pass_rate),
                    rate_with_interval(ceiling.ceiling, ceiling.ci),
                    ceiling_gap(ceiling) if ceiling.difference is not None else "n/a",
                ]
            )
        )
    return lines


def _margin_table(board: Leaderboard, suite: str, order: Sequence[str]) -> list[str]:
    strata = board.by_margin.get(suite)
    if strata is None:
        return []
    headers = [band_heading(band.label, band.low, band.high) for band in strata.bands]
    lines = [
        "",
        f"By human margin ({strata.kind or 'kind not stated'}; {strata.rule}):",
        "",
        row(
            [
                "model",
                *(f"{h} (n={count(_n(b))})" for h, b in zip(headers, strata.bands, strict=True)),
            ]
        ),
        "|---|" + "---:|" * len(headers),
    ]
    for label in order:
        rates = [band.rates.get(label) for band in strata.bands]
        cells = [rate_cell(r, _n(b)) for r, b in zip(rates, strata.bands, strict=True)]
        lines.append(row([label, *cells]))
    return lines


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
