"""Verify and placement reports as files: JSON (+ JSON Schema), Markdown and a PNG scatter.

A verify folder and a placement folder are each written as a whole (a temporary folder swapped
in)::

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

import json
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ValidationError

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.verify.place import PlacedScore, PlacementReport
from nnd_suites.evaluation.verify.run import Correlation, VerifyReport
from nnd_suites.io import atomic_directory, atomic_write_text

VERIFY_FILE = "verify.json"
PLACEMENT_FILE = "placement.json"


def json_schema(model: type[BaseModel]) -> dict:
    schema = model.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def check_verify_folder(out: str | Path, marker: str = VERIFY_FILE) -> Path:
    """``out`` must be new, empty or an earlier folder of the same report (the one holding
    ``marker``), which is replaced as a whole."""
    out = Path(out)
    what = marker.removesuffix(".json")
    if out.exists() and not out.is_dir():
        raise NNDError(f"--out {out}: exists and is not a folder; choose a folder for the report")
    if out.is_dir() and any(out.iterdir()) and not (out / marker).is_file():
        raise NNDError(
            f"--out {out}: the folder holds files that are not a {what} report; choose a new "
            f"or empty folder (an earlier {what} folder is replaced as a whole)"
        )
    return out


def _write_report_folder(
    out: str | Path,
    marker: str,
    files: dict[str, tuple[str, str]],
    chart: tuple[str, Callable[[Path], object]],
) -> dict[str, Path]:
    """Write ``files`` (kind -> (name, text)) and ``chart`` (name, draw(path)) into ``out`` as a
    whole: a temporary folder swapped in."""
    out = check_verify_folder(out, marker)
    written = {}
    with atomic_directory(out) as tmp:
        for kind, (name, text) in files.items():
            atomic_write_text(tmp / name, text)
            written[kind] = out / name
        name, draw = chart
        draw(tmp / name)
        written["chart"] = out / name
    return written


def write_verify(report: VerifyReport, out: str | Path) -> dict[str, Path]:
    from nnd_suites.evaluation.plots import write_scatter

    files = {
        "json": (VERIFY_FILE, report.model_dump_json(indent=2) + "\n"),
        "schema": ("verify.schema.json", json.dumps(json_schema(VerifyReport), indent=2) + "\n"),
        "markdown": ("verify.md", verify_markdown(report)),
    }

    def draw(path: Path) -> None:
        write_scatter(
            path,
            report.overall.pass_rates,
            report.overall.human_scores,
            title=f"{report.suite}: NND pass rate against human score",
            human_label=f"human score ({report.measure})",
        )

    return _write_report_folder(out, VERIFY_FILE, files, ("verify.png", draw))


def write_placement(
    placement: PlacementReport, verify: VerifyReport, out: str | Path
) -> dict[str, Path]:
    """The placement's files; the chart shows the verify run's systems, its fitted line and the
    new model at its predicted score with the prediction interval."""
    from nnd_suites.evaluation.plots import write_scatter

    schema = json.dumps(json_schema(PlacementReport), indent=2) + "\n"
    files = {
        "json": (PLACEMENT_FILE, placement.model_dump_json(indent=2) + "\n"),
        "schema": ("placement.schema.json", schema),
        "markdown": ("placement.md", placement_markdown(placement)),
    }
    placed = placement.overall

    def draw(path: Path) -> None:
        write_scatter(
            path,
            verify.overall.pass_rates,
            verify.overall.human_scores,
            title=f"{placement.suite}: {placement.model} placed among the annotated systems",
            human_label=f"human score ({placement.measure})",
            new=(
                placement.model,
                placed.pass_rate,
                placed.predicted_human_score,
                placed.prediction_interval,
            ),
        )

    return _write_report_folder(out, PLACEMENT_FILE, files, ("placement.png", draw))


def load_verify(path: str | Path) -> VerifyReport:
    path = Path(path)
    file = path / VERIFY_FILE if path.is_dir() else path
    try:
        return VerifyReport.model_validate_json(file.read_text("utf-8"))
    except OSError as exc:
        raise NNDError(
            f"{file}: no verify report there ({exc.strerror}); give the folder written by "
            "`nnd-suites verify --out DIR`"
        ) from exc
    except ValidationError as exc:
        raise NNDError(
            f"{file}: not an nnd-suites verify report ({exc.errors()[0]['msg']})"
        ) from exc


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "n/a" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def _row(label: str, c: Correlation) -> str:
    return (
        f"| {label} | {c.tests} | {c.systems} | {_number(c.kendall_tau)} | "
        f"{_ci(c.kendall_tau_ci)} | {_number(c.gap_pearson)} | {_ci(c.gap_pearson_ci)} |"
    )


def verify_markdown(report: VerifyReport) -> str:
    level = f"{100 * report.confidence:g}%"
    lines = [
        f"# Verification of {report.suite} against human judgments",
        "",
        f"**{report.note}**",
        "",
        f"Human score: {report.measure}. Bootstrap: {report.resamples} resamples of the tests "
        f"(seed {report.seed}), {level} percentile intervals."
        + (f" Only the first {report.limit} context groups were scored." if report.limit else ""),
        "",
        "| system | model | pass rate | human score |",
        "|---|---|---:|---:|",
    ]
    overall = report.overall
    for name in sorted(overall.human_scores, key=lambda n: -overall.human_scores[n]):
        lines.append(
            f"| {name} | `{report.systems[name]}` | {100 * overall.pass_rates[name]:.1f}% | "
            f"{overall.human_scores[name]:.3f} |"
        )
    lines += [
        "",
        f"| tests of | n | systems | Kendall tau | {level} CI | gap Pearson | {level} CI |",
        "|---|---:|---:|---:|---|---:|---|",
        _row("**overall**", overall),
        *(
            _row(f"{c} ({report.category_kinds.get(c, '')})", r)
            for c, r in report.by_category.items()
        ),
    ]
    if any(
        c.kendall_tau is None or c.gap_pearson is None
        for c in [report.overall, *report.by_category.values()]
    ):
        lines += [
            "",
            "n/a: undefined there. Kendall's tau needs systems whose pass rates (and human "
            "scores) are not all equal; the gap correlation needs at least 3 systems and gaps "
            "that vary.",
        ]
    if report.categories_left_out:
        lines += ["", "Categories without a correlation:"]
        lines += [f"- {c}: {why}" for c, why in report.categories_left_out.items()]
    shared = _shared_models(report.systems)
    if shared:
        lines += [
            "",
            f"Note: one model stands for several systems ({shared}): they get the same "
            "pass rate, so the correlations say nothing about those systems.",
        ]
    return "\n".join(lines) + "\n"


def _shared_models(systems: dict[str, str]) -> str:
    by_model: dict[str, list[str]] = {}
    for name, model in systems.items():
        by_model.setdefault(model, []).append(name)
    return "; ".join(
        f"{model}: {', '.join(names)}" for model, names in by_model.items() if len(names) > 1
    )


def _placed_row(label: str, p: PlacedScore) -> str:
    interval = (
        "n/a"
        if p.prediction_interval is None
        else (f"[{p.prediction_interval[0]:.3f}, {p.prediction_interval[1]:.3f}]")
    )
    flag = f"poor fit: {p.reason}" if p.poor_fit else "ok"
    if p.extrapolated:
        flag += "; extrapolated (pass rate outside the systems' range)"
    if p.clipped:
        flag += "; cut to the range a human score can take"
    return (
        f"| {label} | {100 * p.pass_rate:.1f}% | {p.predicted_human_score:.3f} | {interval} | "
        f"{p.r_squared:.2f} | {p.systems} | {flag} |"
    )


def placement_markdown(placement: PlacementReport) -> str:
    level = f"{100 * placement.confidence:g}%"
    lines = [
        f"# Placement of `{placement.model}` among the systems annotated in {placement.suite}",
        "",
        f"Predicted human score ({placement.measure}) from a least-squares fit of human score "
        f"on pass rate over the annotated systems, with a {level} prediction interval.",
        "",
        f"| category | pass rate | predicted | {level} prediction interval | r² | systems | fit |",
        "|---|---:|---:|---|---:|---:|---|",
        _placed_row("**overall**", placement.overall),
        *(_placed_row(c, p) for c, p in placement.by_category.items()),
    ]
    lines += [f"\nNot placed in {c}: {why}" for c, why in placement.skipped.items()]
    return "\n".join(lines) + "\n"
