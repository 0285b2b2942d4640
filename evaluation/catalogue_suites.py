"""Evaluate the catalogue: ``catalogue`` (every catalogue suite whose source ships, built here,
its declared figures checked) or a folder written by ``nnd-suites build --catalogue`` (every suite
built there), given alone as the suites of :func:`nnd_suites.evaluate` or
:func:`~nnd_suites.evaluation.multi.evaluate_models` (the CLI's ``--suite catalogue``, ``--suite
DIR``). The report carries the suites by task type
(:class:`~nnd_suites.evaluation.task_grouping.TaskGrouping`) and lists each catalogue suite that
could not be evaluated with why, never dropping one silently.

Under ``data_parallel=N`` the spec itself crosses to the ranks, and each rank builds (or reads)
the catalogue's suites, as it builds a built-in suite given by name: the builds are deterministic
(figures checked), so every rank holds the same tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.catalogue.building import how_to_get, shipped_builds
from nnd_suites.catalogue.entries import CatalogueEntry, load_catalogue
from nnd_suites.errors import NNDError
from nnd_suites.evaluation.prepared import Plan, PreparedSuites, SuiteSpec
from nnd_suites.evaluation.task_grouping import SkippedSuite, TaskGrouping
from nnd_suites.hub.layout import exported_configs
from nnd_suites.resolve import ALL, dataset_configs, suite_specs
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

    suites: list[SuiteSpec]
    grouping: TaskGrouping


def catalogue_spec(specs: Iterable[SuiteSpec]) -> str | Path | None:
    """The catalogue ``specs`` name (``catalogue`` or one folder written by ``build
    --catalogue``), None when they name none (evaluated as they are). Nothing is built: a
    launcher checks the spec before its ranks build. A catalogue given beside other suites is
    refused: its report groups the catalogue's suites alone."""
    specs = list(specs)
    named = [spec for spec in specs if not isinstance(spec, Suite) and _is_catalogue(spec)]
    if not named:
        return None
    if len(specs) > 1:
        raise NNDError(
            f"--suite {named[0]} evaluates every suite of the catalogue and groups them by task "
            "type; give it alone (evaluate other suites in another run)"
        )
    return named[0]


def catalogue_selection(specs: Iterable[SuiteSpec]) -> CatalogueSelection | None:
    """The catalogue's suites (built now when ``catalogue``) and their grouping when ``specs``
    name a catalogue (:func:`catalogue_spec`), else None."""
    named = catalogue_spec(specs)
    if named is None:
        return None
    entries = sorted(load_catalogue(), key=lambda e: (e.task_type, e.name))
    if str(named) == CATALOGUE:
        return _shipped(entries)
    return _built_in(Path(named), entries)


def catalogue_suites(
    suites: SuiteSpec | Iterable[SuiteSpec] | PreparedSuites,
) -> tuple[list[SuiteSpec] | PreparedSuites, TaskGrouping | None]:
    """What an evaluation scores for ``suites``, and how its report groups them: a catalogue's
    suites with their grouping, any other specs as a list (read once: an iterator is spent)
    without one; prepared suites as they are."""
    if isinstance(suites, PreparedSuites):
        return suites, None
    specs = suite_specs(suites)
    selection = catalogue_selection(specs)
    if selection is None:
        return specs, None
    return selection.suites, selection.grouping


def reported_grouping(grouping: TaskGrouping | None, plans: Sequence[Plan]) -> TaskGrouping | None:
    """``grouping`` with its suites under the names the report gives them: ``plans`` are the
    suites of its :meth:`~TaskGrouping.suites`, in that order, each named as reported (a
    normalised suite's new name, NAME_2 for a second suite of one name), so the console, the
    report and the leaderboard find each row's suite; None stays None."""
    if grouping is None:
        return None
    if len(plans) != len(grouping.suites()):
        raise NNDError(
            f"the task grouping of {grouping.source} holds {len(grouping.suites())} suites, the "
            f"run {len(plans)}: please report this bug"
        )
    names = iter(plan.name for plan in plans)
    task_types = {
        task: [next(names) for _ in suites] for task, suites in grouping.task_types.items()
    }
    return grouping.model_copy(update={"task_types": task_types})


def _suites_held(folder: Path, configs: list[str]) -> dict[str, str]:
    """Each of the suite folders ``configs`` of ``folder`` -> the name of the suite it holds:
    one named otherwise is no config of its card, yet the folder stands for it too."""
    if not configs:
        return {}
    from nnd_suites.hub.export import misnamed_suites  # datasets: only for a folder of suites

    named_otherwise = misnamed_suites(folder)
    return {config: named_otherwise.get(config, config) for config in configs}


def _is_catalogue(spec: str | Path) -> bool:
    """``catalogue`` (always the catalogue, whatever folder of that name is here: ./catalogue
    names the folder), or an export folder holding at least one catalogue suite."""
    if isinstance(spec, str) and spec == CATALOGUE:
        return True
    if isinstance(spec, str) and spec in ADAPTERS.names():
        return False  # a built-in suite, or ambiguous with a folder: the resolver says which
    if isinstance(spec, str) and spec == ALL:
        return False  # always every built-in suite, whatever folder of that name is here
    folder = Path(spec)
    if (folder / MANIFEST_FILE).is_file():
        return False  # one suite's folder
    names = {entry.name for entry in load_catalogue()}
    return bool(names & set(_suites_held(folder, exported_configs(folder)).values()))


def _shipped(entries: list[CatalogueEntry]) -> CatalogueSelection:
    then = f"build it with {_BUILD}, then evaluate --suite DIR"
    suites: list[SuiteSpec] = []
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
    """Every suite folder of the catalogue folder, by the catalogue's task type of the suite it
    holds, whatever the folder's name (a suite the catalogue does not list last). A ``build
    --catalogue`` folder (it holds every shipped catalogue suite) lists each catalogue suite it
    lacks with where to get its source; another dataset folder (``export``, ``build --all``)
    holds what its user chose, and lists none."""
    configs = [config.name for config in dataset_configs(folder)]  # every config of its card
    held = _suites_held(folder, configs)
    # a folder named after its suite first: it keeps the suite's name in the report, a second
    # suite of that name is NAME_2 (the sort is stable: by folder name otherwise)
    configs.sort(key=lambda config: held[config] != config)
    grouping = TaskGrouping(source=str(folder), task_types={})
    chosen: list[str] = []  # the suite folders, in the grouping's order
    whole = all(entry.name in held.values() for entry in entries if entry.shipped)
    for entry in entries:
        holding = [config for config in configs if held[config] == entry.name]
        if holding:
            grouping.task_types.setdefault(entry.task_type, []).extend([entry.name] * len(holding))
            chosen += holding
        elif whole:  # a source not shipped, not found when the folder was built
            then = f"build it into the folder with {_BUILD.replace('DIR', str(folder))}"
            grouping.skipped[entry.name] = SkippedSuite(
                task_type=entry.task_type,
                reason=f"not built in {folder}: {how_to_get(entry, None, then)}",
            )
    listed = {entry.name for entry in entries}
    others = [config for config in configs if held[config] not in listed]
    if others:
        grouping.task_types[NOT_CATALOGUED] = [held[config] for config in others]
        chosen += others
    return CatalogueSelection([folder / config for config in chosen], grouping)
