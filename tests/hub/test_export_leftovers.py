"""A killed export leaves its config's temporary copy and lock in the export folder: the next
export or build into that folder, and ``validate``, clean them (the writer is dead: its lock is
free), never a writer's that is alive, and never a file nnd-suites did not write."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from nnd_suites.cli import main

#: ``export SUITE --to FOLDER`` killed (SIGKILL) once the config is written, before its swap
KILLED_EXPORT = """
import os, signal, sys
import nnd_suites.infra.atomic as atomic
atomic._swap_in = lambda tmp, target: os.kill(os.getpid(), signal.SIGKILL)
from nnd_suites.cli import main
main(["export", sys.argv[1], "--to", sys.argv[2]])
"""
#: a live writer of FOLDER/NAME: holds its lock with its temporary copy there until killed
LIVE_WRITER = """
import sys, time
from pathlib import Path
from nnd_suites.infra.atomic import atomic_directory
with atomic_directory(Path(sys.argv[1])) as tmp:
    (tmp / "part").write_text("being written")
    print("writing", flush=True)
    time.sleep(600)
"""


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _killed_export(suite_folder: Path, export: Path) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", KILLED_EXPORT, str(suite_folder), str(export)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == -9, run.stderr
    left = _hidden(export)
    assert [n for n in left if n.endswith(".tmp")], left  # the killed config's copy
    assert ".challenge300.nnd-suites.lock" in left
    return left


def test_the_next_export_of_another_config_cleans_a_killed_ones_leftovers(
    tmp_path, challenge300_suite, quiz_design_suite, capsys
):
    killed = challenge300_suite.save(tmp_path / "c300")
    other = quiz_design_suite.save(tmp_path / "qd")
    export = tmp_path / "export"
    export.mkdir()
    users = [".notes", ".challenge300.tmp", ".challenge300.1.short.tmp"]  # not names we write
    for name in users:
        (export / name).write_text("the user's")
    left = _killed_export(killed, export)
    assert main(["export", str(other), "--to", str(export)]) == 0
    err = capsys.readouterr().err
    assert _hidden(export) == sorted(users)  # the user's files kept
    removed = sorted(set(left) - set(users))
    assert f"removed what killed nnd-suites writes left in {export} (" in err
    assert err.rstrip().endswith(f"locks): {', '.join(removed)}")
    assert sorted(p.name for p in export.iterdir() if not p.name.startswith(".")) == [
        "README.md",
        "quiz_design",
    ]  # the killed config never came in


def test_a_build_into_the_dataset_folder_says_what_it_cleaned(
    tmp_path, challenge300_suite, quiz_design_suite, capsys
):
    # the build removed the killed export's copy and lock without a word (exit status 0)
    export = tmp_path / "export"
    assert main(["export", str(quiz_design_suite.save(tmp_path / "qd")), "--to", str(export)]) == 0
    left = _killed_export(challenge300_suite.save(tmp_path / "c300"), export)
    capsys.readouterr()
    assert main(["build", "quiz_design", "--out", str(export / "quiz_design")]) == 0
    err = capsys.readouterr().err
    assert _hidden(export) == []
    assert f"removed what killed nnd-suites writes left in {export} (" in err
    assert err.rstrip().endswith(f"locks): {', '.join(left)}")


def test_validate_cleans_a_killed_exports_leftovers(tmp_path, challenge300_suite, capsys):
    folder = challenge300_suite.save(tmp_path / "c300")
    export = tmp_path / "export"
    assert main(["export", str(folder), "--to", str(export)]) == 0
    _killed_export(folder, export)  # a second export of it, killed before its swap
    capsys.readouterr()
    assert main(["validate", str(export)]) == 0
    assert "removed what killed nnd-suites writes left in" in capsys.readouterr().out
    assert _hidden(export) == []
    assert main(["validate", str(export / "challenge300")]) == 0  # the old config, whole


def test_a_live_writers_copy_and_lock_are_left_to_it(tmp_path):
    from nnd_suites.infra.atomic import recover_dead_writers

    folder = tmp_path / "export"
    folder.mkdir()
    writer = subprocess.Popen(
        [sys.executable, "-c", LIVE_WRITER, str(folder / "challenge300")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout.readline() == "writing\n"
        held = _hidden(folder)
        assert len(held) == 2  # its copy and its lock
        started = time.perf_counter()
        assert recover_dead_writers(folder) == []
        assert time.perf_counter() - started < 5  # a held lock is skipped, not waited for
        assert _hidden(folder) == held
    finally:
        writer.kill()
        writer.wait()
    assert recover_dead_writers(folder) == held  # dead now: cleaned
    assert _hidden(folder) == []
