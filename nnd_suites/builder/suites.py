"""source -> adapter -> groups -> quality map -> pairs -> suite, in one call."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from nnd_suites.builder.adapter import Adapter, get_adapter
from nnd_suites.builder.budget import (
    DEFAULT_MAX_PAIRS,
    DEFAULT_MAX_PAIRS_PER_GROUP,
    PairBudget,
    judgments_over_budget,
)
from nnd_suites.builder.judged_pairs import suite_candidates
from nnd_suites.builder.pairs import build_pairs
from nnd_suites.builder.result import BuildResult
from nnd_suites.errors import NNDError, SourceFormatError
from nnd_suites.infra.collector import collector_paused
from nnd_suites.infra.output_folder import check_output_folder
from nnd_suites.infra.reading import sha256_file
from nnd_suites.quality_map import QualityMap
from nnd_suites.records.groups import Group
from nnd_suites.records.judgments import JudgedGroup
from nnd_suites.records.texts import TEXT_EQUIVALENCE
from nnd_suites.sources import ReadLog
from nnd_suites.sources.download import (
    is_url,
    public_source_name,
    resolve_source,
    resolve_source_folder,
)
from nnd_suites.suite import (
    AdapterInfo,
    BuildCounts,
    QualityMapInfo,
    SkippedItems,
    SourceFile,
    Suite,
    SuiteCandidate,
)
from nnd_suites.suite.manifest import check_config_name


@collector_paused()
def build_suite(
    adapter: str | Adapter,
    source: str | Path | None = None,
    out: str | Path | None = None,
    *,
    name: str | None = None,
    quality_map: str | Path | None = None,
    skip_malformed: bool = False,
    source_sha256: str | None = None,
    max_pairs_per_group: int | None = DEFAULT_MAX_PAIRS_PER_GROUP,
    max_pairs: int | None = DEFAULT_MAX_PAIRS,
    **options: Any,
) -> Suite:
    """Build (and with ``out``, save) the suite of ``adapter`` on ``source``.

    ``source`` defaults to the copy shipped with the adapter; ``quality_map`` overrides the map the
    adapter declares; ``skip_malformed`` records malformed rows (with line numbers) in the
    manifest instead of stopping at the first one; ``source_sha256`` pins the source file's hash;
    a group over ``max_pairs_per_group`` pairs, or a suite over ``max_pairs``, is refused before
    its pairs are built (``None``: no limit).
    A build that gives no pair is an error saying what was read and why nothing paired.
    ``out`` is a suite folder; :func:`nnd_suites.hub.building.build_suite` also writes into a
    dataset folder as one of its configs.
    """
    if name is not None:  # before the build: the manifest would refuse it at the end
        check_suite_name(name)
    if out is not None:  # before reading the source: a foreign folder costs nothing
        check_output_folder(out, "suite")
    instance = get_adapter(adapter)(**options) if isinstance(adapter, str) else adapter
    cls = type(instance)
    name = cls.name if name is None else name
    given = source if source is not None else cls.default_source_path()
    if given is None:
        raise NNDError(f"adapter {cls.name} ships no source; pass --source PATH_OR_URL")
    if cls.source_kind == "folder":
        path, archive = resolve_source_folder(given, sha256=source_sha256)
    else:
        path, archive = resolve_source(given, sha256=source_sha256), None
    qmap = QualityMap.load(cls.quality_map if quality_map is None else quality_map)
    instance.check_quality_map(qmap)
    log = ReadLog(skip_malformed=skip_malformed)
    if qmap.pairwise is not None and max_pairs is not None:
        # one judgment a row: stop reading at the budget, not after gathering every group
        log.max_rows = max_pairs
        log.over_max_rows = partial(judgments_over_budget, total=max_pairs)
    candidates: list[SuiteCandidate] = []
    # a map with a pairwise rule makes tests from judged pairs only (never from labels)
    result = build_pairs(
        _keeping_candidates(log.guard(instance.read(path, log)), candidates, qmap),
        qmap,
        cls.breakdown_fields,
        log.skipped,
        allow_empty=cls.allow_empty_candidates,
        budget=PairBudget(per_group=max_pairs_per_group, total=max_pairs),
        optional_context=cls.optional_context_fields,
    )
    if not result.pairs:
        raise _no_pairs(public_source_name(given), result, log, pairwise=qmap.pairwise is not None)
    suite = Suite.from_pairs(
        result.pairs,
        candidates=candidates,
        counts=BuildCounts(
            groups=result.counts["groups"],
            candidates=result.counts["candidates"],
            groups_without_pairs=result.counts["groups_without_pairs"],
            pairs_repeating_texts=result.counts["pairs_repeating_texts"],
            conflicting_texts=result.counts["conflicting_texts"],
        ),
        name=name,
        description=cls.metadata.description,
        adapter=AdapterInfo(
            name=cls.name, version=cls.version, options=instance.options.model_dump(mode="json")
        ),
        quality_map=QualityMapInfo(
            name=qmap.name, sha256=qmap.sha256, description=qmap.description, definition=qmap.data
        ),
        # A shipped source is named by its package path, not this machine's install location.
        sources=_source_files(
            f"shipped:{cls.name}/data/{cls.default_source}"
            if source is None
            else recorded_source_name(given),
            path,
            archive,
            log,
        ),
        context_fields=list(cls.context_fields),
        default_template=cls.default_template,
        templates=dict(cls.templates),
        breakdown_fields=list(cls.breakdown_fields),
        allow_empty_candidates=cls.allow_empty_candidates,
        optional_context_fields=list(cls.optional_context_fields),
        text_equivalence=TEXT_EQUIVALENCE,
        margin_kind=result.margin_kind,
        skipped=[SkippedItems(**record) for record in log.skipped.records()],
        conflicts=[SkippedItems(**record) for record in result.conflicts.records()],
        license=cls.metadata.license,
        citation=cls.metadata.citation,
        languages=list(cls.metadata.languages),
        task=cls.metadata.task,
    )
    if out is not None:
        suite.save(out, validated=True)  # by from_pairs, just now
    return suite


def check_suite_name(name: str) -> str:
    """Return ``name`` if it can name a new suite, its folder and its Hub config, else raise a
    usage error saying what is allowed (an empty name is refused, not ignored)."""
    return check_config_name(
        name,
        lambda problem: (
            f"suite name {name!r} refused: {problem}; it names the suite's folder "
            "and its Hub config, e.g. wmt_mqm_zhen"
        ),
    )


def recorded_source_name(source: str | Path) -> str:
    """How a source is named in a manifest, which may be published: a URL without credentials,
    query or fragment; a local file or folder by its name alone (its sha256 identifies it), never
    the user's path (/home/alice/...)."""
    text = str(source)
    return public_source_name(text) if is_url(text) else Path(text).name


def _source_files(shown: str, path: Path, archive: Path | None, log: ReadLog) -> list[SourceFile]:
    """Every input of the build with its sha256: the source file (or archive), then each other
    file the adapter read, named relative to the source's folder where it lies inside it."""
    root = (path if path.is_dir() else path.parent).resolve()
    prefix = shown if path.is_dir() else shown.rpartition("/")[0]
    names: dict[Path, str] = {}
    if archive is not None or path.is_file():
        names[archive or path] = shown
    for file, given_name in log.files.items():
        if file in names:
            continue
        if given_name is None:
            try:
                relative = file.resolve().relative_to(root).as_posix()
                given_name = f"{prefix}/{relative}" if prefix else relative
            except ValueError:
                given_name = recorded_source_name(file)
        names[file] = given_name
    if not names:
        raise NNDError(
            f"{shown}: the adapter read no file the build knows of; read files with the readers "
            "of nnd_suites.sources (or call log.note_file(path)) so the manifest can hash them"
        )
    return [
        SourceFile(path=name, sha256=sha256_file(file), bytes=file.stat().st_size)
        for file, name in names.items()
    ]


def _keeping_candidates(
    groups: Iterable[Group | JudgedGroup], kept: list[SuiteCandidate], qmap: QualityMap
) -> Iterator[Group | JudgedGroup]:
    """The groups, each one's annotated candidates (or judged responses) appended to ``kept`` as
    it passes (the suite keeps them all, paired or not, for human scores per system)."""
    for group in groups:
        kept.extend(suite_candidates(group, qmap))
        yield group


def _no_pairs(
    source: str, result: BuildResult, log: ReadLog, pairwise: bool = False
) -> SourceFormatError:
    """Why a build gave no pair: what was read, and each reason things were left out."""
    counts = result.counts
    if log.rows == 0 and counts["groups"] == 0 and not result.skipped.counts:
        # nothing to label: a hint about labels or the format would send the user astray
        return SourceFormatError(
            source,
            None,
            "no pair built: read 0 row(s): the file holds no data rows (a header alone, or "
            "nothing)",
            "check that it is the file you meant: the release, not its header or an empty export",
        )
    skipped = "; ".join(
        f"{reason}: {count:,}" for reason, count in sorted(result.skipped.counts.items())
    )
    if pairwise:
        units, why = "judged response(s)", "had no judgment the pairwise rule makes a test of"
        hint = "that its verdicts prefer one response"
    else:
        units, why = "candidate(s)", "had no two candidates of different quality"
        hint = "that its labels differ within groups"
    return SourceFormatError(
        source,
        None,
        f"no pair built: read {log.rows:,} row(s) giving {counts['groups']:,} group(s) with "
        f"{counts['candidates']:,} {units}; left out: {skipped or 'nothing'}; "
        f"{counts['groups_without_pairs']:,} group(s) {why}",
        f"check that this is the adapter's format and {hint}",
    )
