"""Atomic folder swap and the cleaning of leftovers that killed writers leave beside a target."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from leftovers import recover_leftovers

import nnd_suites.infra.atomic as io
from nnd_suites.errors import OutputFolderError
from nnd_suites.infra import atomic
from nnd_suites.infra.atomic import atomic_directory, atomic_write_text

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


#: A writer stopped inside its block: it holds the target's lock and its temporary folder.
LIVE_WRITER = """
import sys, time
from nnd_suites.infra.atomic import atomic_directory

with atomic_directory(sys.argv[1]) as tmp:
    print(tmp, flush=True)
    time.sleep(60)
"""


def test_a_live_writers_work_is_left_alone(tmp_path, monkeypatch):
    # Before the lock, a live writer was simulated by a leftover named with a live process id;
    # now the other writer is real, and a second writer waits for its lock instead.
    target = _folder(tmp_path / "suite", "old")
    sleeper = subprocess.Popen(
        [sys.executable, "-c", LIVE_WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    try:
        live = Path(sleeper.stdout.readline().strip())
        assert live.is_dir() and live.name.startswith(f".suite.{sleeper.pid}.")
        monkeypatch.setattr(atomic, "LOCK_WAIT_SECONDS", 0.3)
        with (
            pytest.raises(OutputFolderError, match=f"{target}: another nnd-suites process"),
            atomic_directory(target),
        ):
            pass
        with pytest.raises(OutputFolderError, match="another nnd-suites process"):
            recover_leftovers(target)
        assert live.is_dir() and (target / "version").read_text() == "old"
    finally:
        sleeper.kill()
        sleeper.wait()
    recover_leftovers(tmp_path / "suite")  # the lock died with its holder: stale now
    assert not live.exists() and (target / "version").read_text() == "old"
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


#: Writers that replace one folder as fast as they can: one that took another's temporary folder
#: for a leftover would delete it from under its writer, which then fails.
RACING_WRITER = """
import sys
from pathlib import Path
from nnd_suites.infra.atomic import atomic_directory

target, name = Path(sys.argv[1]), sys.argv[2]
for round in range(40):
    with atomic_directory(target) as tmp:
        (tmp / "a").write_text(f"{name} {round}")
        (tmp / "b").write_text(f"{name} {round}")
"""


@pytest.mark.slow
def test_concurrent_writers_take_turns_and_leave_nothing_beside(tmp_path):
    """The lock file is deleted by its holder on release: a writer waiting on the deleted file
    must not think it holds the lock while another holds a new one."""
    target = tmp_path / "suite"
    writers = [
        subprocess.Popen([sys.executable, "-c", RACING_WRITER, str(target), str(n)])
        for n in range(4)
    ]
    assert [writer.wait(timeout=300) for writer in writers] == [0, 0, 0, 0]
    assert (target / "a").read_text() == (target / "b").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]
