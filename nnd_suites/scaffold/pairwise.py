"""The ``--type pairwise`` stub: a fixture of judged pairs, its quality map and expected counts.

A pairwise source gives judgments of two responses, not labels of one, so its stub differs from
the candidate types' (``writer.SPECS``): one judgment per line, grouped by context in ``read``.
"""

from __future__ import annotations

import json
from typing import Any

from nnd_suites.scaffold.samples import CONTEXTS, FIXTURE, TEXTS

#: (context index, rater, response A index, response B index, verdict) per fixture line.
JUDGMENTS = (
    (0, "r1", 0, 1, "a"),  # g1: three raters on Paris vs Rome, 2 to 1: one test,
    (0, "r2", 1, 0, "b"),  # shown the other way round to r2 (still Paris),
    (0, "r3", 0, 1, "b"),  # judged both ways (a counted conflict)
    (0, "r1", 3, 2, "a"),  # another pair on the same context: its own test, never crossed
    (1, "r1", 0, 1, "a"),  # g2: one test,
    (1, "r2", 0, 2, "tie"),  # a tie: no test (counted)
)
QUALITY_MAP = (
    "labels: [better, worse]\n"
    "tiers:\n  - [better]\n  - [worse]\n"
    "pairwise:\n"
    "  high_label: better\n  low_label: worse\n"
    "  combine: majority    # majority | unanimous | each\n"
    "  ties: abstain        # abstain | vote\n"
)


def fixture_lines() -> str:
    rows = [
        {
            "id": f"g{context + 1}",
            "context": CONTEXTS[context],
            "rater": rater,
            "response_a": TEXTS[context][a],
            "response_b": TEXTS[context][b],
            "verdict": verdict,
        }
        for context, rater, a, b, verdict in JUDGMENTS
    ]
    return "".join(json.dumps(row) + "\n" for row in rows)


def expected() -> dict[str, Any]:
    """g1: Paris > Rome (2 of 3) and 'Paris, since 1889.' > the garbled one; g2: 100 > 50; the
    tie is skipped: 3 tests, 2 groups, 6 judgments = 12 judged responses."""
    return {
        "source": FIXTURE,
        "options": {},
        "pairs": 3,
        "groups": 2,
        "candidates": 12,
        "breakdowns": {"category": {"worse": 3}, "label": {"worse": 3}},
        "skipped": {"tie (or weak preference)": 1},
    }
