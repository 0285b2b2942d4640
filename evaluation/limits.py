"""What ``--limit`` left of each suite, recorded with its figures so that every report kind
(report.md, the console summary, robustness, compare, leaderboards, verify) can say it: the
tests scored out of the suite's, and the suite's categories the limit left with no test (the
first-N-groups rule can drop whole categories, Challenge 300's question types for one)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.infra.formatting import plural
from nnd_suites.suite import Suite


class SuiteLimit(BaseModel):
    """A suite scored in part (``--limit``): what the whole suite holds that was not scored."""

    model_config = ConfigDict(extra="forbid")

    scored: int = Field(ge=0, description="tests scored: those of the groups kept")
    tests: int = Field(ge=0, description="tests the whole suite holds")
    categories_without_tests: list[str] = Field(
        description="the suite's categories the limit left with no test (absent from "
        "by_category), alphabetically"
    )


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
    )


#: a suite's name -> (its tests, said when it was scored whole; its limit record or None)
KeptTests = Mapping[str, tuple[int, SuiteLimit | None]]


def kept_tests_text(kept: KeptTests) -> str:
    """``quiz_design: 12 of 310 tests, no test left in category disfluent; ...``."""
    parts = []
    for name, (scored, record) in kept.items():
        if record is None:
            parts.append(f"{name}: all {plural(scored, 'test')}")
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
