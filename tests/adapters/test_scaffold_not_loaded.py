"""new-adapter in a folder that is not the clone the running nnd-suites loads: the files are
written, and the user is told they will not be loaded and how to load them; a later ``build``
of that name says the folder here is not loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

import nnd_suites.adapters
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli import main
from nnd_suites.errors import UnknownItemError

RATINGS = "doc,summary,model,score\nd1,a b,m1,3\nd1,a c,m2,5\n"


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """A folder with adapters/ and quality_maps/ (not the loaded clone) and a rating table."""
    for folder in ("adapters", "quality_maps"):
        (tmp_path / folder).mkdir()
    sample = tmp_path / "r.csv"
    sample.write_text(RATINGS, encoding="utf-8")
    return tmp_path, sample


def test_new_adapter_outside_the_loaded_clone_writes_and_says_it_is_not_loaded(
    tmp_path, capsys, monkeypatch
):
    root, sample = _project(tmp_path)
    monkeypatch.chdir(root)
    assert main(["new-adapter", "myrate", "--declarative", "--sample", str(sample)]) == 0
    out, err = capsys.readouterr()
    assert (root / "adapters" / "myrate" / "source.yaml").is_file()  # kept for a package
    assert "Next steps" in out
    loaded = Path(nnd_suites.adapters.__path__[0]).resolve()  # the clone's adapters/
    assert (
        f"warning: {root.resolve() / 'adapters' / 'myrate'} is not loaded: the nnd-suites you "
        f"ran loads its adapters from {loaded}; until it is loaded, `nnd-suites build myrate` "
        "says unknown adapter and the harness runs none of its cases (pytest says 'deselected', no "
        "failure); to load it, "
    ) in err
    assert "`nnd_suites.adapters` entry-point group" in err
    assert '"Adapters in your own package"' in err
    assert "pip install -e CLONE" in err  # the folder is no clone: installing it cannot work

    # build in that folder: the unknown name comes with the folder here and how to load it
    assert main(["build", "myrate", "--source", str(sample), "--out", str(root / "s")]) == 6
    err = capsys.readouterr().err
    assert "unknown adapter 'myrate'" in err
    assert f"./adapters/myrate exists in {root} but is not loaded" in err
    assert "entry-point group" in err
    assert not (root / "s").exists()


def test_a_clone_that_is_not_installed_is_told_to_install_itself(tmp_path, capsys):
    root, _sample = _project(tmp_path)
    (root / "nnd_suites").mkdir()
    (root / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    argv = ["new-adapter", "other_clone", "--type", "likert", "--root", str(root)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"install this clone with `pip install -e {root.resolve()}`" in err


def test_the_loaded_clone_gets_no_warning(tmp_path, capsys, monkeypatch):
    root, _sample = _project(tmp_path)
    monkeypatch.setattr(ADAPTERS, "builtin_folders", lambda: [(root / "adapters").resolve()])
    assert main(["new-adapter", "mine", "--type", "graded", "--root", str(root)]) == 0
    out, err = capsys.readouterr()
    assert "Next steps" in out and "warning" not in err


def test_an_unknown_adapter_without_a_folder_here_gets_no_folder_hint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnknownItemError) as raised:
        ADAPTERS.get("myrate")
    assert "exists in" not in str(raised.value)
