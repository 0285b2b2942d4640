"""`verify --template chat`: each annotated system's model renders the conversations with its own
chat template, as `evaluate --template chat` does; the suite's tests, content hash and the human
scores they are correlated with stay the suite's."""

from __future__ import annotations

import json

import pytest

from nnd_suites.cli import main
from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.prepared import first_groups
from nnd_suites.evaluation.verify import verify_suite
from nnd_suites.records.conversation import Turn, encode_turns
from nnd_suites.records.templates import render_template
from nnd_suites.suite import Suite

SYSTEMS = ["mixqg", "gpt2b_sup"]
CHAT = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
FAST = ["--quiet", "--no-cache", "--device", "cpu", "--resamples", "50"]


@pytest.fixture(scope="module")
def chat_suite(quiz_design_suite, tmp_path_factory) -> tuple[Suite, str]:
    """quiz_design's first groups, each context also held as a one-turn conversation (the
    user asks with the suite's own rendering), saved as a suite folder: annotated systems and
    conversations, which no shipped source has together. (suite, its folder)"""
    part = first_groups(quiz_design_suite, 4)
    template = part.manifest.default_template
    pairs = [
        pair.model_copy(
            update={
                "context": {
                    **pair.context,
                    "dialogue": encode_turns(
                        [Turn(role="user", content=render_template(template, pair.context))]
                    ),
                }
            }
        )
        for pair in part.pairs
    ]
    suite = part.derive(
        pairs,
        name="quiz_design_chat",
        context_fields=[*part.manifest.context_fields, "dialogue"],
        default_template="{dialogue:transcript}\n\nAssistant:",
    )
    folder = suite.save(tmp_path_factory.mktemp("chat_suite") / "quiz_design_chat")
    return suite, str(folder)


@pytest.fixture(scope="module")
def chat_models(tmp_path_factory, quiz_design_suite):
    """Two tiny models (one seed each) whose tokenizers carry a chat template."""
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    texts = suite_texts([quiz_design_suite])
    root = tmp_path_factory.mktemp("chat_systems")
    folders = []
    for seed in range(len(SYSTEMS)):
        folder = tiny_causal_lm(
            root / f"m{seed}", texts, vocab_size=512, n_layer=1, n_embd=32, n_head=2, seed=seed
        )
        config_path = folder / "tokenizer_config.json"
        config = json.loads(config_path.read_text("utf-8"))
        config_path.write_text(json.dumps({**config, "chat_template": CHAT}), "utf-8")
        folders.append(folder)
    return folders


def test_verify_scores_each_system_with_its_chat_template(chat_suite, chat_models):
    suite, _ = chat_suite
    systems = dict(zip(SYSTEMS, map(str, chat_models), strict=True))
    report = verify_suite(suite, systems, template="chat", resamples=50, cache=False)
    assert report.template == "chat"
    assert report.content_hash == suite.manifest.content_hash  # the tests are the suite's
    for name, model in systems.items():
        alone = evaluate(model, suite, template="chat", cache=False)
        assert alone.suites[suite.name].template_name == "chat"
        expected = {row.pair_id: row.outcome for row in alone.outcomes[suite.name]}
        assert report.outcomes[name] == expected  # the same run evaluate makes
    assert report.overall.tests == len(suite.pairs)


def test_verify_cli_takes_template_chat(chat_suite, chat_models, tmp_path, capsys):
    out = tmp_path / "verify"
    suite, folder = chat_suite
    args = [a for n, m in zip(SYSTEMS, chat_models, strict=True) for a in ("--system", f"{n}={m}")]
    code = main(
        ["verify", folder, *args, "--template", "chat", "--limit", "2", "--out", str(out), *FAST]
    )
    assert code == 0, capsys.readouterr().err
    written = json.loads((out / "verify.json").read_text("utf-8"))
    assert written["template"] == "chat"
    assert written["content_hash"] == suite.manifest.content_hash
    assert written["limit"] == 2
