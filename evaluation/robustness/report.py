"""The robustness report: one cell per (suite, transformation), as JSON, Markdown and a heatmap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.evaluation.robustness.stats import PairedComparison, PairedTest, compare
from nnd_suites.io import atomic_path, atomic_write_text

ALPHA = 0.05
JSON_FILE, MARKDOWN_FILE, HEATMAP_FILE = "robustness.json", "robustness.md", "robustness.png"


class RobustnessCell(PairedComparison):
    """A suite under one transformation, compared test by test with the untouched suite."""

    suite: str
    transform: str = Field(description="canonical NAME[:param=value,...]")
    child_suite: str
    changed: int = Field(ge=0, description="tests with a text the transformation changed")
    identical: int = Field(ge=0, description="tests the transformation left as they were")
    significant: bool = Field(description="p_value < alpha")
    changed_only: PairedComparison = Field(description="the same comparison on changed tests")
    by_category: dict[str, PairedComparison]


class SuiteBaseline(BaseModel):
    """A suite's untouched pass rate over all its tests, as the evaluator reports it."""

    model_config = ConfigDict(extra="forbid")

    pairs: int
    passed: int
    ties: int = 0
    degenerate: int = 0
    pass_rate: float | None
    ci: tuple[float, float] | None = None


class RobustnessReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    alpha: float = ALPHA
    suites: dict[str, SuiteBaseline] = Field(description="untouched pass rates (all tests)")
    transforms: list[str]
    cells: list[RobustnessCell]
    evaluation: dict[str, Any] = Field(
        default_factory=dict, description="what the evaluator recorded (template, mode, cache)"
    )

    def cell(self, suite: str, transform: str) -> RobustnessCell:
        for cell in self.cells:
            if (cell.suite, cell.transform) == (suite, transform):
                return cell
        raise KeyError((suite, transform))

    def summary(self) -> dict[str, Any]:
        """What ``--json`` prints: the report, cells first-class."""
        return self.model_dump(mode="json")


def make_cell(
    suite: str, transform: str, child_suite: str, tests: list[PairedTest], alpha: float = ALPHA
) -> RobustnessCell:
    overall = compare(tests)
    categories = sorted({t.category for t in tests})
    changed = sum(t.changed for t in tests)
    return RobustnessCell(
        **overall.model_dump(),
        suite=suite,
        transform=transform,
        child_suite=child_suite,
        changed=changed,
        identical=len(tests) - changed,
        significant=overall.p_value is not None and overall.p_value < alpha,
        changed_only=compare(t for t in tests if t.changed),
        by_category={c: compare(t for t in tests if t.category == c) for c in categories},
    )


# ------------------------------------------------------------------ writers
def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _delta(comparison: PairedComparison) -> str:
    if comparison.delta is None or comparison.delta_ci is None:
        return "n/a"
    low, high = comparison.delta_ci
    return f"{100 * comparison.delta:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]"


def _p(value: float | None) -> str:
    return "n/a" if value is None else (f"{value:.2g}" if value >= 1e-4 else f"{value:.1e}")


def to_markdown(report: RobustnessReport) -> str:
    lines = [
        f"# Robustness of `{report.model}`",
        "",
        "Pass rates in %, on the same tests before (parent) and after the transformation; "
        "delta in points with its 95% interval (Newcombe, paired); p: exact McNemar test on the "
        f"tests that changed outcome; * marks p < {report.alpha}. Degenerate tests (both "
        "candidates became the same text) are excluded from the rates and counted apart.",
        "",
        "| suite | transform | n | degenerate | changed | parent | transformed | delta [95% CI] "
        "| lost | gained | p |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for cell in report.cells:
        mark = " *" if cell.significant else ""
        lines.append(
            f"| {cell.suite} | {cell.transform} | {cell.n:,} | {cell.degenerate:,} | "
            f"{cell.changed:,} | {_pct(cell.parent_pass_rate)} | {_pct(cell.pass_rate)} | "
            f"{_delta(cell)}{mark} | {cell.lost:,} | {cell.gained:,} | {_p(cell.p_value)} |"
        )
    lines += ["", "## Per category", ""]
    for cell in report.cells:
        lines += [
            f"### {cell.suite} / {cell.transform}",
            "",
            "| category | n | degenerate | parent | transformed | delta [95% CI] | p |",
            "|---|---:|---:|---:|---:|---|---:|",
        ]
        for category, c in cell.by_category.items():
            mark = " *" if c.p_value is not None and c.p_value < report.alpha else ""
            lines.append(
                f"| {category} | {c.n:,} | {c.degenerate:,} | {_pct(c.parent_pass_rate)} | "
                f"{_pct(c.pass_rate)} | {_delta(c)}{mark} | {_p(c.p_value)} |"
            )
        lines.append("")
    return "\n".join(lines)


def write_heatmap(report: RobustnessReport, path: Path) -> Path:
    """Suites x transformations, colour = delta in points, significant cells marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    suites = list(report.suites)
    transforms = report.transforms
    deltas = np.full((len(suites), len(transforms)), np.nan)
    for cell in report.cells:
        if cell.delta is not None:
            deltas[suites.index(cell.suite), transforms.index(cell.transform)] = 100 * cell.delta
    finite = np.abs(deltas[np.isfinite(deltas)])
    limit = max(float(finite.max()) if finite.size else 0.0, 5.0)  # noise stays pale
    width = max(4.0, 1.3 * len(transforms) + 2.5)
    fig, ax = plt.subplots(figsize=(width, 1.0 * len(suites) + 2.0))
    image = ax.imshow(deltas, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
    ax.set_xticks(range(len(transforms)), labels=transforms, rotation=30, ha="right")
    ax.set_yticks(range(len(suites)), labels=suites)
    for cell in report.cells:
        row, col = suites.index(cell.suite), transforms.index(cell.transform)
        text = "n/a" if cell.delta is None else f"{100 * cell.delta:+.1f}"
        if cell.significant:
            text += "*"
            ax.add_patch(plt.Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, lw=2.5))
        if cell.degenerate:
            text += f"\n{cell.degenerate:,} degenerate"
        dark = cell.delta is not None and abs(100 * cell.delta) > 0.6 * limit
        ax.text(
            col, row, text, ha="center", va="center", fontsize=9, color="white" if dark else "black"
        )
    fig.colorbar(image, ax=ax, label="delta pass rate (points)")
    ax.set_title(f"{report.model}: transformed - parent pass rate (* p < {report.alpha})")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)
    return path


def write_report(report: RobustnessReport, folder: str | Path) -> dict[str, Path]:
    """Write JSON, Markdown and PNG (each atomically) into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": folder / JSON_FILE,
        "markdown": folder / MARKDOWN_FILE,
        "heatmap": folder / HEATMAP_FILE,
    }
    atomic_write_text(paths["json"], json.dumps(report.summary(), indent=2) + "\n")
    atomic_write_text(paths["markdown"], to_markdown(report) + "\n")
    write_heatmap(report, paths["heatmap"])
    return paths
