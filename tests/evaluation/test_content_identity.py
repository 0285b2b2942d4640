"""Identity from content, everywhere (issue 33 §3): a suite is what it holds when it is scored,
a reference model is its weights, a served engine is what it answers now. Each case ends in the
right figure or a named one-line error."""

from __future__ import annotations

import copy
import json
import shutil

import pytest
from served_fake import evaluate_served

from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.comparison import (
    IncomparableRunsError,
    SameRunError,
    compare_reports,
    compare_runs,
)
from nnd_suites.evaluation.outputs import write_report

#: context groups scored per run: enough tests for a pass rate, few enough for a quick test
GROUPS = 5


def _swapped(suite):
    """A deep copy of ``suite`` with the two sides of every test swapped in memory: the same test
    ids, the manifest untouched, every verdict reversed."""
    edited = copy.deepcopy(suite)
    for pair in edited.pairs:
        pair.high, pair.low = pair.low, pair.high
    return edited


def test_a_suite_edited_in_memory_is_scored_and_compared_as_other_tests(
    tiny_causal_model, quiz_design_suite
):
    def run(suite):
        return evaluate(
            str(tiny_causal_model), suite, limit=GROUPS, cache=False, progress=False
        ).suites["quiz_design"]

    original, swapped = run(quiz_design_suite), run(_swapped(quiz_design_suite))
    # every test reversed: the swapped run passes exactly the tests the original fails
    assert original.overall.n == swapped.overall.n == 33
    assert original.overall.ties == swapped.overall.ties == 0
    assert swapped.passed == original.overall.n - original.passed > 0
    assert swapped.overall.pass_rate != original.overall.pass_rate
    assert original.content_hash == quiz_design_suite.manifest.content_hash
    assert swapped.content_hash != original.content_hash
    assert swapped.limited == original.limited  # the same part of the suite: only the content


def test_compare_refuses_a_suite_edited_in_memory_as_other_tests(
    tiny_causal_model, quiz_design_suite
):
    def run(suite):
        return evaluate(str(tiny_causal_model), suite, limit=GROUPS, cache=False, progress=False)

    original, swapped = run(quiz_design_suite), run(_swapped(quiz_design_suite))
    with pytest.raises(IncomparableRunsError, match="cover different tests: suite quiz_design: "):
        compare_reports(original, swapped)
    with pytest.raises(IncomparableRunsError, match="cover different tests"):
        compare_reports(original, swapped, allow_different_scoring=True)  # never on purpose
    assert compare_reports(original, run(quiz_design_suite)).suites["quiz_design"].overall


def test_two_runs_scored_within_one_second_are_two_runs(
    tiny_causal_model, quiz_design_suite, tmp_path
):
    """Two runs of one model on one suite scored within the second `created` is kept to (in as
    many milliseconds) were refused by compare as one run (SameRunError): their reports were
    equal. Each run draws its own id; a copy of a run's folder keeps it and is still refused."""
    first, second = (
        evaluate(str(tiny_causal_model), quiz_design_suite, limit=2, cache=False, progress=False)
        for _ in range(2)
    )
    second.created, second.seconds = first.created, first.seconds
    paired = compare_reports(first, second).suites["quiz_design"].overall
    assert paired.n == first.suites["quiz_design"].overall.n == 17
    assert paired.a_only == paired.b_only == 0  # one model: the same outcomes
    write_report(first, tmp_path / "run")
    shutil.copytree(tmp_path / "run", tmp_path / "copy")
    with pytest.raises(SameRunError, match="holds the same report"):
        compare_runs(tmp_path / "run", tmp_path / "copy")
    report = tmp_path / "copy" / "report.json"  # a copy whose run id was taken out
    report.write_text(json.dumps({**json.loads(report.read_text()), "run_id": None}))
    with pytest.raises(SameRunError, match="holds the same report"):
        compare_runs(tmp_path / "run", tmp_path / "copy")


def test_the_reference_model_is_identified_by_its_weights_not_its_path(
    tiny_causal_model, quiz_design_suite, tmp_path, monkeypatch
):
    """``ratio``: ``./models/x`` and ``models/x`` are one reference model; other weights saved
    at the same path are another, and compare says so."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    def save_reference(factor: float) -> None:
        """The tiny model with every weight times ``factor``, saved at models/x."""
        model = AutoModelForCausalLM.from_pretrained(tiny_causal_model)
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.mul_(factor)
        model.save_pretrained(tmp_path / "models" / "x")
        AutoTokenizer.from_pretrained(tiny_causal_model).save_pretrained(tmp_path / "models" / "x")

    def run(reference: str):
        return evaluate(
            str(tiny_causal_model),
            quiz_design_suite,
            limit=2,
            scorers="ratio",
            reference_model=reference,
            cache=False,
            progress=False,
        )

    monkeypatch.chdir(tmp_path)
    save_reference(0.5)
    dotted, plain = run("./models/x"), run("models/x")
    assert dotted.reference_model == "./models/x" and plain.reference_model == "models/x"
    assert dotted.reference_identity == plain.reference_identity
    assert "model" not in plain.reference_identity  # the path is not what it is
    same = compare_reports(dotted, plain)
    assert same.scoring_differences == []
    overall = same.suites["quiz_design"].overall
    assert overall.a_only == overall.b_only == 0  # the same verdicts, test by test

    save_reference(1.5)  # other weights, the same path
    swapped = run("models/x")
    assert swapped.reference_identity != plain.reference_identity
    ratios = [o.ll_high for o in plain.outcomes["quiz_design"]]
    assert [o.ll_high for o in swapped.outcomes["quiz_design"]] != ratios  # other figures
    with pytest.raises(
        IncomparableRunsError,
        match=r"scored differently: reference model 'models/x' vs 'models/x' \(the same path, "
        r"other weights\)",
    ):
        compare_reports(plain, swapped)


def test_a_served_model_that_answers_the_probe_alike_is_refused_from_the_cache(
    fake_server, quiz_design_suite, tmp_path
):
    """Swapped behind the same URL and id, answering the probe's fixed prompts as before: the
    identity is unchanged, so only a live check of what the cache would answer can tell."""
    from nnd_suites.errors import CacheMismatchError
    from nnd_suites.evaluation.backends.served.probe import PROMPTS

    def run(cache: bool = True):
        return evaluate_served(fake_server, quiz_design_suite, tmp_path / "cache", cache=cache)

    first = run()
    again = run()  # the same model: the live check agrees, every score from the cache
    assert again.requests.scored == 0 and again.requests.cached == first.requests.unique
    fake_server.scale = lambda prompt: 1.0 if prompt.startswith(PROMPTS) else 1.5
    fresh = run(cache=False)
    assert fresh.backend["probe_fingerprint"] == first.backend["probe_fingerprint"]
    with pytest.raises(
        CacheMismatchError,
        match=r"model 'fake' \(served\) no longer gives the scores the score cache holds.*"
        r"pass --no-cache, or a new --cache-dir$",
    ):
        run()
    lls = [o.ll_high for o in fresh.outcomes["quiz_design"]]
    assert lls != [o.ll_high for o in first.outcomes["quiz_design"]]
    elsewhere = evaluate_served(fake_server, quiz_design_suite, tmp_path / "new-cache")
    assert [o.ll_high for o in elsewhere.outcomes["quiz_design"]] == lls


def test_a_folder_rewritten_before_its_weights_load_is_refused_not_scored_as_the_old_one(
    tiny_causal_model, quiz_design_suite, tmp_path
):
    """A backend names a folder by its files' hashes when it is made and loads the weights on
    first use: a run answered by the cache loads nothing, so a checkpoint saved over the folder
    before the next run would be scored, and filed in the cache, under the old files' hash."""
    import shutil

    import torch
    from transformers import AutoModelForCausalLM

    from nnd_suites.errors import ModelLoadError
    from nnd_suites.evaluation import load_backend
    from nnd_suites.suite import Suite

    folder, other = tmp_path / "model", tmp_path / "other"
    shutil.copytree(tiny_causal_model, folder)
    network = AutoModelForCausalLM.from_pretrained(tiny_causal_model)
    with torch.no_grad():  # other weights of the same shapes: the next checkpoint
        for parameter in network.parameters():
            parameter.mul_(1.5)
    network.save_pretrained(other)
    first, second = (
        Suite(quiz_design_suite.manifest, pairs, quiz_design_suite.candidates)
        for pairs in (quiz_design_suite.pairs[:20], quiz_design_suite.pairs[20:40])
    )
    cache = tmp_path / "cache"
    evaluate(str(folder), first, cache_dir=cache, progress=False)
    backend = load_backend(str(folder))
    cached = evaluate(backend, first, cache_dir=cache, progress=False)
    assert cached.requests.scored == 0 and not backend.loaded  # answered without the weights
    shutil.copy(other / "model.safetensors", folder / "model.safetensors")  # a new checkpoint
    with pytest.raises(ModelLoadError, match=r"model folder '.*model' changed after it was id"):
        evaluate(backend, second, cache_dir=cache, progress=False)
    # the cache holds nothing of the new weights under the old files' hash: the folder's own
    # files, put back, still get their own scores
    shutil.copy(tiny_causal_model / "model.safetensors", folder / "model.safetensors")
    again = evaluate(str(folder), second, cache_dir=cache, progress=False)
    fresh = evaluate(str(folder), second, cache=False, progress=False)
    for cached_test, fresh_test in zip(
        again.outcomes["quiz_design"], fresh.outcomes["quiz_design"], strict=True
    ):  # batches packed otherwise differ in the last float digits
        assert cached_test.outcome == fresh_test.outcome
        assert cached_test.ll_high == pytest.approx(fresh_test.ll_high, abs=1e-5)
        assert cached_test.ll_low == pytest.approx(fresh_test.ll_low, abs=1e-5)


def test_a_model_is_named_by_its_files_hashes_wherever_it_was_found():
    """The path or id goes only where another field names the files by their content."""
    from nnd_suites.evaluation.cache import scope_of
    from nnd_suites.evaluation.identity import content_identity

    folder = {"backend": "hf_causal", "model": "./models/x", "revision": "sha256:" + "a" * 64}
    assert content_identity(folder) == {"backend": "hf_causal", "revision": "sha256:" + "a" * 64}
    assert scope_of(folder) == scope_of({**folder, "model": "models/x"})
    assert scope_of(folder) != scope_of({**folder, "revision": "sha256:" + "b" * 64})
    assert "model" not in content_identity({"model": "gpt2", "revision": "c" * 40})  # a commit
    gguf = {"backend": "llama_cpp", "model": "/m/tiny.gguf", "sha256": "d" * 64}
    assert "model" not in content_identity(gguf)
    kept = [
        {"backend": "hf_causal", "model": "gpt2", "revision": "main"},  # a branch moves
        {"backend": "served", "model": "fake", "base_url": "http://127.0.0.1:8000/v1"},
        {"model": "in-memory:gpt2", "revision": "in-memory", "weights": "sha256:" + "e" * 64},
    ]
    for identity in kept:
        assert content_identity(identity) == identity


def test_two_backends_on_one_folder_never_share_a_cache_scope(tiny_causal_model):
    """The scope holds the backend's name, so two backends' scores cannot meet in the cache when
    every other field of their identities matches (today hf_causal and hf_reward on one folder
    also differ in a field each adds, 'mode' or 'reward_scores', and in dtype's spelling)."""
    from nnd_suites.evaluation import load_backend
    from nnd_suites.evaluation.cache import scope_of

    for name in ("hf_causal", "hf_reward"):
        identity = load_backend(str(tiny_causal_model), name).identity
        assert identity["backend"] == name
        assert scope_of(identity) != scope_of({**identity, "backend": "another"})


def test_a_folder_s_weight_files_are_named_apart_from_its_other_files(tiny_causal_model, tmp_path):
    """A report names a folder's weight files alone (`place` knew a system's model only by the
    hash of every file, so a README beside its weights hid it): a README, a file removed or the
    Trainer's training_args.bin leave them the same, other weights do not; the cache's scope
    stays the whole folder's hash, as before."""
    from nnd_suites.evaluation import load_backend
    from nnd_suites.evaluation.cache import scope_of

    readme = shutil.copytree(tiny_causal_model, tmp_path / "readme")
    (readme / "README.md").write_text("# my copy\n", encoding="utf-8")
    (readme / "training_args.bin").write_bytes(b"not weights")
    fewer = shutil.copytree(tiny_causal_model, tmp_path / "fewer")
    (fewer / "generation_config.json").unlink()
    other = shutil.copytree(tiny_causal_model, tmp_path / "other")
    with (other / "model.safetensors").open("ab") as weights:
        weights.write(b" ")
    for name in ("hf_causal", "hf_reward"):
        backends = [load_backend(str(m), name) for m in (tiny_causal_model, readme, fewer, other)]
        described = [backend.describe() for backend in backends]
        assert all("weight_files" not in backend.identity for backend in backends)
        assert len({scope_of(backend.identity) for backend in backends}) == 4
        held = [found["weight_files"] for found in described]
        assert held[0] == held[1] == held[2] != held[3], name
        assert held[0].startswith("sha256:")


def test_one_candidate_after_two_contexts_is_two_cache_entries_read_back_as_two_scores(
    tiny_causal_model, challenge300_suite, tmp_path
):
    """The score key holds the rendered context: among Challenge 300's first 6 groups 'The
    murderer.' answers two questions, and a second template renders every question another way.
    Each (context, candidate) is its own cache entry, read back as its own score."""
    from nnd_suites.evaluation.cache import ScoreCache

    texts = {pair.id: (pair.high.text, pair.low.text) for pair in challenge300_suite.pairs}

    def run(template, cache=True):
        report = evaluate(
            str(tiny_causal_model),
            challenge300_suite,
            template=template,
            limit=6,
            cache=cache,
            cache_dir=tmp_path,
            progress=False,
        )
        scored = [
            (text, score)
            for o in report.outcomes[challenge300_suite.name]
            for text, score in zip(texts[o.pair_id], (o.ll_high, o.ll_low), strict=True)
        ]
        return report, [score for _, score in scored], [text for text, _ in scored]

    templates = [None, "Question: {question}\nAnswer:"]
    firsts = [run(template) for template in templates]
    with ScoreCache.in_folder(tmp_path) as cache:
        assert len(cache) == sum(report.requests.unique for report, *_ in firsts)
    for template, (_, first, _) in zip(templates, firsts, strict=True):
        again, scores, candidates = run(template)
        assert again.requests.cached == again.requests.unique
        assert scores == first == pytest.approx(run(template, cache=False)[1], abs=1e-5)
        murderer = {
            s for s, text in zip(scores, candidates, strict=True) if text == "The murderer."
        }
        assert len(murderer) == 2


def test_a_live_score_matches_a_cached_one_within_the_tolerance_per_token():
    from nnd_suites.evaluation.backend import Score
    from nnd_suites.evaluation.identity import same_score

    cached = Score(-10.0, 4)
    assert same_score(cached, Score(-10.03, 4), 0.01)  # 0.04 allowed over 4 tokens
    assert not same_score(cached, Score(-10.05, 4), 0.01)
    assert not same_score(cached, Score(-10.0, 5), 0.01)  # other tokens: another tokenizer
    assert not same_score(cached, Score(-10.0, 4, truncated_tokens=2), 0.01)
    assert same_score(Score.skip("too long"), Score.skip("too long"), 0.01)
    assert not same_score(Score.skip("too long"), cached, 0.01)


@pytest.mark.parametrize("setting", [{"mode": "reference"}, {"dtype": "bf16"}])
def test_a_model_scored_another_way_never_reads_the_cached_scores(
    tiny_causal_model, challenge300_suite, tmp_path, setting
):
    """The cache scope holds the scoring mode and the dtype: the same model and texts scored
    another way after a default run get their own figures, as a run without the cache does."""
    from nnd_suites.evaluation import load_backend

    def run(cache: bool, **options):
        backend = load_backend(str(tiny_causal_model), **options)
        report = evaluate(
            backend, challenge300_suite, limit=GROUPS, cache=cache, cache_dir=tmp_path
        )
        return [(o.ll_high, o.ll_low) for o in report.outcomes[challenge300_suite.name]]

    first = run(cache=True)
    again, fresh = run(cache=True, **setting), run(cache=False, **setting)
    assert again == fresh != first
