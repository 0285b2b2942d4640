"""What a folder holds, to prove a refused write left it untouched."""

from __future__ import annotations

from pathlib import Path


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes): to prove a folder untouched."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }
