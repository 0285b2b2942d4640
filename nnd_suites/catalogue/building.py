"""``build --catalogue``: every catalogue suite whose source is shipped or found in a source
folder (recognised by its sha256) is built, its declared figures checked, and written as one
config of a dataset folder whose card lists them all; the others are skipped with what to
download and from where."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nnd_suites.builder.adapter import get_adapter
from nnd_suites.builder.suites import build_suite
from nnd_suites.catalogue.entries import (
    CatalogueEntry,
    CatalogueError,
    SourceCopy,
    locate_source,
)
from nnd_suites.errors import NNDError
from nnd_suites.hub.export import adding_configs
from nnd_suites.quality_map import QualityMap
from nnd_suites.suite import Suite
from nnd_suites.suite.manifest import placeholder_fields


@dataclass(frozen=True)
class CatalogueBuild:
    """One entry's outcome: the suite built, or why it was skipped."""

    entry: CatalogueEntry
    suite: Suite | None
    skipped: str | None = None


def check_figures(entry: CatalogueEntry, suite: Suite) -> None:
    """A declared figure the suite does not give is a :class:`CatalogueError` naming the suite,
    the figure, what was expected and what the build gave (as `datasets` checks split sizes)."""
    counts = suite.manifest.counts
    found = [("tests", entry.figures.tests, counts.pairs)]
    if entry.figures.groups is not None:
        found.append(("groups", entry.figures.groups, counts.groups))
    for field, expected in entry.figures.breakdowns.items():
        got = dict(counts.breakdowns.get(field, {}))
        found.append((f"tests per {field}", expected, got))
    for figure, expected, got in found:
        if expected != got:
            raise CatalogueError(
                f"catalogue suite {entry.name}: {figure}: expected {expected}, the build gave "
                f"{got}; is the source the declared one (its sha256), and the adapter unchanged?"
            )


def check_entries(entries: list[CatalogueEntry]) -> None:
    """What can be known of each entry before any build, a :class:`CatalogueError` naming it:
    its adapter takes its options and has a quality map, its metadata (and the map's description)
    hold no ``TODO`` (its config would publish one), and its figures could be a build's (every
    breakdown a field the build counts, each value of it at least 1, the values summing to the
    tests, as every test has one value)."""
    for entry in entries:
        where = f"catalogue suite {entry.name}"
        try:
            cls = type(get_adapter(entry.adapter)(**entry.options))
            quality_map = QualityMap.load(cls.quality_map)
        except NNDError as exc:
            raise CatalogueError(f"{where}: {exc}") from None
        todo = placeholder_fields(cls.metadata, quality_map.description)
        if todo:
            raise CatalogueError(
                f"{where}: the {', '.join(todo)} of adapter {entry.adapter!r} "
                f"{'hold' if len(todo) > 1 else 'holds'} the TODO that `nnd-suites new-adapter` "
                "wrote; fill in its metadata (source.yaml or adapter.py) and its quality map's "
                "description"
            )
        fields = ("category", "label", "aspect", *cls.breakdown_fields)
        for field, counts in entry.figures.breakdowns.items():
            problem = (
                f"no build counts tests per {field!r} (fields: {', '.join(fields)})"
                if field not in fields
                else f"a value counts no test: {counts}"
                if min(counts.values(), default=1) < 1
                else f"its counts sum to {sum(counts.values())}, not tests {entry.figures.tests}"
                if sum(counts.values()) != entry.figures.tests
                else ""
            )
            if problem:
                raise CatalogueError(f"{where}: figures.breakdowns.{field}: {problem}")


def build_entry(entry: CatalogueEntry, source: Path | None = None) -> Suite:
    """The entry's suite, built from ``source`` (None: its shipped source) with its options, every
    declared figure checked."""
    suite = build_suite(
        entry.adapter, source, name=entry.name, skip_malformed=entry.skip_malformed, **entry.options
    )
    check_figures(entry, suite)
    return suite


def shipped_builds(entries: list[CatalogueEntry], then: str) -> Iterator[CatalogueBuild]:
    """Every entry whose source ships, built in memory (figures checked); the others skipped with
    where to download their source and ``then`` what to do with it."""
    for entry in entries:
        if entry.shipped:
            yield CatalogueBuild(entry, build_entry(entry))
        else:
            yield CatalogueBuild(entry, None, how_to_get(entry, None, then))


def build_catalogue(
    entries: list[CatalogueEntry], out: str | Path, source_dir: str | Path | None = None
) -> Iterator[CatalogueBuild]:
    """Build every entry whose source is available into the dataset folder ``out``, yielding
    each outcome as it comes; every figure is checked before the suite is written."""
    check_entries(entries)
    folder = Path(source_dir) if source_dir is not None else None
    if folder is not None and not folder.is_dir():
        raise CatalogueError(f"--source-dir {folder}: not a folder")
    located = {
        entry.name: (None, []) if entry.shipped else locate_source(entry.source, folder)
        for entry in entries
    }
    available = [e for e in entries if e.shipped or located[e.name][0] is not None]
    wrong = [  # a file of the source's name that is not it: never built, never skipped unsaid
        f"catalogue suite {entry.name}: {how_to_get(entry, folder, _REPLACE, others=others)}"
        for entry in entries
        if (others := located[entry.name][1])
    ]
    if wrong:
        raise CatalogueError("; ".join(wrong) + "; nothing was built")
    with adding_configs(out, [e.name for e in available], leave_out_misnamed=True) as dataset:
        for entry in entries:
            source, others = located[entry.name]
            if entry not in available:
                yield CatalogueBuild(entry, None, how_to_get(entry, folder, others=others))
                continue
            suite = build_entry(entry, source)
            dataset.add(suite, validated=True)  # built just now
            yield CatalogueBuild(entry, suite)


_REPLACE = (
    "put it in place of that file, or move that file out of --source-dir to build the other "
    "suites without it"
)


def how_to_get(
    entry: CatalogueEntry,
    folder: Path | None,
    then: str = "give the folder that holds it with --source-dir",
    *,
    others: list[tuple[Path, str]] | None = None,
) -> str:
    """Why the entry's source is not at hand, where to download it and ``then`` what to do;
    ``others``: the files in ``folder`` of its name with another sha256 (:func:`locate_source`)."""
    copy = entry.source
    assert isinstance(copy, SourceCopy)  # shipped sources are always available
    where = f"not found in {folder}" if folder is not None else "not shipped"
    check = copy.check_file
    if others:  # "not found" would send the user looking for a file that is there
        path, sha256 = others[0]
        where = (
            f"{path / check if check else path} is not the declared file (its sha256 is "
            f"{sha256[:12]}…: another version or a damaged download)"
        )
    # a folder source is found by its name and recognised by one file in it
    what = f"a folder named {Path(copy.path).name} (its {check}: " if check else f"{copy.path} ("
    return (
        f"{where} ({copy.license_note}): download {copy.url} as {what}sha256 "
        f"{copy.sha256[:12]}…) and {then}"
    )
