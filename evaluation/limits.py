"""What ``--limit`` left of each suite, recorded with its figures so that every report kind
(report.md, the console summary, robustness, compare, leaderboards, verify) can say it: the
tests scored out of the suite's, and the suite's categories the limit left with no test (the
first-N-groups rule can drop whole categories, Challenge 300's question types for one)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from nnd_suites.infra.formatting import count, plural
from nnd_suites.infra.validation import StrictModel
from nnd_suites.suite import Suite


def _as_given(limit: int | float | None) -> int | float | None:
    """A recorded --limit is one --limit takes (an edited -1 was said as "the first -100%")."""
    if limit is None or (isinstance(limit, int) and limit >= 1) or 0 < limit < 1:
        return limit
    raise ValueError("must be a whole number of context groups >= 1 or a fraction in (0, 1)")


#: a report's --limit: the first N context groups of each suite, or that fraction of them
RecordedLimit = Annotated[int | float | None, AfterValidator(_as_given)]


class SuiteLimit(StrictModel):
    """A suite scored in part (``--limit``): what the whole suite holds that was not scored."""

    scored: int = Field(ge=0, description="tests scored: those of the groups kept")
    tests: int = Field(ge=0, description="tests the whole suite holds")
    categories_without_tests: list[str] = Field(
        description="the suite's categories the limit left with no test (absent from "
        "by_category), alphabetically"
    )
    groups: int | None = Field(
        None, ge=0, description="context groups kept (null: a report written before this field)"
    )
    kept: str | None = Field(
        None,
        description="digest of the ids of the tests kept (sha256 of the sorted ids, 16 hex "
        "digits): two runs kept the same tests iff these are equal, however --limit was spelled "
        "(null: a report written before this field)",
    )

    @model_validator(mode="after")
    def _a_part_of_the_suite(self) -> SuiteLimit:
        # an edited record would be said as "29 of 5 tests" (a suite scored whole has none)
        if self.scored >= self.tests:
            raise ValueError(
                f"scored {self.scored} must be fewer than the suite's {self.tests} tests"
            )
        if self.groups is not None and self.groups > self.scored:
            raise ValueError(f"{self.groups} groups kept, but only {self.scored} tests scored")
        return self


def suite_limit(suite: Suite) -> SuiteLimit | None:
    """The record of a suite cut by --limit (``first_groups`` keeps the whole suite's manifest),
    None for a suite scored whole."""
    whole = suite.manifest.counts
    if len(suite.pairs) >= whole.pairs:
        return None
    kept = {pair.category for pair in suite.pairs}
    return SuiteLimit(
        scored=len(suite.pairs),
        tests=whole.pairs,
        categories_without_tests=sorted(set(whole.breakdowns.get("category", {})) - kept),
        groups=len({pair.group_id for pair in suite.pairs}),
        kept=kept_digest(pair.id for pair in suite.pairs),
    )


def limit_disagrees(limit: int | float | None, record: SuiteLimit | None) -> str | None:
    """How a report's ``limit`` and a suite's --limit record disagree (the file was edited:
    "Only the first 7 context groups" of a run that kept 4, or no word of a limit), or None."""
    # a limit may keep a suite of few groups whole; a suite given in part has a record and no
    # limit (its report says so: limit_note)
    if record is None or limit is None:
        return None
    if isinstance(limit, int) and record.groups not in (None, limit):
        return f"limited.groups says {record.groups}, but limit {limit} keeps {limit}"
    return None


def kept_digest(ids: Iterable[str]) -> str:
    """The digest of a set of test ids (order and repeats aside)."""
    return hashlib.sha256("\n".join(sorted(set(ids))).encode()).hexdigest()[:16]


def kept_tests_differ(a: SuiteLimit | None, b: SuiteLimit | None) -> str | None:
    """How two runs' --limit records keep different tests of one suite, or None when they keep
    the same: what was kept is compared, never how --limit was spelled (``--limit 5`` on a suite
    of 5 groups keeps it whole; ``--limit 3`` and ``--limit 0.01`` may keep the same groups)."""

    def kept(record: SuiteLimit | None) -> tuple[int, int, str | None] | None:
        return None if record is None else (record.scored, record.tests, record.kept)

    if kept(a) == kept(b):
        return None
    return f"tests kept by --limit: {_kept_text(a)} vs {_kept_text(b)}"


def the_first(n: int, noun: str) -> str:
    """``the first group``, ``the first 3 groups``: never "the first 1 group"."""
    return f"the first {noun}" if n == 1 else f"the first {plural(n, noun)}"


def _kept_text(record: SuiteLimit | None) -> str:
    if record is None:
        return "every test"
    groups = "" if record.groups is None else f" ({the_first(record.groups, 'group')})"
    return f"{record.scored:,} of {record.tests:,}{groups}"


#: a suite's name -> (its tests, said when it was scored whole; its limit record or None)
KeptTests = Mapping[str, tuple[int, SuiteLimit | None]]


def kept_tests_text(kept: KeptTests) -> str:
    """``quiz_design: 12 of 310 tests, no test left in category disfluent; ...``."""
    parts = []
    for name, (scored, record) in kept.items():
        if record is None:
            parts.append(
                f"{name}: " + ("its one test" if scored == 1 else f"all {count(scored)} tests")
            )
            continue
        text = f"{name}: {record.scored:,} of {plural(record.tests, 'test')}"
        if record.categories_without_tests:
            left = record.categories_without_tests
            text += (
                f", no test left in {'category' if len(left) == 1 else 'categories'} "
                + ", ".join(left)
            )
        parts.append(text)
    return "; ".join(parts)
