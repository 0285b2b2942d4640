"""How often Python's cyclic garbage collector ran during a call (see
:mod:`nnd_suites.infra.collector`)."""

from __future__ import annotations

import gc
from collections.abc import Callable


def collections_during(run: Callable[[], object]) -> list[int]:
    """The generation of each collection made while ``run()`` ran, from a clean start (a full
    collection first, so no count left over from earlier tests sets one off)."""
    seen: list[int] = []

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.collect()
    gc.callbacks.append(note)
    try:
        run()
    finally:
        gc.callbacks.remove(note)
    return seen
