"""export-lm-eval: lm-evaluation-harness, run on the exported task with the tiny local model, gives
the verdict nnd-suites gives to every test under the same scorer (ties included)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import datasets
import pytest
import yaml
from transformers import AutoTokenizer

import nnd_suites
from nnd_suites.cli import main
from nnd_suites.errors import NNDError, OutputFolderError, ParameterError
from nnd_suites.evaluation.lm_eval_task import MAIN_FILE, export_lm_eval
from nnd_suites.evaluation.prepared import first_groups
from nnd_suites.suite import Suite

#: CI sets NND_REQUIRE_LM_EVAL=1: there a missing lm-eval fails the agreement tests.
REQUIRED = os.environ.get("NND_REQUIRE_LM_EVAL") == "1"
try:
    import lm_eval
    import lm_eval.tasks
except ImportError:
    if REQUIRED:
        raise RuntimeError("NND_REQUIRE_LM_EVAL=1 but lm-eval is not installed") from None
    lm_eval = None
needs_lm_eval = pytest.mark.skipif(
    lm_eval is None, reason="lm-eval is not installed (pip install 'nnd-suites[lmeval]')"
)
#: Quiz Design's contexts are long: the first 25 context groups keep the test under a minute.
QUIZ_GROUPS = 25


def _lm_eval_verdicts(model: Path, folder: Path, tasks: list[str]) -> dict[str, dict[str, str]]:
    """task -> test id -> pass / fail / tie / degenerate, from lm-eval's logged samples."""
    results = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={model},dtype=float32",
        tasks=tasks,
        task_manager=lm_eval.tasks.TaskManager(include_path=str(folder)),
        log_samples=True,
        batch_size=8,
        device="cpu",
    )
    verdicts: dict[str, dict[str, str]] = {}
    for task in tasks:
        rows = verdicts.setdefault(task, {})
        for sample in results["samples"][task]:
            if sample["degenerate"] == 1.0:
                outcome = "degenerate"
            else:
                outcome = "pass" if sample["pass"] else "tie" if sample["tie"] else "fail"
            rows[sample["doc"]["id"]] = outcome
    return verdicts


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.parametrize(("scorer", "quiz"), [("per_byte", True), ("sum", False)])
def test_lm_eval_verdicts_equal_nnd_suites_per_test(
    scorer, quiz, tiny_causal_model, challenge300_suite, quiz_design_suite, tmp_path
):
    suites = [challenge300_suite]
    suites += [first_groups(quiz_design_suite, QUIZ_GROUPS)] if quiz else []
    folder = tmp_path / "task"
    export = export_lm_eval(suites, folder, str(tiny_causal_model), scorer=scorer)
    assert export.suites == {s.name: f"nnd_{s.name}" for s in suites}

    report = nnd_suites.evaluate(str(tiny_causal_model), suites, scorers=[scorer])
    ours = {s.name: {o.pair_id: o.outcome for o in report.outcomes[s.name]} for s in suites}
    category_tasks = export.groups["nnd_challenge300_by_category"]
    theirs = _lm_eval_verdicts(
        tiny_causal_model, folder, [*export.suites.values(), *category_tasks]
    )
    for name, task in export.suites.items():
        assert theirs[task].keys() == ours[name].keys()
        differ = [i for i, outcome in ours[name].items() if theirs[task][i] != outcome]
        assert not differ, f"{name}: {len(differ)} verdicts differ, e.g. {differ[:3]}"
        assert "pass" in ours[name].values() and "fail" in ours[name].values()
    # each per-category task holds that category's tests, with the same verdicts
    by_category = {t: v for t, v in theirs.items() if t in category_tasks}
    assert sum(len(v) for v in by_category.values()) == len(challenge300_suite.pairs)
    for verdicts in by_category.values():
        assert verdicts == {i: ours["challenge300"][i] for i in verdicts}


def test_a_choice_is_the_candidate_with_its_leading_space_and_eos(
    tiny_causal_model, challenge300_suite, tmp_path
):
    folder = tmp_path / "task"
    export_lm_eval([challenge300_suite], folder, str(tiny_causal_model), scorer="sum")
    rows = [json.loads(line) for line in (folder / "data/challenge300/all.jsonl").open()]
    pair = challenge300_suite.pairs[0]
    eos = json.loads((folder / MAIN_FILE).read_text())["eos_text"]
    assert eos == AutoTokenizer.from_pretrained(tiny_causal_model).eos_token
    assert rows[0]["context"] == pair.context["question"]
    assert rows[0]["choices"] == [" " + pair.high.text + eos, " " + pair.low.text + eos]
    empty = [r for r in rows if "" in r["texts"]]
    assert empty, "Challenge 300 has empty candidates: their choice is the EOS text alone"
    pairs = [(c, t) for r in empty for c, t in zip(r["choices"], r["texts"], strict=True)]
    assert all(c == eos for c, t in pairs if t == "")
    # suite content lives in the data only: utils.py is the fixed template, byte for byte
    template = Path(nnd_suites.evaluation.__file__).parent / "lm_eval_utils.py"
    assert (folder / "utils.py").read_bytes() == template.read_bytes()
    categories = {r["category"] for r in rows}
    assert len(list(folder.glob("nnd_challenge300__*.yaml"))) == len(categories)


def test_equal_values_are_a_tie_not_a_pass():
    """lm-eval's acc counts equal log-likelihoods as a pass for the first choice; utils.py not."""
    from nnd_suites.evaluation import lm_eval_utils as utils

    doc = {"texts": ["abc", "xyz"], "degenerate": False}
    assert utils.process_results_sum(doc, [(-3.0, False), (-3.0, False)]) == {
        "pass": 0.0,
        "tie": 1.0,
        "degenerate": 0.0,
    }
    # per_byte divides by bytes + 1: "é" is 2 bytes, so -3/3 > -4/4 is false and -3/3 == -4/4
    doc = {"texts": ["é", "abc"], "degenerate": False}
    assert utils.process_results_per_byte(doc, [(-3.0, False), (-4.0, False)])["tie"] == 1.0
    assert utils.process_results_per_char(doc, [(-3.0, False), (-4.0, False)])["pass"] == 0.0
    degenerate = utils.process_results_sum({**doc, "degenerate": True}, [(0.0, 0), (0.0, 0)])
    assert degenerate == {"pass": None, "tie": None, "degenerate": 1.0}
    assert utils.rated_mean([1.0, None, 0.0, 0.0]) == pytest.approx(1 / 3)


@pytest.mark.parametrize("scorer", ["mean", "pmi", "ratio", "reward"])
def test_scorers_lm_eval_cannot_express_are_refused_naming_why(scorer, tmp_path, capsys):
    out = str(tmp_path / "t")
    status = main(
        ["export-lm-eval", "challenge300", "--to", out, "--tokenizer", "x", "--scorer", scorer]
    )
    err = capsys.readouterr().err
    assert status == ParameterError.exit_status
    assert f"scorer '{scorer}' cannot be expressed in lm-evaluation-harness" in err
    assert not (tmp_path / "t").exists()


def test_unknown_suite_is_refused(tiny_causal_model, tmp_path, capsys):
    out, tokenizer = str(tmp_path / "t"), str(tiny_causal_model)
    status = main(["export-lm-eval", "no_such_suite", "--to", out, "--tokenizer", tokenizer])
    assert status != 0
    assert "no_such_suite" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_a_folder_of_something_else_is_left_alone(tiny_causal_model, challenge300_suite, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(OutputFolderError, match="not an lm-eval task folder"):
        export_lm_eval([challenge300_suite], folder, str(tiny_causal_model))
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    # an earlier export is replaced as a whole
    export_lm_eval([challenge300_suite], tmp_path / "task", str(tiny_causal_model))
    export_lm_eval([challenge300_suite], tmp_path / "task", str(tiny_causal_model), scorer="sum")
    assert "process_results_sum" in (tmp_path / "task/nnd_challenge300.yaml").read_text()


def test_a_link_given_as_the_folder_is_refused_not_followed(
    tiny_causal_model, quiz_design_suite, challenge300_suite, tmp_path
):
    # --to LINK resolved the link: the export elsewhere it named (quiz_design's task) was
    # replaced by challenge300's, where every other writer refuses a link as its folder
    export_lm_eval([quiz_design_suite], tmp_path / "task", str(tiny_causal_model))
    before = sorted(p.name for p in (tmp_path / "task").iterdir())
    (tmp_path / "link").symlink_to(tmp_path / "task")
    with pytest.raises(OutputFolderError, match=f"{tmp_path / 'link'}: exists and is a symbolic"):
        export_lm_eval([challenge300_suite], tmp_path / "link", str(tiny_causal_model))
    assert sorted(p.name for p in (tmp_path / "task").iterdir()) == before


def test_a_context_ending_in_a_line_break_is_refused_by_name(
    tiny_causal_model, challenge300_suite, tmp_path
):
    with pytest.raises(NNDError, match=r"test .* ends with a line break"):
        export_lm_eval(
            [challenge300_suite], tmp_path / "t", str(tiny_causal_model), template="{question}\n"
        )
    assert not (tmp_path / "t").exists()


def test_a_category_named_all_does_not_replace_the_file_of_every_test(
    tiny_causal_model, challenge300_suite, tmp_path
):
    """A category "All" was written to data/SUITE/all.jsonl, the file of the whole-suite task,
    which then held only that category's tests (its count in nnd_lm_eval.json stayed 807)."""
    pairs = [
        p.model_copy(update={"category": "All"}) if p.category == "Entity" else p
        for p in challenge300_suite.pairs
    ]
    suite = Suite(challenge300_suite.manifest, pairs, challenge300_suite.candidates)
    export = export_lm_eval([suite], tmp_path / "t", str(tiny_causal_model))
    rows = (tmp_path / "t/data/challenge300/all.jsonl").read_text().splitlines()
    assert len(rows) == export.tasks["nnd_challenge300"] == len(pairs)
    assert export.tasks["nnd_challenge300__all_2"] == 47
    assert "nnd_challenge300__all" not in export.tasks


def test_a_long_category_is_exported_under_a_shortened_task_name(
    tiny_causal_model, challenge300_suite, tmp_path
):
    """A 300-letter category stopped the export: "task name 'nnd_challenge300__xxx...' is not
    letters, digits and '_' (rename the suite)", though it was, and the suite was not at fault."""
    suite = _recategorised(challenge300_suite, {"Entity": "x" * 300})
    export = export_lm_eval([suite], tmp_path / "t", str(tiny_causal_model))
    task = "nnd_challenge300__" + "x" * 80
    assert export.tasks[task] == 47 and export.categories[task] == "x" * 300
    rows = (tmp_path / f"t/data/challenge300/{'x' * 80}.jsonl").read_text().splitlines()
    assert {json.loads(row)["category"] for row in rows} == {"x" * 300}


def test_the_main_file_names_each_tasks_category(tiny_causal_model, challenge300_suite, tmp_path):
    """Categories whose slugs meet ("日本", "中文": both x) were tasks x and x_2 in the order met;
    nothing but the data rows said which was which."""
    renamed = {"Entity": "日本", "Comparison": "中文"}
    export_lm_eval(
        [_recategorised(challenge300_suite, renamed)], tmp_path / "t", str(tiny_causal_model)
    )
    written = json.loads((tmp_path / "t" / MAIN_FILE).read_text("utf-8"))["categories"]
    assert {written["nnd_challenge300__x"], written["nnd_challenge300__x_2"]} == {"日本", "中文"}
    for task, category in written.items():
        data = (tmp_path / "t" / f"{task}.yaml").read_text().split("test: ")[1].split()[0]
        assert {json.loads(row)["category"] for row in Path(data).read_text().splitlines()} == {
            category
        }
    assert set(written) == {
        t for t in json.loads((tmp_path / "t" / MAIN_FILE).read_text())["tasks"] if "__" in t
    }


def test_a_folder_named_with_glob_characters_reads_its_own_data(
    tiny_causal_model, challenge300_suite, tmp_path
):
    """The YAML named its data by a path that datasets reads as a glob pattern: with --to
    'out[1]', load_dataset read out1/data/... (another export, 1 test here) without a word."""
    export_lm_eval([challenge300_suite], tmp_path / "out[1]", str(tiny_causal_model))
    decoy = tmp_path / "out1/data/challenge300/all.jsonl"
    decoy.parent.mkdir(parents=True)
    rows = (tmp_path / "out[1]/data/challenge300/all.jsonl").read_text("utf-8").splitlines()
    decoy.write_text(rows[0] + "\n", "utf-8")
    config = (tmp_path / "out[1]/nnd_challenge300.yaml").read_text("utf-8").split("process_docs")
    kwargs = yaml.safe_load(config[0])["dataset_kwargs"]
    read = datasets.load_dataset("json", **kwargs, split="test", cache_dir=str(tmp_path / "hf"))
    assert len(read) == len(challenge300_suite.pairs)


def _recategorised(suite: Suite, renamed: dict[str, str]) -> Suite:
    pairs = [
        p.model_copy(update={"category": renamed.get(p.category, p.category)}) for p in suite.pairs
    ]
    return Suite(suite.manifest, pairs, suite.candidates)


def test_a_suite_whose_task_is_another_suites_group_is_refused(
    tiny_causal_model, challenge300_suite, tmp_path
):
    """Suites c and c_by_category both wrote nnd_c_by_category.yaml (the one's group, the
    other's task): the group's file was replaced without a word."""
    renamed = [
        Suite(
            challenge300_suite.manifest.model_copy(update={"name": name}),
            challenge300_suite.pairs,
            challenge300_suite.candidates,
        )
        for name in ("c", "c_by_category")
    ]
    with pytest.raises(NNDError, match="suites 'c' and 'c_by_category' both export nnd_c_by_"):
        export_lm_eval(renamed, tmp_path / "t", str(tiny_causal_model))
    assert not (tmp_path / "t").exists()
