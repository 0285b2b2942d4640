"""Model loading: the embedded model's name works wherever a model is taken
(F-C), a revision with a local folder is refused, and ``--strategy``'s help names exactly
the strategies the backends accept."""

from __future__ import annotations

import re

import pytest

from nnd_suites.cli import build_parser, main
from nnd_suites.errors import ModelLoadError, NNDError
from nnd_suites.evaluation import BACKENDS, ScoreRequest, load_backend, tiny
from nnd_suites.evaluation.backends import hf_loading

REQUESTS = [
    ScoreRequest("Question: where is the station?", " Near the park."),
    ScoreRequest("Question: where is the station?", " Blue is a colour."),
]


@pytest.fixture
def embedded_is_tiny(monkeypatch, tiny_causal_model):
    """The embedded model stands for the session's tiny model (nothing built), on a machine that
    cannot reach the Hub (the probe's machine: a Hub id would be refused at once)."""
    monkeypatch.setattr(tiny, "embedded_model", lambda: tiny_causal_model)
    monkeypatch.setattr(hf_loading, "hub_offline", lambda: False)
    monkeypatch.setattr(hf_loading, "hub_reachable", lambda: False)
    return tiny_causal_model


# ------------------------------------------------------------------------------------- F-C
def test_the_embedded_model_passes_the_reference_check_a_hub_id_fails(embedded_is_tiny):
    hf_loading.check_model_references([tiny.EMBEDDED, str(embedded_is_tiny)], None)
    with pytest.raises(ModelLoadError, match="cannot be reached"):
        hf_loading.check_model_references([tiny.EMBEDDED, "org/not-cached"], None)


def test_verify_scores_the_embedded_model_for_a_system(embedded_is_tiny, tmp_path, capsys):
    """The probe's command: one system by folder, one by the embedded model's name."""
    from nnd_suites.evaluation.verify.models import VerifyReport

    out = tmp_path / "ver"
    systems = ["--system", f"mixqg={embedded_is_tiny}", "--system", f"dgpt2_sup={tiny.EMBEDDED}"]
    fast = ["--limit", "4", "--quiet", "--no-cache", "--device", "cpu", "--resamples", "50"]
    assert main(["verify", "quiz_design", *systems, *fast, "--out", str(out)]) == 0, (
        capsys.readouterr().err
    )
    report = VerifyReport.model_validate_json((out / "verify.json").read_text("utf-8"))
    assert report.systems == {"mixqg": str(embedded_is_tiny), "dgpt2_sup": tiny.EMBEDDED}
    # both systems are the same model here: the same pass rate, both scored
    rates = report.overall.pass_rates
    assert set(rates) == {"mixqg", "dgpt2_sup"} and rates["mixqg"] == rates["dgpt2_sup"]


def test_every_report_of_the_embedded_model_says_its_figures_mean_nothing(
    embedded_is_tiny, tmp_path, capsys
):
    """report.md said so, but verify.md (printed by `verify` too), robustness.md and
    leaderboard.md showed a random-weights model's figures as any model's."""
    import nnd_suites
    from nnd_suites.evaluation.multi import leaderboard_markdown
    from nnd_suites.evaluation.robustness import to_markdown

    fast = {"limit": 2, "cache": False, "progress": False}
    board = nnd_suites.evaluate_models([tiny.EMBEDDED], ["challenge300"], **fast)
    robust = nnd_suites.robustness(tiny.EMBEDDED, ["challenge300"], ["lowercase"], **fast)
    systems = ["--system", f"mixqg={embedded_is_tiny}", "--system", f"dgpt2_sup={tiny.EMBEDDED}"]
    args = ["--limit", "2", "--quiet", "--no-cache", "--resamples", "50", "--out", str(tmp_path)]
    assert main(["verify", "quiz_design", *systems, *args]) == 0
    printed = capsys.readouterr().out
    for text in (leaderboard_markdown(board), to_markdown(robust), printed):
        assert f"\n\n> **{tiny.EMBEDDED_NOTE}**\n" in text
    # a model with weights of its own gets no such line
    real = robust.model_copy(update={"model": "gpt2", "random_weights": False})
    assert tiny.EMBEDDED_NOTE not in to_markdown(real)


def test_load_backend_and_load_tokenizer_take_the_embedded_model(embedded_is_tiny):
    """The loaders themselves resolve the name: a reference model, chat-prompts'
    --tokenizer, export-lm-eval's tokenizer get it as evaluate's --model does."""
    backend = load_backend(tiny.EMBEDDED)
    assert backend.identity["model"] == str(embedded_is_tiny)
    folder_scores = load_backend(str(embedded_is_tiny)).score(REQUESTS)
    assert backend.score(REQUESTS) == folder_scores
    tokenizer = hf_loading.load_tokenizer(tiny.EMBEDDED)
    assert tokenizer.name_or_path == str(embedded_is_tiny)


def test_a_server_keeps_the_name_it_was_given(monkeypatch):
    """A served model's name is the server's: it is never replaced by a local folder."""
    monkeypatch.setattr(tiny, "embedded_model", pytest.fail)
    with pytest.raises(NNDError):  # nothing listens there; the name reached the served backend
        load_backend(tiny.EMBEDDED, base_url="http://127.0.0.1:9/v1", retries=0)


# ------------------------------------------------------------------------------------- F-D
def test_a_revision_with_a_local_folder_is_a_usage_error(tiny_causal_model, reward_model):
    folder = str(tiny_causal_model)
    for call in (
        lambda: load_backend(folder, revision="main"),
        lambda: load_backend(folder, "hf_causal", revision="v1"),
        lambda: load_backend(str(reward_model), "hf_reward", revision="main"),
        lambda: hf_loading.load_tokenizer(folder, revision="main"),
        lambda: hf_loading.check_model_references([folder], None, None, "main"),
    ):
        with pytest.raises(NNDError, match="is a local folder") as caught:
            call()
        assert type(caught.value) is NNDError and caught.value.exit_status == 2
        assert "--revision" in str(caught.value)
    assert load_backend(folder, revision=None).identity["revision"].startswith("sha256:")


def test_a_revision_with_the_embedded_model_is_refused_before_it_is_made(monkeypatch):
    monkeypatch.setattr(tiny, "embedded_model", pytest.fail)
    with pytest.raises(NNDError, match="local folder"):
        hf_loading.check_model_reference(tiny.EMBEDDED, "main")


def test_evaluate_with_a_revision_and_a_folder_stops_before_scoring(tiny_causal_model, capsys):
    """The probe's command: exit 2 with the reason, no summary line."""
    args = ["--suite", "quiz_design", "--model", str(tiny_causal_model), "--limit", "1"]
    assert main(["evaluate", *args, "--quiet", "--revision", "main"]) == 2
    captured = capsys.readouterr()
    assert "is a local folder" in captured.err and "revision 'main'" in captured.err
    assert "%" not in captured.out


def test_verify_refuses_a_revision_with_a_folder_before_scoring_any_system(
    tiny_causal_model, monkeypatch
):
    """Every system is checked before the first is scored (a Hub id first, a folder second)."""
    from nnd_suites.evaluation import shared_runs
    from nnd_suites.evaluation.verify import run

    monkeypatch.setattr(hf_loading, "cached_on_this_machine", lambda model: True)
    monkeypatch.setattr(shared_runs, "evaluate", pytest.fail)  # the systems' runs
    systems = {"mixqg": "org/cached-model", "dgpt2_sup": str(tiny_causal_model)}
    with pytest.raises(NNDError, match="is a local folder"):
        run.verify_suite("quiz_design", systems, limit=2, revision="main", progress=False)


# ------------------------------------------------------------------------------------- F-G
def strategies_in_help() -> dict[str, list[str]]:
    """backend -> the strategies ``evaluate --help`` names for it."""
    parser = build_parser()
    evaluate = parser.commands["evaluate"]
    text = next(a.help for a in evaluate.options if "--strategy" in a.option_strings)
    assert text.startswith("batching strategy: auto ")
    named = re.findall(r"(hf_\w+): ((?:\w+, )*\w+ or \w+)", text)
    return {backend: re.split(r", | or ", names) for backend, names in named}


def test_every_strategy_the_help_names_is_accepted_and_scores(
    tiny_causal_model, tiny_seq2seq_model
):
    named = strategies_in_help()
    assert set(named) == {"hf_causal", "hf_seq2seq"}
    folders = {"hf_causal": tiny_causal_model, "hf_seq2seq": tiny_seq2seq_model}
    for backend, strategies in named.items():
        # the help names what the backend accepts, no more and no fewer
        assert sorted(strategies) == sorted(BACKENDS.get(backend).strategies), backend
        reference = load_backend(str(folders[backend]), backend, strategy="naive").score(REQUESTS)
        for strategy in strategies:
            loaded = load_backend(str(folders[backend]), backend, strategy=strategy)
            assert loaded.strategy == strategy
            scores = loaded.score(REQUESTS)
            for got, want in zip(scores, reference, strict=True):
                assert got.n_targets == want.n_targets
                assert got.logprob_sum == pytest.approx(want.logprob_sum, abs=1e-4)


def test_a_strategy_the_help_does_not_name_for_a_backend_is_refused(tiny_causal_model):
    assert "shared" not in strategies_in_help()["hf_causal"]
    with pytest.raises(NNDError, match="unknown strategy 'shared' for hf_causal"):
        load_backend(str(tiny_causal_model), "hf_causal", strategy="shared")


def test_the_reward_backend_refuses_a_strategy_rather_than_ignore_it(reward_model):
    """The help names strategies for hf_causal and hf_seq2seq only."""
    assert "hf_reward" not in strategies_in_help()
    with pytest.raises(NNDError, match="has no batching strategies"):
        load_backend(str(reward_model), "hf_reward", strategy="packed")
    assert load_backend(str(reward_model), "hf_reward").name == "hf_reward"


def test_the_served_backends_tokenizer_takes_the_embedded_model(embedded_is_tiny, monkeypatch):
    """``--tokenizer nnd-suites:tiny-random`` with a served model reads the embedded model's
    tokenizer (its special texts), as every other loader does."""
    from nnd_suites.evaluation.backends.served import backend as served

    asked = []
    real = served._special_texts
    monkeypatch.setattr(served, "_special_texts", lambda t, e: asked.append(t) or real(t, e))
    with pytest.raises(NNDError):  # nothing listens there; the tokenizer was read first
        load_backend("m", base_url="http://127.0.0.1:9/v1", retries=0, tokenizer=tiny.EMBEDDED)
    assert asked == [str(embedded_is_tiny)]


def test_the_reward_backend_takes_its_batch_size(reward_model, quiz_design_suite):
    """--batch-size was silently ignored by hf_reward (always 16); scores do not depend on it."""
    requests = [ScoreRequest(p.context["answer"], p.high.text) for p in quiz_design_suite.pairs]
    requests = requests[:7]
    one = load_backend(str(reward_model), "hf_reward", batch_size=1)
    assert one.batch == 1 and load_backend(str(reward_model), "hf_reward").batch == 16
    scores = [s.logprob_sum for s in one.score(requests)]
    three = load_backend(str(reward_model), "hf_reward", batch_size=3).score(requests)
    assert [s.logprob_sum for s in three] == pytest.approx(scores, abs=1e-4)
    for bad in (0, -2, "many"):
        with pytest.raises(NNDError, match="batch_size"):
            load_backend(str(reward_model), "hf_reward", batch_size=bad)


def test_several_models_and_data_parallel_refuse_a_revision_of_a_folder_before_scoring(
    tiny_causal_model, monkeypatch
):
    """evaluate_models checked every reference but without the revision (so a Hub id then a
    folder with --revision scored the first before refusing the second); the data-parallel
    pre-check left the refusal to each rank."""
    from nnd_suites.evaluation import evaluator, multi, shared_runs

    monkeypatch.setattr(evaluator, "run_in_ranks", pytest.fail)
    monkeypatch.setattr(shared_runs, "evaluate", pytest.fail)  # nothing is scored
    with pytest.raises(NNDError, match="revision"):
        multi.evaluate_models(["gpt2", str(tiny_causal_model)], "challenge300", revision="main")
    with pytest.raises(NNDError, match="revision"):
        evaluator.evaluate(str(tiny_causal_model), "challenge300", revision="main", data_parallel=2)


def test_a_misspelt_built_in_model_is_unknown_with_the_closest_name(capsys):
    # it was sent to the Hub as a repository id: "cannot be reached", exit 9
    argv = ["evaluate", "--suite", "quiz_design", "--model", "nnd-suites:tiny-randm"]
    assert main(argv) == 6
    assert "did you mean 'nnd-suites:tiny-random'?" in capsys.readouterr().err
    with pytest.raises(NNDError, match="unknown built-in model 'nnd-suites:tiny'"):
        load_backend("nnd-suites:tiny")


def test_a_built_in_model_named_with_the_suites_prefix_says_how_models_are_named(capsys):
    # builtin:NAME names a built-in suite; as a model it went to the Hub: "cannot be reached"
    argv = ["evaluate", "--suite", "quiz_design", "--model", "builtin:tiny-random"]
    assert main(argv) == 6
    error = capsys.readouterr().err
    assert "did you mean 'nnd-suites:tiny-random'?" in error
    assert "built-in models are named nnd-suites:NAME" in error
    with pytest.raises(NNDError, match="unknown built-in model 'builtin:tiny-random'"):
        load_backend("builtin:tiny-random")
