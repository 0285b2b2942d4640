"""report.md: what one evaluation computed, table by table (numbers through
:mod:`nnd_suites.infra.formatting`, every cell escaped)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.agreement_markdown import agreement_lines, band_heading
from nnd_suites.evaluation.limits import KeptTests, kept_tests_text
from nnd_suites.evaluation.report import EvaluationReport, Rate, SuiteResult
from nnd_suites.evaluation.scorers import SCORERS
from nnd_suites.evaluation.sensitivity import Sensitivity
from nnd_suites.evaluation.task_grouping import REPORT_HEADING, report_cells, task_table
from nnd_suites.evaluation.tiny import EMBEDDED, EMBEDDED_FOLDER, EMBEDDED_NOTE
from nnd_suites.infra.formatting import (
    cell,
    count,
    percent,
    plural,
    rate_with_interval,
    row,
)
from nnd_suites.infra.formatting import p_value as format_p

RATE_HEADER = ["n", "passed", "ties", "pass rate [95% CI]"]


def _rate_table(first: str, rates: dict[str, Rate]) -> list[str]:
    return [
        row([first, *RATE_HEADER]),
        "|---|---:|---:|---:|---:|",
        *(
            row(
                [
                    v,
                    count(r.n),
                    count(r.passed),
                    count(r.ties),
                    rate_with_interval(r.pass_rate, r.ci),
                ]
            )
            for v, r in rates.items()
        ),
    ]


def limit_note(limit: float | None, kept: KeptTests | None = None) -> str:
    """What ``limit`` kept, in its unit (context groups, not tests), and with ``kept`` each
    suite's tests scored of its own and the categories left with no test."""
    if not limit:
        return ""
    return (
        f" Only {kept_groups(limit)} of each suite were scored (`limit` counts context groups "
        "with tests, not tests)" + (f": {kept_tests_text(kept)}." if kept else ".")
    )


def kept_tests(suites: Mapping[str, SuiteResult]) -> KeptTests:
    """Each suite's tests scored and its limit record, for :func:`limit_note`."""
    return {name: (result.pairs, result.limited) for name, result in suites.items()}


def kept_groups(limit: float) -> str:
    """What ``--limit`` kept: the first N context groups with tests, or that share of them."""
    if limit < 1:
        return f"the first {percent(limit, 0)} of the context groups with tests"
    return f"the first {plural(int(limit), 'context group')} with tests"


def _backend_header(backend: dict, report: EvaluationReport) -> str:
    """Backend, revision, dtype, mode, scorer and strategy; what the backend does not know (a
    GGUF file has no revision) is left out rather than printed as None."""
    known = {key: backend.get(key) for key in ("backend", "revision", "dtype", "strategy")}
    parts = [
        f"Backend `{known['backend']}`" if known["backend"] else "",
        f"revision `{known['revision']}`" if known["revision"] else "",
        f"dtype {known['dtype']}" if known["dtype"] else "",
        f"scoring mode **{report.mode}**, scorer `{report.scorer}`",
        f"strategy {known['strategy']}" if known["strategy"] else "",
    ]
    return ", ".join(part for part in parts if part)


def is_embedded(model: str) -> bool:
    """Whether the run scored the embedded random-weights pipeline-check model."""
    return model == EMBEDDED or EMBEDDED_FOLDER in model


def markdown(report: EvaluationReport) -> str:
    backend = report.backend
    lines = [f"# NND evaluation of `{report.model}`", ""]
    if is_embedded(report.model):
        lines += [f"> **{EMBEDDED_NOTE}**", ""]
    limit = limit_note(report.limit, kept_tests(report.suites))
    lines += [
        _backend_header(backend, report) + f". {plural(report.requests.scored, 'request')} "
        f"scored, {count(report.requests.cached)} from the cache, {report.seconds:.1f} s."
        + (f" {count(report.parameters)} parameters." if report.parameters else "")
        + limit
        + " A tie is not a pass; the pass rate is passed / rated (rated: passed, failed or "
        "tied), degenerate and skipped tests are left out of it and counted apart.",
        "",
        row(
            [
                "suite",
                "tests",
                "rated",
                "passed",
                "failed",
                "ties",
                "degenerate",
                "skipped",
                "pass rate [95% CI]",
            ]
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, result in report.suites.items():
        lines.append(
            row(
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
            )
        )
    if report.by_task is not None:  # suites from the catalogue: by task, beside the baselines
        suites = report.suites
        lines += task_table(report.by_task, REPORT_HEADING, lambda s: report_cells(suites[s]))
    for name, result in report.suites.items():
        lines += _suite_section(name, result)
    if report.sensitivity:
        lines += _sensitivity_section(report.sensitivity)
    return "\n".join(lines) + "\n"


def _suite_section(name: str, result: SuiteResult) -> list[str]:
    lines = [
        "",
        f"## {name}",
        "",
        f"Template `{result.template_name}`: `{json.dumps(result.template)[1:-1]}`.",
    ]
    if result.samples_file:  # --log-samples: what the model saw and scored, test by test
        lines.append(f"What the model saw and every score, test by test: `{result.samples_file}`.")
    if result.truncated_tests:
        lines.append(
            f"{plural(result.truncated_tests, 'test')} had their context cut from the left "
            f"to fit the model's window ({plural(result.truncated_tokens, 'token')} cut)."
        )
    lines += agreement_lines(result)
    lines += ["", *_rate_table("category", result.by_category)]
    lines += _margin_table(result)
    shown = []
    for field, rates in result.by_breakdown.items():
        if _redundant(rates, result.by_category):
            continue
        shown.append(field)
        lines += ["", *_rate_table(field, rates)]
    lines += _slice_tables(result, shown)
    lines += _baseline_table(result)
    return lines


def _margin_table(result: SuiteResult) -> list[str]:
    """Pass rates by how clearly the humans preferred the better candidate."""
    strata = result.by_margin
    if strata is None:
        return []
    rates = {band_heading(band.label, band.low, band.high): band.rate for band in strata.bands}
    kind = strata.kind or "kind not stated"
    return ["", f"By human margin ({kind}; {strata.rule}):", "", *_rate_table("margin", rates)]


def _redundant(rates: dict[str, Rate], categories: dict[str, Rate]) -> bool:
    """A breakdown with one value, or the category table again under another name, says nothing
    new (the suite's `group` field often holds its categories)."""
    if len(rates) <= 1:
        return True
    return sorted(r.model_dump_json() for r in rates.values()) == sorted(
        r.model_dump_json() for r in categories.values()
    )


def _slice_tables(result: SuiteResult, shown: list[str]) -> list[str]:
    lines = []
    for name, rates in result.by_slice.items():
        field = name.removeprefix("breakdown.")
        if name != field and field in result.by_breakdown:
            continue  # a breakdown field's slice is its breakdown table (or was redundant)
        if _redundant(rates, result.by_category):
            continue
        lines += ["", *_rate_table(f"slice {name}", rates)]
        lines += _coverage_note(result, rates)
    return lines


def _coverage_note(result: SuiteResult, rates: dict[str, Rate]) -> list[str]:
    """Say when a slice's subsets overlap or leave tests out, so their sizes are not misread."""
    in_subsets = sum(r.n + r.degenerate + r.skipped for r in rates.values())
    if in_subsets > result.pairs:
        return [
            "",
            f"The subsets overlap: their sizes add up to {count(in_subsets)} for "
            f"{plural(result.pairs, 'test')} (a test can belong to several, e.g. when several "
            "systems produced its worse candidate word for word).",
        ]
    if in_subsets < result.pairs:
        return ["", f"The subsets hold {count(in_subsets)} of the {plural(result.pairs, 'test')}."]
    return []


def _baseline_table(result: SuiteResult) -> list[str]:
    """The model's pass rates beside what each bias baseline achieves on the same tests."""
    if not result.baselines:
        return []
    categories = list(result.by_category)
    rows = [("**this model**", result.pass_rate, result.by_category)]
    rows += [(f"{n}", b.overall.pass_rate, b.by_category) for n, b in result.baselines.items()]
    lines = [
        "",
        "Bias baselines on the same tests (no model; a tie is not a pass)"
        + _baseline_tests(result)
        + ": "
        + "; ".join(f"{n}: {b.description}" for n, b in result.baselines.items())
        + ".",
        "",
        row(["scorer", "overall", *categories]),
        "|---|" + "---:|" * (len(categories) + 1),
    ]
    for label, overall, by_category in rows:
        cells = [percent(overall)] + [
            percent(by_category[c].pass_rate) if c in by_category else "n/a" for c in categories
        ]
        lines.append(row([label, *cells]))
    return lines


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


def _sensitivity_section(sensitivity: dict[str, Sensitivity]) -> list[str]:
    lines = [
        "",
        "## Scorer sensitivity",
        "",
        "The same tests under each scorer asked for; the first gives the report's figures. "
        "Flips: tests passed under exactly one of the first scorer and this one (share of the "
        "tests rated under both; p: exact McNemar test on the flipped tests). The length columns "
        "hold the pass rate where the better candidate is shorter than, as long as, or longer "
        "than the worse one (characters).",
    ]
    used: dict[str, None] = {}
    for suite, found in sensitivity.items():
        lengths = list(dict.fromkeys(k for s in found.scorers.values() for k in s.by_length))
        lines += [
            "",
            f"### {suite}",
            "",
            row(
                ["scorer", "pass rate [95% CI]", "flips vs " + found.primary, "share", "p"]
                + [f"{k} (n={_n(found, k)})" for k in lengths]
            ),
            "|---|---:|---:|---:|---:|" + "---:|" * len(lengths),
        ]
        for name, result in found.scorers.items():
            used[name] = None
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
            lines.append(
                row(
                    [
                        f"`{name}`",
                        rate_with_interval(result.overall.pass_rate, result.overall.ci),
                        *flip_cells,
                        *length_cells,
                    ]
                )
            )
    lines += ["", "What each scorer measures:", ""]
    lines += [f"- `{name}`: {cell(scorer_description(name))}" for name in used]
    return lines


def _n(found: Sensitivity, length: str) -> str:
    primary = found.scorers[found.primary].by_length.get(length)
    return "n/a" if primary is None else count(primary.n)
