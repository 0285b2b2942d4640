"""The human-agreement figures of a report in words: the tests the raters' agreement leaves out,
the paired gap, and the margin bands' headings (report.md, leaderboards and the command line's
summary; report.md's paragraph itself is in its template)."""

from __future__ import annotations

from nnd_suites.evaluation.report import SuiteResult
from nnd_suites.human.agreement import AgreementCeiling
from nnd_suites.infra.formatting import (
    difference_with_interval,
    percent,
    plural,
    rate_with_interval,
)


def not_compared(found: AgreementCeiling) -> list[str]:
    """The tests of the suite the ceiling leaves out, and why (report.md's agreement lines)."""
    return [
        f"{plural(n, 'test')} {why}"
        for n, why in [
            (found.tests_one_vote, "with fewer than 2 votes"),
            (found.tests_not_rated, "not rated by the model (degenerate or skipped)"),
            (found.tests_all_tied, "where every rater's others were tied"),
        ]
        if n
    ]


def ceiling_gap(found: AgreementCeiling) -> str:
    """``-5.0 [-9.1, -1.2] points: below the raters' agreement``: the paired difference and what
    its interval says (a one-line summary, e.g. for the CLI)."""
    text = f"{difference_with_interval(found.difference, found.difference_ci)} points"
    if found.difference_ci is None:
        return f"{text} (a single test: no interval)"
    low, high = found.difference_ci
    if high < 0:
        return f"{text}: below the raters' agreement"
    if low > 0:
        return f"{text}: above the raters' agreement (a rater's target is slightly harder)"
    return f"{text}: no clear gap on these tests"


def ceiling_summary(result: SuiteResult) -> str | None:
    """One line for a summary: the model's pass rate and the raters' agreement on the same
    tests, and the paired gap (None: the suite has no agreement ceiling)."""
    found = result.agreement_ceiling
    if found is None:
        return None
    line = (
        f"human agreement on {plural(found.tests, 'test')}: model "
        f"{percent(found.model.pass_rate)} vs raters {rate_with_interval(found.ceiling, found.ci)}"
    )
    return line if found.difference is None else f"{line}; model - raters {ceiling_gap(found)}"


def band_heading(label: str, low: float | None, high: float | None) -> str:
    """A margin band with its smallest and largest margin: ``majority (0.6667)``."""
    if low is None:
        return label
    return (
        f"{label} ({low:.4g})"
        if high is None or high == low
        else f"{label} ({low:.4g} to {high:.4g})"
    )
