"""The human-agreement lines of a report: the model's pass rate beside the raters' agreement on
the same tests, the paired gap, and the margin bands' headings (report.md, leaderboards and the
command line's summary)."""

from __future__ import annotations

from nnd_suites.evaluation.report import SuiteResult
from nnd_suites.human.agreement import AgreementCeiling
from nnd_suites.infra.formatting import (
    count,
    difference_with_interval,
    percent,
    plural,
    rate_with_interval,
)


def agreement_lines(result: SuiteResult) -> list[str]:
    """The model's pass rate beside what one rater reaches against the others, same tests."""
    found = result.agreement_ceiling
    if found is None:
        return []
    level = f"{100 * found.confidence:g}%"
    left = [
        f"{plural(n, 'test')} {why}"
        for n, why in [
            (found.tests_one_vote, "with fewer than 2 votes"),
            (found.tests_not_rated, "not rated by the model (degenerate or skipped)"),
            (found.tests_all_tied, "where every rater's others were tied"),
        ]
        if n
    ]
    return [
        "",
        f"**Human agreement: model {percent(found.model.pass_rate)} vs raters' agreement "
        f"{rate_with_interval(found.ceiling, found.ci)} on the same "
        f"{plural(found.tests, 'test')}.** The model's pass rate on these tests is its agreement "
        "with the suite's label (all raters' judgments combined); the raters' agreement is the "
        "share of the "
        f"{plural(found.cases, 'rater vote')} that prefer the side the majority of the other "
        f"raters on the test prefer (leave one rater out; a tie vote does not agree: "
        f"{count(found.tie_cases)} of them are ties; "
        f"{plural(found.others_tied, 'vote')} whose others were tied left out), with a {level} "
        f"bootstrap interval over tests ({found.resamples} resamples, seed {found.seed})."
        + (f" Not compared: {'; '.join(left)}." if left else ""),
        *_gap_lines(found),
    ]


def _gap_lines(found: AgreementCeiling) -> list[str]:
    """Model minus ceiling with its paired interval (reports before it have no difference)."""
    if found.difference is None:
        return []
    return [
        "",
        f"Model minus raters' agreement: {ceiling_gap(found)}; a paired "
        f"{100 * found.confidence:g}% bootstrap interval: each resample draws the same tests "
        "for both terms.",
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
