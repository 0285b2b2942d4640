"""The pair budget: how many tests one group, and a whole suite, may give before the build stops
with a named error (a wrong group key, or a source of millions of rows, would otherwise exhaust
memory). Kept apart from the builder so that the command line's options can name the defaults
without loading quality maps and sources."""

from __future__ import annotations

from dataclasses import dataclass

from nnd_suites.errors import NNDError, PairBudgetError

#: defaults far above every built-in suite (largest group: 49 pairs; largest suite: 17,722) and
#: far below what exhausts memory (4M pairs of one 278 KB group took 3.2 GB)
DEFAULT_MAX_PAIRS_PER_GROUP = 10_000
DEFAULT_MAX_PAIRS = 1_000_000


@dataclass(frozen=True)
class PairBudget:
    """How many pairs one group, and the whole suite, may give (``None``: no limit)."""

    per_group: int | None = DEFAULT_MAX_PAIRS_PER_GROUP
    total: int | None = DEFAULT_MAX_PAIRS

    def __post_init__(self) -> None:
        for name, value in (("max_pairs_per_group", self.per_group), ("max_pairs", self.total)):
            if value is not None and (isinstance(value, bool) or value < 1):
                raise NNDError(f"{name} must be a whole number of at least 1, not {value!r}")


def check_pair_budget(
    expected: int, where: str, built: int = 0, budget: PairBudget | None = None
) -> None:
    """Refuse, before building them, the ``expected`` pairs of one group (named by ``where``) if
    they exceed the per-group budget or, with the ``built`` pairs so far, the suite's budget."""
    budget = budget or PairBudget()
    if budget.per_group is not None and expected > budget.per_group:
        raise PairBudgetError(
            f"{where}: this group would give {expected:,} pairs, over the limit of "
            f"{budget.per_group:,} pairs per group; if that is intended raise it with "
            f"max_pairs_per_group={expected} (CLI: --max-pairs-per-group {expected}), else "
            "split the group (is the context column the right one?)"
        )
    if budget.total is not None and built + expected > budget.total:
        raise PairBudgetError(
            f"{where}: the suite would reach {built + expected:,} pairs ({built:,} built, "
            f"{expected:,} from this group), over the limit of {budget.total:,} pairs; if that "
            f"is intended raise it with max_pairs=N (CLI: --max-pairs N)"
        )


def judgments_over_budget(where: str, total: int) -> PairBudgetError:
    """The error of a pairwise source found, while it is read, to hold more judgments than the
    suite's budget of ``total`` pairs (each judgment gives at most one test)."""
    return PairBudgetError(
        f"{where}: the source holds more than {total:,} rows of judgments, each of which may "
        f"give a test, over the limit of {total:,} pairs; stopped reading here. If that is "
        "intended raise it with max_pairs=N (CLI: --max-pairs N), else build from a smaller file"
    )
