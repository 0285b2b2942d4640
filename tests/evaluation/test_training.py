"""Evaluate during training: in-memory models, prepared suites and the Trainer callback."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("accelerate")  # transformers' Trainer needs it (the `train` extra)

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    Trainer,
    TrainingArguments,
)

import nnd_suites
from nnd_suites.errors import NNDError
from nnd_suites.evaluation.prepared import prepare_suites
from nnd_suites.evaluation.training import NNDCallback
from nnd_suites.records.templates import render_template as render

GROUPS = 12


@pytest.fixture
def model_and_tokenizer(tiny_causal_model):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(tiny_causal_model)
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_model)
    tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def _no_error_texts(suite, tokenizer):
    """Each first-groups test's better question after its rendered context: what to learn."""
    prepared = prepare_suites(suite, limit=GROUPS)
    plan = prepared.plans[0]
    texts = {render(plan.template, p.context) + " " + p.high.text for p in plan.suite.pairs}
    return [tokenizer(text, truncation=True, max_length=512) for text in sorted(texts)]


def _trainer(model, tokenizer, data, tmp_path, steps, report_to="none"):
    args = TrainingArguments(
        output_dir=str(tmp_path / "run"),
        max_steps=steps,
        per_device_train_batch_size=4,
        learning_rate=3e-3,
        logging_steps=5,
        save_strategy="no",
        report_to=report_to,
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
    return Trainer(
        model=model,
        args=args,
        train_dataset=data,
        data_collator=collator,
        processing_class=tokenizer,
    )


def test_in_memory_scoring_matches_the_saved_model(tiny_causal_model, model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    model.train()  # dropout on: scoring must switch it off, then restore the mode
    suite = nnd_suites.load_suite("challenge300")
    options = {"cache": False, "progress": False, "limit": 40, "batch_size": 8}
    in_memory = nnd_suites.evaluate((model, tokenizer), suite, **options)
    from_disk = nnd_suites.evaluate(str(tiny_causal_model), suite, **options)
    assert model.training and all(p.grad is None for p in model.parameters())
    assert [o.outcome for o in in_memory.outcomes["challenge300"]] == [
        o.outcome for o in from_disk.outcomes["challenge300"]
    ]
    for a, b in zip(
        in_memory.outcomes["challenge300"], from_disk.outcomes["challenge300"], strict=True
    ):
        assert a.ll_high == pytest.approx(b.ll_high, abs=1e-5)


def test_callback_logs_to_history_and_tensorboard(model_and_tokenizer, tmp_path, monkeypatch):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    monkeypatch.setenv("TENSORBOARD_LOGGING_DIR", str(tmp_path / "tb"))
    model, tokenizer = model_and_tokenizer
    suite = nnd_suites.load_suite("quiz_design")
    data = _no_error_texts(suite, tokenizer)
    trainer = _trainer(model, tokenizer, data, tmp_path, steps=12, report_to=["tensorboard"])
    callback = NNDCallback.attach(
        trainer, suites=[suite], every_n_steps=5, limit=GROUPS, batch_size=8
    )
    trainer.train()
    logged = [e for e in trainer.state.log_history if "nnd/quiz_design/pass_rate" in e]
    assert [e["step"] for e in logged] == [5, 10]
    assert {"nnd/quiz_design/off_target", "nnd/quiz_design/wrong_context"} <= set(logged[0])
    events = EventAccumulator(str(next((tmp_path / "tb").rglob("events.out.tfevents.*")).parent))
    events.Reload()
    scalars = events.Tags()["scalars"]
    tag = next(t for t in scalars if t.endswith("nnd/quiz_design/pass_rate"))
    assert [s.step for s in events.Scalars(tag)] == [5, 10]
    assert [s.value for s in events.Scalars(tag)] == pytest.approx(
        [e["nnd/quiz_design/pass_rate"] for e in logged]
    )
    assert len(callback.history) == 2


def test_training_on_the_better_questions_raises_their_pass_rate(model_and_tokenizer, tmp_path):
    model, tokenizer = model_and_tokenizer
    suite = nnd_suites.load_suite("quiz_design")
    data = _no_error_texts(suite, tokenizer)
    trainer = _trainer(model, tokenizer, data, tmp_path, steps=60)
    callback = NNDCallback.attach(
        trainer, suites=[suite], every_n_steps=30, limit=GROUPS, batch_size=8
    )
    start = callback.score(model, tokenizer, step=0)["nnd/quiz_design/pass_rate"]
    trainer.train()
    end = callback.history[-1][1]["nnd/quiz_design/pass_rate"]
    assert end > start + 0.15, (start, end)


def test_callback_misuse_is_explained(model_and_tokenizer, tmp_path):
    with pytest.raises(NNDError, match="every_n_steps=N, on_evaluate=True"):
        NNDCallback(["quiz_design"])
    model, tokenizer = model_and_tokenizer
    trainer = _trainer(model, tokenizer, [tokenizer("a b c")], tmp_path, steps=1)
    trainer.add_callback(NNDCallback(["quiz_design"], every_n_steps=1))
    with pytest.raises(NNDError, match=r"NNDCallback.attach\(trainer"):
        trainer.train()


def test_cached_scoring_never_gives_a_second_run_the_first_runs_figures(
    tiny_causal_model, model_and_tokenizer, tmp_path
):
    """Issue 21: with run_name None the cache key was ``@step-N`` for every run, so a second
    run logged the first run's figures at every step."""
    suite = nnd_suites.load_suite("quiz_design")
    logged, run_ids, models = [], [], []
    for seed in (0, 1):
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_pretrained(tiny_causal_model)
        tokenizer = model_and_tokenizer[1]
        data = _no_error_texts(suite, tokenizer)[seed::2]  # the two runs learn different texts
        trainer = _trainer(model, tokenizer, data, tmp_path / str(seed), steps=5)
        callback = NNDCallback.attach(
            trainer,
            suites=[suite],
            every_n_steps=5,
            limit=GROUPS,
            batch_size=8,
            cache=True,
            cache_dir=tmp_path / "cache",
        )
        trainer.train()
        [(step, metrics, _)] = callback.history
        assert step == 5
        logged.append(metrics)
        run_ids.append(callback.run_id)
        models.append((model, tokenizer))
    assert run_ids[0] != run_ids[1]
    assert logged[0] != logged[1]
    for metrics, (model, tokenizer) in zip(logged, models, strict=True):
        fresh = nnd_suites.evaluate(
            (model, tokenizer), suite, limit=GROUPS, cache=False, progress=False
        )
        assert metrics["nnd/quiz_design/pass_rate"] == fresh.suites["quiz_design"].pass_rate


def test_a_loaded_model_is_scored_as_it_is_and_loading_arguments_are_refused(
    tiny_causal_model, model_and_tokenizer
):
    """evaluate((model, tokenizer), ..., device="cuda") scored on the CPU the model sat on, and
    dtype, revision, trust_remote_code and backend_options were dropped as silently; a model on
    the meta device stopped in a RuntimeError from inside transformers."""
    from nnd_suites.errors import ArgumentError, ModelLoadError
    from nnd_suites.evaluation import load_backend

    model, tokenizer = model_and_tokenizer
    said = "applies to a model loaded by name (a Hub id or folder); a model object in memory"
    for name, value in [
        ("device", "cuda"),
        ("dtype", "bfloat16"),
        ("revision", "main"),
        ("trust_remote_code", True),
        ("device_map", "auto"),
        ("backend_options", {"n_ctx": 4096}),
    ]:
        with pytest.raises(ArgumentError, match=re.escape(f"evaluate({name}={value!r}): {said}")):
            nnd_suites.evaluate((model, tokenizer), "challenge300", **{name: value})
    backend = load_backend(str(tiny_causal_model))
    with pytest.raises(ArgumentError, match=re.escape(f"evaluate(batch_size=4): {said}")):
        nnd_suites.evaluate(backend, "challenge300", batch_size=4)
    with torch.device("meta"):
        on_meta = AutoModelForCausalLM.from_config(model.config)
    with pytest.raises(ModelLoadError, match="GPT2LMHeadModel has its weights on the meta"):
        nnd_suites.evaluate((on_meta, tokenizer), "challenge300", progress=False)
    with pytest.raises(ModelLoadError, match="needs its tokenizer object, got str"):
        nnd_suites.evaluate((model, str(tiny_causal_model)), "challenge300", progress=False)
    # a ratio scorer's reference model, loaded by name, still takes device and dtype
    report = nnd_suites.evaluate(
        (model, tokenizer),
        "challenge300",
        device="cpu",
        scorers=["mean", "ratio"],  # the same weights: every ratio ties
        reference_model=str(tiny_causal_model),
        **{"limit": 2, "cache": False, "progress": False},
    )
    assert report.suites["challenge300"].pairs


def test_the_callback_records_the_tests_each_pass_rate_is_over(model_and_tokenizer):
    """Its figures were pass rates alone (the example printed "0.633" with no sample size):
    ``rated`` gives each figure's n, the report's own."""
    model, tokenizer = model_and_tokenizer
    suite = nnd_suites.load_suite("quiz_design")
    callback = NNDCallback([suite], every_n_steps=1, limit=GROUPS, batch_size=8)
    metrics = callback.score(model, tokenizer, step=0)
    options = {"cache": False, "progress": False, "limit": GROUPS, "batch_size": 8}
    report = nnd_suites.evaluate((model, tokenizer), suite, **options).suites["quiz_design"]
    assert set(callback.rated) == set(metrics)
    assert callback.rated["nnd/quiz_design/pass_rate"] == report.overall.n > 0
    assert metrics["nnd/quiz_design/pass_rate"] == report.overall.pass_rate
    for category, rate in report.by_category.items():
        assert callback.rated[f"nnd/quiz_design/{category}"] == rate.n
        assert metrics[f"nnd/quiz_design/{category}"] == rate.pass_rate  # its own, not overall


def test_a_category_named_pass_rate_never_takes_the_suites_figure(model_and_tokenizer):
    """{"pass_rate": overall, **by_category} let a category named pass_rate (a category may be
    named so: sfhot's is named overall) overwrite the suite's overall figure, unsaid."""
    model, tokenizer = model_and_tokenizer
    suite = nnd_suites.load_suite("quiz_design")
    renamed = {"category": "pass_rate", "category_path": ["pass_rate"]}
    suite = suite.derive(
        [p.model_copy(update=renamed) if p.category == "disfluent" else p for p in suite.pairs]
    )
    callback = NNDCallback([suite], every_n_steps=1, limit=GROUPS, batch_size=8)
    metrics = callback.score(model, tokenizer, step=0)
    options = {"cache": False, "progress": False, "limit": GROUPS, "batch_size": 8}
    report = nnd_suites.evaluate((model, tokenizer), suite, **options).suites["quiz_design"]
    assert "pass_rate" in report.by_category
    assert metrics["nnd/quiz_design/pass_rate"] == report.overall.pass_rate
    assert callback.rated["nnd/quiz_design/pass_rate"] == report.overall.n
    own = report.by_category["pass_rate"]
    assert metrics["nnd/quiz_design/pass_rate (category)"] == own.pass_rate
    assert callback.rated["nnd/quiz_design/pass_rate (category)"] == own.n != report.overall.n
