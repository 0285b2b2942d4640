"""Python's cyclic garbage collector paused while a suite's records are made in bulk.

Loading, saving, building or exporting a suite makes hundreds of thousands of dicts, lists and
pydantic models that all stay alive; each batch of them sets off a collection that walks every
object the process holds (a second suite loaded walks the first one's too). On wmt_mqm (17,722
tests) that walking was more than half of ``Suite.load`` and of a build
(``benchmarks/bench_suites.py``). None of these objects forms a cycle to collect, so the
collector is paused for the operation, and whatever else became garbage is collected as usual
once it resumes.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector inside (also a decorator); resumed after, unless it was
    already paused (by a caller, or by the user)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
