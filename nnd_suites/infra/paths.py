"""Where nnd-suites keeps what it caches (downloaded sources, scores): one root for both."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "NND_SUITES_CACHE"


def cache_root() -> Path:
    """``$NND_SUITES_CACHE`` if set, else ``~/.cache/nnd_suites``."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "nnd_suites"
