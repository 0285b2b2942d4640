"""Several models' runs over the same suites (a leaderboard, verify's annotated systems): the
suites are loaded and prepared once, then each model is scored in its own run.

With ``template="chat"`` each model renders the conversations with its own chat template, so the
rendering is part of each run; the suites are loaded once and each run prepares them with its
model's rendering. ``tests`` holds them prepared with their own template all the same: the tests,
their names and content hashes, which a model's chat rendering does not change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nnd_suites.evaluation.chat_prompts import CHAT_TEMPLATE
from nnd_suites.evaluation.evaluator import evaluate
from nnd_suites.evaluation.prepared import Limit, PreparedSuites, SuiteSpec, prepare_suites
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.resolve import resolve_suites, suite_origins
from nnd_suites.suite import Suite


@dataclass
class SharedRuns:
    """What :func:`share_runs` returns: the suites as tests, and how each run scores them."""

    #: the suites prepared with the template asked for (their own for ``chat``): the tests
    tests: PreparedSuites
    #: ``chat`` only: the loaded suites, which each run renders with its model's chat template
    loaded: list[Suite] | None
    normalize: Sequence[str]
    limit: Limit | None

    @property
    def chat(self) -> bool:
        return self.loaded is not None

    def evaluate(self, model: Any, **options: Any) -> EvaluationReport:
        """``model``'s run on the suites (``options`` as :func:`nnd_suites.evaluate` takes)."""
        if self.loaded is None:
            return evaluate(model, self.tests, **options)
        report = evaluate(
            model,
            self.loaded,
            template=CHAT_TEMPLATE,
            normalize=self.normalize,
            limit=self.limit,
            **options,
        )
        for plan in self.tests.plans:  # the run was given them loaded: where they came from
            report.suites[plan.name].given_as = plan.given_as
        return report


def share_runs(
    suites: SuiteSpec | Iterable[SuiteSpec],
    *,
    template: str | None = None,
    normalize: Sequence[str] = (),
    limit: Limit | None = None,
) -> SharedRuns:
    """Load and prepare ``suites`` once for several models' runs (see the module's note)."""
    if template != CHAT_TEMPLATE:
        prepared = prepare_suites(suites, template=template, normalize=normalize, limit=limit)
        return SharedRuns(prepared, None, normalize, limit)
    if not isinstance(suites, (str, Path, Suite)):
        suites = list(suites)  # read twice: resolved, then where each came from
    loaded = resolve_suites(suites)
    tests = prepare_suites(loaded, normalize=normalize, limit=limit)
    for plan, origin in zip(tests.plans, suite_origins(suites), strict=True):
        plan.given_as = origin
    return SharedRuns(tests, loaded, normalize, limit)
