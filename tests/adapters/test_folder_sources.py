"""Folder sources: a folder, a local archive or an archive URL; every file read is hashed.

The adapter is the contributor example in ``example_ratings/`` (five 0-100 aspects, one rating
file and one output file per system, inputs as an HTML table).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
from local_server import quiet_file_handler, serving

from nnd_suites import SourceFormatError, build_suite
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli import main

EXAMPLE = Path(__file__).with_name("example_ratings")
FIXTURE = EXAMPLE / "fixtures" / "five_aspects"
QUALITY_MAP = EXAMPLE / "quality_map.yaml"
FILES = sorted(p.relative_to(FIXTURE).as_posix() for p in FIXTURE.rglob("*") if p.is_file())


@pytest.fixture
def example():
    """Register the example adapter for one test, then restore the registry as it was."""
    ADAPTERS.names()  # discover the built-in adapters first: restoring must keep them
    saved = {k: dict(getattr(ADAPTERS, k)) for k in ("_classes", "_origins", "_aliases")}
    spec = importlib.util.spec_from_file_location("example_ratings_adapter", EXAMPLE / "adapter.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield functools.partial(build_suite, "example_ratings", quality_map=QUALITY_MAP)
    for name, value in saved.items():
        setattr(ADAPTERS, name, value)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_folder_source_records_every_file_it_read(example):
    suite = example(FIXTURE)
    recorded = {s.path: s.sha256 for s in suite.manifest.sources}
    # named by the folder's name, never the user's path (a manifest may be published)
    assert recorded == {f"{FIXTURE.name}/{name}": _sha(FIXTURE / name) for name in FILES}
    # one group per document, each aspect a category: no per-aspect grouping workaround
    assert suite.manifest.counts.groups == 3 and len(suite) == 16
    assert {p.category for p in suite.pairs} == {
        "fluency", "coherence", "relevance", "consistency", "informativeness"
    }  # fmt: skip
    assert {s.reason: s.count for s in suite.manifest.skipped}["no rating [fluency]"] == 1


def _zip(target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for name in FILES:
            archive.write(FIXTURE / name, f"five_aspects/{name}")
    return target


def test_local_archives_give_the_folders_suite(example, tmp_path):
    tar = tmp_path / "ratings.tar.gz"
    with tarfile.open(tar, "w:gz") as archive:
        archive.add(FIXTURE, "five_aspects")
    from_folder = example(FIXTURE)
    for archive in (_zip(tmp_path / "ratings.zip"), tar):
        suite = example(archive, source_sha256=_sha(archive))
        assert suite.pairs == from_folder.pairs
        names = [s.path for s in suite.manifest.sources]
        assert names[0] == archive.name and suite.manifest.sources[0].sha256 == _sha(archive)
        assert sorted(names[1:]) == sorted(f"{archive.name}/{name}" for name in FILES)


def test_an_archive_url_is_downloaded_extracted_and_recorded(example, tmp_path):
    served = tmp_path / "www"
    served.mkdir()
    _zip(served / "ratings.zip")
    with serving(quiet_file_handler(served)) as server:
        url = f"http://127.0.0.1:{server.server_port}/ratings.zip"
        suite = example(url + "?token=secret")
    names = [s.path for s in suite.manifest.sources]
    assert names[0] == url and f"{url}/outputs/sys_a.tsv" in names
    assert len(names) == 1 + len(FILES) and "secret" not in str(names)


def test_an_archive_escaping_its_folder_is_refused(example, tmp_path):
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("../outside.txt", "x")
    with pytest.raises(SourceFormatError, match=r"bad\.zip.*points outside the folder"):
        example(bad)
    assert not (tmp_path.parent / "outside.txt").exists()


def test_wrong_kinds_of_source_are_named(example, tmp_path, capsys):
    with pytest.raises(SourceFormatError, match="reads a folder of files, not one file"):
        example(FIXTURE / "inputs.html")
    with pytest.raises(SourceFormatError, match="pins one file, not a folder"):
        example(FIXTURE, source_sha256="0" * 64)
    # a one-file adapter given a folder: not "source file not found"
    status = main(["build", "challenge300", "--source", str(FIXTURE), "--out", str(tmp_path)])
    assert status == SourceFormatError.exit_status
    assert "this is a folder, and this adapter reads one file" in capsys.readouterr().err


def test_a_bad_rating_is_a_line_error(example, tmp_path):
    folder = tmp_path / "five_aspects"
    shutil.copytree(FIXTURE, folder)
    ratings = folder / "ratings" / "sys_b.tsv"
    ratings.write_text(ratings.read_text().replace("\t85\t", "\t185\t", 1))
    with pytest.raises(
        SourceFormatError, match=r"sys_b\.tsv:\d+: column .*: .185. out of range \[0, 100\]"
    ):
        example(folder)


def test_frank_records_its_split_file():
    from nnd_suites.builder.adapter import get_adapter

    fixtures = get_adapter("frank").folder() / "fixtures"
    suite = build_suite("frank", fixtures / "human_annotations_sentence.json")
    assert [(s.path, s.sha256) for s in suite.manifest.sources] == [
        (name, _sha(fixtures / name))
        for name in ("human_annotations_sentence.json", "test_split.txt")
    ]
