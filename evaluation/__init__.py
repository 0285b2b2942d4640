"""The shared evaluator: log-likelihood scoring of any model on any suite, with reports.

``nnd_suites.evaluate(model, suites, ...)`` is the entry point; backends (how log-likelihoods are
computed) are plugins registered in :data:`BACKENDS`.

Inside it, scoring comes first (``backend``, ``backends/``, ``scorers/``, ``cache``, ``batching``,
``prepared``), then the run (``evaluator``, ``parallel``, ``multi``), its typed results and their
folders (``report``, ``outputs``, ``leaderboard``), and the commands built on runs
(``comparison/``, ``robustness/``, ``verify/``, ``training``). Below it, in the core: statistics
(``nnd_suites.statistics``) and human judgments (``nnd_suites.human``).
"""

import lazy_loader

# Each name is imported when first used (PEP 562, through lazy_loader): `nnd-suites list` reads
# the backend registry without loading the evaluator, reports and their plotting libraries.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "backend": [
            "BACKENDS",
            "MODES",
            "SCORING_VERSION",
            "Backend",
            "BackendMetadata",
            "Score",
            "ScoreRequest",
            "load_backend",
            "register_backend",
        ],
        "arguments": ["resolve_mode"],
        "cache": ["ScoreCache", "default_cache_dir"],
        "evaluator": ["evaluate"],
        "report": [
            "EvaluationReport",
            "RequestCounts",
            "SuiteResult",
            "TestOutcome",
            "test_outcomes",
        ],
    },
)
# the core's rates, imported as usual (pydantic models only)
from nnd_suites.statistics.outcomes import Outcome, Rate, rate, verdict, wilson  # noqa: E402, F401

__all__ = sorted([*__all__, "Outcome", "Rate", "rate", "verdict", "wilson"])
