"""Property-based fuzzing of the ``source.yaml`` reader on damaged copies of every shipped
declaration (tests/support/yaml_damage.py: truncation, bad bytes, dropped, repeated, swapped and
re-indented lines, renamed keys, values of another type, huge numbers, deep nesting, YAML
constructs). Reading the damaged declaration must end in a :class:`DeclarationError` that names
the file, or in an adapter; an adapter then builds its fixture into a suite or stops with a named
:class:`NNDError`. Any other exception fails. CI runs the ``ci`` profile with 100 examples per
declaration; ``HYPOTHESIS_PROFILE=thorough`` runs 2,500.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from yaml_damage import PROFILE, damaged

from nnd_suites import NNDError, build_suite
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.declarative.model import DECLARATION_FILE
from nnd_suites.declarative.plugin import declared_adapter
from nnd_suites.errors import DeclarationError

FOLDERS = {
    name: ADAPTERS.get(name).folder()
    for name in ADAPTERS.names()
    if (ADAPTERS.get(name).folder() / DECLARATION_FILE).is_file()
}


def _fixture(folder: Path) -> Path:
    fixtures = folder / "fixtures"
    return fixtures / json.loads((fixtures / "expected_stats.json").read_text("utf-8"))["source"]


def test_every_shipped_declaration_is_fuzzed():
    assert len(FOLDERS) >= 7


@pytest.mark.parametrize("name", sorted(FOLDERS))
@settings(PROFILE, max_examples=PROFILE.max_examples // 2)
@given(data=st.data())
def test_damaged_declaration_loads_or_gives_a_named_error(name, data):
    folder = Path(tempfile.mkdtemp()) / name
    try:
        shutil.copytree(FOLDERS[name], folder, ignore=shutil.ignore_patterns("__pycache__"))
        path = folder / DECLARATION_FILE
        path.write_bytes(damaged(data, path.read_bytes()))
        try:
            cls = declared_adapter(f"fuzzed_{name}", folder)
        except DeclarationError as error:
            assert str(path) in str(error), str(error)
            event("refused with a named error")
            return
        cls.name = cls.declared.spec.name  # what registering it would set
        try:
            suite = build_suite(cls(), _fixture(folder))
        except NNDError as error:
            assert str(error), "an error without a message"
            event("loaded; the build stopped with a named error")
            return
        assert suite.manifest.counts.pairs == len(suite.pairs) > 0
        event("loaded and built")
    finally:
        shutil.rmtree(folder.parent)


@pytest.mark.parametrize("scale", ["low: .nan", "high: .inf", "low: -.inf", "high: 1.0e400"])
def test_a_rating_scale_bound_that_is_not_a_finite_number_is_refused(scale, tmp_path):
    """``low: .nan`` was read, and a rating of -500 on simpeval's 0-100 scale then built into
    the suite: a number compares false with nan, so none was below it; an infinite bound is
    no bound (leave the key out for that)."""
    folder = tmp_path / "simpeval_2022"
    shutil.copytree(FOLDERS["simpeval_2022"], folder, ignore=shutil.ignore_patterns("__pycache__"))
    path = folder / DECLARATION_FILE
    key = scale.split(":")[0]
    text = path.read_text("utf-8")
    assert f"\n  {key}: " in text
    path.write_text(re.sub(rf"\n  {key}: .*", f"\n  {scale}", text), "utf-8")
    with pytest.raises(DeclarationError, match=rf"{path}:\d+, at candidates\.{key}.*finite"):
        declared_adapter("fuzzed_simpeval_2022", folder)
