"""The Python API refuses what the CLI refuses while parsing, with an ArgumentError naming the
argument, before any suite is loaded or any model scored (no TypeError deep inside, no other
meaning taken silently)."""

from __future__ import annotations

import pytest

import nnd_suites
from nnd_suites.errors import ArgumentError
from nnd_suites.evaluation.prepared import prepare_suites

#: a model name that would fail to load: every refusal below comes before loading it
NO_MODEL = "no-such-org/no-such-model"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"template": 123}, "evaluate(template=123): give a template name or string"),
        (
            {"normalize": "lowercase"},
            "evaluate(normalize='lowercase'): give a list of normalisation specs, e.g. "
            "normalize=['lowercase'] (a string would be read letter by letter)",
        ),
        ({"normalize": ["lowercase", 3]}, "3 is not a spec string"),
        ({"limit": 1.0}, "evaluate(limit=1.0): give a whole number of context groups >= 1"),
        ({"limit": 0}, "evaluate(limit=0): give a whole number"),
        ({"limit": True}, "evaluate(limit=True): give a whole number"),
        ({"limit": 2.5}, "evaluate(limit=2.5)"),
        ({"batch_size": True}, "evaluate(batch_size=True): give 'auto' or a whole number >= 1"),
        ({"batch_size": "8"}, "evaluate(batch_size='8'): give 'auto' or a whole number"),
        ({"batch_size": 0}, "evaluate(batch_size=0)"),
        ({"cache": "no"}, "evaluate(cache='no'): give True or False"),
        ({"device": None}, "evaluate(device=None): give a string"),
        ({"out": 5}, "evaluate(out=5): give a folder path, or None"),
        ({"scorers": []}, "evaluate(scorers=[]): no scorer given; name at least one"),
        ({"backend_options": ["x"]}, "give a dict of options, or None"),
    ],
)
def test_a_wrong_argument_is_named(arguments, message):
    with pytest.raises(ArgumentError) as caught:
        nnd_suites.evaluate(NO_MODEL, "quiz_design", progress=False, **arguments)
    name = next(iter(arguments))
    assert str(caught.value).startswith(f"evaluate({name}=") and message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (("m", "t", "extra"), "give a (model, tokenizer) pair, not 3 items"),
        (123, "give a Hub id or a folder, a loaded Backend, or a (model, tokenizer) pair"),
    ],
)
def test_a_wrong_model_is_named(model, message):
    with pytest.raises(ArgumentError, match="evaluate\\(model=") as caught:
        nnd_suites.evaluate(model, "quiz_design", progress=False)
    assert message in str(caught.value)


def test_prepare_suites_checks_the_same_arguments():
    with pytest.raises(ArgumentError, match=r"prepare_suites\(limit=1\.0\)"):
        prepare_suites("quiz_design", limit=1.0)
    with pytest.raises(ArgumentError, match=r"prepare_suites\(normalize='lowercase'\)"):
        prepare_suites("quiz_design", normalize="lowercase")


def test_the_meanings_the_cli_takes_still_pass():
    """A fraction, a whole number and a list of specs: what --limit and --normalize give."""
    assert len(prepare_suites("quiz_design", limit=0.01).plans[0].suite.pairs) > 0
    one_group = prepare_suites("quiz_design", limit=1, normalize=["lowercase"]).plans[0].suite
    assert len({pair.group_id for pair in one_group.pairs}) == 1
    assert all(pair.high.text == pair.high.text.lower() for pair in one_group.pairs)


def test_evaluate_models_checks_its_list_and_preparation():
    from nnd_suites.evaluation.multi import evaluate_models

    with pytest.raises(ArgumentError, match=r"evaluate_models\(models='gpt2'\): give a list"):
        evaluate_models("gpt2", "quiz_design")
    with pytest.raises(ArgumentError, match=r"evaluate_models\(limit=1\.0\)"):
        evaluate_models([NO_MODEL], "quiz_design", limit=1.0)


#: each misuse, as robustness and verify_suite hand it to evaluate's checks
MISUSES = [
    ({"template": 123}, "template=123): give a template name or string"),
    ({"normalize": "lowercase"}, "normalize='lowercase'): give a list of normalisation specs"),
    ({"limit": 1.0}, "limit=1.0): give a whole number of context groups >= 1"),
    ({"batch_size": True}, "batch_size=True): give 'auto' or a whole number >= 1"),
]


@pytest.mark.parametrize(("arguments", "message"), MISUSES)
def test_robustness_checks_what_it_hands_to_evaluate(arguments, message):
    from nnd_suites.evaluation.robustness import robustness

    with pytest.raises(ArgumentError) as caught:
        robustness(NO_MODEL, ["quiz_design"], ["lowercase"], progress=False, **arguments)
    assert str(caught.value).startswith(f"robustness({message}")
    assert "\n" not in str(caught.value)


def test_robustness_checks_its_model():
    from nnd_suites.evaluation.robustness import robustness

    with pytest.raises(ArgumentError) as caught:
        robustness(("m", "t", "extra"), ["quiz_design"], ["lowercase"])
    assert str(caught.value) == (
        "robustness(model=('m', 't', 'extra')): give a (model, tokenizer) pair, not 3 items"
    )


@pytest.mark.parametrize(("arguments", "message"), MISUSES)
def test_verify_suite_checks_what_it_hands_to_evaluate(arguments, message):
    from nnd_suites.evaluation.verify import verify_suite

    systems = {"mixqg": NO_MODEL, "gpt2b_sup": NO_MODEL}
    with pytest.raises(ArgumentError) as caught:
        verify_suite("quiz_design", systems, progress=False, **arguments)
    assert str(caught.value).startswith(f"verify_suite({message}")
    assert "\n" not in str(caught.value)


def test_verify_suite_checks_its_systems():
    from nnd_suites.evaluation.verify import verify_suite

    with pytest.raises(ArgumentError, match=r"verify_suite\(systems=\['mixqg'\]\): give a dict"):
        verify_suite("quiz_design", ["mixqg"])  # type: ignore[arg-type]
    three = ("m", "t", "extra")
    with pytest.raises(ArgumentError, match="system 'mixqg': give its name as a string and its"):
        verify_suite("quiz_design", {"mixqg": three, "gpt2b_sup": NO_MODEL})  # type: ignore[dict-item]


def test_what_the_facade_is_handed_by_name_or_by_mistake_is_named(challenge300_suite):
    """Each was an AttributeError or TypeError from deep inside (baselines("challenge300"),
    transform_suite("quiz_design", ...), compare_reports(FOLDER, FOLDER)), or a string read
    letter by letter ("unknown transformation 'l'")."""
    import re

    from nnd_suites.errors import NNDError
    from nnd_suites.evaluation.baselines import baselines
    from nnd_suites.evaluation.robustness import robustness
    from nnd_suites.transformations import transform_suite

    def named(error, text):
        return pytest.raises(error, match=re.escape(text))

    with named(ArgumentError, "transform_suite(suite='quiz_design'): give a Suite object"):
        transform_suite("quiz_design", "lowercase")
    with named(NNDError, "transformation spec None: not a string; write NAME[:param"):
        transform_suite(challenge300_suite, None)
    with named(ArgumentError, "load_suite(None): not a suite spec; a suite is"):
        nnd_suites.load_suite(None)
    with named(ArgumentError, "load_suite(3): not a suite spec"):
        baselines(3)
    assert baselines("challenge300") == baselines(challenge300_suite)  # as the CLI names it
    with named(ArgumentError, "compare_reports(a='runs/a'): give the EvaluationReport"):
        nnd_suites.compare_reports("runs/a", "runs/b")
    with named(ArgumentError, "robustness(transforms='lowercase'): give a list of"):
        robustness("unused", ["challenge300"], "lowercase")


def test_a_score_cache_inside_the_output_folder_is_refused_before_the_run(tmp_path, monkeypatch):
    """evaluate --out R --cache-dir R/cache scored every request, writing its cache into R,
    then refused R for holding that cache ('nothing was written'): the run's report was lost
    and every rerun failed the same way."""
    from nnd_suites.cli import main
    from nnd_suites.evaluation.multi import evaluate_models
    from nnd_suites.evaluation.robustness import robustness
    from nnd_suites.evaluation.verify import verify_suite

    out = tmp_path / "run"
    cli = ["evaluate", "--suite", "quiz_design", "--model", "nnd-suites:tiny-random", "--quiet"]
    assert main([*cli, "--limit", "1", "--out", str(out), "--cache-dir", str(out / "c")]) == 2
    assert not out.exists()
    inside = f"the score cache {out / 'c'} is inside the output folder {out}"
    calls = {
        "evaluate": lambda: nnd_suites.evaluate(NO_MODEL, "quiz_design", out=out, cache_dir=out),
        "evaluate_models": lambda: evaluate_models(
            [NO_MODEL, "gpt2"], "quiz_design", out=out, cache_dir=out / "c"
        ),
        "robustness": lambda: robustness(
            NO_MODEL, ["quiz_design"], ["lowercase"], out=out, cache_dir=out / "c"
        ),
        "verify_suite": lambda: verify_suite(
            "quiz_design", {"mixqg": NO_MODEL, "gpt2b_sup": "gpt2"}, out=out, cache_dir=out / "c"
        ),
    }
    for function, call in calls.items():
        with pytest.raises(ArgumentError, match=f"^{function}: the score cache") as caught:
            call()
        assert "give a cache folder outside it" in str(caught.value)
    monkeypatch.setenv("NND_SUITES_CACHE", str(out / "c"))  # the default cache folder too
    with pytest.raises(ArgumentError, match=inside):
        nnd_suites.evaluate(NO_MODEL, "quiz_design", out=out)
    # --no-cache writes no cache: nothing to refuse (the model fails to load)
    with pytest.raises(nnd_suites.NNDError) as caught:
        nnd_suites.evaluate(NO_MODEL, "quiz_design", out=out, cache=False)
    assert "score cache" not in str(caught.value)
    assert not out.exists()


def test_a_score_cache_in_a_suite_dataset_or_model_folder_is_refused_before_the_run(
    tmp_path, quiz_design_suite
):
    """evaluate --cache-dir SUITE_FOLDER wrote scores.sqlite into the suite (exit 0), and
    `build --out` into that folder was then refused; a dataset folder took the cache too."""
    from nnd_suites.cli import main
    from nnd_suites.hub.export import export_suites

    suite = tmp_path / "suite"
    quiz_design_suite.save(suite)
    cli = ["evaluate", "--suite", str(suite), "--model", "nnd-suites:tiny-random", "--quiet"]
    files = sorted(suite.iterdir())
    assert main([*cli, "--limit", "1", "--cache-dir", str(suite)]) == 2
    assert sorted(suite.iterdir()) == files  # no scores.sqlite
    dataset = export_suites([quiz_design_suite], tmp_path / "dataset").folder
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"")
    refused = {
        suite / "c": f"is inside {suite}, a suite written by nnd-suites",
        dataset: f"is {dataset}, a dataset folder",
        dataset / "quiz_design": "a suite written by nnd-suites",
        model: f"is {model}, a model folder",
    }
    for cache, message in refused.items():
        with pytest.raises(ArgumentError, match="^evaluate: the score cache") as caught:
            nnd_suites.evaluate(NO_MODEL, "quiz_design", cache_dir=cache)
        assert message in str(caught.value) and "give a cache folder outside it" in str(
            caught.value
        )
    assert not (suite / "c").exists() and not (model / "scores.sqlite").exists()
    with pytest.raises(nnd_suites.NNDError) as caught:  # no cache: nothing to refuse
        nnd_suites.evaluate(NO_MODEL, "quiz_design", cache_dir=suite, cache=False)
    assert "score cache" not in str(caught.value)


def test_a_score_cache_beside_a_suite_folder_is_not_in_a_dataset_folder(
    tmp_path, quiz_design_suite, monkeypatch
):
    """After `build quiz_design --out ~/quiz_design`, every evaluate was refused: the default
    cache ~/.cache/nnd_suites was "inside ~, a dataset folder", whatever folder it ran in."""
    home = tmp_path / "home"
    quiz_design_suite.save(home / "quiz_design")
    monkeypatch.setenv("NND_SUITES_CACHE", str(home / ".cache" / "nnd_suites"))
    with pytest.raises(nnd_suites.NNDError) as caught:  # the model fails to load: no refusal
        nnd_suites.evaluate(NO_MODEL, "quiz_design", limit=1)
    assert "score cache" not in str(caught.value)
