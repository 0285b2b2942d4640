"""Paired statistics of a transformed suite against its parent, on the same tests.

A test is compared with itself: its parent outcome against its transformed outcome (GEM's
Transformation-Parent set), counted by the one paired statistic of
:mod:`nnd_suites.statistics.paired` (``compare`` counts two models the same way): the
difference of pass rates gets Newcombe's paired interval and an exact McNemar test. Tests made
degenerate (both candidates the same text) or skipped on either side are excluded from every rate
and counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from nnd_suites.errors import NNDError
from nnd_suites.records.pairs import is_degenerate
from nnd_suites.statistics.outcomes import OUTCOMES
from nnd_suites.statistics.paired import PairedResult, paired_counts
from nnd_suites.suite import Suite


@dataclass(frozen=True)
class PairedTest:
    """One test seen twice: untouched (``parent``) and transformed (``outcome``)."""

    test_id: str
    category: str
    parent: str
    outcome: str
    changed: bool

    @property
    def degenerate(self) -> bool:
        return "degenerate" in (self.parent, self.outcome)


def compare_to_parent(tests: Iterable[PairedTest]) -> PairedResult:
    """Paired result over ``tests``: A is the transformed test, B the untouched one, so
    ``a_only`` tests are gained and ``b_only`` tests lost. A cell of no compared test has no
    p-value, and so no place in Holm's correction."""
    result = PairedResult.of(paired_counts((t.outcome, t.parent) for t in tests))
    if not result.n:
        result.p_value = None
    return result


# ------------------------------------------------------------------ matching outcomes to tests
def paired_tests(
    parent: Suite,
    child: Suite,
    parent_outcomes: Mapping[str, object],
    child_outcomes: Mapping[str, object],
) -> list[PairedTest]:
    """Join a child suite's tests with their parents through ``parent_id``.

    Outcomes map a test id to its outcome in that suite's evaluation (``pass``, ``fail``, ``tie``,
    ``degenerate``, ``skipped``). A degenerate child test needs no outcome (an evaluator may
    leave it out); every other test needs both.
    """
    parents = parent.by_id
    tests = []
    for pair in child.pairs:
        source = parents.get(pair.parent_id or pair.id)
        if source is None:
            raise NNDError(
                f"suite {child.name}: test {pair.id} has parent {pair.parent_id}, which suite "
                f"{parent.name} does not hold; transform that suite, not another one"
            )
        degenerate = is_degenerate(pair) or is_degenerate(source)
        if source.id not in parent_outcomes or (not degenerate and pair.id not in child_outcomes):
            missing = parent.name if source.id not in parent_outcomes else child.name
            raise NNDError(f"no outcome for test {pair.id} in the evaluation of suite {missing}")
        before = _outcome(parent_outcomes[source.id], parent.name, source.id)
        after = (
            "degenerate" if degenerate else _outcome(child_outcomes[pair.id], child.name, pair.id)
        )
        tests.append(
            PairedTest(
                test_id=source.id,
                category=source.category,
                parent=before,
                outcome=after,
                changed=(pair.context, pair.high.text, pair.low.text)
                != (source.context, source.high.text, source.low.text),
            )
        )
    return tests


def _outcome(value: object, suite: str, test_id: str) -> str:
    if value not in OUTCOMES:
        raise NNDError(
            f"suite {suite}, test {test_id}: {value!r} is not a test outcome (one of "
            f"{', '.join(OUTCOMES)})"
        )
    return str(value)
