"""Resolve what a user calls a suite: a built folder, or a built-in adapter name built on the fly.

Other issues extend the resolver (a Hub dataset repository) here, in one place.
"""

from __future__ import annotations

from pathlib import Path

from .adapter import ADAPTERS
from .errors import UnknownItemError
from .suite import MANIFEST_FILE, Suite


def load_suite(spec: str | Path, name: str | None = None, **kwargs: object) -> Suite:
    """Load a suite from a folder (validated) or build a built-in adapter's suite by name."""
    path = Path(spec)
    if (path / MANIFEST_FILE).is_file():
        return Suite.load(path)
    text = str(spec)
    if text in ADAPTERS.names():
        from .build import build_suite

        return build_suite(text)
    raise UnknownItemError(
        "suite",
        text,
        [f"{n} (built-in adapter)" for n in ADAPTERS.names()]
        + ["or a folder written by `nnd-suites build`"],
    )
