"""Suites made ready for scoring once: loaded, normalised, cut, templated, requests deduplicated.

Evaluating during training scores the same suites every N steps; preparing them once leaves only
the forward passes to each call (the backend also keeps each request's tokenisation).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.arguments import check_preparation
from nnd_suites.evaluation.baselines import all_baseline_outcomes
from nnd_suites.evaluation.templates import neutral_context, resolve_template
from nnd_suites.records.templates import render_template as render
from nnd_suites.resolve import ALL, resolve_suites, suite_origins, suite_specs, unshipped_suites
from nnd_suites.statistics.outcomes import Outcome
from nnd_suites.suite import Suite, SuiteManifest
from nnd_suites.suite.manifest import CANDIDATES_SECTION, PAIRS_SECTION
from nnd_suites.transformations import normalize_suite

logger = logging.getLogger(__name__)

SuiteSpec = str | Path | Suite
#: ``--limit``: N first context groups of each suite, or a fraction 0 < x < 1 of its groups
Limit = int | float


@dataclass
class Plan:
    """One suite as scored: its report name and the template that renders its contexts."""

    name: str
    suite: Suite
    template_name: str
    template: str
    #: each test's context rendered by the template, in suite order (rendered once, here)
    contexts: list[str] = field(default_factory=list)
    #: the identity of the tests: the suite's content hash before any per-run rendering
    #: (a model's chat prompts) was added to its contexts; the suite's own hash otherwise
    content_hash: str = ""
    #: the manifest's section hashes that make ``content_hash`` (what two contents differ in)
    section_hashes: dict[str, str] = field(default_factory=dict)
    #: where the suite came from (:func:`suite_origins`; None: a Suite object in memory)
    given_as: str | None = None

    def __post_init__(self) -> None:
        self.content_hash = self.content_hash or self.suite.manifest.content_hash
        self.section_hashes = self.section_hashes or self.suite.manifest.section_hashes
        if not self.contexts:
            self.contexts = [render(self.template, pair.context) for pair in self.suite.pairs]

    @cached_property
    def baseline_outcomes(self) -> dict[str, dict[str, Outcome]]:
        """The bias baselines' per-test outcomes: model-independent, computed once per
        preparation however many models score it (verify, leaderboards, training); each report
        rates them on the tests its model rated."""
        return all_baseline_outcomes(self.suite)

    def requests(self) -> dict[tuple[str, str], None]:
        """Every distinct (rendered context, candidate) of the suite, in first-seen order."""
        found: dict[tuple[str, str], None] = {}
        for context, pair in zip(self.contexts, self.suite.pairs, strict=True):
            found[(context, pair.high.text)] = None
            found[(context, pair.low.text)] = None
        return found


@dataclass
class PreparedSuites:
    """What :func:`prepare_suites` returns; pass it to ``nnd_suites.evaluate`` as ``suites``."""

    plans: list[Plan]
    limit: Limit | None = None
    #: every distinct (template, rendered context, candidate), in first-seen order
    requests: dict[tuple[str, str, str], None] = field(default_factory=dict)
    #: ``all`` was given: the built-in suites it left out, their sources not shipped
    left_out_of_all: list[str] = field(default_factory=list)

    @property
    def tests(self) -> int:
        return sum(len(plan.suite.pairs) for plan in self.plans)


def prepare_suites(
    suites: SuiteSpec | Iterable[SuiteSpec],
    *,
    template: str | None = None,
    normalize: Sequence[str] = (),
    limit: Limit | None = None,
    rendering: Callable[[Suite], Suite] | None = None,
) -> PreparedSuites:
    """Load ``suites``, apply ``normalize`` specs, keep the first ``limit`` context groups, resolve
    the template and list the distinct requests, once. ``rendering`` adds what one run renders
    for itself (a model's chat prompts) to each suite, after normalisation and before the limit
    (which keeps the whole suite's manifest); the plans keep the hash of the suite before it:
    the tests are the suite's, their rendering is part of the run's scoring."""
    check_preparation("prepare_suites", template, normalize, limit)
    suites = suite_specs(suites)  # read twice: resolved, then where each came from
    loaded = resolve_suites(suites)
    origins = suite_origins(suites)
    for spec in normalize:
        loaded = [normalize_suite(suite, spec) for suite in loaded]
    manifests = [suite.manifest for suite in loaded]  # the tests' identity, before rendering
    if rendering is not None:
        loaded = [_rendered(suite, rendering) for suite in loaded]
    if limit is not None:
        loaded = [first_groups(suite, limit) for suite in loaded]
    prepared = PreparedSuites(_plans(loaded, template, manifests, origins), limit)
    if any(isinstance(spec, str) and spec == ALL for spec in suites):
        prepared.left_out_of_all = unshipped_suites()
    for plan in prepared.plans:
        for context, candidate in plan.requests():
            prepared.requests[(plan.template, context, candidate)] = None
    return prepared


def with_neutral_requests(prepared: PreparedSuites) -> PreparedSuites:
    """A copy that also asks for every candidate after its neutral context (the template with
    empty fields), for scorers such as ``pmi``: one more request per distinct candidate."""
    requests = dict(prepared.requests)
    for plan in prepared.plans:
        for pair in plan.suite.pairs:
            empty = neutral_context(plan.template, pair.context)
            requests[(plan.template, empty, pair.high.text)] = None
            requests[(plan.template, empty, pair.low.text)] = None
    return replace(prepared, requests=requests)


def first_groups(suite: Suite, limit: Limit) -> Suite:
    """The tests of the first ``limit`` context groups with tests of ``suite``, in suite order;
    a fraction ``0 < limit < 1`` keeps that share of those groups (rounded, at least one): a
    group whose candidates make no test is not counted."""
    groups = list(dict.fromkeys(pair.group_id for pair in suite.pairs))
    if isinstance(limit, float) and not limit.is_integer():
        if not 0 < limit < 1:
            raise NNDError(
                f"--limit {limit}: give a number of context groups >= 1 or a fraction in (0, 1)"
            )
        count = max(1, round(limit * len(groups)))
    else:
        count = int(limit)
        if count < 1:
            raise NNDError(f"--limit {limit}: give a number of context groups >= 1")
    kept = set(groups[:count])
    return Suite(suite.manifest, [p for p in suite.pairs if p.group_id in kept], suite.candidates)


def _rendered(suite: Suite, rendering: Callable[[Suite], Suite]) -> Suite:
    """``rendering(suite)``; a suite already cut by :func:`first_groups` keeps the whole suite's
    counts, so the report still says what the cut left out (a rendering derives a manifest
    counted from the pairs it has)."""
    rendered = rendering(suite)
    if rendered is suite or len(suite.pairs) >= suite.manifest.counts.pairs:
        return rendered
    manifest = rendered.manifest.model_copy(update={"counts": suite.manifest.counts})
    return Suite(manifest, rendered.pairs, rendered.candidates)


def _plans(
    suites: list[Suite],
    template: str | None,
    manifests: list[SuiteManifest],
    origins: list[str | None],
) -> list[Plan]:
    _refuse_repeats(suites, [manifest.content_hash for manifest in manifests], origins)
    plans: list[Plan] = []
    names: set[str] = set()
    for suite, manifest, origin in zip(suites, manifests, origins, strict=True):
        name, number = suite.name, 2
        while name in names:  # two different suites of one name (two builds, two subsets)
            name, number = f"{suite.name}_{number}", number + 1
        names.add(name)
        _warn_if_same_tests(plans, name, suite.name, manifest, origin)
        template_name, text = resolve_template(suite, template)
        plans.append(
            Plan(
                name,
                suite,
                template_name,
                text,
                content_hash=manifest.content_hash,
                section_hashes=manifest.section_hashes,
                given_as=origin,
            )
        )
    return plans


def _warn_if_same_tests(
    plans: list[Plan], name: str, suite_name: str, manifest: SuiteManifest, origin: str | None
) -> None:
    """Two builds of one source (``build X --out suites/c300`` beside ``suites/X``, read from
    another path) differ in their manifests only, so both are scored and reported (NAME, NAME_2);
    their identical tests are said, naming both (their texts are scored once: one request each)."""
    tests = (PAIRS_SECTION, CANDIDATES_SECTION)
    sections = manifest.section_hashes
    for plan in plans:
        if plan.suite.name == suite_name and all(
            plan.section_hashes.get(s) == sections.get(s) for s in tests
        ):
            differ = [k for k in sections if plan.section_hashes.get(k) != sections[k]]
            logger.warning(
                "suites %s (%s) and %s (%s) hold identical tests (the same pairs and candidates; "
                "their manifests differ in %s): both are reported, their texts scored once; give "
                "one of them to report its tests once",
                plan.name,
                plan.given_as or "a Suite object",
                name,
                origin or "a Suite object",
                ", ".join(differ),
            )


def _refuse_repeats(suites: list[Suite], hashes: list[str], origins: list[str | None]) -> None:
    """The same suite given twice (a folder and its built-in name, one folder two ways, ``all``
    beside a name it holds) would be reported twice, once as ``NAME_2``: refused, as
    ``robustness`` and ``verify`` refuse a repeat. Same name and same content hash (before any
    per-run rendering) are the same tests."""
    first: dict[tuple[str, str], int] = {}
    for position, (suite, content_hash) in enumerate(zip(suites, hashes, strict=True), 1):
        earlier = first.setdefault((suite.name, content_hash), position)
        if earlier != position:
            at = [f" ({origins[i - 1]})" if origins[i - 1] else "" for i in (earlier, position)]
            raise NNDError(
                f"suite {suite.name!r} is given twice: suites {earlier}{at[0]} and "
                f"{position}{at[1]} (in the order given, `all` counting as the suites it names) "
                "hold the same tests; give each suite once"
            )
