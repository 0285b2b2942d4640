"""Slice plugins: subpopulations of a suite's tests, with a pass rate each in every report.

Each built-in plugin is a folder here with its class, a README.md and an examples.json that the
test harness runs. Third-party packages register theirs through the ``nnd_suites.slices``
entry-point group, like transformations.
"""

from __future__ import annotations

from nnd_suites.slices.base import (
    SLICES,
    Slice,
    SliceInput,
    SliceMetadata,
    SliceSets,
    SliceTest,
    make_slice,
    register_slice,
    suite_slices,
)

__all__ = [
    "SLICES",
    "Slice",
    "SliceInput",
    "SliceMetadata",
    "SliceSets",
    "SliceTest",
    "make_slice",
    "register_slice",
    "suite_slices",
]
