"""Suite loading for the command modules, done when a command runs rather than when the parser
is built: :mod:`nnd_suites.suite` pulls in pyarrow and numpy, which ``nnd-suites --help`` and
``nnd-suites list`` never need (tests/cli/test_startup.py holds them to it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nnd_suites.suite import Suite


def load_suite(*args: Any, **kwargs: Any) -> Suite:
    """:func:`nnd_suites.resolve.load_suite`, imported on the first call."""
    # lazy: nnd_suites.suite imports pyarrow and numpy; the parser and `list` do not need them
    from nnd_suites.resolve import load_suite as load

    return load(*args, **kwargs)


def load_suites(specs: list[str], *, check_card: bool = True) -> list[Suite]:
    """:func:`nnd_suites.resolve.resolve_suites`: ``all`` and a dataset folder stand for every
    suite they hold, as in ``evaluate``."""
    from nnd_suites.resolve import resolve_suites  # lazy, as load_suite above

    return resolve_suites(specs, check_card=check_card)
