"""``nnd_suites.evaluate``: score one model on one or more suites and report pass rates.

Requests are deduplicated across pairs and suites; the score cache answers what an earlier run
(or another suite) already scored, and every batch the model finishes is written to it at once.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nnd_suites import __version__
from nnd_suites.errors import NNDError, ScoringError
from nnd_suites.evaluation.arguments import check_evaluate_arguments, resolve_mode
from nnd_suites.evaluation.backend import (
    Backend,
    Score,
    ScoreRequest,
    load_backend,
    read_truncation,
)
from nnd_suites.evaluation.cache import ScoreCache, scope_of, score_key
from nnd_suites.evaluation.catalogue_suites import catalogue_suites, reported_grouping
from nnd_suites.evaluation.chat_prompts import CHAT_TEMPLATE, chat_rendering
from nnd_suites.evaluation.identity import check_cached_scores, content_identity
from nnd_suites.evaluation.parallel import (
    Rank,
    broadcast,
    current_rank,
    device_for_rank,
    init_group,
    score_data_parallel,
)
from nnd_suites.evaluation.prepared import (
    PreparedSuites,
    SuiteSpec,
    prepare_suites,
    with_neutral_requests,
)
from nnd_suites.evaluation.progress import log_progress, score_with_progress
from nnd_suites.evaluation.rank_job import rank_job, refuse_before_ranks, run_in_ranks, wants_ranks
from nnd_suites.evaluation.report import (
    EvaluationReport,
    RequestCounts,
    SuiteResult,
    suite_result,
    test_outcomes,
)
from nnd_suites.evaluation.report_markdown import is_embedded
from nnd_suites.evaluation.samples import plan_samples
from nnd_suites.evaluation.scorers import DEFAULT_SCORER
from nnd_suites.evaluation.scorers.resolve import (
    backend_for,
    reference_backend_of,
    resolve_scorers,
)
from nnd_suites.evaluation.sensitivity import sensitivity
from nnd_suites.evaluation.tiny import resolve_embedded
from nnd_suites.infra.output_folder import check_output_folder

__all__ = ["evaluate"]
logger = logging.getLogger(__name__)


def evaluate(
    model: str | Path | Backend | tuple[Any, Any],
    suites: SuiteSpec | Iterable[SuiteSpec] | PreparedSuites,
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
    limit: int | float | None = None,
    trust_remote_code: bool = False,
    device_map: str | None = None,
    backend_options: dict[str, Any] | None = None,
    scorers: str | Sequence[str] = DEFAULT_SCORER,
    reference_model: str | Path | Backend | None = None,
    log_samples: bool = False,
    data_parallel: int | None = None,
) -> EvaluationReport:
    """Score ``model`` on ``suites`` and return a typed report (also written to ``out``).

    ``model`` is a Hub id, a local folder, ``nnd-suites:tiny-random`` (the embedded pipeline-check
    model, made on first use), an already-loaded :class:`Backend` (so a robustness
    run loads it once) or a ``(PreTrainedModel, tokenizer)`` pair already in memory (scored
    where it sits, without gradients, its train/eval mode restored after; the arguments that
    load a model, ``device`` and ``dtype`` among them, are refused with either). ``suites`` are
    suite folders, built-in adapter names (built on the fly), :class:`Suite` objects, or the
    output of :func:`prepare_suites` (reused across calls); ``catalogue`` or a folder written by
    ``build --catalogue``, given alone, is every suite of the catalogue, grouped by task type in
    ``report.by_task``. ``template`` is a template name of the suites
    (``macaw``) or a template string; ``compat="reference"`` reproduces the paper's scoring.
    ``normalize`` lists normalisation specs (``lowercase``, ``whitespace``...; perturbations are
    refused) applied to every suite before scoring. ``limit`` scores only the first N context
    groups with tests of each suite (or that share of them; a smoke test; the report says so).
    ``trust_remote_code`` lets a model repository run its own code (never by default);
    ``device_map="auto"`` spreads a model larger than one device over all of them.
    ``backend_options`` go to the backend's ``load`` (the served backend's ``base_url``,
    ``api_key_env``, ``concurrency``...).
    ``scorers`` (``mean``, ``sum``, ``per_char``, ``per_byte``; one or several) compare the two
    candidates of a test: the first gives the report's pass rates, all of them its
    ``sensitivity`` (every scorer reads the same scores: no model call more); ``pmi`` adds a
    request per distinct candidate, ``ratio`` scores every request with ``reference_model``
    too (loaded like ``model``, cached in its own scope). ``log_samples`` keeps what the model
    saw per test in ``report.samples`` (written to ``out`` as ``samples/SUITE.jsonl``).
    ``data_parallel=N`` scores in N local processes, each with its own copy of the model
    (:mod:`~nnd_suites.evaluation.rank_job`): the same report, from models and suites given by name.
    """
    check_evaluate_arguments(locals())  # before any work, as the CLI checks while parsing
    # taken before any parameter is reassigned: this call, as each rank will make it
    job = rank_job(evaluate, locals()) if wants_ranks(data_parallel) else None
    started = time.perf_counter()
    mode = resolve_mode(compat)
    chosen = resolve_scorers(scorers)
    backend = backend_for(chosen, backend, model)
    rank = current_rank()  # set when launched data-parallel (accelerate, torchrun, --data-parallel)
    main = rank is None or rank.main
    if rank is not None:
        init_group(rank)
        device = device_for_rank(device, rank)
    if out is not None and main:  # before any scoring: a bad --out must not cost a run
        check_output_folder(out, "report")
    if job is not None:  # N local ranks make this call; what would fail in each fails here
        # lazy: hf_loading imports torch; `import nnd_suites.evaluation` stays torch-free
        from nnd_suites.evaluation.backends.hf_loading import check_model_references

        refuse_before_ranks(suites, backend, backend_options)
        # the embedded model is made once, here, rather than by N ranks at once
        (job.arguments["model"],), _ = resolve_embedded([str(model)])
        check_model_references([job.arguments["model"]], backend, backend_options, revision)
        return run_in_ranks(job, data_parallel, EvaluationReport)  # type: ignore[arg-type]
    # `catalogue` or a `build --catalogue` folder: its suites, and the report's task grouping
    suites, by_task = catalogue_suites(suites)
    prepared: PreparedSuites | None = None
    if isinstance(suites, PreparedSuites):
        if template is not None or normalize or limit is not None:
            raise NNDError("template, normalize and limit were fixed when the suites were prepared")
        prepared = suites
    elif template != CHAT_TEMPLATE:  # the chat template needs the model's tokenizer: below
        prepared = prepare_suites(suites, template=template, normalize=normalize, limit=limit)

    if isinstance(model, Backend):
        scorer = model
        if compat is not None and scorer.mode != mode:
            raise NNDError(
                f"the backend given scores in mode {scorer.mode!r}, not {mode!r}; "
                "load it with the mode you want"
            )
        model_name = str(scorer.identity.get("model", scorer.name))
    elif isinstance(model, tuple):  # (PreTrainedModel, tokenizer) already in memory
        from nnd_suites.evaluation.in_memory import backend_for_model

        scorer = backend_for_model(*model, mode=mode, batch_size=batch_size, strategy=strategy)
        model_name = scorer.model_ref
    else:
        model_name = str(model)
        (folder,), _ = resolve_embedded([model_name])  # the README's default, made on the spot
        scorer = load_backend(
            folder,
            backend,
            mode=mode,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            revision=revision,
            strategy=strategy,
            # only the HF backends take these; say so rather than drop them silently
            **({"trust_remote_code": True} if trust_remote_code else {}),
            **({"device_map": device_map} if device_map else {}),
            **(backend_options or {}),
        )

    if prepared is None:  # conversations rendered by the model's own chat template
        prepared = prepare_suites(
            suites,  # type: ignore[arg-type]
            template=template,
            normalize=normalize,
            limit=limit,
            rendering=chat_rendering(scorer),
        )
    plans, by_task = prepared.plans, reported_grouping(by_task, prepared.plans)
    if any(one.needs_neutral for one in chosen):
        prepared = with_neutral_requests(prepared)
    names, cache_note = [p.name for p in plans], "score cache " + ("on" if cache else "off")
    logger.info("scoring %s with %s on %s; %s", model_name, scorer.describe(), names, cache_note)
    scores, counts = _score_all(scorer, prepared, cache, cache_dir, progress and main, rank)
    logger.info(  # RequestCounts' fields, in this order
        "%d tests, %d distinct requests: %d from the cache, %d scored", *dict(counts).values()
    )
    reference = reference_identity = reference_counts = None
    if any(one.needs_reference for one in chosen):
        reference_backend = reference_backend_of(
            reference_model, scorer.mode, device, dtype, batch_size, strategy, backend
        )
        reference_identity = content_identity(reference_backend.identity)
        reference, reference_counts = _score_all(
            reference_backend, prepared, cache, cache_dir, progress and main, rank
        )
    elif reference_model is not None:
        raise NNDError("a reference model was given but no scorer uses one (the ratio scorer does)")
    report = EvaluationReport(
        nnd_suites_version=__version__,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        run_id=uuid.uuid4().hex,
        model=model_name,
        backend=scorer.describe(),
        mode=scorer.mode,
        scorer=chosen[0].spec,
        reference_model=None if reference is None else str(reference_model),
        reference_identity=reference_identity,
        random_weights=is_embedded(model_name),
        suites={},
        requests=counts,
        reference_requests=reference_counts,
        seconds=0.0,
        limit=prepared.limit,
        left_out_of_all=prepared.left_out_of_all,
        by_task=by_task,
    )
    own_names = [plan.suite.name for plan in plans]
    shared_names = {name for name in own_names if own_names.count(name) > 1}
    for plan in plans:
        by_scorer = {
            one.spec: test_outcomes(
                plan.suite.pairs,
                plan.template,
                plan.contexts,
                lambda c, x: scores[(c, x)],
                one,
                None if reference is None else lambda c, x: reference[(c, x)],
            )
            for one in chosen
        }
        outcomes = by_scorer[chosen[0].spec]
        if len(chosen) > 1:
            report.sensitivity[plan.name] = sensitivity(plan.suite.pairs, by_scorer)
        truncated = read_truncation(plan.requests(), scores, reference)
        report.suites[plan.name] = suite_result(
            plan.name,
            plan.suite,
            plan.template_name,
            plan.template,
            outcomes,
            truncated,
            plan.baseline_outcomes,
            plan.content_hash,
        )
        report.suites[plan.name].given_as = plan.given_as
        report.suites[plan.name].section_hashes = plan.section_hashes
        if plan.suite.name in shared_names:  # say which of them this one is
            report.suites[plan.name].suite_name = plan.suite.name
        report.outcomes[plan.name] = outcomes
        if log_samples and main:
            report.samples[plan.name] = plan_samples(
                plan,
                outcomes,
                lambda c, x: scores[(c, x)],
                scorer,
                chosen,
                None if reference is None else lambda c, x: reference[(c, x)],
            )
        check_ties(report.suites[plan.name], model_name)
    report.parameters, report.architecture = scorer.model_size()
    report.seconds = round(time.perf_counter() - started, 3)
    if out is not None and main:  # one rank writes the report and the outcome files
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
    if result.skipped > MAX_TIE_SHARE * max(result.pairs - result.degenerate, 1):
        raise ScoringError(
            f"{model} on {result.suite}: {result.skipped:,} of {result.pairs:,} tests were "
            f"skipped because a candidate alone does not fit the model's window; use a model "
            "with a longer context window"
        )
    scored = result.pairs - result.degenerate - result.skipped
    if scored and result.ties > MAX_TIE_SHARE * scored:
        raise ScoringError(
            f"{model} on {result.suite}: {result.ties:,} of {scored:,} tests are ties (both "
            "candidates got the same score), so the pass rate would mean nothing; check that "
            "the model folder has its tokenizer files and that the tokenizer encodes the "
            "suite's text (a tokenizer that maps text to nothing ties every test)"
        )


def _score_all(
    scorer: Backend,
    prepared: PreparedSuites,
    use_cache: bool,
    cache_dir: str | Path | None,
    progress: bool,
    rank: Rank | None = None,
) -> tuple[dict[tuple[str, str], Score], RequestCounts]:
    """Score every distinct (context, candidate) of every suite, through the cache.

    Under data parallel (``rank``), rank 0 alone reads and writes the cache: it broadcasts what
    is left to score, and receives every finished round of every rank.
    """
    keyed, tests = prepared.requests, prepared.tests
    scores: dict[tuple[str, str], Score] = {}
    cached = 0
    main = rank is None or rank.main
    cache = ScoreCache.in_folder(cache_dir) if use_cache and main else None
    try:
        keys: dict[tuple[str, str, str], str] = {}
        if cache is not None:
            scope = scope_of(scorer.identity)
            cache.register_scope(scope, scorer.identity)
            keys = {item: score_key(scope, *item) for item in keyed}
            found = cache.get_many(keys.values(), log_likelihoods=scorer.log_likelihoods)
            for item, key in keys.items():
                if key in found:
                    scores[item[1:]] = found[key]
                    cached += 1
            check_cached_scores(scorer, scores)  # a served engine: does it still give these?
        templates_of: dict[tuple[str, str], list[str]] = {}
        for template, context, candidate in keyed:
            templates_of.setdefault((context, candidate), []).append(template)
        todo = [ScoreRequest(c, x) for (c, x) in templates_of if (c, x) not in scores]
        if rank is not None:
            scores, todo, cached = broadcast((scores, todo, cached), rank)  # type: ignore[misc]

        def sink(indices: list[int], batch: list[Score]) -> None:
            rows = []
            for index, score in zip(indices, batch, strict=True):
                texts = (todo[index].context, todo[index].candidate)
                scores[texts] = score
                rows += [(keys[(t, *texts)], score) for t in templates_of[texts] if keys]
            if cache is not None:
                cache.put_many(rows)  # one transaction per batch: a stopped run keeps its work

        if todo:
            if rank is None:
                score_with_progress(scorer.score, todo, sink, progress)
            else:
                own_sink = sink if main else None  # only rank 0 holds the cache
                results = score_data_parallel(
                    scorer.score, todo, rank, own_sink, log_progress(len(todo), progress)
                )
                pairs = zip(todo, results, strict=True)
                scores.update(((r.context, r.candidate), s) for r, s in pairs)
    finally:
        if cache is not None:
            cache.close()
    return scores, RequestCounts(tests=tests, unique=len(keyed), cached=cached, scored=len(todo))
