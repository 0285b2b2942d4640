"""CONTRIBUTING's worked declarative example is a valid source.yaml of under 30 lines, and says
what the shipped simpeval_2022 declaration says."""

from __future__ import annotations

import re
from pathlib import Path

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.declarative.loading import load_declaration

ROOT = Path(__file__).resolve().parents[2]


def test_the_worked_example_is_valid_short_and_the_shipped_one(tmp_path):
    text = (ROOT / "CONTRIBUTING.md").read_text("utf-8")
    section = text.split("### Declare a source", 1)[1]
    example = re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1)
    assert len(example.splitlines()) < 30
    (tmp_path / "source.yaml").write_text(example, "utf-8")
    example_spec = load_declaration(tmp_path / "source.yaml").spec
    shipped = ADAPTERS.get("simpeval_2022").declared.spec
    for part in ("file", "group", "candidates", "template", "quality_map"):
        assert getattr(example_spec, part) == getattr(shipped, part), part
    assert text.index("### Declare a source") < text.index("### Write a class")
