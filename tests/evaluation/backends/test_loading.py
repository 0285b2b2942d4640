"""Loading models: the `hf` backend picks the architecture, bad references fail at once."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

import nnd_suites
from nnd_suites.cli import main
from nnd_suites.errors import ModelLoadError
from nnd_suites.evaluation import load_backend
from nnd_suites.evaluation.backends import hf_loading


def test_the_interface_imports_no_backend_implementation():
    code = (
        "import sys\n"
        "import nnd_suites.evaluation.backend as b\n"
        "assert not [m for m in sys.modules if m.startswith('nnd_suites.evaluation.backends.')]\n"
        "assert 'torch' not in sys.modules\n"
        "assert {'hf', 'hf_causal', 'hf_seq2seq'} <= set(b.BACKENDS.names())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_hf_picks_causal_or_seq2seq_from_the_config(tiny_causal_model, tiny_seq2seq_model):
    assert load_backend(str(tiny_causal_model)).name == "hf_causal"
    assert load_backend(str(tiny_causal_model), "hf").name == "hf_causal"
    assert load_backend(str(tiny_seq2seq_model), "hf").name == "hf_seq2seq"
    with pytest.raises(nnd_suites.NNDError, match="is an encoder-decoder model"):
        load_backend(str(tiny_seq2seq_model), "hf_causal")


def test_remote_code_runs_only_when_asked(tiny_causal_model, monkeypatch):
    seen = []
    import transformers

    original = transformers.AutoConfig.from_pretrained

    def spy(*args, **kwargs):
        seen.append(kwargs.get("trust_remote_code"))
        return original(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", spy)
    load_backend(str(tiny_causal_model))
    load_backend(str(tiny_causal_model), trust_remote_code=True)
    assert seen == [False, True]


def test_a_missing_local_folder_is_named_at_once(tmp_path, monkeypatch, capsys):
    (tmp_path / "models" / "tiny").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(hf_loading, "hub_reachable", lambda: pytest.fail("asked the Hub"))
    status = main(["evaluate", "--suite", "challenge300", "--model", "models/tinyy", "--quiet"])
    assert status == ModelLoadError.exit_status
    err = capsys.readouterr().err
    assert "model 'models/tinyy': no such folder (models holds: tiny)" in err
    with pytest.raises(ModelLoadError, match="no such folder"):
        load_backend("./nowhere")
    with pytest.raises(ModelLoadError, match="'runs/models/tiny': no such folder"):
        load_backend("runs/models/tiny")  # two slashes: no Hub id looks like that


def test_a_damaged_local_folder_is_named_with_what_to_do(tiny_causal_model, tmp_path, capsys):
    """A folder that exists but does not load (a truncated weights file): the advice is to
    write or download it again, not to pass a Hub id."""
    damaged = shutil.copytree(tiny_causal_model, tmp_path / "damaged")
    weights = damaged / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    argv = ["evaluate", "--suite", "challenge300", "--model", str(damaged), "--limit", "2"]
    assert main([*argv, "--quiet"]) == ModelLoadError.exit_status
    message = " ".join(capsys.readouterr().err.split())
    assert "the folder holds no loadable model" in message
    assert "truncated weights file" in message and "save_pretrained()" in message
    assert "Pass a Hub model id" not in message


def test_a_model_folder_whose_name_is_not_utf8_is_named_as_such(tiny_causal_model, tmp_path):
    """A whole model copied to a folder named with a byte that is not UTF-8 (`m$'\\xff'`):
    transformers failed to encode the path, which was reported as a damaged folder ("holds no
    loadable model ... a copy cut short"), sending the user to copy it again."""
    folder = shutil.copytree(tiny_causal_model, tmp_path / "m\udcff")
    with pytest.raises(ModelLoadError, match=r"'.*m\\udcff': the name is not valid UTF-8"):
        load_backend(str(folder))


def test_an_unreachable_hub_is_said_once_with_the_offline_route(monkeypatch):
    monkeypatch.setattr(hf_loading, "hub_offline", lambda: False)
    monkeypatch.setattr(hf_loading, "hub_reachable", lambda: False)
    with pytest.raises(ModelLoadError, match="cannot be reached .* HF_HUB_OFFLINE=1"):
        load_backend("some-org/some-model")


@pytest.mark.parametrize(
    "argv",
    [
        ["export-lm-eval", "challenge300", "--scorer", "sum", "--tokenizer", "gpt2", "--to"],
        ["chat-prompts", "hh_rlhf", "--tokenizer", "gpt2", "--out"],
    ],
)
def test_a_tokenizer_from_an_unreachable_hub_is_refused_at_once(
    argv, tmp_path, monkeypatch, capsys
):
    """A command that loads a tokenizer alone (no model): the Hub id is refused before
    transformers retries for a minute, with the offline route, not "pass a Hub model id"."""
    import transformers

    monkeypatch.setattr(hf_loading, "hub_offline", lambda: False)
    monkeypatch.setattr(hf_loading, "hub_reachable", lambda: False)
    monkeypatch.setattr(
        transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: pytest.fail("asked the Hub")
    )
    assert main([*argv, str(tmp_path / "out")]) == ModelLoadError.exit_status
    err = " ".join(capsys.readouterr().err.split())
    assert "model 'gpt2': the Hugging Face Hub" in err and "HF_HUB_OFFLINE=1" in err
    assert not (tmp_path / "out").exists()


def test_a_folder_without_tokenizer_files_is_refused(tiny_causal_model, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("config.json", "model.safetensors", "generation_config.json"):
        if (tiny_causal_model / name).exists():
            shutil.copy(tiny_causal_model / name, bare / name)
    with pytest.raises(ModelLoadError) as error:
        nnd_suites.evaluate(str(bare), "challenge300", progress=False, cache=False, limit=5)
    assert "tokenizer" in str(error.value)
