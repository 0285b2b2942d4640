"""The GGUF helper extracts llama.cpp's converter from the llama-cpp-python sdist through the one
safe extractor (nnd_suites.sources.safe_extract), so it works on Pythons without tarfile's filter
and still refuses a member that escapes. A small sdist-shaped tar stands in for the real one."""

from __future__ import annotations

import io
import tarfile

import pytest
import tiny_gguf

from nnd_suites.errors import UnsafeArchiveError
from nnd_suites.sources import safe_extract

TOP = f"llama_cpp_python-{tiny_gguf.SDIST_VERSION}"


def _sdist(path, extra: str | None = None):
    names = [f"{TOP}/setup.py", f"{TOP}/vendor/llama.cpp/convert_hf_to_gguf.py"]
    with tarfile.open(path, "w:gz") as tar:
        for name in [*names, *([extra] if extra else [])]:
            info = tarfile.TarInfo(name)
            info.size = len(name)
            tar.addfile(info, io.BytesIO(name.encode()))
    return path


@pytest.mark.parametrize("with_filter", [True, False], ids=["filter", "fallback"])
def test_the_converter_is_extracted_and_escapes_refused(with_filter, tmp_path, monkeypatch):
    if with_filter and not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python's tarfile has no extraction filter")
    monkeypatch.setattr(safe_extract, "has_data_filter", lambda: with_filter)
    root = tiny_gguf.converter_root(_sdist(tmp_path / "good.tar.gz"), tmp_path / "good")
    assert root == tmp_path / "good" / TOP / "vendor" / "llama.cpp"
    assert (root / "convert_hf_to_gguf.py").read_text().endswith("convert_hf_to_gguf.py")
    assert not (tmp_path / "good" / TOP / "setup.py").exists()  # only vendor/llama.cpp
    escaping = f"{TOP}/vendor/llama.cpp/../../../../escaped.py"
    bad = _sdist(tmp_path / "bad.tar.gz", escaping)
    with pytest.raises(UnsafeArchiveError, match=r"bad\.tar\.gz: member .*points outside"):
        tiny_gguf.converter_root(bad, tmp_path / "out" / "bad")
    assert not (tmp_path / "out" / "escaped.py").exists()
