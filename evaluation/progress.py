"""Progress of the scoring: a bar on a terminal; off one (CI, ``nohup``, SLURM), a plain line on
stderr now and then, where a progress bar would fill a log with escape codes."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

#: A line at least this often (seconds) while work goes on ...
EVERY_SECONDS = 30.0
#: ... and at each tenth of the work.
STEPS = 10


class ProgressLines:
    """``update(n)`` as a progress bar takes it; says ``nnd-suites: scoring 1,234/5,000
    requests (24%), 40 s, about 2 min left`` every :data:`EVERY_SECONDS` or each 10%."""

    def __init__(
        self,
        total: int,
        what: str = "scoring",
        unit: str = "requests",
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total, self.what, self.unit = total, what, unit
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.done = 0
        self.started = self.last_said = clock()
        self.step = 0

    def update(self, count: int) -> None:
        self.done += count
        step = self.done * STEPS // max(self.total, 1)
        now = self.clock()
        if step > self.step or now - self.last_said >= EVERY_SECONDS:
            self.step = max(step, self.step)
            self.last_said = now
            self._say(now)

    def _say(self, now: float) -> None:
        elapsed = now - self.started
        share = self.done / max(self.total, 1)
        left = ""
        if 0 < share < 1:
            left = f", about {_duration(elapsed * (1 - share) / share)} left"
        print(
            f"nnd-suites: {self.what} {self.done:,}/{self.total:,} {self.unit} "
            f"({100 * share:.0f}%), {_duration(elapsed)}{left}",
            file=self.stream,
            flush=True,
        )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def quiet_transformers_off_terminal() -> None:
    """transformers' own loading and saving bars would fill a log with escapes: off unless
    stderr is a terminal."""
    if not sys.stderr.isatty():
        # lazy: transformers loads with a model only (`import nnd_suites` stays torch-free)
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()


def log_progress(total: int, progress: bool) -> Callable[[int], None] | None:
    """Off a terminal (a log: CI, nohup, SLURM), plain progress lines instead of a bar."""
    if not progress or sys.stderr.isatty():
        return None
    return ProgressLines(total).update


def score_with_progress(
    score: Callable[..., Any], todo: list[Any], sink: Any, progress: bool
) -> None:
    """``score(todo, sink=, progress=)`` (a backend's ``score``) with a progress bar on a
    terminal, progress lines off one (``progress``)."""
    lines = log_progress(len(todo), progress)
    if lines is not None:
        score(todo, sink=sink, progress=lines)
        return
    # lazy: tqdm only when a progress bar is drawn on a terminal
    from tqdm.auto import tqdm

    with tqdm(
        total=len(todo),
        desc="scoring",
        unit="request",
        disable=not progress or not sys.stderr.isatty(),
        file=sys.stderr,
        dynamic_ncols=True,
    ) as bar:
        score(todo, sink=sink, progress=bar.update)
