"""Read back what ``nnd-suites evaluate --out DIR`` wrote: the report and its per-test outcomes.

A run folder is input like any other: its report is read as a bounded data file, each outcomes
file must lie inside the run folder (never ``/etc/passwd`` or another run's absolute path), and a
damaged file (truncated parquet, an unknown outcome, bytes that are not UTF-8) is a named error.
Every view that reads a run back (``compare``, ``place``, robustness reports, slices) counts its
outcome rows, so rows that say something else than the run found are refused here, before any
figure: a row whose outcome its own scores contradict under the one outcome rule, or per-suite
counts that are not the report's (an edited outcomes file, or one of another run).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.limits import limit_disagrees
from nnd_suites.evaluation.outputs import read_outcomes
from nnd_suites.evaluation.report import EvaluationReport, SuiteResult
from nnd_suites.evaluation.report_markdown import kept_groups
from nnd_suites.infra.formatting import count
from nnd_suites.infra.output_folder import holds_kind, other_kind
from nnd_suites.infra.reading import DataFileError, parse_json, read_data_text
from nnd_suites.infra.validation import user_errors, validation_problems
from nnd_suites.statistics.outcomes import Outcome, Rate, TestOutcome, rate, test_outcome
from nnd_suites.suite import Suite

#: a report holds per-category figures, never per-test rows (those are in parquet files)
REPORT_FILE_LIMIT = 64 * 2**20
ReportT = TypeVar("ReportT", bound=BaseModel)


def report_file(path: str | Path) -> Path:
    """``DIR/report.json`` for a run folder, or the path itself when it names a file."""
    path = Path(path)
    found = path / "report.json" if path.is_dir() else path
    if not found.is_file():
        raise NNDError(_not_a_run(path) if path.is_dir() else _no_report(found))
    return found


#: what to give where a run was wanted
GIVE_A_RUN = "give the folder written by `nnd-suites evaluate --out DIR` (or its report.json)"


def _no_report(found: Path) -> str:
    return f"{found}: no evaluation report there; {GIVE_A_RUN}"


def _not_a_run(folder: Path) -> str:
    """Why ``folder`` is not one run, and which run inside it to give: a leaderboard holds one
    run per model, a robustness folder its evaluator's run under evaluation/."""
    if holds_kind(folder, "leaderboard"):
        models = sorted(e.name for e in folder.iterdir() if (e / "report.json").is_file())
        return (
            f"{folder}: a leaderboard folder (one run per model), not one evaluation run; give "
            f"one model's run inside it, {folder}/MODEL, with MODEL one of: {', '.join(models)}"
        )
    if holds_kind(folder, "robustness") and (folder / "evaluation" / "report.json").is_file():
        return (
            f"{folder}: a robustness folder, not one evaluation run; its evaluator's run is "
            f"{folder / 'evaluation'}"
        )
    return other_kind(folder, "report", GIVE_A_RUN) or _no_report(folder / "report.json")


def _first_problem(exc: ValidationError, data: Any) -> str:
    """The first error, at its path in ``data`` (the input)."""
    first = user_errors(exc, data)[0]
    return f"{exc.error_count()} problem(s), first: {first['loc']}: {first['msg']}"


def read_report_json(
    file: Path,
    model: type[ReportT],
    what: str,
    problems: Callable[[ValidationError, Any], str] = validation_problems,
) -> ReportT:
    """``file`` read as a bounded regular file and validated as ``model``; ``what`` names it in
    the errors (``evaluation report``, ``verify report``), ``problems`` says what is invalid."""
    try:
        text = read_data_text(file, what, REPORT_FILE_LIMIT)
        data = parse_json(text, str(file))  # nesting and integer digits within bounds
        return model.model_validate_json(text)
    except DataFileError as exc:
        raise NNDError(f"{exc}; not a readable nnd-suites {what}") from None
    except ValidationError as exc:
        raise NNDError(f"{file}: not an nnd-suites {what} ({problems(exc, data)})") from exc


def load_report(path: str | Path) -> EvaluationReport:
    """The report of a saved run, with ``report.outcomes`` read from its outcome files."""
    file = report_file(path)
    report = read_report_json(file, EvaluationReport, "evaluation report", _first_problem)
    for name, result in report.suites.items():
        problem = limit_disagrees(report.limit, result.limited)
        if result.limited and result.limited.scored != result.pairs:
            problem = f"limited.scored says {result.limited.scored}, pairs {result.pairs}"
        if problem:
            raise NNDError(f"{file}: suite {name}: {problem}; {_EDITED}")
        if result.outcomes_file is None:
            raise NNDError(
                f"{file}: suite {name} has no per-test outcomes file; re-run "
                "`nnd-suites evaluate --out DIR` to write them"
            )
        outcomes_path = _inside_run(file, name, result.outcomes_file)
        outcomes = _read_outcomes(outcomes_path, name)
        if len(outcomes) != result.pairs:
            raise NNDError(
                f"{outcomes_path}: {count(len(outcomes))} outcomes, but {file} reports "
                f"{count(result.pairs)} "
                f"tests for suite {name}; the folder mixes two runs: re-run the evaluation"
            )
        _check_verdicts(outcomes_path, name, outcomes)
        _check_counts(outcomes_path, file, name, result, outcomes)
        report.outcomes[name] = outcomes
    return report


#: what to do about outcome rows that are not the run's
_EDITED = "the folder was edited or mixes two runs: re-run the evaluation"
#: the per-outcome counts of a suite's rows that must be its report's (``Rate`` fields)
_COUNTS = ("passed", "failed", "ties", "degenerate", "skipped")


def _verdict_of_scores(row: TestOutcome) -> Outcome | None:
    """The outcome the one outcome rule gives ``row``'s own scores (``ll_high``, ``ll_low``: the
    run's scorer's values, higher is better under every scorer), or None where a row cannot tell.

    A row does not hold its candidates' texts, so whether they are the same text (degenerate)
    cannot be recomputed; nor can a degenerate row's scores be checked (texts equal only once
    normalised may score apart): :func:`_check_counts` catches an edited one. A skipped test is
    written with NaN scores; a row claiming ``skipped`` with scores is a verdict it contradicts,
    and a rated row with NaN scores is judged as the rule judges them (a fail)."""
    if row.outcome == "degenerate":
        return None
    skipped = row.outcome == "skipped" and math.isnan(row.ll_high) and math.isnan(row.ll_low)
    return test_outcome(row.ll_high, row.ll_low, degenerate=False, skipped=skipped)


def _check_verdicts(path: Path, suite: str, outcomes: list[TestOutcome]) -> None:
    """Refuse the first row whose outcome its own scores contradict (a verdict edited by hand)."""
    for row in outcomes:
        expected = _verdict_of_scores(row)
        if expected is not None and expected != row.outcome:
            raise NNDError(
                f"{path}: test {row.pair_id} of suite {suite} says {row.outcome}, but its scores "
                f"(high {row.ll_high!r}, low {row.ll_low!r}) make it {expected}; {_EDITED}"
            )


def _check_counts(
    path: Path, file: Path, suite: str, result: SuiteResult, outcomes: list[TestOutcome]
) -> None:
    """Refuse outcome rows whose per-outcome counts, overall or in a category, are not the
    report's: rows relabelled consistently with edited scores, a degenerate or skipped row
    relabelled, or rows moved to another category agree with themselves but not with the
    figures the run reported."""
    by_category: dict[str, list[Outcome]] = {category: [] for category in result.by_category}
    for row in outcomes:
        by_category.setdefault(row.category, []).append(row.outcome)
    views = {"": (result.overall, [o.outcome for o in outcomes])}
    for category, rows in by_category.items():
        views[f" in category {category}"] = (result.by_category.get(category, rate(())), rows)
    for where, (reported, rows) in views.items():
        counted = rate(rows)
        if any(getattr(counted, f) != getattr(reported, f) for f in _COUNTS):
            raise NNDError(
                f"{path}: the outcomes count {_counts(counted)}{where}, but {file} reports "
                f"{_counts(reported)} for suite {suite}{where}; {_EDITED}"
            )


def _counts(figures: Rate) -> str:
    return ", ".join(f"{getattr(figures, f)} {f}" for f in _COUNTS)


def outcomes_for(
    path: str | Path, suite: Suite, report: EvaluationReport | None = None
) -> list[TestOutcome]:
    """The per-test outcomes of the run saved at ``path`` (``report``: its report, when read
    already) on ``suite``, matched by content hash (so a renamed suite is found); a run that did
    not score it is a named error."""
    report = report or load_report(path)
    suite = suite.resealed()  # matched by what it holds now, edited in memory or not
    for name, result in report.suites.items():
        if result.content_hash == suite.manifest.content_hash:
            if report.limit is not None and result.pairs < len(suite.pairs):
                raise NNDError(
                    f"{path}: the run was limited (--limit {report.limit:g}: "
                    f"{kept_groups(report.limit)}), so it scored "
                    f"{result.pairs:,} of suite {suite.name}'s {len(suite.pairs):,} tests; "
                    "slices need every test: give a run of the whole suite (`nnd-suites "
                    "evaluate` without --limit)"
                )
            return report.outcomes[name]
    same_name = [r for r in report.suites.values() if r.suite == suite.name]
    if same_name:  # not another suite: the name matches, the build differs (a --source build)
        raise NNDError(
            f"{path}: the run scored another build of suite {suite.name} (content hash "
            f"{same_name[0].content_hash[:12]}..., the suite given has "
            f"{suite.manifest.content_hash[:12]}...: another source file, version or "
            "transformation); give the suite the run scored, as it was given to `evaluate "
            "--suite` (a folder such as suites/NAME, or the built-in name)"
        )
    raise NNDError(
        f"{path}: the run did not score suite {suite.name} (content hash "
        f"{suite.manifest.content_hash[:12]}...; it scored {sorted(report.suites)}); give a run "
        "of this suite"
    )


def _inside_run(file: Path, suite: str, named: str) -> Path:
    """The outcomes file ``named`` by the report, which must resolve inside its run folder."""
    folder = file.parent.resolve()
    outcomes_path = folder / named
    try:
        outcomes_path.resolve().relative_to(folder)
        inside = not Path(named).is_absolute()
    except ValueError:
        inside = False
    if not inside:
        raise NNDError(
            f"{file}: the outcomes file of suite {suite} is {named!r}, outside the run folder; "
            "a run names its outcomes relative to its own folder (outcomes/NAME.parquet): "
            "re-run the evaluation or restore the report"
        )
    if not outcomes_path.is_file():
        raise NNDError(
            f"{outcomes_path}: per-test outcomes of suite {suite} named by {file} are "
            "missing; copy the whole run folder, or re-run the evaluation"
        )
    return outcomes_path


def _read_outcomes(path: Path, suite: str) -> list[TestOutcome]:
    try:
        return read_outcomes(path, f"per-test outcomes of suite {suite}")
    except DataFileError as exc:
        raise NNDError(str(exc)) from None
    except (OSError, ValueError) as exc:  # pyarrow: truncated or not parquet (ArrowInvalid)
        raise NNDError(
            f"{path}: unreadable outcomes of suite {suite} ({exc}); the file is damaged or "
            "truncated: copy the run folder again or re-run the evaluation"
        ) from None
