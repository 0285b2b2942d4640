"""The shared evaluator: log-likelihood scoring of any model on any suite, with reports.

``nnd_suites.evaluate(model, suites, ...)`` is the entry point; backends (how log-likelihoods are
computed) are plugins registered in :data:`BACKENDS`.

Inside it, scoring comes first (``backend``, ``backends/``, ``scorers/``, ``cache``, ``batching``,
``prepared``), then the run (``evaluator``, ``parallel``, ``multi``), its typed results and their
folders (``report``, ``outputs``, ``leaderboard``), and the commands built on runs
(``comparison/``, ``robustness/``, ``verify/``, ``training``). Below it, in the core: statistics
(``nnd_suites.statistics``) and human judgments (``nnd_suites.human``).
"""

from nnd_suites.evaluation.backend import (
    BACKENDS,
    MODES,
    SCORING_VERSION,
    Backend,
    BackendMetadata,
    Score,
    ScoreRequest,
    load_backend,
    register_backend,
)
from nnd_suites.evaluation.cache import ScoreCache, default_cache_dir
from nnd_suites.evaluation.evaluator import evaluate, resolve_mode
from nnd_suites.evaluation.report import (
    EvaluationReport,
    RequestCounts,
    SuiteResult,
    TestOutcome,
    test_outcomes,
)
from nnd_suites.resolve import resolve_suites
from nnd_suites.statistics.outcomes import Outcome, Rate, rate, verdict, wilson

__all__ = [
    "BACKENDS",
    "MODES",
    "SCORING_VERSION",
    "Backend",
    "BackendMetadata",
    "EvaluationReport",
    "Outcome",
    "Rate",
    "RequestCounts",
    "Score",
    "ScoreCache",
    "ScoreRequest",
    "SuiteResult",
    "TestOutcome",
    "default_cache_dir",
    "evaluate",
    "load_backend",
    "rate",
    "register_backend",
    "resolve_mode",
    "resolve_suites",
    "test_outcomes",
    "verdict",
    "wilson",
]
