"""One parameter contract: a plugin given an unknown or bad parameter is a usage error (exit 2)
in one format, whatever the plugin kind."""

from __future__ import annotations

import pytest

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli import main
from nnd_suites.errors import ParameterError
from nnd_suites.transformations import make_transformation


def test_an_adapter_option_it_does_not_take_is_named(capsys, tmp_path):
    argv = ["build", "wmt_mqm", "--option", "langauge_pair=zh-en", "--out", str(tmp_path / "s")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "adapter wmt_mqm: unknown parameter 'langauge_pair' (known: " in err
    assert "language_pair" in err
    assert not (tmp_path / "s").exists()
    with pytest.raises(
        ParameterError, match=r"adapter quiz_design: unknown parameter 'x' \(known: "
    ):
        ADAPTERS.get("quiz_design")(x=1)


def test_a_required_adapter_option_left_out_says_what_it_is(capsys, tmp_path):
    """`build mt_metrics_eval --source WMT23_FOLDER` without its language pair said "parameter
    'language_pair': Field required (got {})": neither what the option is nor a value for it."""
    argv = ["build", "mt_metrics_eval", "--source", str(tmp_path), "--out", str(tmp_path / "s")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "adapter mt_metrics_eval: parameter 'language_pair' is required: the pair to read, " in (
        err
    )
    assert "e.g. en-de" in err and "got {}" not in err


def test_transformations_use_the_same_format():
    with pytest.raises(ParameterError, match=r"^transformation typos: unknown parameter 'rat' "):
        make_transformation("typos:rat=0.1")
    with pytest.raises(ParameterError, match=r"transformation typos: parameter 'rate': .* \(got "):
        make_transformation("typos:rate=7")


@pytest.mark.parametrize(
    ("backend", "options", "message"),
    [
        ("hf", {"n_ctx": 8}, r"backend hf: unknown parameter 'n_ctx' \(known: device, "),
        ("hf_causal", {"device_map": "balanced"}, r"backend hf_causal: parameter 'device_map'"),
        ("served", {"base_urll": "http://x"}, r"backend served: unknown parameter 'base_urll'"),
        ("served", {"dtype": "bf16"}, r"the server decides these, not nnd-suites: dtype 'bf16'"),
        ("llama_cpp", {"threads": 0}, r"backend llama_cpp: parameter 'threads': .*greater"),
    ],
)
def test_a_backend_given_an_option_it_does_not_take_is_a_usage_error(backend, options, message):
    """Checked against the backend's Params before anything loads (no model, no server)."""
    from nnd_suites.evaluation.backend import load_backend

    with pytest.raises(ParameterError, match=message) as raised:
        load_backend("no/such-model", backend, **options)
    assert raised.value.exit_status == 2


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_number_that_is_not_finite_is_refused_as_such(value):
    """`typos:rate=nan` was refused as "less than or equal to 1", which said nothing of nan."""
    finite = "Input should be a finite number"
    with pytest.raises(ParameterError, match=f"typos: parameter 'rate': {finite}"):
        make_transformation(f"typos:rate={value}")
