"""Suites grouped by task type, when they come from the catalogue (``evaluate --suite catalogue``
or a folder written by ``build --catalogue``): the grouping a report and a leaderboard carry, and
its table's rows, a row per suite under its task type with the bias baselines beside the model
(laid out by ``report_templates/by_task.md.j2``).

Only the Pydantic models and the rows live here (no report, no leaderboard import): the report
and the leaderboard both carry a :class:`TaskGrouping`, and each fills the rows' cells itself
(a report's: :func:`nnd_suites.evaluation.report_markdown.report_cells`).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field

from nnd_suites.infra.validation import StrictModel

#: the bias baselines shown beside the model, in this order (evaluation.baselines.BASELINES)
BASELINE_COLUMNS = ("shorter", "longer", "overlap")


class SkippedSuite(StrictModel):
    """A catalogue suite that was not evaluated, and why."""

    task_type: str
    reason: str = Field(description="why it was not evaluated and how to make its source available")


class TaskGrouping(StrictModel):
    """The suites of a run by task type, and the catalogue suites it could not evaluate."""

    source: str = Field(
        description="'catalogue' (every suite whose source ships) or the folder written by "
        "`nnd-suites build --catalogue` that was evaluated"
    )
    task_types: dict[str, list[str]] = Field(
        description="task type -> the suites evaluated under it (a suite of the folder that is "
        "not in the catalogue goes under 'not in the catalogue')"
    )
    skipped: dict[str, SkippedSuite] = Field(
        default_factory=dict,
        description="catalogue suite not evaluated -> its task type and why (its source is not "
        "available: where to download it and how to build it)",
    )

    def suites(self) -> list[str]:
        """Every suite evaluated, task type by task type."""
        return [suite for suites in self.task_types.values() for suite in suites]


def task_rows(grouping: TaskGrouping, cells: Callable[[str], list[str]]) -> list[list[str]]:
    """A row per suite, its task type named on the type's first row, the other columns filled
    by ``cells(suite)``."""
    return [
        [task_type if index == 0 else "", suite, *cells(suite)]
        for task_type, suites in grouping.task_types.items()
        for index, suite in enumerate(suites)
    ]
