"""Property-based fuzzing of the dataset card's front matter as the readers of a dataset folder
read it: resolve (``load_suite`` of a config, ``resolve_suites`` of the folder: what `stats` and
`evaluate` read), `export` adding a suite to the folder, and the folder check of `validate`.

Each example damages the YAML front matter of README.md in an export folder of two small suites
(tests/support/yaml_damage.py; the card's Markdown body is kept) and reads the folder each way.
Each read must end in a :class:`NNDError` naming the folder or its card, or succeed: a suite
read is the suite exported, an export lists the configs it holds. Any other exception fails. CI
runs the ``ci`` profile with 50 examples (an export writes a card); ``HYPOTHESIS_PROFILE=
thorough`` runs 1,250.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from yaml_damage import PROFILE, damaged

from nnd_suites import NNDError, build_suite, load_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.hub import export_suites
from nnd_suites.hub.folder_check import check_export_folder
from nnd_suites.resolve import resolve_suites

NAMES = ["quiz_design", "challenge300"]


def _fixture_suite(name: str):
    fixtures = get_adapter(name).folder() / "fixtures"
    source = json.loads((fixtures / "expected_stats.json").read_text("utf-8"))["source"]
    return build_suite(name, fixtures / source)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    suites = {name: _fixture_suite(name) for name in NAMES}
    folder = tmp_path_factory.mktemp("export") / "nnd"
    export_suites([suites["quiz_design"]], folder, repo_id="org/nnd")
    return folder, suites


def _damage_front_matter(data: st.DataObject, card: Path) -> None:
    head, front, body = card.read_bytes().split(b"---\n", 2)
    card.write_bytes(head + b"---\n" + damaged(data, front) + b"---\n" + body)


@settings(PROFILE, max_examples=PROFILE.max_examples // 4)
@given(data=st.data())
def test_damaged_card_reads_or_gives_a_named_error(exported, data):
    original, suites = exported
    folder = Path(tempfile.mkdtemp()) / original.name
    try:
        shutil.copytree(original, folder)
        _damage_front_matter(data, folder / "README.md")
        readers = {
            "load_suite": lambda: [load_suite(folder / "quiz_design")],
            "resolve_suites": lambda: resolve_suites([str(folder)]),
            "validate": lambda: check_export_folder(folder),
            "export": lambda: export_suites([suites["challenge300"]], folder),
        }
        for what, read in readers.items():
            try:
                result = read()
            except NNDError as error:
                assert str(folder) in str(error), f"{what}: {error}"
                event(f"{what}: refused with a named error")
                continue
            event(f"{what}: read")
            if what in ("load_suite", "resolve_suites"):
                assert [s.manifest.content_hash for s in result] == [
                    suites["quiz_design"].manifest.content_hash
                ], what
            if what == "export":
                assert sorted(c.name for c in result.configs) == sorted(NAMES)
    finally:
        shutil.rmtree(folder.parent)
