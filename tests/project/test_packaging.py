"""Packaging: no generic top-level import names, registry covers every plugin folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import nnd_suites
from nnd_suites.builder.adapter import ADAPTERS

REPO = Path(__file__).resolve().parents[2]


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


@pytest.mark.parametrize(
    "argv",
    [["list"], ["list", "--json"], ["build", "quiz_design", "--out", "{tmp}/qd"]],
)
def test_listing_and_building_import_no_heavy_library(argv, tmp_path):
    """torch and transformers load models; scipy.stats alone takes 0.5 s to import (`list` went
    from 0.46 s to 0.98 s when a report module imported it at the top)."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code = (
        "import sys\n"
        "from nnd_suites.cli import main\n"
        f"status = main({argv!r})\n"
        "heavy = ('torch', 'transformers', 'scipy.stats', 'matplotlib')\n"
        "heavy = sorted(m for m in heavy if m in sys.modules)\n"
        "assert status == 0 and not heavy, (status, heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_wheel_ships_fixture_and_data_sub_folders(tmp_path):
    """Contributors may nest fixtures (a folder source); every file of every adapter's fixtures/
    and data/ must reach the wheel, or the installed harness and default sources break; so must
    every report template."""
    import shutil
    import zipfile

    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__")
    shutil.copytree(REPO, copy, ignore=ignore)
    nested = copy / "adapters" / "quiz_design" / "fixtures" / "nested" / "deeper" / "part.tsv"
    nested.parent.mkdir(parents=True)
    nested.write_text("a\tb\n")
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps"]  # its own build env
    built = subprocess.run(
        [*pip_wheel, ".", "-w", str(tmp_path / "wheel")],
        cwd=copy,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = [
        "nnd_suites/adapters/" + path.relative_to(copy / "adapters").as_posix()
        for folder in ("fixtures", "data")
        for path in (copy / "adapters").glob(f"*/{folder}/**/*")
        if path.is_file()
    ]
    assert "nnd_suites/adapters/quiz_design/fixtures/nested/deeper/part.tsv" in expected
    assert sorted(set(expected) - names) == []
    # the reports' Markdown layouts are files too: an installed report needs every one
    templates = [
        installed + path.relative_to(copy / folder).as_posix()
        for folder, installed in [
            ("nnd_suites", "nnd_suites/"),
            ("evaluation", "nnd_suites/evaluation/"),
        ]
        for path in (copy / folder).glob("**/report_templates/*")
    ]
    assert "nnd_suites/evaluation/report_templates/baselines.md.j2" in templates
    assert "nnd_suites/human/report_templates/human_scores.md.j2" in templates
    assert sorted(set(templates) - names) == []


def test_top_level_namespace_is_the_public_api():
    """`dir(nnd_suites)` lists what a user may call, lazy entry points included, and none of the
    module's own imports; every listed name resolves."""
    names = dir(nnd_suites)
    assert not {"Any", "annotations", "PackageNotFoundError", "version"} & set(names)
    assert {"evaluate", "robustness", "verify_suite", "load_suite", "build_suite"} <= set(names)
    assert all(not name.startswith("_") or name == "__version__" for name in names)
    code = (
        "import nnd_suites\n"
        "from nnd_suites import robustness\n"
        "from nnd_suites.evaluation.robustness import robustness as real\n"
        "assert robustness is real\n"
        "assert all(getattr(nnd_suites, n) is not None for n in dir(nnd_suites))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
