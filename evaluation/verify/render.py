"""Verify and placement reports as files: JSON (+ JSON Schema), Markdown and a PNG scatter.

A verify folder and a placement folder are each written as a whole by the one output-folder
writer (:mod:`nnd_suites.infra.output_folder`: guarded, swapped in; each also holds its marker)::

    verify.json            VerifyReport
    verify.schema.json     its JSON Schema
    verify.md              the correlations, overall and per category
    verify.png             pass rate against human score, one labelled point per system

    placement.json         PlacementReport
    placement.schema.json  its JSON Schema
    placement.md           the predicted human score, overall and per category
    placement.png          the systems, the fitted line and the new model with its interval
"""

from __future__ import annotations

import math
from pathlib import Path

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.limits import limit_disagrees
from nnd_suites.evaluation.plots import short_name, write_scatter
from nnd_suites.evaluation.report_markdown import embedded_heading_note, is_embedded, limit_note
from nnd_suites.evaluation.saved import read_report_json
from nnd_suites.evaluation.verify.models import (
    Correlation,
    PlacedScore,
    PlacementReport,
    VerifyReport,
    figures_digest,
)
from nnd_suites.infra.formatting import (
    code,
    count,
    number,
    number_interval,
    plural,
    rate_with_interval,
)
from nnd_suites.infra.markdown import render
from nnd_suites.infra.output_folder import other_kind, write_report_folder
from nnd_suites.statistics.outcomes import rated_by_all, wilson

VERIFY_FILE = "verify.json"
PLACEMENT_FILE = "placement.json"
VERIFY_TEMPLATE = Path(__file__).parents[1] / "report_templates" / "verify.md.j2"
PLACEMENT_TEMPLATE = VERIFY_TEMPLATE.with_name("placement.md.j2")


def pass_rate_intervals(correlation: Correlation) -> dict[str, tuple[float, float]]:
    """Each system's Wilson 95% interval: its pass rate is over the ``tests`` every system
    scored (ties count in n, as in every pass rate)."""
    found = {}
    for name, share in correlation.pass_rates.items():
        interval = wilson(round(share * correlation.tests), correlation.tests)
        if interval is not None:
            found[name] = interval
    return found


def statistics_note(report: VerifyReport) -> str:
    """Kendall's tau and the gap correlation with their bootstrap intervals (the chart's box)."""
    c, level = report.overall, f"{100 * report.confidence:g}%"
    return (
        f"Kendall tau {number(c.kendall_tau)} {level} CI {number_interval(c.kendall_tau_ci)}\n"
        f"gap Pearson r {number(c.gap_pearson)} {level} CI {number_interval(c.gap_pearson_ci)}\n"
        f"{plural(c.tests, 'test')} scored by every system"
    )


def write_verify(report: VerifyReport, out: str | Path) -> dict[str, Path]:
    def draw(path: Path) -> None:
        write_scatter(
            path,
            report.overall.pass_rates,
            report.overall.human_scores,
            title=f"{report.suite}: NND pass rate against human score",
            human_label=f"human score ({report.measure})",
            intervals=pass_rate_intervals(report.overall),
            note=statistics_note(report),
            check=systems_check(report),
        )

    return write_report_folder(
        out, "verify", report, verify_markdown(report), {"chart": ("verify.png", draw)}
    )


def write_placement(
    placement: PlacementReport, verify: VerifyReport, out: str | Path
) -> dict[str, Path]:
    """The placement's files; the chart shows the verify run's systems, its fitted line and the
    new model at its predicted score with the prediction interval."""
    placed = placement.overall

    def draw(path: Path) -> None:
        write_scatter(
            path,
            placement.system_pass_rates or verify.overall.pass_rates,
            verify.overall.human_scores,
            title=f"{placement.suite}: {short_name(placement.model)} placed among the systems",
            human_label=f"human score ({placement.measure})",
            new=(
                short_name(placement.model, 32),
                placed.pass_rate,
                placed.predicted_human_score,
                placed.prediction_interval,
            ),
            # the verify run's intervals are those of its own tests: not drawn on fewer
            intervals=pass_rate_intervals(verify.overall) if not placement.not_rated else None,
            note=f"fit r² {placed.r_squared:.2f} over {plural(placed.systems, 'system')}",
            warning=_flag(placed).upper() if _flag(placed) != "ok" else "",
            check=placement.random_weights,
        )

    markdown = placement_markdown(placement)
    return write_report_folder(
        out, "placement", placement, markdown, {"chart": ("placement.png", draw)}
    )


def _verify_file(path: str | Path) -> Path:
    path = Path(path)
    return path / VERIFY_FILE if path.is_dir() else path


def load_verify(path: str | Path) -> VerifyReport:
    """The verify report of a folder (or its verify.json), read as a bounded regular file."""
    file = _verify_file(path)
    if not file.exists():
        instead = "give the folder written by `nnd-suites verify --out DIR`"
        raise NNDError(
            other_kind(path, "verify", instead) or f"{file}: no verify report there; {instead}"
        )
    report = read_report_json(file, VerifyReport, "verify report")
    problem = _figures_problem(report)
    if problem:
        raise NNDError(f"{file}: {problem}; the file was edited: re-run `nnd-suites verify`")
    return report


def refuse_edited(report: VerifyReport, path: str | Path | None = None) -> None:
    """Refuse a verify report (loaded from ``path``, or made or changed in memory) whose
    figures are not those verify found (:func:`figures_digest`)."""
    if report.figures_digest is None:
        found = "records no figures_digest (written by an earlier nnd-suites, or taken out)"
    elif report.figures_digest != figures_digest(report):
        found = "holds figures that `nnd-suites verify` did not write (they no longer match "
        found += "its figures_digest: the file was edited)"
    else:
        return
    named = _verify_file(path) if path else f"the verify report of {report.suite}"
    raise NNDError(
        f"{named}: {found}, so nothing placed in it can be trusted; re-run `nnd-suites verify`"
    )


FIT_NAMES = ("human_scores", "pass_rates")  # the fields of a fit that name every system


def _figures_problem(report: VerifyReport) -> str | None:
    """Where the report's own figures disagree: the categories fitted, kinded and left out, the
    systems named (and counted), each fit's tests and undefined resamples, each human score and
    the score range, the per-test outcomes (what `place` refits on) and the overall fit's test
    count and pass rates; None where they agree."""
    if limit := limit_disagrees(report.limit, report.limited):
        return limit
    fitted, left_out = set(report.by_category), set(report.categories_left_out)
    if set(report.category_kinds) != fitted:
        return f"category_kinds names {sorted(report.category_kinds)}, by_category {sorted(fitted)}"
    if fitted & left_out:
        return f"categories_left_out names {sorted(fitted & left_out)}, fitted in by_category"
    fits = {
        "overall": report.overall,
        **{f"by_category.{c}": f for c, f in report.by_category.items()},
    }
    fits |= {
        f"{w}.margin_weighted": f.margin_weighted for w, f in fits.items() if f.margin_weighted
    }
    named = {
        **{f"{w}.{f}": getattr(fit, f) for w, fit in fits.items() for f in FIT_NAMES},
        "outcomes": report.outcomes,  # these two are null in a report written before them
        "system_models": report.system_models,
    }
    for where, names in named.items():
        if names is not None and set(names) != set(report.systems):
            return f"{where} names {sorted(names)}, systems {sorted(report.systems)}"
    for where, fit in fits.items():
        if fit.systems != len(report.systems):
            return f"{where}.systems says {fit.systems}, but systems names {len(report.systems)}"
        if fit.tests > report.overall.tests:
            return f"{where}.tests says {fit.tests}, more than overall.tests"
        undefined = {k: n for k, n in fit.undefined_resamples.items() if n > report.resamples}
        if undefined:
            return f"{where}.undefined_resamples {undefined} exceed resamples {report.resamples}"
        low, high = report.score_range or (-math.inf, math.inf)
        slack = 1e-9 * (high - low)  # a mean of equal scores may round past them
        outside = {
            n: v for n, v in fit.human_scores.items() if not low - slack <= v <= high + slack
        }
        if outside:
            return f"{where}.human_scores {outside} lie outside score_range [{low:g}, {high:g}]"
    if report.outcomes is None:
        return None
    scored = report.limited.scored if report.limited else None
    first_name, first = next(iter(report.outcomes.items()))
    for name, outcomes in report.outcomes.items():
        if scored not in (None, len(outcomes)):
            return f"outcomes.{name} holds {len(outcomes)} tests, but limited.scored says {scored}"
        if outcomes.keys() != first.keys():
            return f"outcomes.{name} and outcomes.{first_name} hold different tests"
    tests = rated_by_all(*report.outcomes.values())
    if len(tests) != report.overall.tests:
        return (
            f"outcomes: every system rated {plural(len(tests), 'test')}, but overall.tests "
            f"says {count(report.overall.tests)}"
        )
    for name, outcomes in report.outcomes.items():
        passed = sum(outcomes[t] == "pass" for t in tests)
        if not math.isclose(passed / max(len(tests), 1), report.overall.pass_rates[name]):
            return (
                f"outcomes.{name}: {passed} of {plural(len(tests), 'test')} passed, but "
                f"overall.pass_rates.{name} says {report.overall.pass_rates[name]!r}"
            )
    return None


def _cells(label: str, c: Correlation) -> list[str]:
    return [
        label,
        count(c.tests),
        count(c.systems),
        number(c.kendall_tau),
        number_interval(c.kendall_tau_ci),
        number(c.gap_pearson),
        number_interval(c.gap_pearson_ci),
    ]


def systems_check(report: VerifyReport) -> bool:
    """Whether a verify run's figures are a pipeline check (a system's model had random
    weights): as verify.json records it, so it still says so once the models are gone; a report
    written before the record: by the systems' names and folders."""
    if report.random_weights is None:
        return any(map(is_embedded, report.systems.values()))
    return report.random_weights


def verify_markdown(report: VerifyReport) -> str:
    overall = report.overall
    intervals = pass_rate_intervals(overall)
    systems = [
        [
            name,
            code(report.systems[name]),
            rate_with_interval(overall.pass_rates[name], intervals.get(name)).replace("%", ""),
            f"{overall.human_scores[name]:.3f}",
        ]
        for name in sorted(overall.human_scores, key=lambda n: -overall.human_scores[n])
    ]
    correlations = [
        _cells("**overall**", overall),
        *(
            _cells(f"{c} ({report.category_kinds.get(c, '')})", r)
            for c, r in report.by_category.items()
        ),
    ]
    weighted = overall.margin_weighted
    return render(
        VERIFY_TEMPLATE,
        report=report,
        embedded_note=embedded_heading_note([systems_check(report)]),
        level=f"{100 * report.confidence:g}%",
        limit_note=limit_note(report.limit, {report.suite: (overall.tests, report.limited)}),
        systems=systems,
        correlations=correlations,
        weighted_systems=[]
        if weighted is None
        else [
            [
                name,
                f"{100 * overall.pass_rates[name]:.1f}",
                f"{100 * weighted.pass_rates[name]:.1f}",
            ]
            for name in sorted(weighted.pass_rates, key=lambda n: -weighted.human_scores[n])
        ],
        weighted_correlations=[]
        if weighted is None
        else [
            _cells("**overall**", weighted),
            *(
                _cells(c, r.margin_weighted)
                for c, r in report.by_category.items()
                if r.margin_weighted is not None
            ),
        ],
        undefined=any(
            c.kendall_tau is None or c.gap_pearson is None
            for c in [overall, *report.by_category.values()]
        ),
        shared=_shared_models(report.systems),
    )


def _shared_models(systems: dict[str, str]) -> str:
    by_model: dict[str, list[str]] = {}
    for name, model in systems.items():
        by_model.setdefault(model, []).append(name)
    return "; ".join(
        f"{model}: {', '.join(names)}" for model, names in by_model.items() if len(names) > 1
    )


def _flag(p: PlacedScore) -> str:
    flag = f"poor fit: {p.reason}" if p.poor_fit else "ok"
    if p.extrapolated:
        flag += "; extrapolated (pass rate outside the systems' range)"
    if p.clipped:
        flag += "; cut to the range a human score can take"
    return flag


def _placed_cells(label: str, p: PlacedScore) -> list[str]:
    interval = (
        "n/a"
        if p.prediction_interval is None
        else f"[{p.prediction_interval[0]:.3f}, {p.prediction_interval[1]:.3f}]"
    )
    return [
        label,
        f"{100 * p.pass_rate:.1f}",
        f"{p.predicted_human_score:.3f}",
        interval,
        f"{p.r_squared:.2f}",
        count(p.systems),
        _flag(p),
    ]


def placement_markdown(placement: PlacementReport) -> str:
    rows = [
        _placed_cells("**overall**", placement.overall),
        *(_placed_cells(c, p) for c, p in placement.by_category.items()),
    ]
    level = f"{100 * placement.confidence:g}%"
    note = embedded_heading_note([placement.random_weights])
    return render(
        PLACEMENT_TEMPLATE, placement=placement, level=level, rows=rows, embedded_note=note
    )
