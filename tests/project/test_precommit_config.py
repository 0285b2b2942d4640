"""pre-commit runs ruff once over the project, so its output is one verdict."""

from __future__ import annotations

from pathlib import Path

import yaml

CONFIG = Path(__file__).parents[2] / ".pre-commit-config.yaml"


def test_ruff_hooks_run_once_over_every_file():
    hooks = {
        hook["id"]: hook
        for repo in yaml.safe_load(CONFIG.read_text())["repos"]
        for hook in repo["hooks"]
    }
    for name in ("ruff-check", "ruff-format"):
        hook = hooks[name]
        assert hook["entry"].startswith("ruff ")
        # no file names: ruff reads the project under its own config, in a single process
        assert hook["pass_filenames"] is False and hook["require_serial"] is True
