"""What a user sets in the environment: where nnd-suites keeps what it caches (downloaded
sources, scores, models; one root for all), and the positive limits of downloads and archives."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_path

from nnd_suites.errors import NNDError

CACHE_ENV = "NND_SUITES_CACHE"


def cache_root() -> Path:
    """``$NND_SUITES_CACHE`` if set, else the platform's user cache folder for nnd_suites
    (``$XDG_CACHE_HOME/nnd_suites``, by default ``~/.cache/nnd_suites``, on Linux)."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else user_cache_path("nnd_suites", appauthor=False)


def positive_setting(name: str, default: float, unit: str) -> float:
    """``$name`` as a positive finite number (``default`` when unset or empty), read when the
    limit is needed (a bad value stops only what uses it, with an error naming the variable)."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise NNDError(f"{name}={raw!r}: expected a positive number of {unit}")
    return value
