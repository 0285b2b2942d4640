"""report.md: what one evaluation computed, table by table (numbers through
:mod:`nnd_suites.infra.formatting`, every cell escaped)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.agreement_markdown import band_heading, ceiling_gap, not_compared
from nnd_suites.evaluation.limits import KeptTests, kept_tests_text, the_first
from nnd_suites.evaluation.report import EvaluationReport, Rate, RequestCounts, SuiteResult
from nnd_suites.evaluation.scorers import SCORERS
from nnd_suites.evaluation.sensitivity import Flips, Sensitivity
from nnd_suites.evaluation.task_grouping import BASELINE_COLUMNS, task_rows
from nnd_suites.evaluation.tiny import EMBEDDED, EMBEDDED_FOLDER, EMBEDDED_NOTE
from nnd_suites.evaluation.tiny.stamp import random_weights
from nnd_suites.infra.formatting import code, count, percent, plural, rate_with_interval
from nnd_suites.infra.formatting import p_value as format_p
from nnd_suites.infra.markdown import render
from nnd_suites.statistics.outcomes import rows_of

TEMPLATE = Path(__file__).parent / "report_templates" / "report.md.j2"


def _rate_rows(rates: dict[str, Rate]) -> list[list[str]]:
    return [
        [v, count(r.n), count(r.passed), count(r.ties), rate_with_interval(r.pass_rate, r.ci)]
        for v, r in rates.items()
    ]


def limit_note(limit: float | None, kept: KeptTests | None = None) -> str:
    """What ``limit`` kept, in its unit (context groups, not tests), and with ``kept`` each
    suite's tests scored of its own and the categories left with no test."""
    if not limit:
        # a suite given in part (its manifest whole, some of its pairs: the Python API allows
        # it) is said as such, or its figures would read as the whole suite's
        if kept and any(record for _, record in kept.values()):
            return (
                f" Part of a suite was scored (given so, not by `limit`): {kept_tests_text(kept)}."
            )
        return ""
    return (
        f" Only {kept_groups(limit)} of each suite {'was' if limit == 1 else 'were'} scored "
        "(`limit` counts context groups with tests, not tests)"
        + (f": {kept_tests_text(kept)}." if kept else ".")
    )


def kept_tests(suites: Mapping[str, SuiteResult]) -> KeptTests:
    """Each suite's tests scored and its limit record, for :func:`limit_note`."""
    return {name: (result.pairs, result.limited) for name, result in suites.items()}


def kept_groups(limit: float) -> str:
    """What ``--limit`` kept: the first N context groups with tests, or that share of them."""
    if limit < 1:  # 0.1%, 10%; as many digits as it takes not to say 100% of 0.99999
        share = next(t for d in range(3, 18) if (t := f"{limit * 100:.{d}g}") != "100")
        return f"the first {share}% of the context groups with tests"
    return f"{the_first(int(limit), 'context group')} with tests"


def _backend_header(backend: dict, report: EvaluationReport) -> str:
    """Backend, revision, dtype, mode, scorer and strategy; what the backend does not know (a
    GGUF file has no revision) is left out rather than printed as None."""
    known = {key: backend.get(key) for key in ("backend", "revision", "dtype", "strategy")}
    parts = [
        f"Backend {code(known['backend'])}" if known["backend"] else "",
        f"revision {code(known['revision'])}" if known["revision"] else "",
        f"dtype {known['dtype']}" if known["dtype"] else "",
        f"scoring mode **{report.mode}**, scorer {code(report.scorer)}",
        f"strategy {known['strategy']}" if known["strategy"] else "",
    ]
    return ", ".join(part for part in parts if part)


def is_embedded(model: str) -> bool:
    """Whether the run scored a random-weights pipeline-check model: the embedded one, or a
    folder ``python -m nnd_suites.evaluation.tiny`` wrote (its stamp says so)."""
    return model == EMBEDDED or EMBEDDED_FOLDER in model or random_weights(model)


def pipeline_check(model: str, recorded: bool | None) -> bool:
    """Whether a run's figures are a pipeline check (a tiny model with random weights): as its
    report recorded (``random_weights``), so that a copied run or one whose model folder is gone
    still says it; a report written before the record: by the model's name and folder, as then."""
    return is_embedded(model) if recorded is None else recorded


def embedded_heading_note(checks: Iterable[bool]) -> str:
    """What follows the heading of a report of several models (leaderboard, verify, compare) or
    of one model's several runs (robustness, place): the pipeline-check warning when one of them
    is (:func:`pipeline_check`), else nothing."""
    return f"\n\n> **{EMBEDDED_NOTE}**" if any(checks) else ""


def requests_note(
    requests: RequestCounts,
    reference_model: str | None = None,
    reference_requests: RequestCounts | None = None,
) -> str:
    """What a run scored and read from the cache, the reference model's requests apart: the
    ratio scorer scores every request twice, once per model, each in its own cache scope."""
    note = f"{plural(requests.scored, 'request')} scored, {count(requests.cached)} from the cache"
    if reference_requests is not None:
        note += f" (reference model {reference_model}: {requests_note(reference_requests)})"
    return note


def left_out_note(names: Sequence[str]) -> str:
    """What ``--suite all`` left out and why, never a silent drop ('' when nothing was)."""
    if not names:
        return ""
    return (
        f"`all` left out {plural(len(names), 'built-in suite')} whose annotation source is not "
        f"shipped: {', '.join(names)} (build one with `nnd-suites build NAME --source "
        "PATH_OR_URL --out suites/NAME` and pass that folder)."
    )


def markdown(report: EvaluationReport) -> str:
    suites = report.suites
    suite_rows = [
        [
            name,
            count(result.pairs),
            count(result.overall.n),
            count(result.passed),
            count(result.overall.failed),
            count(result.ties),
            count(result.degenerate),
            count(result.skipped),
            rate_with_interval(result.pass_rate, result.ci),
        ]
        for name, result in suites.items()
    ]
    grouping = report.by_task  # suites from the catalogue: by task, beside the baselines
    note = EMBEDDED_NOTE if pipeline_check(report.model, report.random_weights) else None
    return render(
        TEMPLATE,
        report=report,
        embedded_note=note,
        backend_header=_backend_header(report.backend, report),
        requests_note=requests_note(
            report.requests, report.reference_model, report.reference_requests
        ),
        limit_note=limit_note(report.limit, kept_tests(suites)),
        left_out_note=left_out_note(report.left_out_of_all),
        suite_rows=suite_rows,
        task_heading=REPORT_HEADING,
        task_rows=[]
        if grouping is None
        else task_rows(grouping, lambda s: report_cells(suites[s])),
        sections=[_suite_section(name, result, suites) for name, result in suites.items()],
        sensitivity=[_sensitivity_table(s, found) for s, found in report.sensitivity.items()],
        scorers={
            name: scorer_description(name)
            for found in report.sensitivity.values()
            for name in found.scorers
        },
        rate_rows=_rate_rows,
        not_compared=not_compared,
        ceiling_gap=ceiling_gap,
    )


def _origin(name: str, result: SuiteResult, suites: Mapping[str, SuiteResult]) -> str | None:
    """Which suite this is when others of the run share its name (reported as NAME_2...)."""
    own = result.suite_name
    if own is None:
        return None
    where = f"from {code(result.given_as)}" if result.given_as else "given in memory"
    named = [code(other) for other, found in suites.items() if found.suite_name == own]
    return (
        f"{code(name)} is suite {code(own)} {where}, content hash `{result.content_hash[:12]}…`. "
        f"This run holds {len(named)} different suites named {code(own)}: {', '.join(named)}."
    )


def _suite_section(
    name: str, result: SuiteResult, suites: Mapping[str, SuiteResult]
) -> dict[str, Any]:
    """What one suite's section shows beyond its result: the tables that say something new."""
    breakdowns = {
        field: rates
        for field, rates in result.by_breakdown.items()
        if not _redundant(rates, result.by_category)
    }
    strata = result.by_margin
    return {
        "name": name,
        "origin": _origin(name, result, suites),
        "result": result,
        "template": json.dumps(result.template)[1:-1],
        "margins": {}
        if strata is None
        else {band_heading(band.label, band.low, band.high): band.rate for band in strata.bands},
        "breakdowns": breakdowns,
        "slices": _slices(result),
        **_baselines(result),
    }


def _redundant(rates: dict[str, Rate], categories: dict[str, Rate]) -> bool:
    """A breakdown with one value, or the category table again under another name, says nothing
    new (the suite's `group` field often holds its categories)."""
    if len(rates) <= 1:
        return True
    return sorted(r.model_dump_json() for r in rates.values()) == sorted(
        r.model_dump_json() for r in categories.values()
    )


def _slices(result: SuiteResult) -> list[tuple[str, dict[str, Rate], int]]:
    """Each slice worth a table, with the tests its subsets hold (they may overlap, or leave
    tests out: the report says so, so that their sizes are not misread)."""
    found = []
    for name, rates in result.by_slice.items():
        field = name.removeprefix("breakdown.")
        if name != field and field in result.by_breakdown:
            continue  # a breakdown field's slice is its breakdown table (or was redundant)
        if _redundant(rates, result.by_category):
            continue
        found.append((name, rates, sum(r.n + r.degenerate + r.skipped for r in rates.values())))
    return found


def _baselines(result: SuiteResult) -> dict[str, Any]:
    """The model's pass rates beside what each bias baseline achieves on the same tests."""
    if not result.baselines:
        return {}
    categories = list(result.by_category)
    rows = [("**this model**", result.pass_rate, result.by_category)]
    rows += [(f"{n}", b.overall.pass_rate, b.by_category) for n, b in result.baselines.items()]
    return {
        "categories": list(rows_of(None, result.by_category))[1:],  # 'overall (category)'...
        "baseline_tests": _baseline_tests(result),
        "baseline_descriptions": "; ".join(
            f"{n}: {b.description}" for n, b in result.baselines.items()
        ),
        "baseline_rows": [
            [label, percent(overall)]
            + [percent(by_category[c].pass_rate) if c in by_category else "n/a" for c in categories]
            for label, overall, by_category in rows
        ],
    }


def _baseline_tests(result: SuiteResult) -> str:
    """Which tests the baselines count: those the model rated (unsaid for an older report)."""
    first = next(iter(result.baselines.values()))
    if first.overall.n != result.overall.n:  # written before baselines were cut to rated tests
        return ""
    left = f" ({count(result.skipped)} skipped, {count(result.degenerate)} degenerate left out)"
    return f", the {plural(result.overall.n, 'test')} this model rated" + (
        left if first.left_out else ""
    )


def scorer_description(spec: str) -> str:
    """What a scorer measures, from its plugin metadata (the text of the scorers' README)."""
    try:
        return SCORERS.get(spec.split(":", 1)[0]).metadata.description
    except (NNDError, KeyError, AttributeError):
        return "(no description: the scorer is not installed here)"


def _sensitivity_table(suite: str, found: Sensitivity) -> dict[str, Any]:
    """One suite's scorers side by side: pass rate, flips against the first, and by length."""
    lengths = list(dict.fromkeys(k for s in found.scorers.values() for k in s.by_length))
    rows = []
    for name, result in found.scorers.items():
        flips = result.flips
        flip_cells = (
            ["(first)", "", ""]
            if flips is None
            else [count(flips.flipped), percent(flips.share), format_p(flips.p_value)]
        )
        length_cells = [
            percent(result.by_length[k].pass_rate) if k in result.by_length else "n/a"
            for k in lengths
        ]
        overall = rate_with_interval(result.overall.pass_rate, result.overall.ci)
        rows.append([code(name), overall, *flip_cells, *length_cells])
    return {
        "name": suite,
        "header": ["scorer", "pass rate [95% CI]", "flips vs " + found.primary, "share", "p"]
        + [f"{k} (n={_n(found, k)})" for k in lengths],
        "rows": rows,
    }


def flips_cells(flips: Flips) -> list[str]:
    """Flipped tests, of how many rated under both scorers, their share and McNemar p."""
    return [count(flips.flipped), count(flips.n), percent(flips.share), format_p(flips.p_value)]


def flips_line(found: Sensitivity) -> str:
    """The flips of report.md's scorer-sensitivity table in one line, for the console."""
    each = [
        f"{name} {count(result.flips.flipped)} of {count(result.flips.n)} "
        f"({percent(result.flips.share)}, p {format_p(result.flips.p_value)})"
        for name, result in found.scorers.items()
        if result.flips is not None
    ]
    return (
        f"flips vs {found.primary} (tests passed under one scorer only, of those rated under "
        f"both; McNemar p): {'; '.join(each)}"
    )


def _n(found: Sensitivity, length: str) -> str:
    primary = found.scorers[found.primary].by_length.get(length)
    return "n/a" if primary is None else count(primary.n)


#: the columns of a single model's grouped table (:func:`report_cells`)
REPORT_HEADING = [
    "tests",
    "rated",
    "pass rate [95% CI]",
    *(f"baseline: {b}" for b in BASELINE_COLUMNS),
]


def report_cells(result: SuiteResult) -> list[str]:
    """One suite's row in a report: its tests, those rated (the rate's n), the model's overall
    rate, each baseline's."""
    baselines = [
        percent(result.baselines[b].overall.pass_rate) if b in result.baselines else "n/a"
        for b in BASELINE_COLUMNS
    ]
    rate = rate_with_interval(result.pass_rate, result.ci)
    return [count(result.pairs), count(result.overall.n), rate, *baselines]
