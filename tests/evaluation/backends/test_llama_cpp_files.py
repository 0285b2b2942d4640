"""What the llama_cpp backend checks before llama.cpp is involved: the GGUF file itself, its
remembered sha256, and that a .gguf model reference picks the backend. Runs without the engine."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest

from nnd_suites.errors import ModelLoadError
from nnd_suites.evaluation import BACKENDS, load_backend
from nnd_suites.evaluation.backends import llama_cpp_files
from nnd_suites.evaluation.backends.hf_loading import folder_fingerprint
from nnd_suites.evaluation.backends.llama_cpp_files import HASHES_FILE, check_gguf, gguf_sha256


def test_backend_is_registered_with_its_extra():
    assert "llama_cpp" in BACKENDS.names()
    summary = BACKENDS.summaries(lambda cls: cls.metadata.summary)["llama_cpp"]
    assert "nnd-suites[llama]" in summary and ".gguf" in summary


def test_missing_gguf_is_a_model_load_error(tmp_path):
    missing = tmp_path / "absent.gguf"
    with pytest.raises(ModelLoadError, match=r"absent\.gguf.*does not exist"):
        load_backend(str(missing))  # no backend named: the .gguf suffix picks llama_cpp
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_backend(str(missing), "llama_cpp")


def test_file_that_is_not_gguf_is_a_model_load_error(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b'{"model_type": "gpt2"}')
    with pytest.raises(ModelLoadError, match=r"model\.gguf.* is not a GGUF file.*starts with"):
        load_backend(str(fake))
    folder = tmp_path / "folder.gguf"
    folder.mkdir()
    with pytest.raises(ModelLoadError, match="not a file"):
        check_gguf(folder)


def test_a_same_size_file_copied_over_with_its_times_is_hashed_again(tmp_path):
    """The probe's finding: `cp -p` (or rsync -a, tar x, touch -r) of another checkpoint of the
    same size over the old path kept size and mtime, so the first file's hash (and its cached
    scores) were reused for the second file's weights."""
    model, other = tmp_path / "m.gguf", tmp_path / "other.gguf"
    model.write_bytes(b"GGUF" + bytes(range(256)) * 10)
    other.write_bytes(b"GGUF" + bytes(reversed(range(256))) * 10)
    remembered = tmp_path / "cache" / HASHES_FILE
    first = gguf_sha256(model, remembered)
    stat = model.stat()
    os.utime(other, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    shutil.copy2(other, model)  # cp -p: same size, same mtime, new content
    assert (model.stat().st_size, model.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    assert gguf_sha256(model, remembered) == hashlib.sha256(other.read_bytes()).hexdigest() != first
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(model.read_bytes())
    before = folder_fingerprint(folder)
    stamp = (folder / "model.safetensors").stat()
    (tmp_path / "next").write_bytes(b"GGUF" + bytes(range(256)) * 10)
    os.utime(tmp_path / "next", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    shutil.copy2(tmp_path / "next", folder / "model.safetensors")
    assert folder_fingerprint(folder) != before  # the in-process memo is not fooled either


def test_sha256_is_remembered_by_path_size_and_mtime(tmp_path, monkeypatch):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(range(256)) * 10)
    remembered = tmp_path / "cache" / HASHES_FILE
    first = gguf_sha256(model, remembered)
    import hashlib

    assert first == hashlib.sha256(model.read_bytes()).hexdigest()
    [(path, entry)] = json.loads(remembered.read_text()).items()
    assert path == str(model.resolve()) and entry["size"] == model.stat().st_size

    def no_hashing(path):
        raise AssertionError("hashed again although the file did not change")

    monkeypatch.setattr(llama_cpp_files, "sha256_file", no_hashing)
    assert gguf_sha256(model, remembered) == first
    monkeypatch.undo()
    # same size, new content and mtime: hashed again
    model.write_bytes(b"GGUF" + bytes(reversed(range(256))) * 10)
    os.utime(model, ns=(1, 1))
    second = gguf_sha256(model, remembered)
    assert second != first
    assert second == hashlib.sha256(model.read_bytes()).hexdigest()
    remembered.write_text("not json")  # a damaged file is rewritten, never trusted
    assert gguf_sha256(model, remembered) == second
    assert json.loads(remembered.read_text())[str(model.resolve())]["sha256"] == second
