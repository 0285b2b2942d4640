"""``--scorer pmi`` scores a conversation suite (hh_rlhf). Its neutral context
(the template with every field empty) gives a conversation field an empty conversation, which the
transcript rule renders as nothing, so only the template's literal text is left; before, the
field was "", which the transcript rule refused (TemplateError, exit 8)."""

from __future__ import annotations

import math

from nnd_suites.cli import main
from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.prepared import first_groups
from nnd_suites.evaluation.templates import neutral_context
from nnd_suites.records.conversation import EMPTY_CONVERSATION, decode_turns, render_transcript


def test_the_empty_conversation_has_no_turns_and_renders_as_nothing():
    assert decode_turns(EMPTY_CONVERSATION) == []
    assert render_transcript(EMPTY_CONVERSATION) == ""


def test_the_neutral_context_of_hh_rlhf_is_the_templates_literal_text(hh_suite):
    manifest = hh_suite.manifest
    assert manifest.default_template == "{dialogue:transcript}\n\nAssistant:"
    assert neutral_context(manifest.default_template, manifest.context_fields) == "\n\nAssistant:"
    # a plain field stays "", beside a conversation field in the same template
    both = "Q: {answer}\n{dialogue:transcript}\nA:"
    assert neutral_context(both, ["answer", "dialogue"]) == "Q: \n\nA:"


def test_pmi_scores_hh_rlhf_after_the_neutral_context(hh_suite, tiny_causal_model):
    part = first_groups(hh_suite, 3)
    report = evaluate(tiny_causal_model, part, scorers="pmi", log_samples=True)
    result = report.suites["hh_rlhf"]
    assert result.pairs == result.overall.n == len(part.pairs) > 0
    samples = report.samples["hh_rlhf"]
    assert len(samples) == len(part.pairs)
    for sample in samples:
        assert sample.neutral_context == "\n\nAssistant:"
        assert sample.context.startswith("Human: ") and sample.context.endswith("\n\nAssistant:")
        for side in (sample.high, sample.low):
            assert side.neutral is not None and side.neutral.n_targets == side.n_targets
            assert math.isclose(side.score, side.logprob_sum - side.neutral.logprob_sum)


def test_the_cli_scores_hh_rlhf_with_pmi(tiny_causal_model, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["evaluate", "--suite", "hh_rlhf", "--model", str(tiny_causal_model)]
    assert main([*args, "--scorer", "pmi", "--limit", "2", "--out", str(out), "--quiet"]) == 0
    assert (out / "report.json").is_file()
