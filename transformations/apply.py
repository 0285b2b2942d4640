"""Apply a transformation to a suite: a child suite whose tests keep their parents' ids.

Decisions (GEM's Transformation-Parent set):

- A child test keeps its parent's ``id`` and records it in ``parent_id`` (for a chain of
  transformations, the id of the untransformed test). Ids stay unique, per-test outcomes of a
  parent and its children join on the id, and a run with ``--normalize`` reports the same test ids
  as a run without it.
- A test whose two candidates became the same text is *degenerate*: it stays in the child suite
  (so counts and ids line up with the parent), :func:`is_degenerate` flags it, and evaluators
  exclude it from pass rates and report it as its own count.
- A rewrite that would empty a non-empty text is not applied: the text is kept as it was and the
  manifest's ``skipped`` list counts it with the reason, which names the suite transformed (a
  child transformed again by the same plugin keeps its parent's count apart from its own), so
  nothing changes silently.
"""

from __future__ import annotations

import re
import reprlib
import warnings
from collections.abc import Callable

from nnd_suites.errors import ArgumentError, NNDError
from nnd_suites.infra.collector import collector_paused
from nnd_suites.records.conversation import rewrite_turns
from nnd_suites.records.pairs import Pair, is_degenerate
from nnd_suites.records.templates import conversation_fields
from nnd_suites.records.texts import is_blank
from nnd_suites.sources import SkipLog
from nnd_suites.suite import SkippedItems, Suite, TransformationInfo
from nnd_suites.transformations.base import TRANSFORMATIONS, Transformation, make_transformation

#: The manifest's skip reason for a rewrite refused because it would empty a text of ``parent``.
REFUSED = "{name} on {parent} would leave an empty text; kept unchanged"


def refused_rewrites(child: Suite) -> list[SkippedItems]:
    """The child suite's skip records for rewrites its transformation was refused (texts kept
    unchanged), one per reason."""
    info = child.manifest.transformation
    if info is None:
        return []
    reason = REFUSED.format(name=info.name, parent=info.parent_suite)
    return [skipped for skipped in child.manifest.skipped if skipped.reason == reason]


def child_suite_name(parent: str, transformation: Transformation) -> str:
    """``quiz_design.lowercase``, ``quiz_design.typos-rate0.05-seed3`` (manifest name charset):
    the parameters that differ from the defaults, as the manifest records them (``on``
    resolved), so ``lowercase`` and ``lowercase:on=both`` name one child."""
    resolved, defaults = transformation.params_dict(), type(transformation)().params_dict()
    suffix = "".join(
        f"-{key}{resolved[key]}"
        for key, _ in transformation.labelled_params()
        if resolved[key] != defaults[key]
    )
    return parent + "." + re.sub(r"[^A-Za-z0-9_.-]", "_", transformation.name + suffix)


class _Rewriter:
    """Memoised rewrite of texts (contexts repeat across a group), counting refused rewrites."""

    def __init__(self, transformation: Transformation, log: SkipLog, parent: str) -> None:
        self.transformation, self.log = transformation, log
        self.reason = REFUSED.format(name=transformation.name, parent=parent)
        self.memo: dict[str, str] = {}

    def __call__(self, text: str, where: Callable[[], str]) -> str:
        new = self.memo.get(text)
        if new is None:
            new = self.transformation.apply(text)
            self.memo[text] = new
        if is_blank(new) and not is_blank(text):
            self.log.add(self.reason, where())
            return text
        return new


@collector_paused()
def transform_suite(suite: Suite, spec: str | Transformation, *, name: str | None = None) -> Suite:
    """Return the child suite of ``suite`` under the transformation ``spec``, named ``name``
    (default: :func:`child_suite_name`).

    ``spec`` is ``NAME[:param=value,...]`` (as on the command line) or a Transformation instance.
    The child's manifest records the transformation, its parameters, seed and version, and counts
    the tests it changed, left identical, and made degenerate.
    """
    if not isinstance(suite, Suite):
        raise ArgumentError(
            f"transform_suite(suite={reprlib.repr(suite)}): give a Suite object; "
            "nnd_suites.load_suite(NAME_OR_FOLDER) loads one"
        )
    transformation = make_transformation(spec)
    _warn_on_language(suite, transformation)
    log = SkipLog()
    rewrite = _Rewriter(transformation, log, suite.name)
    # a conversation field is rewritten turn by turn, never as its stored JSON
    conversations = conversation_fields(suite.manifest.default_template)
    pairs: list[Pair] = []
    changed = made = still = 0
    for pair in suite.pairs:
        child = _transform_pair(pair, transformation, rewrite, conversations)
        if (
            child.context != pair.context
            or child.high.text != pair.high.text
            or (child.low.text != pair.low.text)
        ):
            changed += 1
        if is_degenerate(child):
            already = is_degenerate(pair)
            made, still = made + (not already), still + already
        pairs.append(child)
    # the parent as it is now: a suite edited in memory is linked by what it holds
    parent = suite.resealed().manifest
    # Count, test by test, what the chain of transformations made degenerate, not what the
    # untransformed suite already held (MQM keeps conflicting labels, whose tests are degenerate
    # from the start): those made so here, and those the chain had made before that still are.
    # A test of two texts that differ invisibly may stop being degenerate (typos draws slips
    # from each text: "x" and "x " part); which did is not recorded, so the parent's degenerate
    # tests that stopped are taken for ones degenerate from the start.
    made_before = parent.transformation.degenerate if parent.transformation else 0
    degenerate = made + min(made_before, still)
    info = TransformationInfo(
        name=transformation.name,
        version=transformation.version,
        params=transformation.params_dict(),
        seed=transformation.seed,
        parent_suite=parent.name,
        parent_content_hash=parent.content_hash,
        changed=changed,
        identical=len(pairs) - changed,
        degenerate=degenerate,
    )
    return suite.derive(
        pairs,
        name=name or child_suite_name(parent.name, transformation),
        description=f"{parent.description} Transformed by {transformation.spec}: "
        f"{transformation.metadata.description}",
        skipped=[
            *(s.model_dump() for s in parent.skipped),
            *log.records(),
        ],
        transformation=info.model_dump(),
    )


def normalize_suite(suite: Suite, spec: str | Transformation) -> Suite:
    """:func:`transform_suite` restricted to normalisation plugins (``evaluate --normalize``)."""
    transformation = make_transformation(spec)
    if transformation.metadata.kind != "normalization":
        known = [
            name for name, cls in TRANSFORMATIONS.items() if cls.metadata.kind == "normalization"
        ]
        raise NNDError(
            f"--normalize {transformation.spec}: {transformation.name} is a "
            f"{transformation.metadata.kind}, not a normalization; normalizations: "
            f"{', '.join(known)} (probe perturbations with `nnd-suites robustness "
            f"--transform {transformation.spec}`)"
        )
    return transform_suite(suite, transformation)


def _transform_pair(
    pair: Pair, transformation: Transformation, rewrite: _Rewriter, conversations: set[str]
) -> Pair:
    context = dict(pair.context)
    if transformation.rewrites_context:
        context = {
            field: rewrite_turns(
                value, lambda t, f=field: rewrite(t, lambda: f"pair {pair.id} context {f}")
            )
            if field in conversations
            else rewrite(value, lambda f=field: f"pair {pair.id} context {f}")
            for field, value in pair.context.items()
        }
    high, low = pair.high, pair.low
    if transformation.rewrites_candidates:
        high = high.model_copy(update={"text": rewrite(high.text, lambda: f"pair {pair.id} high")})
        low = low.model_copy(update={"text": rewrite(low.text, lambda: f"pair {pair.id} low")})
    return pair.model_copy(
        update={
            "context": context,
            "high": high,
            "low": low,
            "parent_id": pair.parent_id or pair.id,
        }
    )


def _warn_on_language(suite: Suite, transformation: Transformation) -> None:
    languages = transformation.metadata.languages
    if "*" in languages or not suite.manifest.languages:
        return
    if not set(languages) & set(suite.manifest.languages):
        warnings.warn(
            f"transformation {transformation.name} is written for {languages}; suite "
            f"{suite.name} is in {suite.manifest.languages}",
            stacklevel=3,
        )
