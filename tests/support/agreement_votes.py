"""Leave-one-rater-out counts of one test from its :class:`Vote` records, as the agreement tests
write their cases; the product counts over each vote's ``prefers`` only
(:func:`nnd_suites.human.agreement.leave_one_rater_out`)."""

from __future__ import annotations

from collections.abc import Sequence

from nnd_suites.human.agreement import leave_one_rater_out
from nnd_suites.records.votes import Vote


def leave_one_out(votes: Sequence[Vote]) -> tuple[int, int, int, int]:
    """``(cases, agreed, others_tied, tie_cases)``: each vote against the others' majority."""
    return leave_one_rater_out([vote.prefers for vote in votes])
