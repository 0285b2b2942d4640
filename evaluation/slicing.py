"""Slices of a suite for reports and exports: the slice plugins' sets, and a pass rate for each
subset (Wilson 95% interval), from a suite and (optionally) a model's per-test outcomes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import TypeAdapter

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.baselines import readable_context
from nnd_suites.infra.formatting import plural
from nnd_suites.infra.output_file import write_output_file
from nnd_suites.records.templates import conversation_fields
from nnd_suites.slices import SliceInput, SliceSets, SliceTest, suite_slices
from nnd_suites.statistics.outcomes import Rate, TestOutcome, rate
from nnd_suites.suite import Suite


def slice_input(suite: Suite, outcomes: Sequence[TestOutcome] | None = None) -> SliceInput:
    """The suite's tests as slices see them; ``outcomes`` (of a run on this suite) add the
    candidates' token counts."""
    scored: dict[str, TestOutcome] = {}
    if outcomes is not None:
        scored = {o.pair_id: o for o in outcomes}
        missing = [p.id for p in suite.pairs if p.id not in scored]
        if missing:
            raise NNDError(
                f"suite {suite.name}: {plural(len(missing), 'test')} "
                f"{'has' if len(missing) == 1 else 'have'} no outcome in the run "
                f"given (first: {missing[0]}); give a run of every test of this suite (a run "
                "with --limit scores only its first context groups)"
            )
    # a skipped test's candidates were not tokenized to the end (their count reads 0): unknown
    counted = {i: o for i, o in scored.items() if o.outcome != "skipped"}
    conversations = conversation_fields(suite.manifest.default_template)  # by turns, not JSON
    tests = [
        SliceTest(
            id=pair.id,
            context=readable_context(pair, conversations),
            high=pair.high.text,
            low=pair.low.text,
            low_systems=tuple(pair.low.systems),
            breakdown=pair.breakdown,
            n_high=counted[pair.id].n_high if pair.id in counted else None,
            n_low=counted[pair.id].n_low if pair.id in counted else None,
        )
        for pair in suite.pairs
    ]
    return SliceInput(tests, tuple(suite.manifest.breakdown_fields))


def gem_contrast_sets(
    suite: Suite,
    outcomes: Sequence[TestOutcome] | None = None,
    names: Sequence[str] | None = None,
) -> SliceSets:
    """``{set: {subset: [test ids]}}``: GEM-metrics' contrast-set format, every slice."""
    return suite_slices(slice_input(suite, outcomes), names)


GEM_TITLE = "GEM contrast sets"
_GEM_FILE = TypeAdapter(SliceSets)


def is_gem_file(data: bytes) -> bool:
    """Whether ``data`` holds contrast sets in GEM-metrics' format, as ``--gem-out`` writes them:
    such a file is replaced by a later run, any other is refused (a ValueError: not one)."""
    return isinstance(_GEM_FILE.validate_json(data, strict=True), dict)


def write_gem_file(out: str | Path, sets: SliceSets) -> Path:
    """Write ``sets`` to ``out`` as JSON, over nothing but an earlier file of contrast sets."""
    text = json.dumps(sets, indent=1, ensure_ascii=False) + "\n"
    return write_output_file(out, text, GEM_TITLE, is_gem_file)


def slice_rates(
    suite: Suite, outcomes: Sequence[TestOutcome], names: Sequence[str] | None = None
) -> dict[str, dict[str, Rate]]:
    """set -> subset -> pass rate of the run's outcomes (degenerate and skipped tests apart);
    ``names``: only these slices (with their parameters), as :func:`gem_contrast_sets`."""
    by_pair = {o.pair_id: o.outcome for o in outcomes}
    sets = gem_contrast_sets(suite, outcomes, names)
    return {
        name: {subset: rate(by_pair[i] for i in ids) for subset, ids in subsets.items()}
        for name, subsets in sets.items()
    }
