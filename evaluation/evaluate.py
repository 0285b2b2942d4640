"""``nnd_suites.evaluate``: score one model on one or more suites and report pass rates.

Requests are deduplicated across pairs and suites; the score cache answers what an earlier run
(or another suite) already scored, and every batch the model finishes is written to it at once.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from nnd_suites import __version__
from nnd_suites.errors import NNDError, ScoringError
from nnd_suites.evaluation.backend import Backend, Score, ScoreRequest, load_backend
from nnd_suites.evaluation.cache import ScoreCache, scope_of, score_key
from nnd_suites.evaluation.report import (
    EvaluationReport,
    RequestCounts,
    SuiteResult,
    suite_result,
    test_outcomes,
)
from nnd_suites.evaluation.templates import render, resolve_template
from nnd_suites.suite import Suite

SuiteSpec = str | Path | Suite
logger = logging.getLogger(__name__)


@dataclass
class _Plan:
    name: str
    suite: Suite
    template_name: str
    template: str


def resolve_mode(compat: str | None) -> str:
    """``--compat reference`` selects the paper's scoring; nothing (or ``none``) the default."""
    if compat in (None, "", "none", "default"):
        return "default"
    if compat == "reference":
        return "reference"
    raise NNDError(
        f"unknown --compat {compat!r}: the only compatibility mode is 'reference' "
        "(the paper's reference implementation)"
    )


def resolve_suites(suites: SuiteSpec | Iterable[SuiteSpec]) -> list[Suite]:
    from nnd_suites.suites import load_suite

    if isinstance(suites, (str, Path, Suite)):
        suites = [suites]
    resolved = [s if isinstance(s, Suite) else load_suite(s) for s in suites]
    if not resolved:
        raise NNDError("no suite given: pass at least one suite folder or built-in adapter name")
    return resolved


def evaluate(
    model: str | Path | Backend,
    suites: SuiteSpec | Iterable[SuiteSpec],
    *,
    template: str | None = None,
    compat: str | None = None,
    batch_size: int | str = "auto",
    device: str = "auto",
    dtype: str = "auto",
    cache: bool = True,
    cache_dir: str | Path | None = None,
    out: str | Path | None = None,
    normalize: Sequence[str] = (),
    progress: bool = True,
    backend: str | None = None,
    revision: str | None = None,
    strategy: str = "auto",
    limit: int | None = None,
) -> EvaluationReport:
    """Score ``model`` on ``suites`` and return a typed report (also written to ``out``).

    ``model`` is a Hub id, a local folder, or an already-loaded :class:`Backend` (so a robustness
    run loads it once). ``suites`` are suite folders, built-in adapter names (built on the fly) or
    :class:`Suite` objects. ``template`` is a template name of the suites (``macaw``) or a format
    string; ``compat="reference"`` reproduces the paper's scoring. ``normalize`` lists
    normalisation specs (``lowercase``, ``whitespace``...; perturbations are refused) applied to
    every suite before scoring. ``limit`` scores only the first N context groups of each suite
    (a smoke test; the report says so).
    """
    started = time.perf_counter()
    mode = resolve_mode(compat)
    if out is not None:  # before any scoring: a bad --out must not cost a run
        from nnd_suites.evaluation.outputs import check_out_folder

        check_out_folder(out)
    loaded = resolve_suites(suites)
    for spec in normalize:
        from nnd_suites.transformations import normalize_suite

        loaded = [normalize_suite(suite, spec) for suite in loaded]
    if limit is not None:
        loaded = [first_groups(suite, limit) for suite in loaded]
    plans = _plans(loaded, template)

    if isinstance(model, Backend):
        scorer = model
        if compat is not None and scorer.mode != mode:
            raise NNDError(
                f"the backend given scores in mode {scorer.mode!r}, not {mode!r}; "
                "load it with the mode you want"
            )
        model_name = str(scorer.identity.get("model", scorer.name))
    else:
        model_name = str(model)
        scorer = load_backend(
            model_name,
            backend,
            mode=mode,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            revision=revision,
            strategy=strategy,
        )

    logger.info("scoring %s with %s on %s", model_name, scorer.describe(), [p.name for p in plans])
    scores, counts = _score_all(scorer, plans, cache, cache_dir, progress)
    logger.info(
        "%d tests, %d distinct requests: %d from the cache, %d scored",
        counts.tests,
        counts.unique,
        counts.cached,
        counts.scored,
    )
    report = EvaluationReport(
        nnd_suites_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        model=model_name,
        backend=scorer.describe(),
        mode=scorer.mode,
        suites={},
        requests=counts,
        seconds=0.0,
        limit=limit,
    )
    for plan in plans:
        outcomes = test_outcomes(
            plan.suite.pairs, plan.template, lambda context, candidate: scores[(context, candidate)]
        )
        requests = {
            (render(plan.template, p.context), text)
            for p in plan.suite.pairs
            for text in (p.high.text, p.low.text)
        }
        truncated = sum(scores[r].truncated_tokens for r in requests)
        report.suites[plan.name] = suite_result(
            plan.name, plan.suite, plan.template_name, plan.template, outcomes, truncated
        )
        report.outcomes[plan.name] = outcomes
        check_ties(report.suites[plan.name], model_name)
    report.seconds = round(time.perf_counter() - started, 3)
    if out is not None:
        from nnd_suites.evaluation.outputs import write_report

        write_report(report, out)
    return report


#: More ties than this share of a suite's (non-degenerate) tests means the scores carry no signal.
MAX_TIE_SHARE = 0.5


def check_ties(result: SuiteResult, model: str) -> None:
    """Refuse a run where most tests tie: a pass rate over ties is not a result.

    Real models almost never give two different texts the same mean log-probability; a tokenizer
    that encodes text to nothing (a model folder without tokenizer files) ties every test.
    """
    scored = result.pairs - result.degenerate
    if scored and result.ties > MAX_TIE_SHARE * scored:
        raise ScoringError(
            f"{model} on {result.suite}: {result.ties:,} of {scored:,} tests are ties (both "
            "candidates got the same score), so the pass rate would mean nothing; check that "
            "the model folder has its tokenizer files and that the tokenizer encodes the "
            "suite's text (a tokenizer that maps text to nothing ties every test)"
        )


def first_groups(suite: Suite, limit: int) -> Suite:
    """The tests of the first ``limit`` context groups of ``suite``, in suite order."""
    if limit < 1:
        raise NNDError(f"--limit {limit}: give a number of context groups >= 1")
    kept: dict[str, None] = {}
    pairs = []
    for pair in suite.pairs:
        if pair.group_id not in kept:
            if len(kept) == limit:
                continue
            kept[pair.group_id] = None
        pairs.append(pair)
    return Suite(suite.manifest, pairs)


def _plans(suites: list[Suite], template: str | None) -> list[_Plan]:
    plans, names = [], set()
    for suite in suites:
        name, number = suite.name, 2
        while name in names:  # the same suite twice (e.g. a folder and a built-in name)
            name, number = f"{suite.name}_{number}", number + 1
        names.add(name)
        template_name, text = resolve_template(suite, template)
        plans.append(_Plan(name, suite, template_name, text))
    return plans


def _score_all(
    scorer: Backend,
    plans: list[_Plan],
    use_cache: bool,
    cache_dir: str | Path | None,
    progress: bool,
) -> tuple[dict[tuple[str, str], Score], RequestCounts]:
    """Score every distinct (context, candidate) of every suite, through the cache."""
    keyed: dict[tuple[str, str, str], None] = {}
    tests = 0
    for plan in plans:
        tests += len(plan.suite.pairs)
        for pair in plan.suite.pairs:
            context = render(plan.template, pair.context)
            keyed[(plan.template, context, pair.high.text)] = None
            keyed[(plan.template, context, pair.low.text)] = None
    scores: dict[tuple[str, str], Score] = {}
    cached = 0
    cache = ScoreCache.in_folder(cache_dir) if use_cache else None
    try:
        keys: dict[tuple[str, str, str], str] = {}
        if cache is not None:
            scope = scope_of(scorer.identity)
            cache.register_scope(scope, scorer.identity)
            keys = {item: score_key(scope, *item) for item in keyed}
            found = cache.get_many(keys.values())
            for item, key in keys.items():
                if key in found:
                    scores[item[1:]] = found[key]
                    cached += 1
        templates_of: dict[tuple[str, str], list[str]] = {}
        for template, context, candidate in keyed:
            templates_of.setdefault((context, candidate), []).append(template)
        todo = [ScoreRequest(c, x) for (c, x) in templates_of if (c, x) not in scores]

        def sink(indices: list[int], batch: list[Score]) -> None:
            rows = []
            for index, score in zip(indices, batch, strict=True):
                texts = (todo[index].context, todo[index].candidate)
                scores[texts] = score
                rows += [(keys[(t, *texts)], score) for t in templates_of[texts] if keys]
            if cache is not None:
                cache.put_many(rows)  # one transaction per batch: a stopped run keeps its work

        if todo:
            _run_with_progress(scorer, todo, sink, progress)
    finally:
        if cache is not None:
            cache.close()
    return scores, RequestCounts(tests=tests, unique=len(keyed), cached=cached, scored=len(todo))


def _run_with_progress(
    scorer: Backend, todo: list[ScoreRequest], sink: Any, progress: bool
) -> None:
    from tqdm.auto import tqdm

    with tqdm(
        total=len(todo),
        desc="scoring",
        unit="request",
        disable=not progress or not sys.stderr.isatty(),
        file=sys.stderr,
        dynamic_ncols=True,
    ) as bar:
        scorer.score(todo, sink=sink, progress=bar.update)
