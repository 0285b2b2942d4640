"""The ``--type numeric`` stub: a folder release, as rating releases are published: the inputs,
each system's outputs in its own file and each system's ratings (several raters) in its own file.

means: g1 a 85, b 45, c 65, d 95 -> gaps of at least 20: a>b, a>c, c>b, d>b, d>c = 5 (a, d: 10);
g2 a 95, b 25, c 90 -> a>b, c>b = 2 (a, c: 5). The score gap is kept on each pair.
"""

from __future__ import annotations

import json
from typing import Any

from nnd_suites.scaffold.samples import CONTEXTS, TEXTS

#: the fixture folder (``fixtures/release/``), named by expected_stats.json
RELEASE = "release"
#: per group, per system (a, b, c, d): each rater's 0-100 score of the one rating, "quality"
SCORES = (((80, 90), (40, 50), (70, 60), (90, 100)), ((100, 90), (20, 30), (85, 95)))
QUALITY_MAP = (
    "labels: [worse]\nrating_rule:\n  kind: numeric\n  rating: quality\n  aggregate: mean\n"
    "  minimum_gap: 20    # better by at least 20; minimum_gap_exclusive: 20 for 'more than'\n"
    "  low_label: worse\n"
)


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def fixture_files() -> dict[str, str]:
    """Path under fixtures/ -> text: inputs.json, outputs/SYSTEM.json, ratings/SYSTEM.json."""
    files = {f"{RELEASE}/inputs.json": _json({f"g{i + 1}": c for i, c in enumerate(CONTEXTS)})}
    for index, system in enumerate(f"system_{letter}" for letter in "abcd"):
        groups = [i for i, texts in enumerate(TEXTS) if index < len(texts)]
        outputs = {f"g{i + 1}": TEXTS[i][index] for i in groups}
        ratings = {
            f"g{i + 1}": {f"r{r + 1}": {"quality": s} for r, s in enumerate(SCORES[i][index])}
            for i in groups
        }
        files[f"{RELEASE}/outputs/{system}.json"] = _json(outputs)
        files[f"{RELEASE}/ratings/{system}.json"] = _json(ratings)
    return files


def expected() -> dict[str, Any]:
    return {
        "source": RELEASE,
        "options": {},
        "pairs": 7,
        "groups": len(CONTEXTS),
        "candidates": sum(len(texts) for texts in TEXTS),
        "breakdowns": {"category": {"worse": 7}, "label": {"worse": 7}},
        "skipped": {},
    }
