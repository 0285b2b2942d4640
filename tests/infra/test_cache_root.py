"""The cache root (nnd_suites/infra/paths.py): $NND_SUITES_CACHE, else the platform's user cache
folder (platformdirs), which follows $XDG_CACHE_HOME on Linux."""

from __future__ import annotations

import hashlib
import sys
import zipfile
from pathlib import Path

import pytest

from nnd_suites.infra.paths import CACHE_ENV, cache_root
from nnd_suites.sources.archive import extract_archive

SHIPPED = Path(__file__).resolve().parents[2] / "adapters" / "quiz_design" / "data"


def _zip_of_shipped_files(target: Path) -> tuple[Path, str]:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(SHIPPED.iterdir()):
            archive.write(path, f"quiz_design/{path.name}")
    return target, hashlib.sha256(target.read_bytes()).hexdigest()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_CACHE_HOME is Linux's")
def test_extracted_sources_go_under_xdg_cache_home_unless_the_override_is_set(
    tmp_path, monkeypatch
):
    archive, digest = _zip_of_shipped_files(tmp_path / "quiz_design.zip")
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "nnd_suites"
    extracted = extract_archive(archive, digest)
    extracted_root = tmp_path / "xdg" / "nnd_suites" / "sources" / "extracted"
    assert extracted == extracted_root / digest[:16] / "quiz_design"  # the single top folder
    assert sorted(p.name for p in extracted.iterdir()) == sorted(p.name for p in SHIPPED.iterdir())
    # the override wins over XDG_CACHE_HOME
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "mine"))
    assert extract_archive(archive, digest).is_relative_to(tmp_path / "mine")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv(CACHE_ENV)
    assert cache_root() == Path.home() / ".cache" / "nnd_suites"  # as before platformdirs
