"""The served backend against a real engine: llama-cpp-python's server on localhost, serving the
tests' tiny GPT-2-shaped model converted to GGUF by llama.cpp's own converter.

Needs ``llama-cpp-python[server]`` and its source distribution (for the converter): run
``.ci/engine_setup.sh``, which sets both up, or point ``LLAMA_CPP_SDIST`` at the sdist.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from nnd_suites.errors import ScoringError

#: CI sets NND_REQUIRE_ENGINE=1: there a missing engine fails these tests instead of skipping them.
REQUIRED = os.environ.get("NND_REQUIRE_ENGINE") == "1"
if REQUIRED and importlib.util.find_spec("llama_cpp") is None:
    raise RuntimeError("NND_REQUIRE_ENGINE=1 but llama-cpp-python is not installed")
pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="llama-cpp-python is not installed (run .ci/engine_setup.sh)",
    ),
]
VERSION = "0.3.36"
#: Long enough for every Quiz Design prompt: HF cuts a context that does not fit, a server refuses.
WINDOW = 2048


def _sdist() -> Path | None:
    places = [os.environ.get("LLAMA_CPP_SDIST"), os.environ.get("LLAMA_WHEEL_DIR"), "/tmp/llama"]
    for place in filter(None, places):
        path = Path(place)
        found = (
            [path] if path.is_file() else sorted(path.glob(f"llama_cpp_python-{VERSION}.tar.gz"))
        )
        if found:
            return found[0]
    return None


@pytest.fixture(scope="session")
def serve(tmp_path_factory, quiz_design_suite, challenge300_suite):
    """Start a llama.cpp server for a tiny model (with or without a BOS token); yield its URL."""
    from tiny_gguf import converter_root, hf_to_gguf, start_llama_server

    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    sdist = _sdist()
    if sdist is None:
        if REQUIRED:
            raise RuntimeError("NND_REQUIRE_ENGINE=1 but LLAMA_CPP_SDIST names no sdist")
        pytest.skip(
            "the llama-cpp-python sdist (its GGUF converter) was not found: set LLAMA_CPP_SDIST"
        )
    root = converter_root(sdist, tmp_path_factory.mktemp("converter"))
    texts = suite_texts([quiz_design_suite, challenge300_suite])
    processes, started = [], {}

    def start(bos: bool) -> tuple[str, Path]:
        if bos not in started:
            folder = tmp_path_factory.mktemp(f"tiny_bos_{bos}")
            model = tiny_causal_lm(folder / "hf", texts, n_positions=WINDOW, bos=bos)
            gguf = hf_to_gguf(model, folder / "model.gguf", root)
            process, url = start_llama_server(gguf, folder / "server.log", window=WINDOW)
            processes.append(process)
            started[bos] = (url, model)
        return started[bos]

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=30)


# Challenge 300 holds characters (’) that llama-cpp-python echoes as empty byte tokens: each
# request holding one was refused ("no echoed token holds character ...") before they were summed.
@pytest.mark.parametrize("suite_name", ["quiz_design_suite", "challenge300_suite"])
def test_aligned_engine_matches_hf_causal(serve, request, suite_name):
    from nnd_suites.evaluation import evaluate
    from nnd_suites.evaluation.backend import load_backend

    suite = request.getfixturevalue(suite_name)
    url, model = serve(bos=True)
    served = load_backend("tiny", "served", base_url=url, tokenizer=str(model), concurrency=4)
    assert served.describe()["probe"]["difference"] < 1e-3
    ours = evaluate(served, suite, limit=30, cache=False, progress=False)
    hf = evaluate(
        str(model),
        suite,
        backend="hf_causal",
        limit=30,
        cache=False,
        device="cpu",
        progress=False,
    )
    [rows] = ours.outcomes.values()
    [reference] = hf.outcomes.values()
    assert len({r.group_id for r in rows}) == 30
    assert [(r.pair_id, r.outcome) for r in rows] == [(r.pair_id, r.outcome) for r in reference]
    gaps = [abs(a.ll_high - b.ll_high) for a, b in zip(rows, reference, strict=True)]
    gaps += [abs(a.ll_low - b.ll_low) for a, b in zip(rows, reference, strict=True)]
    assert sum(gaps) / len(gaps) < 1e-3, max(gaps)


def test_misaligned_engine_is_refused(serve):
    from nnd_suites.evaluation.backend import load_backend

    url, model = serve(bos=False)
    with pytest.raises(ScoringError, match=r"consistency probe.*misaligned"):
        load_backend("tiny", "served", base_url=url, tokenizer=str(model))
