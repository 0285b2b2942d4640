"""One damaged row of a source, built with and without ``skip_malformed``: the checks every
adapter's test of ``--skip-malformed`` makes (the build goes on, the row is counted with its
reason and file:line, only the tests that came from it are gone; without the flag the error
names that line)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from nnd_suites.errors import SourceFormatError
from nnd_suites.records.pairs import Pair
from nnd_suites.suite import Suite


def pair_key(pair: Pair) -> tuple:
    """What a test is, independent of the build that made it."""
    return (
        pair.group_id,
        pair.aspect,
        pair.high.text,
        tuple(pair.high.systems),
        pair.low.text,
        tuple(pair.low.systems),
        pair.label,
    )


def from_candidate(group_id: str, system: str) -> Callable[[Pair], bool]:
    """Whether a test came from ``system``'s candidate in group ``group_id``."""
    return lambda pair: (
        pair.group_id == group_id
        and system
        in (
            *pair.high.systems,
            *pair.low.systems,
        )
    )


def assert_one_row_left_out(
    build: Callable[..., Suite],
    where: str,
    reason: str,
    whole: Suite,
    from_the_row: Callable[[Pair], bool],
) -> None:
    """``build(skip_malformed=...)`` builds the damaged source; ``where`` ("file:line") is the
    damaged row, ``reason`` its problem; ``whole`` is the undamaged build and ``from_the_row``
    tells its tests that came from the row (or its group, where the adapter leaves that out)."""
    with pytest.raises(SourceFormatError) as error:
        build(skip_malformed=False)
    assert (error.value.line, error.value.reason) == (int(where.rsplit(":", 1)[1]), reason)
    # a reason that quotes the row's value is counted without it, the value beside the place
    counted, value = error.value.counted_as, error.value.value
    assert value in reason and (counted == reason) == (not value)
    shown = f"{where} ({value})" if value else where
    suite = build(skip_malformed=True)
    malformed = {
        record.reason: record.examples
        for record in suite.manifest.skipped
        if record.reason.startswith("malformed row")
    }
    assert malformed == {f"malformed row: {counted}": [shown]}
    assert suite.stats()["skipped"][f"malformed row: {counted}"] == 1
    kept = [pair_key(pair) for pair in whole.pairs if not from_the_row(pair)]
    assert len(kept) < len(whole.pairs)  # the row gave tests: leaving it out is seen
    assert sorted(pair_key(pair) for pair in suite.pairs) == sorted(kept)
