"""The dataset card's human agreement section: how often one rater agrees with the majority of the
other raters of a test (leave one rater out, :mod:`nnd_suites.human.agreement`), per config
whose tests carry at least two votes. It needs no model: it is the suite's own human ceiling, the
figure a model's pass rate on the same tests is read against (``nnd-suites evaluate`` reports
both, on the tests the model rated, with their paired difference)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pyarrow as pa

from nnd_suites.human.agreement import RaterAgreement, rater_agreement
from nnd_suites.infra.formatting import count, plural, rate_with_interval, table

VOTES_COLUMN = "votes"


def config_agreement(tables: Sequence[pa.Table]) -> RaterAgreement | None:
    """The raters' agreement over every test of a config's data files (their tables), read from
    their votes column alone (None: no votes column, as in files written before votes, or no
    test with two comparable votes)."""
    votes: list[list[str]] = []
    for data in tables:
        if VOTES_COLUMN not in data.column_names:
            return None
        column = data.column(VOTES_COLUMN).to_pylist()
        votes += [[vote["prefers"] for vote in test or []] for test in column]
    return rater_agreement(votes)


def agreement_section(agreements: Iterable[tuple[str, RaterAgreement | None]]) -> list[str]:
    """The card's section (``(config name, its agreement)`` of each config), or nothing when no
    config has one."""
    found = [(name, a) for name, a in agreements if a is not None]
    if not found:
        return []
    first = found[0][1]
    agreement_table = table(
        ["config", "tests compared", "rater votes compared", "raters' agreement [95% CI]"],
        [
            [f"`{name}`", count(a.tests), count(a.cases), rate_with_interval(a.ceiling, a.ci)]
            for name, a in found
        ],
        align="---:",
    )
    notes = [
        f"`{name}`: {plural(a.tie_cases, 'tie vote')} among the compared ones; "
        f"{plural(a.others_tied, 'vote')} whose others were tied and "
        f"{plural(a.tests_one_vote, 'test')} with fewer than 2 votes not compared"
        for name, a in found
    ]
    return [
        "## Human agreement",
        "How often one rater agrees with the others on a test: on every test with at least two "
        "votes, each rater's vote is compared with the majority of the other raters' votes on "
        "that test (a tie vote never agrees, as a model's tie is never a pass; a vote whose "
        "others are tied is left out). The interval is a "
        f"{100 * first.confidence:g}% percentile bootstrap that resamples tests "
        f"({first.resamples:,} resamples, seed {first.seed}). It is the human reference for a "
        "model's pass rate on the same tests: `nnd-suites evaluate` reports both, on the tests "
        "the model rated, with their paired difference.",
        agreement_table,
        "; ".join(notes) + ".",
    ]
