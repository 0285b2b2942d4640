"""The project's own docs point only at files that exist inside the project."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: a path in backticks with at least one folder: `evaluation/plots.py`, `slices/<name>/`
PATH = re.compile(r"`((?:[\w.-]+/)+[\w.-]*)`")


def _docs() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    return [ROOT / name for name in listed] or sorted(ROOT.glob("*.md"))


@pytest.mark.parametrize("doc", _docs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_paths_named_in_the_docs_exist(doc: Path) -> None:
    missing = []
    for number, line in enumerate(doc.read_text("utf-8").splitlines(), 1):
        for path in PATH.findall(line):
            top = path.split("/")[0]
            if not (ROOT / top).is_dir() or top in ("runs", "suites") or "<" in path:
                continue  # not a path of this project (a label, a user's folder, a placeholder)
            if not ((ROOT / path).exists() or (doc.parent / path).exists()):
                missing.append(f"{doc.name}:{number}: {path}")
    assert not missing, "docs name files that do not exist: " + "; ".join(missing)


def test_docs_never_point_outside_the_project() -> None:
    for doc in _docs():
        text = doc.read_text("utf-8")
        assert "../shared" not in text and "PRODUCT.md" not in text, doc
