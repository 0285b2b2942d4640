"""Evaluate during training: a transformers ``Trainer`` callback that scores NND suites.

The NND paper (section 5.4) scores a model every 2,000 training steps and finds per-category pass
rates that move in opposite directions. ``NNDCallback`` does that in memory: the suites are
prepared once (loaded, templated, requests deduplicated) and each request is tokenised once, so
every later call costs only the forward passes. Its figures (``nnd/<suite>/pass_rate`` and
``nnd/<suite>/<category>``) go through ``Trainer.log``, hence into ``trainer.state.log_history``
and every reporting integration the Trainer was given (TensorBoard, W&B, ...). Adding them to the
metrics inside ``on_evaluate`` would not do: the Trainer has already logged by then.

Usage::

    trainer = Trainer(model=model, args=args, train_dataset=data, processing_class=tokenizer)
    NNDCallback.attach(trainer, suites=["quiz_design"], every_n_steps=2000)
    trainer.train()

Under data-parallel training only the main process (rank 0) scores and logs; the score cache is
off by default (the weights change) and, when on, keyed by a run id unique to each training run
(made at ``on_train_begin``), the step and the fingerprint of the weights at that step: a second
run never reads the first run's figures, whatever its ``run_name``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.evaluator import evaluate
from nnd_suites.evaluation.in_memory import backend_for_model
from nnd_suites.evaluation.prepared import PreparedSuites, SuiteSpec, prepare_suites
from nnd_suites.statistics.outcomes import rows_of


class NNDCallback(TrainerCallback):
    """Score NND suites every ``every_n_steps`` optimizer steps and/or at each evaluation."""

    def __init__(
        self,
        suites: SuiteSpec | Iterable[SuiteSpec],
        *,
        every_n_steps: int | None = None,
        on_evaluate: bool = False,
        template: str | None = None,
        limit: int | float | None = None,
        normalize: Sequence[str] = (),
        batch_size: int | str = "auto",
        tokenizer: Any = None,
        cache: bool = False,
        cache_dir: str | Path | None = None,
        prefix: str = "nnd",
        trainer: Any = None,
    ) -> None:
        if every_n_steps is None and not on_evaluate:
            raise NNDError("NNDCallback: give every_n_steps=N, on_evaluate=True, or both")
        if every_n_steps is not None and every_n_steps < 1:
            raise NNDError(f"NNDCallback: every_n_steps={every_n_steps}; give a number >= 1")
        self.suites, self.every_n_steps, self.on_each_evaluate = suites, every_n_steps, on_evaluate
        self.options = {"template": template, "limit": limit, "normalize": tuple(normalize)}
        self.batch_size, self.tokenizer, self.prefix = batch_size, tokenizer, prefix
        self.cache, self.cache_dir = cache, cache_dir
        self.trainer = trainer
        self.prepared: PreparedSuites | None = None
        self._backend: Any = None
        self.run_id = _new_run_id("")
        #: (step, metrics, seconds) of every scoring, for plots and benchmarks
        self.history: list[tuple[int, dict[str, float], float]] = []
        #: metric -> the tests its pass rate is over (rated: passed, failed or tied), as of the
        #: last scoring: a pass rate is printed with its sample size
        self.rated: dict[str, int] = {}

    @classmethod
    def attach(cls, trainer: Any, **options: Any) -> NNDCallback:
        """Create the callback, bind it to ``trainer`` and add it to the trainer's callbacks."""
        callback = cls(trainer=trainer, **options)
        trainer.add_callback(callback)
        return callback

    # ------------------------------------------------------------------ hooks
    def on_train_begin(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        if self.trainer is None:
            raise NNDError(
                "NNDCallback needs its Trainer to log through it (so that the figures reach "
                "log_history and the reporting integrations): use "
                "NNDCallback.attach(trainer, suites=..., every_n_steps=...)"
            )
        self.run_id = _new_run_id(args.run_name)
        self.prepare()

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        if self.every_n_steps and state.global_step % self.every_n_steps == 0:
            self._score_and_log(state, kwargs)

    def on_evaluate(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        if self.on_each_evaluate:
            self._score_and_log(state, kwargs)

    # ---------------------------------------------------------------- scoring
    def prepare(self) -> PreparedSuites:
        """Load and prepare the suites once (tokenisation follows on the first scoring)."""
        if self.prepared is None:
            self.prepared = prepare_suites(self.suites, **self.options)
        return self.prepared

    def score(self, model: Any, tokenizer: Any, step: int) -> dict[str, float]:
        """Pass rates of ``model`` now, as ``{"nnd/<suite>/pass_rate": ..., ...}``; the tests
        each is over go to :attr:`rated`."""
        model = getattr(model, "module", model)  # DistributedDataParallel and friends
        reuse = self._backend is not None and self._backend.model is model
        if reuse and self._backend.tokenizer is tokenizer:
            self._backend.refresh_identity()  # the weights moved since the last scoring
        else:
            self._backend = backend_for_model(model, tokenizer, batch_size=self.batch_size)
        # The cache, when on, keys each state of the weights by run, step and fingerprint.
        self._backend.revision = f"in-memory:{self.run_id}@step-{step}"
        report = evaluate(
            self._backend,
            self.prepare(),
            cache=self.cache,
            cache_dir=self.cache_dir,
            progress=False,
        )
        metrics: dict[str, float] = {}
        for name, result in report.suites.items():
            # a category named pass_rate is told apart from the suite's own figure
            rates = rows_of(result.overall, result.by_category, own="pass_rate")
            for key, rate in rates.items():
                if rate.pass_rate is not None:
                    metrics[f"{self.prefix}/{name}/{key}"] = rate.pass_rate
                    self.rated[f"{self.prefix}/{name}/{key}"] = rate.n
        return metrics

    def _score_and_log(self, state: Any, kwargs: dict[str, Any]) -> None:
        if not state.is_world_process_zero:
            return  # one process scores and reports under data parallel
        tokenizer = self.tokenizer or kwargs.get("processing_class") or kwargs.get("tokenizer")
        if tokenizer is None:
            raise NNDError(
                "NNDCallback: the Trainer has no tokenizer (processing_class); pass "
                "NNDCallback(..., tokenizer=tokenizer)"
            )
        started = time.perf_counter()
        metrics = self.score(kwargs["model"], tokenizer, state.global_step)
        self.history.append((state.global_step, metrics, time.perf_counter() - started))
        if self.trainer is not None:
            self.trainer.log(dict(metrics))


def _new_run_id(run_name: str | None) -> str:
    """``<run_name>-<random hex>``: unique per run, readable in the cache's scope table."""
    return f"{run_name or 'run'}-{uuid.uuid4().hex[:16]}"
