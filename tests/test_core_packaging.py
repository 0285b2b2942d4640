"""Packaging: no generic top-level import names, registry covers every plugin folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import nnd_suites
from nnd_suites.adapter import ADAPTERS

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("generic", ["adapters", "evaluation", "transformations", "quality_maps"])
def test_no_generic_top_level_module(generic, tmp_path):
    code = (
        f"import importlib.util, sys; sys.exit(importlib.util.find_spec({generic!r}) is not None)"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=tmp_path).returncode == 0


def test_contribution_folders_are_mapped_under_nnd_suites():
    import nnd_suites.adapters
    import nnd_suites.evaluation
    import nnd_suites.transformations

    assert Path(nnd_suites.adapters.__path__[0]).name == "adapters"
    assert Path(nnd_suites.evaluation.__path__[0]).name == "evaluation"
    assert Path(nnd_suites.transformations.__path__[0]).name == "transformations"


def test_every_adapter_folder_is_registered():
    folders = {p.name for p in (REPO / "adapters").iterdir() if p.is_dir() and any(p.glob("*.py"))}
    registered = {Path(ADAPTERS.get(name).folder()).name for name in ADAPTERS.names()}
    assert folders <= registered, (
        f"adapter folders without a registered adapter: {sorted(folders - registered)}"
    )


def test_cli_entry_point_runs():
    out = subprocess.run(
        [sys.executable, "-m", "nnd_suites", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == f"nnd-suites {nnd_suites.__version__}"
