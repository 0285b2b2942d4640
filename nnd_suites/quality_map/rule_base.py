"""What every rating rule kind is: the :class:`BaseRule` contract, the :class:`Assessment` it
gives a candidate, and :func:`rule_kind`, the decorator that makes a class a kind maps may name.

The kinds themselves, and the union a map's ``rating_rule`` is read with, are in
:mod:`nnd_suites.quality_map.rules`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar, get_args

from nnd_suites.errors import PluginError
from nnd_suites.infra.validation import StrictModel
from nnd_suites.records.groups import Candidate
from nnd_suites.sources.readers import read_number


@dataclass(frozen=True)
class Assessment:
    """The quality a map gives one candidate in one view (an aspect, or the only view)."""

    label: str | None = None
    score: float | None = None
    excluded: str | None = None  # reason the candidate takes no part, if any


class RatingFault(Exception):
    """A candidate's ratings do not fit the rule; the map turns it into an error naming both."""

    def __init__(self, message: str, labels: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.labels = list(labels)


def level_key(value: float | str) -> str:
    """Canonical text of a credit level: 1, 1.0, "1" and "１" are all "1", "-0" is "0"; 0.5 is
    "0.5". Numbers are read as source cells are (:func:`~nnd_suites.sources.read_number`), so a
    level a map writes and the same level in the data are one key. Exact: 0.9999999 is not 1
    (the shortest text that reads back as the same float, never a rounding of it)."""
    try:
        number = read_number(value)
    except (TypeError, ValueError, OverflowError):
        return str(value)
    if number.is_integer() and abs(number) < 1e16:
        return str(int(number))  # 1.0 -> "1" (read_number already made -0 zero)
    return repr(number)


#: A candidate's ratings: rating key -> one value per rater (``Candidate.ratings``).
Ratings = Mapping[str, Sequence[float]]


class BaseRule(StrictModel):
    """A rating rule owns what its ratings mean: the label or score of a candidate, which of two
    is better, and a system's human score (``nnd-suites systems``), so a new rule is one class.
    The base rule itself is what a map without a rating rule means: candidates carry labels."""

    #: candidates carry a score (compared by the rule's gap) instead of a label in the order
    scored: ClassVar[bool] = False
    #: a system's human score averages ratings (True) rather than counting its top-tier share
    rated: ClassVar[bool] = False

    def views(self) -> list[str | None]:
        """Independent quality views; ``None`` is the single unnamed view."""
        return [None]

    def rating_key(self, view: str | None) -> str:
        """The candidate rating this rule reads in ``view``."""
        raise NotImplementedError

    def produces(self) -> list[str]:
        """Every label the rule can give."""
        raise NotImplementedError

    def scored_labels(self) -> set[str]:
        """Labels whose candidates are ordered by score rather than by the label order."""
        return set()

    def rate(self, values: list[float], key: str) -> Assessment:
        """A label, a score or an exclusion for one candidate's ``values`` (never empty)."""
        raise NotImplementedError

    def pools_identical_texts(self) -> bool:
        """Identical texts of one group are rated as one text (their ratings pooled)."""
        return False

    def pooled(self, candidates: Sequence[Candidate]) -> dict[str, Candidate]:
        """The pooled candidate of each text several of one group's ``candidates`` share, by
        equivalence key, when the rule pools identical texts (else none)."""
        return {}

    def pair_high_label(self) -> str | None:
        """How a pair's high side reads when the rule grades it with no label of its own."""
        return None

    def better(
        self, high: Assessment, low: Assessment, label_beats: Callable[[str, str], bool]
    ) -> bool:
        """Is ``high`` strictly better than ``low``? Labels compare by the map's order."""
        assert high.label is not None and low.label is not None
        return label_beats(high.label, low.label)

    def measure_description(self, top_labels: Sequence[str]) -> str:
        """What a system's human score is, in few words (verify's tables head columns with it):
        labelled candidates' is the share in the best tier."""
        return "share of candidates labelled " + " or ".join(top_labels)

    def human_value(
        self,
        ratings: Ratings | None,
        assessment: Assessment,
        view: str | None,
        top_labels: Collection[str],
    ) -> float | None:
        """One candidate's contribution to its systems' human score in ``view`` (None: unrated
        there); the map has already given it ``assessment``. Labelled: 1 in the best tier, else
        0 (an excluded or unlabelled candidate is in the denominator of the share: partial
        credit is not top quality)."""
        return 1.0 if assessment.label in top_labels else 0.0


Rule = TypeVar("Rule", bound=type[BaseRule])
#: Rule kinds by their ``kind`` tag, in declaration order (the union's order).
_DECLARED: dict[str, type[BaseRule]] = {}
#: Set once the union is built: pydantic compiled it then and would never see a later kind.
_CLOSED: list[str] = []


def kind_tag(rule: type[BaseRule]) -> str:
    """The ``kind`` a map writes for ``rule``: its ``kind: Literal["..."]`` field's one value."""
    field = rule.model_fields.get("kind")
    tags = get_args(field.annotation) if field is not None else ()
    if len(tags) != 1 or not isinstance(tags[0], str):
        raise PluginError(
            f'rating rule {rule.__name__}: declare its tag as one field `kind: Literal["my_kind"]`'
        )
    return tags[0]


def rule_kind(rule: Rule) -> Rule:
    """Class decorator: ``rule`` is a rating rule kind that maps may name by its ``kind`` tag."""
    tag = kind_tag(rule)
    if tag in _DECLARED:
        raise PluginError(
            f"rating rule kind {tag!r} is declared twice: by {_DECLARED[tag].__name__} and by "
            f"{rule.__name__}; rename one of them"
        )
    if _CLOSED:
        raise PluginError(
            f"rating rule {rule.__name__} ({rule.__module__}): the kinds were fixed when "
            f"{_CLOSED[0]} built the union; define the class there, above RULE_KINDS"
        )
    _DECLARED[tag] = rule
    return rule


def close_rule_kinds(where: str) -> tuple[type[BaseRule], ...]:
    """Every kind declared so far, in order; ``where`` builds the union from them, and a kind
    declared later is refused (it would not be in the union)."""
    _CLOSED.append(where)
    return tuple(_DECLARED.values())
