"""Safe tar extraction (nnd_suites.sources.safe_extract) on both of its paths: tarfile's ``data``
filter where this Python has it, and the member-by-member checks where it does not (Debian 12's
Python 3.11.2). The fallback is forced by making ``has_data_filter`` answer False."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import warnings
import zipfile
from pathlib import Path

import pytest

from nnd_suites.errors import NNDError, SourceFormatError, UnsafeArchiveError
from nnd_suites.infra.paths import cache_root
from nnd_suites.sources import safe_extract
from nnd_suites.sources.archive import extract_archive

PATHS = ["filter", "fallback"]


@pytest.fixture(params=PATHS)
def extraction_path(request, monkeypatch):
    """Run the test once with tarfile's filter and once through the hand-made checks."""
    if request.param == "filter":
        if not hasattr(tarfile, "data_filter"):
            pytest.skip("this Python's tarfile has no extraction filter")
    else:
        monkeypatch.setattr(safe_extract, "has_data_filter", lambda: False)
    return request.param


def _add(tar: tarfile.TarFile, name: str, kind: bytes = tarfile.REGTYPE, **fields) -> None:
    info = tarfile.TarInfo(name)
    info.type = kind
    data = fields.pop("data", b"")
    for key, value in fields.items():
        setattr(info, key, value)
    if kind == tarfile.REGTYPE:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    else:
        tar.addfile(info)


def _good_tar(path: Path) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        _add(tar, "release", tarfile.DIRTYPE, mode=0o777)
        _add(tar, "release/inputs.tsv", data=b"id\ttext\n1\thello\n", mode=0o666)
        _add(tar, "release/run.sh", data=b"#!/bin/sh\n", mode=0o4775)  # set-uid, group-write
        _add(tar, "release/odd.txt", data=b"x", mode=0o071)  # not the owner's: no x for anyone
        _add(tar, "release/sub/deep.json", data=b"{}", mode=0o644, uid=4242, gid=4242)
        _add(tar, "release/latest.tsv", tarfile.SYMTYPE, linkname="inputs.tsv")
        _add(tar, "release/up.json", tarfile.SYMTYPE, linkname="sub/../sub/deep.json")
        _add(tar, "release/copy.tsv", tarfile.LNKTYPE, linkname="release/inputs.tsv")
    return path


def _tree(folder: Path) -> dict[str, tuple]:
    """Every path under ``folder`` with its kind, permission bits, owner and content."""
    seen = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            seen[path.relative_to(folder).as_posix()] = ("link", os.readlink(path))
            continue
        content = path.read_bytes() if path.is_file() else None
        mode = stat.S_IMODE(info.st_mode)
        seen[path.relative_to(folder).as_posix()] = (mode, info.st_uid, content)
    return seen


def test_a_good_tar_extracts_identically_on_both_paths(tmp_path, monkeypatch):
    archive = _good_tar(tmp_path / "good.tar.gz")
    trees = {}
    for path in PATHS:
        if path == "filter" and not hasattr(tarfile, "data_filter"):
            continue
        with monkeypatch.context() as patch:
            if path == "fallback":
                patch.setattr(safe_extract, "has_data_filter", lambda: False)
            with tarfile.open(archive) as tar:
                safe_extract.extract_tar(tar, tmp_path / path, source=str(archive))
        trees[path] = _tree(tmp_path / path)
    fallback = trees["fallback"]
    assert trees.get("filter", fallback) == fallback
    # what the data filter does to permissions and owners, the fallback does too
    assert fallback["release/inputs.tsv"] == (0o644, os.getuid(), b"id\ttext\n1\thello\n")
    assert fallback["release/run.sh"][0] == 0o755
    assert fallback["release/odd.txt"][0] == 0o640  # read for the group; x for nobody
    assert fallback["release/sub/deep.json"][1] == os.getuid()
    assert fallback["release/latest.tsv"] == ("link", "inputs.tsv")
    assert fallback["release/copy.tsv"][2] == b"id\ttext\n1\thello\n"


MALICIOUS = {
    "traversal": (lambda tar: _add(tar, "../escaped.txt", data=b"x"), "points outside"),
    "deep traversal": (
        lambda tar: _add(tar, "release/../../escaped.txt", data=b"x"),
        "points outside",
    ),
    "absolute path": (lambda tar: _add(tar, "/tmp/absolute.txt", data=b"x"), "absolute path"),
    "symlink escaping": (
        lambda tar: _add(tar, "release/out", tarfile.SYMTYPE, linkname="../../etc"),
        "link pointing outside",
    ),
    "absolute symlink": (
        lambda tar: _add(tar, "passwd", tarfile.SYMTYPE, linkname="/etc/passwd"),
        "link to an absolute path",
    ),
    "hard link escaping": (
        lambda tar: _add(tar, "shadow", tarfile.LNKTYPE, linkname="../shadow"),
        "link pointing outside",
    ),
    "write through an extracted link": (
        lambda tar: (
            _add(tar, "here", tarfile.SYMTYPE, linkname="."),
            _add(tar, "here/up", tarfile.SYMTYPE, linkname=".."),
        ),
        "link pointing outside",
    ),
    "character device": (
        lambda tar: _add(tar, "null", tarfile.CHRTYPE, devmajor=1, devminor=3),
        "special file",
    ),
    "fifo": (lambda tar: _add(tar, "pipe", tarfile.FIFOTYPE), "special file"),
}


@pytest.mark.parametrize("case", sorted(MALICIOUS))
def test_a_malicious_member_is_refused_by_name(case, extraction_path, tmp_path):
    write_member, reason = MALICIOUS[case]
    archive = tmp_path / "bad.tar"
    with tarfile.open(archive, "w") as tar:
        _add(tar, "release/ok.txt", data=b"fine")
        write_member(tar)
    target = tmp_path / "deep" / "target"
    with tarfile.open(archive) as tar, pytest.raises(UnsafeArchiveError) as raised:
        safe_extract.extract_tar(tar, target, source=str(archive))
    message = str(raised.value)
    assert message.startswith(f"{archive}: member ") and reason in message
    assert isinstance(raised.value, SourceFormatError) and raised.value.exit_status == 3
    # nothing landed outside the target folder
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["target"]
    assert not (tmp_path / "escaped.txt").exists()


def test_an_archive_source_with_a_bad_member_leaves_no_folder(extraction_path, tmp_path):
    archive = tmp_path / "release.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        _add(tar, "release/ok.txt", data=b"fine")
        _add(tar, "release/link", tarfile.SYMTYPE, linkname="../../../../etc/passwd")
    with pytest.raises(UnsafeArchiveError, match=r"release\.tar\.gz: member 'release/link'"):
        extract_archive(archive, "ab" * 32)
    extracted = cache_root() / "sources" / "extracted"
    assert not (extracted / ("ab" * 8)).exists()


def test_an_archive_over_the_size_limit_is_refused_before_extraction(tmp_path, monkeypatch):
    archive = _good_tar(tmp_path / "release.tar.gz")  # 29 bytes of members
    monkeypatch.setenv("NND_SUITES_MAX_EXTRACTED_BYTES", "16")
    with pytest.raises(SourceFormatError, match=r"declares 29 bytes, over the 16-byte limit"):
        extract_archive(archive, "cd" * 32)
    assert not (cache_root() / "sources" / "extracted" / ("cd" * 8)).exists()
    # a limit that is no positive number is named when it is needed, never an import traceback
    for value in ("8G", "-5", "inf"):
        monkeypatch.setenv("NND_SUITES_MAX_EXTRACTED_BYTES", value)
        with pytest.raises(NNDError, match=rf"NND_SUITES_MAX_EXTRACTED_BYTES='{value}': expected"):
            extract_archive(archive, "ce" * 32)
    monkeypatch.setenv("NND_SUITES_MAX_EXTRACTED_BYTES", "1e6")
    assert (extract_archive(archive, "cf" * 32) / "inputs.tsv").is_file()


def test_an_archive_holding_one_file_twice_is_refused_naming_it(tmp_path):
    """A zip or tar holding human_annotations/cnn_human.json twice (a second, cut copy appended)
    was extracted with the later copy replacing the earlier unsaid: gpt3_summ built 105 tests
    instead of 205 with exit 0. Either is refused, naming the archive and the member."""
    zipped = tmp_path / "release.zip"
    with zipfile.ZipFile(zipped, "w") as handle:
        handle.writestr("release/", b"")
        handle.writestr("release/data.json", b'{"all": 1}')
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
            handle.writestr("release/data.json", b'{"cut": 1}')
    tarred = tmp_path / "release.tar"
    with tarfile.open(tarred, "w") as tar:
        _add(tar, "release/data.json", data=b'{"all": 1}')
        _add(tar, "release/./data.json", data=b'{"cut": 1}')
    for archive, digest, second in [
        (zipped, "da" * 32, "release/data.json"),
        (tarred, "db" * 32, "release/./data.json"),
    ]:
        with pytest.raises(SourceFormatError) as raised:
            extract_archive(archive, digest)
        assert str(raised.value).startswith(
            f"{archive}: member {second!r} is in the archive twice (first as 'release/data.json')"
        ), raised.value
        assert not (cache_root() / "sources" / "extracted" / digest[:16]).exists()
