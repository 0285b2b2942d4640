"""Atomic folder swap and the cleaning of leftovers that killed writers leave beside a target."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import nnd_suites.infra.atomic as io
from nnd_suites.infra.atomic import atomic_directory, atomic_write_text, recover_leftovers

DEAD_PID = "999999999"  # above any pid_max: no such process


def _folder(path, version: str):
    path.mkdir()
    (path / "version").write_text(version)
    return path


def test_replacing_a_folder_keeps_nothing_beside_it(tmp_path):
    target = _folder(tmp_path / "suite", "old")
    with atomic_directory(target) as tmp:
        (tmp / "version").write_text("new")
    assert (target / "version").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]


def test_the_fallback_swap_replaces_too(tmp_path, monkeypatch):
    monkeypatch.setattr(io, "_renameat2", None)
    target = _folder(tmp_path / "suite", "old")
    with atomic_directory(target) as tmp:
        (tmp / "version").write_text("new")
    assert (target / "version").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]


def test_a_failed_block_leaves_the_old_folder(tmp_path):
    target = _folder(tmp_path / "suite", "old")
    with pytest.raises(RuntimeError), atomic_directory(target) as tmp:
        (tmp / "version").write_text("new")
        raise RuntimeError("stop")
    assert (target / "version").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]


def test_a_missing_target_gets_its_old_copy_back(tmp_path):
    _folder(tmp_path / f".suite.{DEAD_PID}.abcd1234.old", "old")
    _folder(tmp_path / f".suite.{DEAD_PID}.efgh5678.tmp", "new, maybe partial")
    with atomic_directory(tmp_path / "other"):
        pass  # writing another target touches nothing of this one
    assert len(list(tmp_path.iterdir())) == 3
    recover_leftovers(tmp_path / "suite")
    assert (tmp_path / "suite" / "version").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "suite"]


def test_leftovers_of_earlier_versions_are_recovered(tmp_path):
    # Before process ids were in the names, the old folder was kept as ``x`` inside ``.old``.
    _folder(tmp_path / ".suite.abcd1234.old", "unused").joinpath("x").mkdir()
    (tmp_path / ".suite.abcd1234.old" / "version").unlink()
    (tmp_path / ".suite.abcd1234.old" / "x" / "version").write_text("old")
    _folder(tmp_path / ".suite.efgh5678.tmp", "new")
    recover_leftovers(tmp_path / "suite")
    assert (tmp_path / "suite" / "version").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]


def test_a_live_writers_work_is_left_alone(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = _folder(tmp_path / f".suite.{sleeper.pid}.abcd1234.tmp", "in progress")
        locked = _folder(tmp_path / f".suite.{DEAD_PID}.efgh5678.tmp", "locked")
        fd = os.open(locked, os.O_RDONLY)
        try:
            assert io._lock(fd)
            with atomic_directory(tmp_path / "suite") as tmp:
                (tmp / "version").write_text("new")
            assert live.is_dir() and locked.is_dir()
        finally:
            os.close(fd)
        recover_leftovers(tmp_path / "suite")  # the lock is released: stale now
        assert live.is_dir() and not locked.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
    recover_leftovers(tmp_path / "suite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]


def test_only_this_targets_leftovers_are_touched(tmp_path):
    # ``.suite.v2.<pid>.<random>.tmp`` belongs to ``suite.v2``, not to ``suite``.
    neighbour = _folder(tmp_path / f".suite.v2.{DEAD_PID}.abcd1234.tmp", "other target")
    unrelated = _folder(tmp_path / ".suite.notes", "not ours")
    recover_leftovers(tmp_path / "suite")
    assert neighbour.is_dir() and unrelated.is_dir()


def test_a_killed_file_write_is_cleaned_by_the_next(tmp_path):
    (tmp_path / f".report.json.{DEAD_PID}.abcd1234.tmp").write_text("partial")
    atomic_write_text(tmp_path / "report.json", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_an_unwritable_target_is_named_not_its_temporary_file(tmp_path, capsys):
    from nnd_suites.cli import main
    from nnd_suites.errors import NNDError

    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    with pytest.raises(NNDError, match=f"cannot write {blocker}/out.json .*writable folder"):
        atomic_write_text(blocker / "out.json", "{}")
    with (
        pytest.raises(NNDError, match=f"cannot write {blocker}/folder"),
        atomic_directory(blocker / "folder"),
    ):
        pass
    target = blocker / "gem.json"
    assert main(["slices", "challenge300", "--gem-out", str(target)]) == NNDError.exit_status
    assert f"nnd-suites slices: error: cannot write {target}" in capsys.readouterr().err
