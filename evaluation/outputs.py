"""Write a report to a folder: JSON (+ its JSON Schema), Markdown, a PNG chart, outcome parquets.

Every file is written atomically (temporary file, then rename)::

    report.json             EvaluationReport
    report.schema.json      its JSON Schema
    report.md               tables per suite
    pass_rates.png          pass rate per suite and category, with Wilson 95% intervals
    outcomes/SUITE.parquet  one row per test: scores and outcome, to compare runs test by test
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.report import EvaluationReport, Rate, SuiteResult, TestOutcome
from nnd_suites.io import atomic_directory, atomic_path, atomic_write_text

REPORT_FILE = "report.json"
#: what marks a folder written by a run of several models (nnd_suites.evaluation.multi)
LEADERBOARD_FILE = "leaderboard.json"

OUTCOME_SCHEMA = pa.schema(
    [
        ("pair_id", pa.string()),
        ("parent_id", pa.string()),
        ("group_id", pa.string()),
        ("category", pa.string()),
        ("label", pa.string()),
        ("ll_high", pa.float64()),
        ("ll_low", pa.float64()),
        ("n_high", pa.int32()),
        ("n_low", pa.int32()),
        ("truncated", pa.bool_()),
        ("outcome", pa.string()),
    ]
)


def report_schema() -> dict:
    return _schema(EvaluationReport)


def _schema(model: type) -> dict:
    schema = model.model_json_schema(mode="serialization")  # type: ignore[attr-defined]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def report_schemas() -> dict[str, dict]:
    """File name -> JSON Schema of every report nnd-suites writes (shipped in
    nnd_suites/schemas/; regenerate with `nnd-suites schema --reports`)."""
    from nnd_suites.evaluation.comparison import Comparison
    from nnd_suites.evaluation.multi import Leaderboard

    return {
        "evaluation_report.schema.json": report_schema(),
        "leaderboard.schema.json": _schema(Leaderboard),
        "comparison.schema.json": _schema(Comparison),
    }


def export_report_schemas(folder: str | Path) -> list[Path]:
    folder = Path(folder)
    written = []
    for name, schema in report_schemas().items():
        atomic_write_text(folder / name, json.dumps(schema, indent=2) + "\n")
        written.append(folder / name)
    return written


def write_outcomes(path: Path, outcomes: list[TestOutcome]) -> None:
    table = pa.Table.from_pylist([o.model_dump() for o in outcomes], schema=OUTCOME_SCHEMA)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_outcomes(path: str | Path) -> list[TestOutcome]:
    return [TestOutcome.model_validate(row) for row in pq.read_table(path).to_pylist()]


def check_out_folder(out: str | Path) -> Path:
    """Fail before any scoring when ``out`` cannot receive a report.

    ``out`` must be new, empty, or an earlier report folder (which is replaced as a whole, so no
    file of an earlier run survives beside the new report).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise NNDError(f"--out {out}: exists and is not a folder; choose a folder for the report")
    ours = any((out / marker).is_file() for marker in (REPORT_FILE, LEADERBOARD_FILE))
    if out.is_dir() and any(out.iterdir()) and not ours:
        raise NNDError(
            f"--out {out}: the folder holds files that are not an nnd-suites report; "
            "choose a new or empty folder (an earlier report folder is replaced as a whole)"
        )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out.parent):
            pass
    except OSError as exc:
        raise NNDError(
            f"--out {out}: cannot write there ({exc.strerror or exc}); choose a writable folder"
        ) from exc
    return out


def write_report(report: EvaluationReport, out: str | Path) -> dict[str, Path]:
    """Write the whole report folder at once: readers see the old or the new report, never a mix
    (and no outcome file of an earlier run is left beside a new report)."""
    out = check_out_folder(out)
    with atomic_directory(out) as tmp:
        written = write_report_files(report, tmp)
    return {kind: out / path.relative_to(tmp) for kind, path in written.items()}


def write_report_files(report: EvaluationReport, folder: Path) -> dict[str, Path]:
    """Write a report's files into ``folder`` (a temporary folder that the caller swaps in)."""
    written: dict[str, Path] = {}
    for name, outcomes in report.outcomes.items():
        relative = Path("outcomes") / f"{name}.parquet"
        write_outcomes(folder / relative, outcomes)
        report.suites[name].outcomes_file = relative.as_posix()
        written[f"outcomes:{name}"] = folder / relative
    files = {
        "json": (REPORT_FILE, report.model_dump_json(indent=2) + "\n"),
        "schema": ("report.schema.json", json.dumps(report_schema(), indent=2) + "\n"),
        "markdown": ("report.md", markdown(report)),
    }
    for kind, (name, text) in files.items():
        atomic_write_text(folder / name, text)
        written[kind] = folder / name
    write_chart(report, folder / "pass_rates.png")
    written["chart"] = folder / "pass_rates.png"
    return written


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _interval(ci: tuple[float, float] | None) -> str:
    return "n/a" if ci is None else f"{100 * ci[0]:.1f} to {100 * ci[1]:.1f}%"


def _rows(rates: dict[str, Rate]) -> list[str]:
    return [
        f"| {value} | {r.n} | {r.passed} | {r.ties} | {_percent(r.pass_rate)} | {_interval(r.ci)} |"
        for value, r in rates.items()
    ]


def markdown(report: EvaluationReport) -> str:
    backend = report.backend
    lines = [
        f"# NND evaluation of `{report.model}`",
        "",
        f"Backend `{backend.get('backend')}`, revision `{backend.get('revision')}`, dtype "
        f"{backend.get('dtype')}, scoring mode **{report.mode}**, strategy "
        f"{backend.get('strategy', 'n/a')}. {report.requests.scored:,} requests scored, "
        f"{report.requests.cached:,} from the cache, {report.seconds:.1f} s."
        + (f" {report.parameters:,} parameters." if report.parameters else ""),
        "",
        "| suite | tests | passed | ties | degenerate | skipped | pass rate | 95% CI |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, result in report.suites.items():
        lines.append(
            f"| {name} | {result.pairs} | {result.passed} | {result.ties} | "
            f"{result.degenerate} | {result.skipped} | {_percent(result.pass_rate)} | "
            f"{_interval(result.ci)} |"
        )
    header = ["| {} | n | passed | ties | pass rate | 95% CI |", "|---|---:|---:|---:|---:|---|"]
    for name, result in report.suites.items():
        lines += [
            "",
            f"## {name}",
            "",
            f"Template `{result.template_name}`: `{json.dumps(result.template)[1:-1]}`.",
        ]
        if result.truncated_tests:
            lines.append(
                f"{result.truncated_tests} test(s) had their context cut from the left "
                f"to fit the model's window ({result.truncated_tokens} tokens cut)."
            )
        lines += ["", header[0].format("category"), header[1], *_rows(result.by_category)]
        for field, rates in result.by_breakdown.items():
            if field == "label" and set(rates) == set(result.by_category):
                continue  # the same table twice
            lines += ["", header[0].format(field), header[1], *_rows(rates)]
        lines += _slice_tables(result, header)
        lines += _baseline_table(result)
    return "\n".join(lines) + "\n"


def _slice_tables(result: SuiteResult, header: list[str]) -> list[str]:
    lines = []
    for name, rates in result.by_slice.items():
        field = name.removeprefix("breakdown.")
        if name != field and field in result.by_breakdown:
            continue  # a breakdown field's slice is its breakdown table above
        lines += ["", header[0].format(f"slice {name}"), header[1], *_rows(rates)]
        lines += _coverage_note(result, rates)
    return lines


def _coverage_note(result: SuiteResult, rates: dict[str, Rate]) -> list[str]:
    """Say when a slice's subsets overlap or leave tests out, so their sizes are not misread."""
    in_subsets = sum(r.n + r.degenerate + r.skipped for r in rates.values())
    if in_subsets > result.pairs:
        return [
            "",
            f"The subsets overlap: their sizes add up to {in_subsets:,} for {result.pairs:,} "
            "tests (a test can belong to several, e.g. when several systems produced its worse "
            "candidate word for word).",
        ]
    if in_subsets < result.pairs:
        return ["", f"The subsets hold {in_subsets:,} of the {result.pairs:,} tests."]
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
        "Bias baselines on the same tests (no model; a tie is not a pass): "
        + "; ".join(f"{n}: {b.description}" for n, b in result.baselines.items())
        + ".",
        "",
        "| scorer | overall | " + " | ".join(categories) + " |",
        "|---|" + "---:|" * (len(categories) + 1),
    ]
    for label, overall, by_category in rows:
        cells = [_percent(overall)] + [
            _percent(by_category[c].pass_rate) if c in by_category else "n/a" for c in categories
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def write_chart(report: EvaluationReport, path: Path) -> None:
    """Horizontal bars per suite: overall and per category pass rates with 95% intervals."""
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed

    panels = []
    for name, result in report.suites.items():
        bars = [("overall", result.pass_rate, result.ci, result.pairs - result.degenerate)]
        bars += [(c, r.pass_rate, r.ci, r.n) for c, r in result.by_category.items()]
        panels.append((name, bars))
    heights = [0.6 + 0.35 * len(bars) for _, bars in panels]
    figure = Figure(figsize=(8, sum(heights) + 0.6), layout="constrained")
    axes = figure.subplots(len(panels), 1, squeeze=False, height_ratios=heights)[:, 0]
    for axis, (name, bars) in zip(axes, panels, strict=True):
        labels = [f"{label} (n={n})" for label, _, _, n in bars]
        values = [100 * (rate or 0.0) for _, rate, _, _ in bars]
        errors = [
            [100 * ((rate or 0.0) - ci[0]) if ci else 0 for _, rate, ci, _ in bars],
            [100 * (ci[1] - (rate or 0.0)) if ci else 0 for _, rate, ci, _ in bars],
        ]
        colours = ["#4c72b0"] + ["#8da0cb"] * (len(bars) - 1)
        axis.barh(range(len(bars)), values, xerr=errors, color=colours, capsize=3)
        axis.set_yticks(range(len(bars)), labels)
        axis.invert_yaxis()
        axis.axvline(50, color="grey", linewidth=0.8, linestyle="--")
        axis.set_xlim(0, 100)
        axis.set_title(name, loc="left", fontsize=10)
    axes[-1].set_xlabel("pass rate (%), Wilson 95% interval")
    figure.suptitle(f"NND pass rates: {report.model} ({report.mode})", fontsize=11)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110)
