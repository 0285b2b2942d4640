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
from typing import Any

from nnd_suites.evaluation.chat_prompts import CHAT_TEMPLATE
from nnd_suites.evaluation.evaluator import evaluate
from nnd_suites.evaluation.prepared import Limit, PreparedSuites, SuiteSpec, prepare_suites
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.resolve import resolve_suites
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
        return evaluate(
            model,
            self.loaded,
            template=CHAT_TEMPLATE,
            normalize=self.normalize,
            limit=self.limit,
            **options,
        )


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
    loaded = resolve_suites(suites)
    tests = prepare_suites(loaded, normalize=normalize, limit=limit)
    return SharedRuns(tests, loaded, normalize, limit)
