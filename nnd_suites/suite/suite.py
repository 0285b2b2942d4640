"""Suites: a validated set of pairs plus its manifest, stored as a folder.

The folder's layout (:mod:`nnd_suites.suite.storage`) is the one an export gives each config::

    manifest.json                  # SuiteManifest (provenance, quality map, counts, hashes)
    test-00000-of-00001.parquet    # one row per Pair, the `datasets` Features embedded
    candidates.parquet             # one row per annotated candidate (SuiteCandidate)

Every suite is made by :meth:`Suite.from_pairs` (a build) or :meth:`Suite.derive` (a child of
another suite), which compute the counts and the hashes; written atomically (a temporary folder
swapped into place) and validated again on load, whichever layout wrote it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from nnd_suites import __version__
from nnd_suites.errors import SuiteValidationError, TemplateError
from nnd_suites.infra.collector import collector_paused
from nnd_suites.infra.formatting import count
from nnd_suites.infra.output_folder import output_folder
from nnd_suites.records.conversation import decode_turns
from nnd_suites.records.pairs import Pair, is_degenerate
from nnd_suites.records.templates import check_template, conversation_fields
from nnd_suites.records.texts import TEXT_EQUIVALENCE, is_blank
from nnd_suites.suite.candidates import SuiteCandidate
from nnd_suites.suite.manifest import (
    BuildCounts,
    PairCounts,
    SuiteCounts,
    SuiteManifest,
)
from nnd_suites.suite.pooled_texts import pooled_texts
from nnd_suites.suite.storage import (
    no_longer_matching,
    read_suite_files,
    suite_features,
    write_suite_files,
)
from nnd_suites.suite.table import pair_rows, pairs_arrow_schema
from nnd_suites.suite.text_rule import text_rule_problem

if TYPE_CHECKING:
    import datasets
    import pandas


def breakdown_counts(pairs: list[Pair], fields: Iterable[str]) -> dict[str, dict[str, int]]:
    """Pairs per value of category, label, aspect (when present) and each adapter field."""
    result: dict[str, dict[str, int]] = {
        "category": dict(Counter(p.category for p in pairs).most_common()),
        "label": dict(Counter(p.label for p in pairs).most_common()),
    }
    if any(p.aspect for p in pairs):
        result["aspect"] = dict(Counter(p.aspect or "" for p in pairs).most_common())
    for name in fields:
        result[name] = dict(Counter(p.breakdown.get(name, "") for p in pairs).most_common())
    return result


def pair_counts(pairs: list[Pair], breakdown_fields: Iterable[str]) -> PairCounts:
    """The counts that follow from the pairs: one definition for building and validating."""
    return PairCounts(
        pairs=len(pairs),
        degenerate_pairs=sum(map(is_degenerate, pairs)),
        breakdowns=breakdown_counts(pairs, breakdown_fields),
    )


#: Manifest fields a constructor computes; everything else is given.
COMPUTED = ("counts", "created_with", "section_hashes", "content_hash")


class Suite:
    """Pairs, annotated candidates and manifest. ``Suite.load(folder)`` validates;
    ``suite.save(folder)`` is atomic."""

    def __init__(
        self,
        manifest: SuiteManifest,
        pairs: list[Pair],
        candidates: Sequence[SuiteCandidate] = (),
    ) -> None:
        self.manifest = manifest
        self.pairs = pairs
        self.candidates = list(candidates)

    # ---------------------------------------------------------- constructors
    @classmethod
    @collector_paused()
    def from_pairs(
        cls,
        pairs: list[Pair],
        *,
        counts: BuildCounts,
        candidates: Sequence[SuiteCandidate],
        **fields: Any,
    ) -> Suite:
        """The one constructor: ``fields`` are the manifest's given fields (name, adapter, quality
        map, sources, templates, ...); counts from the pairs, version and hashes are computed.
        ``candidates`` are every annotated candidate read (``counts.candidates`` of them)."""
        given = {name: value for name, value in fields.items() if name not in COMPUTED}
        breakdown_fields = given.get("breakdown_fields", [])
        full = SuiteCounts(
            **counts.model_dump(), **pair_counts(pairs, breakdown_fields).model_dump()
        )
        manifest = SuiteManifest(
            **given, counts=full, created_with=__version__, content_hash="0" * 64
        )
        candidates = list(candidates)
        suite = cls(manifest.sealed(pairs, candidates), pairs, candidates)
        suite.validate(hashes=False)  # sealed over these very pairs and candidates just now
        return suite

    def derive(self, pairs: list[Pair], **updates: Any) -> Suite:
        """A suite made from this one (a transformation's child): its manifest with ``updates``,
        the build counts and the annotated candidates kept, the rest recomputed by
        :meth:`from_pairs`."""
        fields = self.manifest.model_dump(exclude=set(COMPUTED))
        # its counts are this release's, under this release's rule
        fields.update(text_equivalence=TEXT_EQUIVALENCE, **updates)
        build = BuildCounts(
            **self.manifest.counts.model_dump(include=set(BuildCounts.model_fields))
        )
        return Suite.from_pairs(pairs, counts=build, candidates=self.candidates, **fields)

    def resealed(self) -> Suite:
        """This suite identified by its content as it is now: itself while its pairs, candidates
        and manifest match the recorded hashes, else the same pairs, candidates and manifest with
        the hashes recomputed over them. A suite edited in memory (the sides of its tests swapped,
        a template changed) so never passes for the suite it was: what is scored, compared and
        linked as a parent is named by the content hash of what it holds, never by the one a
        build recorded. The recorded counts are kept (a subset of the pairs reads as a part of
        the suite, as ``--limit`` does); validation is the loader's and the builder's, save for
        what would make wrong figures (no pair, a pair twice, a context the templates lack:
        a :class:`SuiteValidationError` naming them)."""
        problems = self._test_problems()
        if problems:
            raise SuiteValidationError(
                f"suite {self.name!r} (a Suite object in memory) is invalid: " + "; ".join(problems)
            )
        sealed = self.manifest.sealed(self.pairs, self.candidates)
        if sealed.content_hash == self.manifest.content_hash:
            return self
        return Suite(sealed, self.pairs, self.candidates)

    @property
    def name(self) -> str:
        return self.manifest.name

    def __len__(self) -> int:
        return len(self.pairs)

    def __repr__(self) -> str:
        return f"Suite({self.name!r}, pairs={len(self.pairs)})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Suite)
            and self.manifest == other.manifest
            and self.pairs == other.pairs
            and self.candidates == other.candidates
        )

    @cached_property
    def by_id(self) -> dict[str, Pair]:
        return {pair.id: pair for pair in self.pairs}

    # --------------------------------------------------------------- validation
    def validate(self, *, hashes: bool = True) -> None:
        """Check the invariants a suite must hold, and (``hashes``) that its pairs, candidates
        and manifest match the recorded hashes; raise SuiteValidationError naming the fault."""
        problems = self._invariant_problems()
        edited = self.manifest.edited_sections(self.pairs, self.candidates) if hashes else []
        if edited:
            problems.append(
                f"edited after it was written: {no_longer_matching(edited)}; rebuild the suite "
                "instead of editing it"
            )
        if problems:
            raise SuiteValidationError(f"suite {self.name!r} is invalid: " + "; ".join(problems))

    def _test_problems(self) -> list[str]:
        """What keeps the pairs from being scored as tests, whatever the recorded counts: none at
        all, one test twice (counted twice), a context the templates cannot render."""
        problems = []
        if not self.pairs:  # a pass rate over no test is no figure at all
            problems.append("it holds no pair; rebuild it from a source that gives pairs")
        repeated = [i for i, n in Counter(pair.id for pair in self.pairs).items() if n > 1]
        if repeated:
            problems.append(f"{count(len(repeated))} duplicate pair id(s), e.g. {repeated[:3]}")
        fields = set(self.manifest.context_fields)
        odd = next((p for p in self.pairs if set(p.context) != fields), None)
        if odd is not None:
            problems.append(
                f"pair {odd.id}: context fields {sorted(odd.context)} != manifest "
                f"context_fields {sorted(fields)}"
            )
        return problems

    def _invariant_problems(self) -> list[str]:
        manifest, problems = self.manifest, self._test_problems()
        # judged under another rule, every count below would read as a fault of the suite
        rule_problem = text_rule_problem(manifest.text_equivalence, self.pairs, self.candidates)
        if rule_problem:
            return [*problems, rule_problem]
        fields = set(manifest.context_fields)
        unknown = sorted(set(manifest.optional_context_fields) - fields)
        if unknown:
            problems.append(
                f"optional_context_fields {unknown} are not context_fields {sorted(fields)}"
            )
        families = {"default": manifest.default_template, **manifest.templates}
        safe = {}
        for family, template in families.items():
            try:
                check_template(template, manifest.context_fields, f"template {family!r}")
            except TemplateError as exc:
                problems.append(str(exc))
            else:
                safe[family] = template
        problems += self._conversation_problems(safe)
        # Identical texts only come from a transformation or from conflicts the map keeps.
        degenerate_allowed = (
            manifest.transformation is not None
            or manifest.quality_map.definition.get("conflicting_labels") == "keep"
        )
        for pair in self.pairs:
            empty = is_blank(pair.high.text) or is_blank(pair.low.text)
            if empty and not manifest.allow_empty_candidates:
                problems.append(f"pair {pair.id}: empty candidate text")
                break
            if is_degenerate(pair) and not degenerate_allowed:
                problems.append(f"pair {pair.id}: high and low candidates are identical")
                break
        expected = pair_counts(self.pairs, manifest.breakdown_fields)
        for name, value in expected.model_dump().items():
            recorded = getattr(manifest.counts, name)
            if recorded != value:
                shown = f" ({recorded} pairs, the data has {value})" if name == "pairs" else ""
                problems.append(f"manifest counts.{name} does not match the pairs{shown}")
        return problems + self._candidate_problems()

    def _conversation_problems(self, templates: dict[str, str]) -> list[str]:
        """A field a template renders as a conversation (``{field:transcript}``) that some
        context does not hold as one: evaluate would stop there with these very words. Each
        distinct value of such a field is decoded once, however many templates name it."""
        families: dict[str, list[str]] = {}
        for family, template in templates.items():
            for field in conversation_fields(template):
                families.setdefault(field, []).append(family)
        problems = []
        for field, named_by in sorted(families.items()):
            decoded: set[str] = set()
            for pair in self.pairs:
                value = pair.context.get(field)  # a missing field is a problem of its own
                if value is None or value in decoded:
                    continue
                try:
                    decode_turns(value, field)
                except TemplateError as exc:
                    shown = ", ".join(repr(family) for family in named_by)
                    which = "template" if len(named_by) == 1 else "templates"
                    problems.append(f"{which} {shown}, pair {pair.id}: {exc}")
                    break
                decoded.add(value)
        return problems

    def _candidate_problems(self) -> list[str]:
        """Every annotated candidate kept, and every pair's group among them."""
        recorded = self.manifest.counts.candidates
        if len(self.candidates) != recorded:
            return [
                f"{count(len(self.candidates))} annotated candidates kept, the manifest counts "
                f"{count(recorded)} (counts.candidates); rebuild the suite"
            ]
        groups = {c.group_id for c in self.candidates}
        orphan = next((p for p in self.pairs if p.group_id not in groups), None)
        if orphan is not None:
            return [f"pair {orphan.id}: group {orphan.group_id!r} has no annotated candidate"]
        return []

    # ---------------------------------------------------------------- storage
    @collector_paused()
    def save(self, folder: str | Path, *, kind: str = "suite", validated: bool = False) -> Path:
        """Write the suite folder as a whole; an existing folder is replaced only when it is
        empty or a suite (:mod:`nnd_suites.infra.output_folder`), any other is refused untouched.
        ``kind`` names the folder in those messages (``export-config`` for an export).
        ``validated``: the caller validated this suite, or made it with :meth:`from_pairs`, just
        now, and nothing has touched it since (an export, a build): not validated again."""
        if not validated:
            self.validate()
        folder = Path(folder)
        with output_folder(folder, kind) as tmp:
            write_suite_files(tmp, self.manifest, self.pairs, self.candidates)
        return folder

    @classmethod
    @collector_paused()
    def load(cls, folder: str | Path) -> Suite:
        """The validated suite of a folder that `build` or `export` wrote, in any release."""
        suite = cls(*read_suite_files(Path(folder)))
        try:
            suite.validate()
        except SuiteValidationError as exc:  # of several suites, the one at fault is named
            raise SuiteValidationError(f"{folder}: {exc}") from None
        return suite

    # ------------------------------------------------------------------ stats
    def stats(self) -> dict[str, Any]:
        counts = self.manifest.counts
        return {
            "name": self.name,
            "adapter": self.manifest.adapter.name,
            **counts.model_dump(),
            "skipped": {s.reason: s.count for s in self.manifest.skipped},
            "conflicts": {c.reason: c.count for c in self.manifest.conflicts},
            # counted from the candidates: suites built before the count show it too
            "pooled_texts": pooled_texts(self.manifest, self.candidates),
            "transformation": (
                self.manifest.transformation.model_dump() if self.manifest.transformation else None
            ),
            "content_hash": self.manifest.content_hash,
        }

    # ------------------------------------------------------------- dataframes
    def to_pandas(self) -> pandas.DataFrame:
        """One row per pair, its columns as the suite's parquet file has them (``context``,
        ``high``, ``low`` and ``breakdown`` as dicts of their fields): what
        ``load_dataset(...).to_pandas()`` gives for the exported suite."""
        manifest = self.manifest
        schema = pairs_arrow_schema(manifest.context_fields, manifest.breakdown_fields)
        # pyarrow imports pandas here only: `nnd-suites list` never loads it
        return pa.Table.from_pylist(pair_rows(self.pairs), schema=schema).to_pandas()

    def to_dataset(self) -> datasets.Dataset:
        """The pairs as a ``datasets.Dataset`` (split ``test``) with the suite's explicit
        Features: the rows and Features ``load_dataset`` gives for the exported suite."""
        import datasets  # lazy: 1 s to import, which `nnd-suites list` must not pay

        features = suite_features(self.manifest)
        table = pa.Table.from_pylist(pair_rows(self.pairs), schema=features.arrow_schema)
        info = datasets.DatasetInfo(features=features, config_name=self.name)
        return datasets.Dataset(table, info=info, split=datasets.Split.TEST)
