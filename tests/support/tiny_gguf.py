"""Convert a tiny Hugging Face model (evaluation/tiny/) to GGUF for llama.cpp (in process or
served), and quantise a GGUF file with llama.cpp's quantiser: for the tests and benchmarks only,
so it is not shipped in the package.

Uses llama.cpp's own converter, shipped inside the llama-cpp-python source distribution
(``vendor/llama.cpp/convert_hf_to_gguf.py``). Two things it needs that a tiny model lacks: an
``n_ctx`` in config.json (the GPT-2 converter reads it, not ``n_positions``), and a known
pre-tokenizer (it hashes the tokenisation of a probe text; a byte-level BPE trained on the fly is
GPT-2-style, so it is told ``gpt-2``).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

from nnd_suites.sources.safe_extract import extract_tar

# Run in a child process: the converter imports its own ``conversion`` and ``gguf`` packages.
_CONVERT = """
import sys
root = sys.argv[1]
sys.path[:0] = [root, root + "/gguf-py"]
import conversion.base as base
base.TextModel.get_vocab_base_pre = lambda self, tokenizer: "gpt-2"
sys.argv = ["convert_hf_to_gguf.py", *sys.argv[2:]]
import convert_hf_to_gguf
convert_hf_to_gguf.main()
"""


#: The llama-cpp-python release whose sdist .ci/engine_setup.sh keeps (its GGUF converter).
SDIST_VERSION = "0.3.36"


def find_sdist() -> Path | None:
    """The llama-cpp-python sdist: ``$LLAMA_CPP_SDIST``, or in ``$LLAMA_WHEEL_DIR`` or
    /tmp/llama-wheels (where .ci/engine_setup.sh keeps it)."""
    places = [os.environ.get("LLAMA_CPP_SDIST"), os.environ.get("LLAMA_WHEEL_DIR")]
    for place in [*filter(None, places), "/tmp/llama-wheels"]:
        path = Path(place)
        if path.is_file():
            return path
        found = sorted(path.glob(f"llama_cpp_python-{SDIST_VERSION}.tar.gz"))
        if found:
            return found[0]
    return None


def sdist_or_exit(given: str | None) -> Path:
    """The sdist a benchmark was given (``--sdist``), else :func:`find_sdist`'s; a clear exit
    where there is none (not a traceback after minutes of work)."""
    sdist = Path(given) if given else find_sdist()
    if sdist is None:
        raise SystemExit(
            "no llama-cpp-python sdist (llama.cpp's GGUF converter): run "
            ". .ci/engine_setup.sh, set LLAMA_CPP_SDIST or give --sdist"
        )
    if not sdist.is_file():
        raise SystemExit(f"--sdist {sdist}: no such file; give llama-cpp-python's sdist")
    return sdist


def converter_root(sdist: str | Path, into: str | Path) -> Path:
    """``vendor/llama.cpp`` of the llama-cpp-python sdist, extracted once under ``into``."""
    into = Path(into)
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        root = into / top / "vendor" / "llama.cpp"
        if not (root / "convert_hf_to_gguf.py").is_file():
            prefix = f"{top}/vendor/llama.cpp/"
            members = [m for m in archive.getmembers() if m.name.startswith(prefix)]
            extract_tar(archive, into, members, source=str(sdist))
    return root


def hf_to_gguf(model: str | Path, out: str | Path, root: str | Path) -> Path:
    """Write ``model`` (a tiny GPT-2-shaped folder) as an f32 GGUF file ``out``."""
    model, out = Path(model), Path(out)
    staged = out.parent / f"{out.stem}.hf"
    shutil.copytree(model, staged, dirs_exist_ok=True)
    config = json.loads((staged / "config.json").read_text())
    config.setdefault("n_ctx", config["n_positions"])
    (staged / "config.json").write_text(json.dumps(config))
    tokenizer = json.loads((staged / "tokenizer_config.json").read_text())
    # The GGUF records whether the tokenizer adds a BOS; llama.cpp reads it from here.
    tokenizer["add_bos_token"] = _adds_bos(staged)
    (staged / "tokenizer_config.json").write_text(json.dumps(tokenizer))
    env = {**os.environ, "NO_LOCAL_GGUF": "1"}
    command = [sys.executable, "-c", _CONVERT, str(root), str(staged), "--outfile", str(out)]
    subprocess.run(
        [*command, "--outtype", "f32"],
        check=True,
        env=env,
        capture_output=True,
    )
    shutil.rmtree(staged)
    return out


def quantize_gguf(source: str | Path, out: str | Path, kind: str = "Q8_0") -> Path:
    """Write ``source`` (a GGUF file) quantised to ``kind`` (``Q8_0``, ``Q4_K_M``...: a
    ``LLAMA_FTYPE_MOSTLY_*`` name) as ``out``, with llama.cpp's own quantiser."""
    # lazy: optional extra (pip install 'nnd-suites[llama]'), only for GGUF models
    import llama_cpp

    ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{kind.upper()}", None)
    if ftype is None:
        raise ValueError(f"unknown quantisation {kind!r}: a LLAMA_FTYPE_MOSTLY_* name, e.g. Q8_0")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    out = Path(out)
    code = llama_cpp.llama_model_quantize(
        str(source).encode(), str(out).encode(), ctypes.byref(params)
    )
    if code != 0:
        raise RuntimeError(f"llama_model_quantize({source} -> {out}, {kind}) returned {code}")
    return out


def _adds_bos(folder: Path) -> bool:
    # lazy: transformers loads with a model only (`import nnd_suites` stays torch-free)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    ids = tokenizer("the")["input_ids"]
    return tokenizer.bos_token_id is not None and ids[:1] == [tokenizer.bos_token_id]


def start_llama_server(
    gguf: str | Path, log: str | Path, *, window: int, threads: int = 1, alias: str = "tiny"
) -> tuple[subprocess.Popen, str]:
    """Start ``python -m llama_cpp.server`` on a free localhost port; return it and its base URL
    once ``/v1/models`` answers (the server's output, timings included, goes to ``log``)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf)]
    command += ["--model_alias", alias, "--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_ctx", str(window), "--n_threads", str(threads)]
    with Path(log).open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(url + "/models", timeout=2).close()
            return process, url
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError(f"llama.cpp server did not start; see {log}") from None
            time.sleep(0.5)
