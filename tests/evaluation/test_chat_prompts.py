"""A model whose chat template is malformed jinja, or tries something the
sandbox forbids, stops with a TemplateError (exit 8) naming the model and its chat template,
never a traceback. The templates sit in tokenizer_config.json, as a model repository ships them."""

from __future__ import annotations

import json
import shutil
import time
from types import SimpleNamespace

import pytest
from folder_snapshot import snapshot

from nnd_suites.cli import main
from nnd_suites.errors import OutputFolderError, TemplateError
from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.backends.hf_loading import load_tokenizer
from nnd_suites.evaluation.chat_prompts import CHAT_FIELD, chat_rendering, with_chat_prompts
from nnd_suites.evaluation.comparison import compare_reports
from nnd_suites.evaluation.comparison.paired import IncomparableRunsError
from nnd_suites.evaluation.limits import suite_limit
from nnd_suites.evaluation.multi import evaluate_models
from nnd_suites.evaluation.prepared import first_groups

TEMPLATES = {
    "broken": "{% for m in messages %}{{ m['content'] }",
    "evil": "{{ ''.__class__.__mro__[1].__subclasses__() }}{% for m in messages %}{% endfor %}",
    "good": "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}",
    # prints the time, as templates that state today's date do: no two runs render it alike
    "dated": "Now: {{ strftime_now('%Y-%m-%d %H:%M:%S.%f') }}\n{% for m in messages %}"
    "{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}"
    "assistant:{% endif %}",
}
WHAT = {"broken": "is malformed", "evil": "tried something the sandbox forbids"}
JINJA = {"broken": "TemplateSyntaxError", "evil": "SecurityError"}


@pytest.fixture(scope="module")
def chat_models(tiny_causal_model, tmp_path_factory):
    """kind -> a copy of the tiny model whose tokenizer_config.json carries that chat template."""
    root = tmp_path_factory.mktemp("chat_templates")
    folders = {}
    for kind, template in TEMPLATES.items():
        folder = shutil.copytree(tiny_causal_model, root / f"mc_{kind}")
        config_path = folder / "tokenizer_config.json"
        config = json.loads(config_path.read_text("utf-8"))
        config["chat_template"] = template
        config_path.write_text(json.dumps(config), "utf-8")
        folders[kind] = folder
    return folders


@pytest.fixture(scope="module")
def hh_part(hh_suite):
    return first_groups(hh_suite, 2)


@pytest.mark.parametrize("kind", ["broken", "evil"])
def test_with_chat_prompts_names_the_model_and_its_broken_template(chat_models, hh_part, kind):
    folder = str(chat_models[kind])
    with pytest.raises(TemplateError) as caught:
        with_chat_prompts(hh_part, load_tokenizer(folder))
    message = str(caught.value)
    assert f"model {folder!r}: its chat template" in message
    assert WHAT[kind] in message and JINJA[kind] in message
    assert "--template chat" in message  # what to do
    assert caught.value.exit_status == 8


def test_a_dated_chat_template_renders_one_date_per_run_and_says_so(chat_models, hh_part, caplog):
    """A template that prints the time (strftime_now) rendered each prompt at its own instant:
    the prompts of one run differed by the microsecond. The clock is now read once per process,
    and a warning says that the prompts hold that date."""
    from nnd_suites.evaluation import chat_rendering

    chat_rendering._first_clock_reading.cache_clear()
    dated = load_tokenizer(str(chat_models["dated"]))
    first = with_chat_prompts(hh_part, dated)
    time.sleep(0.01)
    again = with_chat_prompts(hh_part, dated)
    stamps = {p.context[CHAT_FIELD].split("\n", 1)[0] for p in [*first.pairs, *again.pairs]}
    assert len(stamps) == 1 and stamps.pop().startswith("Now: 20")
    warned = [r.getMessage() for r in caplog.records if "strftime_now" in r.getMessage()]
    assert len(warned) == 1 and "a run on another day scores other prompts" in warned[0]


def test_a_sound_chat_template_still_renders(chat_models, hh_part):
    chat = with_chat_prompts(hh_part, load_tokenizer(str(chat_models["good"])))
    first = chat.pairs[0].context["chat_prompt"]
    assert first.startswith("<|user|>\n") and first.endswith("<|assistant|>\n")


@pytest.mark.parametrize("kind", ["broken", "evil"])
def test_evaluate_with_the_chat_template_raises_the_template_error(chat_models, hh_part, kind):
    with pytest.raises(TemplateError, match=WHAT[kind]):
        evaluate(str(chat_models[kind]), hh_part, template="chat", cache=False, progress=False)


@pytest.mark.parametrize("kind", ["broken", "evil"])
def test_the_commands_exit_8_with_the_reason_and_no_traceback(chat_models, tmp_path, kind, capsys):
    """The probe's commands: evaluate --template chat, and chat-prompts."""
    folder = str(chat_models[kind])
    args = ["--suite", "hh_rlhf", "--model", folder, "--limit", "2", "--quiet"]
    assert main(["evaluate", *args, "--template", "chat", "--no-cache"]) == 8
    err = capsys.readouterr().err
    assert "Traceback" not in err and WHAT[kind] in err and folder in err
    out = tmp_path / "chat"
    assert main(["chat-prompts", "hh_rlhf", "--tokenizer", folder, "--out", str(out)]) == 8
    err = capsys.readouterr().err
    assert "Traceback" not in err and WHAT[kind] in err and not out.exists()


def test_chat_prompts_refuses_a_suite_without_a_conversation_before_loading(
    tmp_path, monkeypatch, capsys
):
    """chat-prompts loaded the tokenizer (slow; may download) before it saw quiz_design has no
    conversation to render: the suite is refused first."""
    from nnd_suites.evaluation.backends import hf_loading

    monkeypatch.setattr(hf_loading, "load_tokenizer", lambda *a, **k: pytest.fail("loaded"))
    out = tmp_path / "chat"
    argv = ["chat-prompts", "quiz_design", "--tokenizer", "some-org/chat-model", "--out", str(out)]
    assert main(argv) == TemplateError.exit_status
    err = " ".join(capsys.readouterr().err.split())
    assert "suite quiz_design has no conversation field" in err and not out.exists()
    out.mkdir()  # and an --out that is not a suite's folder: refused before loading, too
    (out / "notes.txt").write_text("mine")
    argv = ["chat-prompts", "hh_rlhf", "--tokenizer", "some-org/chat-model", "--out", str(out)]
    assert main(argv) == OutputFolderError.exit_status
    err = " ".join(capsys.readouterr().err.split())
    assert "holds 1 entry: notes.txt, which is not a suite" in err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_chat_prompts_into_a_dataset_folder_says_what_it_replaced_and_keeps_the_card(
    chat_models, hh_suite, tmp_path, capsys
):
    """`chat-prompts SUITE --out DS/hh_rlhf` replaced the config without a word (exit 0) and
    left the card describing the former files: validate then failed (other Features). It is
    written as a config now, its card rewritten, and what it replaced is said. (The input is a
    copy of the config elsewhere: the config's own folder as input is refused, below.)"""
    from nnd_suites.hub import export_suites

    part = hh_suite.derive(hh_suite.pairs[:20])
    export_suites([part], tmp_path / "ds")
    out, given = tmp_path / "ds" / part.name, part.save(tmp_path / "elsewhere" / part.name)
    argv = ["chat-prompts", str(given), "--tokenizer", str(chat_models["good"]), "--out", str(out)]
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert f"wrote {out} (20 tests, contexts rendered by the chat template of " in said
    assert "; written, replacing a config of 20 tests whose content hash differs: " in said
    assert main(["validate", str(tmp_path / "ds")]) == 0


@pytest.mark.parametrize("case", ["own folder", "link to it", "linked parent", "config"])
def test_chat_prompts_never_replaces_the_suite_it_reads(
    hh_suite, tmp_path, monkeypatch, capsys, case
):
    """`chat-prompts S --out S` (or `DS/hh_rlhf --out DS/hh_rlhf`, or one folder under two
    names) replaced the user's suite by its chat copy, exit 0. It is refused before the
    tokenizer loads, naming the input's folder, and the folder is left byte for byte."""
    from nnd_suites.evaluation.backends import hf_loading
    from nnd_suites.hub import export_suites

    monkeypatch.setattr(hf_loading, "load_tokenizer", lambda *a, **k: pytest.fail("loaded"))
    part = hh_suite.derive(hh_suite.pairs[:20])
    folder = part.save(tmp_path / "suites" / part.name)
    given, out = folder, folder
    if case == "link to it":
        given = tmp_path / "link"
        given.symlink_to(folder)
    if case == "linked parent":
        (tmp_path / "alias").symlink_to(folder.parent)
        out = tmp_path / "alias" / part.name
    if case == "config":
        export_suites([part], tmp_path / "ds")
        given = out = folder = tmp_path / "ds" / part.name
    before = snapshot(folder.parent)
    argv = ["chat-prompts", str(given), "--tokenizer", "some-org/chat-model", "--out", str(out)]
    assert main(argv) == OutputFolderError.exit_status
    err = " ".join(capsys.readouterr().err.split())
    assert f"{out}: the folder of the input suite 'hh_rlhf' ({given})" in err
    assert "nothing was written: write the chat suite to another folder with --out" in err
    assert snapshot(folder.parent) == before


def test_a_chat_prompts_suite_is_rendered_by_the_scored_models_own_template(chat_models, hh_part):
    """A suite written by chat-prompts with model A's tokenizer was scored with A's prompts
    whatever model was evaluated (the template 'chat' was taken as rendered): a model with a
    chat template of its own now renders it anew; a backend without one scores what it holds."""
    good, dated = (load_tokenizer(str(chat_models[kind])) for kind in ("good", "dated"))
    by_good = with_chat_prompts(hh_part, good)
    as_dated = chat_rendering(SimpleNamespace(tokenizer=dated, name="dated"))(by_good)
    assert by_good.pairs[0].context[CHAT_FIELD].startswith("<|")
    # dated's template (it prints the time first), not good's, over the same tests
    assert all(p.context[CHAT_FIELD].startswith("Now: ") for p in as_dated.pairs)
    assert [p.id for p in as_dated.pairs] == [p.id for p in hh_part.pairs]
    assert as_dated.manifest.context_fields == by_good.manifest.context_fields
    served = chat_rendering(SimpleNamespace(tokenizer=None, name="served"))(by_good)
    assert served is by_good


def test_chat_runs_of_two_models_are_compared_on_the_suite_s_tests(chat_models, hh_suite):
    """The chat prompts are each run's rendering, not the tests: two chat models (one whose
    template prints the time) scored in one run report the suite's own content hash, and are
    compared test by test (before: "unknown template 'chat'", then "different tests")."""
    models = [str(chat_models["good"]), str(chat_models["dated"])]
    board = evaluate_models(
        models, [hh_suite], template="chat", limit=2, cache=False, progress=False
    )
    a, b = board.reports
    name = hh_suite.name
    assert a.suites[name].template_name == b.suites[name].template_name == "chat"
    assert a.suites[name].content_hash == b.suites[name].content_hash
    assert a.suites[name].content_hash == hh_suite.manifest.content_hash
    kept = first_groups(hh_suite, 2)
    assert a.suites[name].limited == suite_limit(kept) is not None
    # a suite cut in memory is identified by what it holds (Suite.resealed), not by the whole
    # suite's hash: it is compared with runs of the same cut, not with --limit 2 of the whole
    cut = evaluate(models[0], kept, template="chat", cache=False, progress=False)
    assert cut.suites[name].limited == a.suites[name].limited
    assert cut.suites[name].content_hash == kept.resealed().manifest.content_hash
    with pytest.raises(IncomparableRunsError, match="cover different tests"):
        compare_reports(a, cut)
    again = evaluate(models[1], kept, template="chat", cache=False, progress=False)
    assert compare_reports(cut, again).suites[name].overall.n <= len(kept.pairs)
    comparison = compare_reports(a, b)
    assert comparison.suites[name].overall.n + comparison.suites[name].overall.degenerate == len(
        kept.pairs
    )


def test_chat_runs_of_several_models_record_where_each_suite_came_from(
    chat_models, hh_part, tmp_path
):
    """evaluate --template chat --model A --model B wrote given_as null for every suite (the
    runs were given the suites loaded), so two suites named hh_rlhf were told apart by nothing
    but their hashes. Each model's report.json now says where each suite came from."""
    folder = tmp_path / "hh_part"
    hh_part.derive(hh_part.pairs).save(folder)
    models = [str(chat_models["good"]), str(chat_models["dated"])]
    board = evaluate_models(
        models,
        ["builtin:hh_rlhf", str(folder)],
        out=tmp_path / "board",
        template="chat",
        limit=2,
        cache=False,
        progress=False,
    )
    for entry in board.models:
        saved = json.loads((tmp_path / "board" / entry.label / "report.json").read_text("utf-8"))
        suites = saved["suites"]
        assert suites["hh_rlhf"]["given_as"] == "builtin:hh_rlhf"
        assert suites["hh_rlhf_2"]["given_as"] == str(folder.resolve())
        assert suites["hh_rlhf_2"]["suite_name"] == "hh_rlhf"
