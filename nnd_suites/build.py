"""source -> adapter -> groups -> quality map -> pairs -> suite, in one call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nnd_suites.adapter import Adapter, get_adapter
from nnd_suites.errors import NNDError
from nnd_suites.pairs import build_pairs
from nnd_suites.quality_map import QualityMap
from nnd_suites.sources import ReadLog, resolve_source, sha256_file
from nnd_suites.suite import (
    AdapterInfo,
    BuildCounts,
    QualityMapInfo,
    SkippedItems,
    SourceFile,
    Suite,
)


def build_suite(
    adapter: str | Adapter,
    source: str | Path | None = None,
    out: str | Path | None = None,
    *,
    name: str | None = None,
    quality_map: str | Path | None = None,
    skip_malformed: bool = False,
    **options: Any,
) -> Suite:
    """Build (and with ``out``, save) the suite of ``adapter`` on ``source``.

    ``source`` defaults to the copy shipped with the adapter; ``quality_map`` overrides the map the
    adapter declares; ``skip_malformed`` records malformed rows (with line numbers) in the
    manifest instead of stopping at the first one.
    """
    instance = get_adapter(adapter)(**options) if isinstance(adapter, str) else adapter
    cls = type(instance)
    given = source if source is not None else cls.default_source_path()
    if given is None:
        raise NNDError(f"adapter {cls.name} ships no source; pass --source PATH_OR_URL")
    path = resolve_source(given)
    qmap = QualityMap.load(quality_map or cls.quality_map)
    log = ReadLog(skip_malformed=skip_malformed)
    result = build_pairs(
        instance.read(path, log),
        qmap,
        cls.breakdown_fields,
        log.skipped,
        allow_empty=cls.allow_empty_candidates,
    )
    suite = Suite.from_pairs(
        result.pairs,
        counts=BuildCounts(
            groups=result.counts["groups"],
            candidates=result.counts["candidates"],
            groups_without_pairs=result.counts["groups_without_pairs"],
            pairs_repeating_texts=result.counts["pairs_repeating_texts"],
            conflicting_texts=result.counts["conflicting_texts"],
        ),
        name=name or cls.name,
        description=cls.metadata.description,
        adapter=AdapterInfo(
            name=cls.name, version=cls.version, options=instance.options.model_dump(mode="json")
        ),
        quality_map=QualityMapInfo(
            name=qmap.name, sha256=qmap.sha256, description=qmap.description, definition=qmap.data
        ),
        # A shipped source is named by its package path, not this machine's install location.
        sources=[
            SourceFile(
                path=f"shipped:{cls.name}/data/{cls.default_source}"
                if source is None
                else str(given),
                sha256=sha256_file(path),
                bytes=path.stat().st_size,
            )
        ],
        context_fields=list(cls.context_fields),
        default_template=cls.default_template,
        templates=dict(cls.templates),
        breakdown_fields=list(cls.breakdown_fields),
        allow_empty_candidates=cls.allow_empty_candidates,
        skipped=[SkippedItems(**record) for record in log.skipped.records()],
        conflicts=[SkippedItems(**record) for record in result.conflicts.records()],
        license=cls.metadata.license,
        citation=cls.metadata.citation,
        languages=list(cls.metadata.languages),
        task=cls.metadata.task,
    )
    if out is not None:
        suite.save(out)
    return suite
