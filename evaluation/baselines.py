"""Bias baselines: what trivial scorers, with no model at all, achieve on a suite's tests.

Each baseline gives every candidate a number from its text (and the test's context); the test
passes when the better candidate gets the higher number, exactly like a model's log-likelihood.
Equal numbers are a *tie*, which is not a pass (the evaluator's rule), and are counted. A suite
whose tests a length or overlap heuristic solves well measures that heuristic as much as a model:
read a model's pass rate against these figures.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from nnd_suites.infra.formatting import count, plural, rate_with_interval
from nnd_suites.infra.markdown import render
from nnd_suites.infra.validation import StrictModel
from nnd_suites.records.conversation import render_transcript
from nnd_suites.records.pairs import Pair, is_degenerate
from nnd_suites.records.templates import conversation_fields
from nnd_suites.resolve import load_suite
from nnd_suites.statistics.outcomes import (
    Outcome,
    Rate,
    rate,
    rated_by_all,
    rates_by,
    rows_of,
    verdict,
)
from nnd_suites.suite import Suite

_WORD = re.compile(r"\w+")
TEMPLATE = Path(__file__).parent / "report_templates" / "baselines.md.j2"


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def readable_context(pair: Pair, conversations: Set[str] = frozenset()) -> dict[str, str]:
    """Each context field's text, whatever template a model would use to render it; a
    conversation field by its turns' words (not its stored JSON's keys)."""
    return {
        field: render_transcript(value, field) if field in conversations else value
        for field, value in pair.context.items()
    }


def context_text(pair: Pair, conversations: Set[str] = frozenset()) -> str:
    """Every context field's text (:func:`readable_context`), one field a line."""
    return "\n".join(readable_context(pair, conversations).values())


@dataclass(frozen=True)
class Baseline:
    """A heuristic scorer: ``score(candidate text, context text)``, higher meaning "preferred"."""

    name: str
    description: str
    score: Callable[[str, str], float]


BASELINES: dict[str, Baseline] = {
    b.name: b
    for b in (
        Baseline(
            "shorter",
            "prefer the shorter candidate (characters)",
            lambda text, context: -len(text),
        ),
        Baseline(
            "longer",
            "prefer the longer candidate (characters)",
            lambda text, context: len(text),
        ),
        Baseline(
            "overlap",
            "prefer the candidate sharing more distinct words (lower-cased \\w+) with the "
            "context (all context fields)",
            lambda text, context: len(_words(text) & _words(context)),
        ),
    )
}


class BaselineRates(StrictModel):
    """What one bias baseline (a heuristic, no model) achieves on a suite's tests: in a report,
    on exactly the tests the model rated, so that both figures count the same tests."""

    description: str
    overall: Rate
    by_category: dict[str, Rate]
    left_out: int = Field(
        0,
        ge=0,
        description="tests of the suite left out because the model did not rate them (skipped: "
        "a candidate too long for its window; degenerate): the baseline is computed on the "
        "model's rated tests only (0: every test, or a report written before this field)",
    )


def baseline_outcomes(suite: Suite, baseline: Baseline | str) -> dict[str, Outcome]:
    """Per-test outcome (pass, fail, tie or degenerate) of one baseline, by pair id."""
    chosen = BASELINES[baseline] if isinstance(baseline, str) else baseline
    conversations = conversation_fields(suite.manifest.default_template)
    outcomes: dict[str, Outcome] = {}
    for pair in suite.pairs:
        if is_degenerate(pair):
            outcomes[pair.id] = "degenerate"
            continue
        context = context_text(pair, conversations)
        high, low = chosen.score(pair.high.text, context), chosen.score(pair.low.text, context)
        outcomes[pair.id] = verdict(high, low)
    return outcomes


def rates_by_category(suite: Suite, outcomes: Mapping[str, Outcome]) -> dict[str, Rate]:
    """Pass rate (Wilson 95% interval) per category of the tests in ``outcomes``, largest
    category first (as in reports)."""
    return rates_by(
        (p for p in suite.pairs if p.id in outcomes), lambda p: p.category, lambda p: outcomes[p.id]
    )


#: baseline name -> pair id -> its outcome: what :func:`all_baseline_outcomes` returns
BaselineOutcomes = Mapping[str, Mapping[str, Outcome]]


def all_baseline_outcomes(suite: Suite) -> dict[str, dict[str, Outcome]]:
    """Every baseline's per-test outcomes: model-independent, so computed once per suite however
    many models are then compared with them."""
    return {name: baseline_outcomes(suite, baseline) for name, baseline in BASELINES.items()}


def baseline_rates(
    suite: Suite, *models: Mapping[str, str], outcomes: BaselineOutcomes | None = None
) -> dict[str, BaselineRates]:
    """Every baseline's pass rate overall and per category on ``suite``; given ``models``'
    outcomes (each pair id -> outcome), on exactly the tests every one of them rated
    (:func:`rated_by_all`), so the baseline reads beside their rates: one model's report, or a
    leaderboard's models. ``outcomes``: already computed ones."""
    found = {}
    for name, per_test in (outcomes or all_baseline_outcomes(suite)).items():
        if models:
            per_test = {pair_id: per_test[pair_id] for pair_id in rated_by_all(*models, per_test)}
        found[name] = BaselineRates(
            description=BASELINES[name].description,
            overall=rate(per_test.values()),
            by_category=rates_by_category(suite, per_test),
            left_out=len(suite.pairs) - len(per_test),
        )
    return found


def baselines(suite: Suite | str | Path) -> dict[str, Any]:
    """Every baseline's pass rate overall and per category on ``suite`` (JSON-ready): a Suite,
    or a folder or name as ``nnd-suites baselines`` takes it."""
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    suite = suite.resealed()  # its content hash names what it holds now
    return {
        "suite": suite.name,
        "content_hash": suite.manifest.content_hash,
        "tests": len(suite.pairs),
        "tie_rule": "equal heuristic scores are a tie, which is not a pass",
        "baselines": {
            name: figures.model_dump(mode="json") for name, figures in baseline_rates(suite).items()
        },
    }


def _cell(r: Mapping[str, Any]) -> str:
    if r["pass_rate"] is None:
        return "n/a"
    return f"{rate_with_interval(r['pass_rate'], r['ci'])}, {plural(r['ties'], 'tie')}"


def baselines_markdown(result: Mapping[str, Any]) -> str:
    """One Markdown table: a row per baseline, a column for overall and each category."""
    first = next(iter(result["baselines"].values()))
    categories = list(first["by_category"])
    shown = rows_of(first["overall"], first["by_category"])  # a category 'overall' so named
    sizes = [f"{name} (n={count(r['n'])})" for name, r in shown.items()]
    rows = [
        [name, _cell(figures["overall"]), *(_cell(figures["by_category"][c]) for c in categories)]
        for name, figures in result["baselines"].items()
    ]
    return render(
        TEMPLATE,
        suite=result["suite"],
        tests=result["tests"],
        degenerate=first["overall"]["degenerate"],
        header=["baseline", *sizes],
        rows=rows,
        baselines=result["baselines"],
    )
