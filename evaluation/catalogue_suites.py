"""Evaluate the catalogue: ``--suite catalogue`` (every catalogue suite whose source ships, built
here, its declared figures checked) or ``--suite DIR`` where DIR is a folder written by
``nnd-suites build --catalogue`` (every suite built there). The report carries the suites by
task type (:class:`~nnd_suites.evaluation.task_grouping.TaskGrouping`) and lists each catalogue
suite that could not be evaluated with why, never dropping one silently.

The grouping is attached to the report (or leaderboard) the evaluator returns, and the folder is
written after: the evaluator itself knows nothing of the catalogue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nnd_suites.build.adapter import ADAPTERS
from nnd_suites.catalogue.building import how_to_get, shipped_builds
from nnd_suites.catalogue.entries import CatalogueEntry, load_catalogue
from nnd_suites.errors import NNDError
from nnd_suites.evaluation.evaluator import evaluate
from nnd_suites.evaluation.leaderboard import Leaderboard
from nnd_suites.evaluation.multi import evaluate_models, write_leaderboard_folder
from nnd_suites.evaluation.outputs import check_out_folder, write_report
from nnd_suites.evaluation.parallel import current_rank
from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.evaluation.task_grouping import SkippedSuite, TaskGrouping
from nnd_suites.hub.layout import exported_configs
from nnd_suites.infra.output_folder import check_output_folder
from nnd_suites.suite import MANIFEST_FILE, Suite

#: the suite spec that stands for every catalogue suite whose source ships with nnd-suites
CATALOGUE = "catalogue"
#: the task type of a suite in a catalogue folder that the catalogue does not list
NOT_CATALOGUED = "not in the catalogue"
_BUILD = "`nnd-suites build --catalogue --out DIR --source-dir SOURCES`"


@dataclass(frozen=True)
class CatalogueSelection:
    """The suites to evaluate (built suites, or config folders of a catalogue folder) and how
    the report groups them."""

    suites: list[Suite | Path]
    grouping: TaskGrouping


def catalogue_selection(specs: Sequence[str | Path | Suite]) -> CatalogueSelection | None:
    """The catalogue's suites when ``specs`` is ``catalogue`` or one folder written by
    ``build --catalogue``; None when they name no catalogue (evaluated as they are). A catalogue
    given beside other suites is refused: its report groups the catalogue's suites alone."""
    named = [spec for spec in specs if not isinstance(spec, Suite) and _is_catalogue(spec)]
    if not named:
        return None
    if len(specs) > 1:
        raise NNDError(
            f"--suite {named[0]} evaluates every suite of the catalogue and groups them by task "
            "type; give it alone (evaluate other suites in another run)"
        )
    entries = sorted(load_catalogue(), key=lambda e: (e.task_type, e.name))
    if str(named[0]) == CATALOGUE:
        return _shipped(entries)
    return _built_in(Path(named[0]), entries)


def _is_catalogue(spec: str | Path) -> bool:
    """``catalogue`` (always the catalogue, whatever folder of that name is here: ./catalogue
    names the folder), or an export folder holding at least one catalogue suite."""
    if isinstance(spec, str) and spec == CATALOGUE:
        return True
    if isinstance(spec, str) and spec in ADAPTERS.names():
        return False  # a built-in suite, or ambiguous with a folder: the resolver says which
    folder = Path(spec)
    if (folder / MANIFEST_FILE).is_file():
        return False  # one suite's folder
    names = {entry.name for entry in load_catalogue()}
    return bool(names & set(exported_configs(folder)))


def _shipped(entries: list[CatalogueEntry]) -> CatalogueSelection:
    then = f"build it with {_BUILD}, then evaluate --suite DIR"
    suites: list[Suite | Path] = []
    grouping = TaskGrouping(source="the catalogue (its shipped sources)", task_types={})
    for built in shipped_builds(entries, then):
        if built.suite is None:
            grouping.skipped[built.entry.name] = SkippedSuite(
                task_type=built.entry.task_type, reason=str(built.skipped)
            )
            continue
        suites.append(built.suite)
        grouping.task_types.setdefault(built.entry.task_type, []).append(built.entry.name)
    return CatalogueSelection(suites, grouping)


def _built_in(folder: Path, entries: list[CatalogueEntry]) -> CatalogueSelection:
    """Every config of the catalogue folder, by the catalogue's task types (a config the
    catalogue does not list last); each catalogue suite the folder lacks is skipped with why."""
    configs = exported_configs(folder)
    grouping = TaskGrouping(source=str(folder), task_types={})
    for entry in entries:
        if entry.name in configs:
            grouping.task_types.setdefault(entry.task_type, []).append(entry.name)
            continue
        then = f"build it into the folder with {_BUILD.replace('DIR', str(folder))}"
        reason = (
            f"rebuild the folder with `nnd-suites build --catalogue --out {folder}`"
            if entry.shipped
            else how_to_get(entry, None, then)
        )
        grouping.skipped[entry.name] = SkippedSuite(
            task_type=entry.task_type, reason=f"not built in {folder}: {reason}"
        )
    listed = {entry.name for entry in entries}
    others = [config for config in configs if config not in listed]
    if others:
        grouping.task_types[NOT_CATALOGUED] = others
    return CatalogueSelection([folder / name for name in grouping.suites()], grouping)


def evaluate_catalogue(
    models: Sequence[str | Path],
    selection: CatalogueSelection,
    *,
    out: str | Path | None = None,
    **options: Any,
) -> EvaluationReport | Leaderboard:
    """Score each of ``models`` on the selection's suites (the options of
    :func:`nnd_suites.evaluate`): one model's report, or several models' leaderboard, carrying
    the grouping; ``out`` receives the report (or leaderboard) folder."""
    rank = current_rank()
    main = rank is None or rank.main
    if out is not None and main:  # before any scoring: a bad --out must not cost a run
        if len(models) == 1:
            check_out_folder(out)
        else:
            check_output_folder(out, "leaderboard")
    grouping = selection.grouping
    if len(models) == 1:
        report = evaluate(models[0], selection.suites, **options)
        report.by_task = grouping
        if out is not None and main:
            write_report(report, out)
        return report
    board = evaluate_models(models, selection.suites, **options)
    board.by_task = grouping
    for one in board.reports:
        one.by_task = grouping
    if out is not None and main:
        write_leaderboard_folder(board, out)
    return board
