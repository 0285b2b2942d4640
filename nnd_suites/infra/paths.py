"""Where nnd-suites keeps what it caches (downloaded sources, scores, models): one root for all."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_path

CACHE_ENV = "NND_SUITES_CACHE"


def cache_root() -> Path:
    """``$NND_SUITES_CACHE`` if set, else the platform's user cache folder for nnd_suites
    (``$XDG_CACHE_HOME/nnd_suites``, by default ``~/.cache/nnd_suites``, on Linux)."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else user_cache_path("nnd_suites", appauthor=False)
