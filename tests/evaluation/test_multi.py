"""Several models in one run: a report per model, the leaderboard, the scaling plot; and what
every report now carries (slices, bias baselines, parameter count), schema-checked."""

from __future__ import annotations

import json
import shutil
from importlib import resources

import jsonschema
import pytest

import nnd_suites
from nnd_suites.cli import main
from nnd_suites.evaluation.baselines import baseline_rates
from nnd_suites.evaluation.leaderboard import is_family, model_labels
from nnd_suites.evaluation.multi import evaluate_models
from nnd_suites.evaluation.prepared import first_groups
from nnd_suites.evaluation.report_schemas import report_schemas
from nnd_suites.statistics.outcomes import outcome_map

PNG = b"\x89PNG\r\n\x1a\n"


def _shipped(name: str) -> dict:
    return json.loads(resources.files("nnd_suites.schemas").joinpath(name).read_text())


@pytest.fixture(scope="module")
def wider_causal_model(tmp_path_factory, quiz_design_suite, challenge300_suite):
    """A second member of the tiny family: the same architecture, 3 layers, width 96."""
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    texts = suite_texts([quiz_design_suite, challenge300_suite])
    return tiny_causal_lm(
        tmp_path_factory.mktemp("tiny_wide") / "tiny_wide", texts, vocab_size=1024, n_layer=3,
        n_embd=96, n_head=4, n_positions=512, seed=1,
    )  # fmt: skip


def _parameters(folder) -> int:
    from transformers import AutoModelForCausalLM

    return sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(folder).parameters())


def test_two_models_one_run(tiny_causal_model, wider_causal_model, tmp_path, capsys):
    out = tmp_path / "run"

    def argv(*models):
        return [
            "evaluate", "--suite", "challenge300", "--suite", "quiz_design",
            *(item for model in models for item in ("--model", str(model))),
            "--limit", "6", "--batch-size", "16", "--quiet", "--out", str(out),
        ]  # fmt: skip

    assert main([*argv(tiny_causal_model, wider_causal_model), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    labels = [tiny_causal_model.name, "tiny_wide"]
    board = json.loads((out / "leaderboard.json").read_text())
    assert summary["leaderboard"] == board and list(summary["reports"]) == labels
    jsonschema.validate(board, _shipped("leaderboard.schema.json"))
    assert [m["label"] for m in board["models"]] == labels
    sizes = [m["parameters"] for m in board["models"]]
    assert sizes == [_parameters(tiny_causal_model), _parameters(wider_causal_model)]
    assert board["family"] is True and {m["architecture"] for m in board["models"]} == {"gpt2"}
    for name in labels:  # each model's report folder, as a single-model run writes it
        saved = json.loads((out / name / "report.json").read_text())
        jsonschema.validate(saved, _shipped("evaluation_report.schema.json"))
        for suite in ("challenge300", "quiz_design"):
            result = saved["suites"][suite]
            assert board["suites"][suite]["overall"][name] == result["overall"]
            assert (out / name / "outcomes" / f"{suite}.parquet").is_file()
        assert saved["limit"] == 6
    rows = board["suites"]["challenge300"]
    assert next(iter(rows)) == "overall" and set(rows) - {"overall"} <= {
        "Common Sense", "Science", "Entity", "Creativity", "Comparison",
    }  # fmt: skip
    assert set(board["baselines"]["quiz_design"]) == {"shorter", "longer", "overlap"}
    for chart in ("leaderboard.png", "scaling.png"):
        assert (out / chart).read_bytes()[:8] == PNG
    markdown = (out / "leaderboard.md").read_text()
    assert "## quiz_design" in markdown and "| *baseline: shorter* |" in markdown
    assert f"| tiny_wide | {sizes[1]:,} |" in markdown
    # the folder is ours: a second run replaces it as a whole
    copy = shutil.copytree(tiny_causal_model, tmp_path / "copy" / tiny_causal_model.name)
    assert main(argv(tiny_causal_model, copy)) == 0
    assert "a report folder per model" in capsys.readouterr().out
    # two folders of one name: told apart by their parent folders, not numbered
    parent = tiny_causal_model.parent.name
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(
        [f"{parent}__{labels[0]}", f"copy__{labels[0]}"]
    )
    assert not (out / "scaling.png").exists()  # two models of one size: not a family


def test_report_carries_slices_baselines_and_size(tiny_causal_model, challenge300_suite, tmp_path):
    report = nnd_suites.evaluate(
        str(tiny_causal_model), challenge300_suite, limit=40, out=tmp_path, progress=False
    )
    result = report.suites["challenge300"]
    scored = first_groups(challenge300_suite, 40)
    assert result.pairs == len(scored.pairs)
    # on the tests the model rated: here every one of them
    assert result.baselines == baseline_rates(scored, outcome_map(report.outcomes["challenge300"]))
    assert result.baselines["shorter"].overall.n == result.overall.n
    assert set(result.by_slice) >= {"length_chars", "length_tokens", "context_length"}
    outcomes = report.outcomes["challenge300"]
    same = [o for o in outcomes if o.n_high == o.n_low]
    assert result.by_slice["length_tokens"].get("same length", None) is None or (
        result.by_slice["length_tokens"]["same length"].n == len(same)
    )
    for subsets in (result.by_slice["length_chars"], result.by_slice["length_tokens"]):
        assert sum(r.n for r in subsets.values()) == result.pairs
        assert sum(r.passed for r in subsets.values()) == result.passed
    assert report.parameters == _parameters(tiny_causal_model)
    saved = json.loads((tmp_path / "report.json").read_text())
    jsonschema.validate(saved, _shipped("evaluation_report.schema.json"))
    markdown = (tmp_path / "report.md").read_text()
    assert "| slice length_chars | n |" in markdown and "| **this model** |" in markdown
    assert "| overlap |" in markdown and f"{report.parameters:,} parameters" in markdown
    # every score now comes from the cache: the size is read from the config on the meta device
    again = nnd_suites.evaluate(str(tiny_causal_model), challenge300_suite, limit=40)
    assert again.requests.scored == 0 and again.parameters == report.parameters


def test_labels_and_family_rules(tiny_causal_model):
    from nnd_suites.evaluation.leaderboard import LeaderboardModel

    assert model_labels(["org/model", str(tiny_causal_model), "org/model", "a b"]) == [
        "org__model", tiny_causal_model.name, "org__model_2", "a_b",
    ]  # fmt: skip

    def entry(size, kind="gpt2"):
        return LeaderboardModel(label="x", model="x", mode="default", parameters=size,
                                architecture=kind)  # fmt: skip

    assert is_family([entry(10), entry(20)])
    assert is_family([entry(10), entry(15)])  # the smallest ratio that makes a scaling curve
    assert not is_family([entry(200_000), entry(230_000)])  # two checkpoints of about one size
    assert not is_family([entry(10), entry(10)])
    assert not is_family([entry(10), entry(20, "bart")])
    assert not is_family([entry(10), entry(None)])


def test_multi_model_errors_before_scoring(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    with pytest.raises(nnd_suites.NNDError, match="not a leaderboard written by nnd-suites"):
        evaluate_models(["a", "b"], "challenge300", out=tmp_path / "taken")
    with pytest.raises(nnd_suites.NNDError, match="model a given more than once"):
        evaluate_models(["a", "b", "a"], "challenge300")
    # one local folder written two ways is one model, not a model and its `_2` twin
    (tmp_path / "m").mkdir()
    spellings = [str(tmp_path / "m"), f"{tmp_path}/./m/"]
    with pytest.raises(nnd_suites.NNDError, match=r"given more than once \(as '.*m' and '.*m/'\)"):
        evaluate_models(spellings, "challenge300")
    # the last model's folder is missing: said before the first model is scored (a real folder
    # that is not a model would only fail when loaded, so the first one here is one too)
    first = tmp_path / "taken"
    with pytest.raises(nnd_suites.errors.ModelLoadError, match="no such folder"):
        evaluate_models([str(first), str(tmp_path / "models" / "tinyy")], "challenge300")


def test_the_embedded_model_and_its_folder_are_one_model(tmp_path, monkeypatch):
    """The CLI resolves nnd-suites:tiny-random to its folder before refusing a repeat; from
    Python the name and the folder were two models, scored twice and ranked against each other
    (``nnd-suites_tiny-random`` and ``tiny-random-PIPELINE-CHECK-...``)."""
    from nnd_suites.evaluation import tiny

    monkeypatch.setenv("NND_SUITES_CACHE", str(tmp_path))
    folder = tmp_path / "models" / tiny.EMBEDDED_FOLDER
    folder.mkdir(parents=True)  # nothing in it: the refusal comes before any model loads
    with pytest.raises(nnd_suites.NNDError, match="given more than once"):
        evaluate_models([tiny.EMBEDDED, str(folder)], "challenge300")


def test_shipped_report_schemas_are_up_to_date():
    for name, schema in report_schemas().items():
        assert _shipped(name) == schema, f"run `nnd-suites schema --reports` to refresh {name}"
