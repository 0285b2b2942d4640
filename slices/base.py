"""The Slice base class: a declared way of cutting a suite's tests into subpopulations.

A slice plugin (GEM-style: Gehrmann et al. 2022) returns one or more *sets*, each a partition or
cover of the tests into named *subsets*: ``{set: {subset: [test ids]}}``, which is also
GEM-metrics' contrast-set format. Reports give a pass rate with a Wilson interval for every
subset. A plugin sees each test through :class:`SliceTest` (texts, systems, breakdown values,
and, once a model has scored the suite, the candidates' token counts), so its examples are plain
JSON and it never depends on how a suite is stored.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import Field

from nnd_suites.errors import NNDError, PluginError
from nnd_suites.infra.formatting import plural
from nnd_suites.infra.key_values import require_unique
from nnd_suites.plugins.params import PluginParams, parse_params, parse_plugin_spec
from nnd_suites.plugins.plugin import Plugin, PluginMetadata
from nnd_suites.plugins.registry import Registry
from nnd_suites.statistics.subsets import largest_first

#: set name -> subset name -> test ids (GEM-metrics' contrast-set format)
SliceSets = dict[str, dict[str, list[str]]]


@dataclass(frozen=True)
class SliceTest:
    """What a slice may look at in one test."""

    id: str
    context: Mapping[str, str]
    high: str
    low: str
    low_systems: tuple[str, ...] = ()
    breakdown: Mapping[str, str] = field(default_factory=dict)
    n_high: int | None = None  # target tokens of each candidate, from a model's scored outcomes
    n_low: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SliceTest:
        """From an example's JSON object (``low_systems`` a list)."""
        return cls(**{**data, "low_systems": tuple(data.get("low_systems", ()))})

    @property
    def counted(self) -> bool:
        """Both candidates' token counts are known (a model scored this test)."""
        return self.n_high is not None and self.n_low is not None

    @property
    def context_text(self) -> str:
        return "\n".join(self.context.values())


@dataclass(frozen=True)
class SliceInput:
    """The tests of one suite and the breakdown fields its manifest declares."""

    tests: Sequence[SliceTest]
    breakdown_fields: tuple[str, ...] = ()

    @property
    def scored(self) -> bool:
        """A model scored the suite: token counts are known (for every test it did not skip)."""
        return any(t.counted for t in self.tests)


class SliceMetadata(PluginMetadata):
    """A slice's metadata: the summary and description every plugin kind has, and its needs."""

    needs_scores: bool = Field(
        False, description="uses the model's token counts: empty until a model scored the suite"
    )


class Slice(Plugin, ABC):
    """Cut a suite's tests into subpopulations; ``sets(data)`` returns ``{set: {subset: ids}}``.

    Instantiate with parameters (``Params``, validated: ``context_length:bins=10``)."""

    examples_key: ClassVar[str] = "slice"  # examples.json: {"slice": NAME, "tests": [...], ...}
    metadata: ClassVar[SliceMetadata]
    Params: ClassVar[type[PluginParams]] = PluginParams

    def __init__(self, **params: Any) -> None:
        self.params = parse_params("slice", self.name, self.Params, params)

    @abstractmethod
    def sets(self, data: SliceInput) -> SliceSets:
        """The slice's sets over ``data.tests``; none when it does not apply to the suite."""


def grouped(pairs: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """(subset, test id) -> subset -> ids, largest subset first (ties by name), like reports."""
    return largest_first(pairs)


def validate_slice(cls: type[Slice]) -> None:
    where = f"slice {getattr(cls, 'name', cls.__name__)} ({cls.__module__})"
    if not isinstance(getattr(cls, "metadata", None), SliceMetadata):
        raise PluginError(f"{where}: 'metadata' must be a SliceMetadata")


SLICES: Registry[Slice] = Registry(
    "slice",
    "nnd_suites.slices",
    base=lambda: Slice,
    builtin_package="nnd_suites.slices",
    plugins_are_folders=True,
    validate=validate_slice,
)
#: ``@register_slice("name")`` on a Slice subclass registers it.
register_slice = SLICES.register


def make_slice(spec: str) -> Slice:
    """A slice from ``NAME[:param=value,...]`` (unknown names and parameters: clear errors)."""
    name, params = parse_plugin_spec("slice", spec)
    return SLICES.get(name)(**params)


def suite_slices(data: SliceInput, specs: Sequence[str] | None = None) -> SliceSets:
    """Every registered slice's sets over ``data`` in name order, or those of ``specs``
    (``NAME[:param=value,...]``) in the order given: a slice named there that gives no set is
    an error saying why (a slice that does not apply is left out only when none was named)."""
    found: SliceSets = {}
    if specs is not None:  # a repeat (with other parameters or not) would make its sets twice
        require_unique([spec.partition(":")[0] for spec in specs], "slice", "--slice")
    for spec in specs if specs is not None else SLICES.names():
        name = spec.partition(":")[0]
        plugin = make_slice(spec)
        sets = plugin.sets(data)
        if not sets and specs is not None:
            why = (
                "it needs a model's token counts: give the outcomes of a run on the suite "
                "(nnd-suites slices SUITE --run RUN)"
                if plugin.metadata.needs_scores and not data.scored
                else f"it finds nothing to cut them by (it gives {plugin.metadata.summary})"
            )
            raise NNDError(f"slice {name} gives no set for these {len(data.tests):,} tests: {why}")
        known = {test.id for test in data.tests}
        for set_name, subsets in sets.items():
            if set_name in found:
                raise PluginError(f"slice {name}: set {set_name!r} is produced twice")
            for subset, ids in subsets.items():
                _check_subset(f"slice {name}: set {set_name!r}, subset {subset!r}", ids, known)
            found[set_name] = subsets
    return found


def _check_subset(where: str, ids: Sequence[str], known: set[str]) -> None:
    """A subset lists tests of the suite, each once: a repeated id would be counted as several
    tests in its pass rate (and read as subsets that overlap), an unknown one has no outcome."""
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise PluginError(
            f"{where}: {plural(len(unknown), 'test id')} not in the {len(known):,} tests it was "
            f"given (first: {unknown[0]!r}); a slice returns ids of the tests it is given: fix "
            "the slice"
        )
    times = Counter(ids)
    if len(times) != len(ids):
        repeated, n = next((i, n) for i, n in times.items() if n > 1)
        raise PluginError(
            f"{where}: test {repeated!r} is listed {n} times ({len(ids) - len(times):,} "
            "repeats in all); a subset lists each test once (a test may be in several "
            "subsets): fix the slice"
        )
