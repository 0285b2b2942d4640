"""What building pairs from groups gives: the tests, and the account of everything left out."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from nnd_suites.records.margins import MarginKind
from nnd_suites.records.pairs import Pair
from nnd_suites.sources.log import SkipLog


@dataclass
class BuildResult:
    pairs: list[Pair]
    skipped: SkipLog
    counts: Counter = field(default_factory=Counter)
    #: texts given conflicting labels that the map keeps (reported, not skipped)
    conflicts: SkipLog = field(default_factory=SkipLog)
    #: what every pair's ``margin`` holds (:mod:`nnd_suites.records.margins`); None: no margin
    margin_kind: MarginKind | None = None
