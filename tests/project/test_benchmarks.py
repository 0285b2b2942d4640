"""The benchmarks that convert a model to GGUF need llama-cpp-python's sdist (llama.cpp's
converter): without it each says so at once and exits, never a traceback after minutes of work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "command",
    [
        ["bench_served.py", "--groups", "1", "--repeats", "1"],
        ["bench_catalogue.py", "--backends", "gguf", "--repeats", "1"],
    ],
)
def test_a_gguf_benchmark_without_its_sdist_says_so(command, tmp_path):
    """bench_served.py ended in a ValueError traceback from tarfile (after building a model) when
    no --sdist was given or found; bench_catalogue.py imported its converter helper from
    nnd_suites.evaluation.tiny_gguf, a module that does not exist, after counting the whole
    catalogue. Both now name the missing file first and exit 1."""
    missing = tmp_path / "llama_cpp_python-0.3.36.tar.gz"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / command[0]), *command[1:], "--sdist", missing],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"--sdist {missing}: no such file; give llama-cpp-python's sdist"
    )
