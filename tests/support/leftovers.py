"""What the next write to a target does first, on its own: the tests of crash safety kill a
writer, then check what it left is cleaned."""

from __future__ import annotations

import os

from nnd_suites.infra.atomic import _recover, real_target, writer_lock


def recover_leftovers(target: str | os.PathLike) -> None:
    """Clean what killed writes to ``target`` left beside it; restore a missing folder."""
    target = real_target(target)
    if target.parent.is_dir():
        with writer_lock(target):
            _recover(target)
