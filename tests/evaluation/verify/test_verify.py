"""`nnd-suites verify` and `place` end to end, with tiny random models standing in for the
annotated systems (their correlations mean nothing; the plumbing and the figures are checked)."""

from __future__ import annotations

import json
import re

import jsonschema
import numpy as np
import pytest
from scipy import stats

from nnd_suites import build_suite
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli import main
from nnd_suites.errors import NNDError, UnknownItemError
from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.verify.models import VerifyReport
from nnd_suites.human.scores import human_scores
from nnd_suites.infra.output_kinds import model_schema as json_schema

SYSTEMS = ["mixqg", "gpt2b_sup", "dgpt2_sup"]
FAST = ["--limit", "4", "--quiet", "--no-cache", "--device", "cpu", "--resamples", "50"]


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory, quiz_design_suite):
    """Three tiny GPT-2-shaped models, one random seed each, sharing one tokenizer's training,
    and a fourth, the model placed among them (``NEWCOMER``)."""
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    texts = suite_texts([quiz_design_suite])
    folder = tmp_path_factory.mktemp("tiny_systems")
    return [
        tiny_causal_lm(
            folder / f"m{seed}",
            texts,
            vocab_size=512,
            n_layer=1,
            n_embd=32,
            n_head=2,
            n_positions=512,
            seed=seed,
        )
        for seed in range(len(SYSTEMS) + 1)
    ]


NEWCOMER = len(SYSTEMS)


def _system_args(models):
    return [
        arg
        for name, m in zip(SYSTEMS, models[:NEWCOMER], strict=True)
        for arg in ("--system", f"{name}={m}")
    ]


def test_verify_end_to_end(tiny_models, quiz_design_suite, tmp_path, capsys):
    out = tmp_path / "verify"
    assert (
        main(
            [
                "verify",
                "quiz_design",
                *_system_args(tiny_models),
                "--out",
                str(out),
                *FAST,
                "--json",
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    written = json.loads((out / "verify.json").read_text())
    assert printed == written
    schema = json.loads((out / "verify.schema.json").read_text())
    assert schema == json.loads(json.dumps(json_schema(VerifyReport)))
    jsonschema.Draft202012Validator(schema).validate(written)
    assert (out / "verify.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "3 systems" in written["note"] and "wide bootstrap intervals" in written["note"]
    assert "wide bootstrap intervals" in (out / "verify.md").read_text()

    overall = written["overall"]
    assert overall["systems"] == 3 and set(overall["pass_rates"]) == set(SYSTEMS)
    # each pass rate is the model's own evaluation on the same first 4 groups
    for name, model in zip(SYSTEMS, tiny_models[:NEWCOMER], strict=True):
        result = evaluate(
            str(model), "quiz_design", limit=4, progress=False, cache=False, device="cpu"
        )
        assert overall["pass_rates"][name] == pytest.approx(result.suites["quiz_design"].pass_rate)
        assert overall["tests"] == result.suites["quiz_design"].pairs
    human = human_scores(quiz_design_suite).systems
    assert overall["human_scores"] == {n: human[n].human_score for n in SYSTEMS}
    x = [overall["pass_rates"][n] for n in SYSTEMS]
    y = [overall["human_scores"][n] for n in SYSTEMS]
    if len(set(x)) > 1:
        assert overall["kendall_tau"] == pytest.approx(stats.kendalltau(x, y).statistic)
    for category, result in written["by_category"].items():
        assert written["category_kinds"][category] == "error"
        assert result["human_scores"] == {n: human[n].by_category[category] for n in SYSTEMS}


def test_systems_file_and_placement(tiny_models, tmp_path, capsys):
    mapping = tmp_path / "systems.yaml"
    systems = zip(SYSTEMS, tiny_models[:NEWCOMER], strict=True)
    mapping.write_text("".join(f"{n}: {m}\n" for n, m in systems))
    out = tmp_path / "verify"
    assert (
        main(["verify", "quiz_design", "--systems-file", str(mapping), "--out", str(out), *FAST])
        == 0
    )
    assert "| **overall** |" in capsys.readouterr().out
    run = tmp_path / "run"
    newcomer = str(tiny_models[NEWCOMER])
    argv = ["evaluate", "--suite", "quiz_design", "--model", newcomer, "--out", str(run)]
    assert main([*argv, "--limit", "4", "--quiet", "--device", "cpu"]) == 0
    capsys.readouterr()
    assert main(["place", str(out), str(run), "--json"]) == 0
    placement = json.loads(capsys.readouterr().out)
    verify = json.loads((out / "verify.json").read_text())["overall"]
    x = np.array([verify["pass_rates"][n] for n in SYSTEMS])
    y = np.array([verify["human_scores"][n] for n in SYSTEMS])
    slope, intercept = np.polyfit(x, y, 1)
    # the verified suite scored second beside another suite of its name (reported as
    # quiz_design_2) is found by its content: the same placement
    source = ADAPTERS.get("quiz_design").default_source_path()
    (tmp_path / "part.jsonl").write_text("".join(source.read_text().splitlines(True)[:60]))
    part = build_suite("quiz_design", tmp_path / "part.jsonl", tmp_path / "part")
    two = tmp_path / "two"
    argv_two = [*argv[:2], str(tmp_path / "part"), "--suite", *argv[2:-1], str(two)]
    assert main([*argv_two, "--limit", "4", "--quiet", "--device", "cpu"]) == 0
    assert json.loads((two / "report.json").read_text())["suites"]["quiz_design_2"]["suite_name"]
    capsys.readouterr()
    assert main(["place", str(out), str(two), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == placement
    assert (
        part.manifest.content_hash != json.loads((out / "verify.json").read_text())["content_hash"]
    )
    placed = placement["overall"]
    own = json.loads((run / "report.json").read_text())["suites"]["quiz_design"]["overall"]
    assert placed["pass_rate"] == pytest.approx(own["pass_rate"])
    assert placed["predicted_human_score"] == pytest.approx(slope * placed["pass_rate"] + intercept)
    assert placed["poor_fit"] and "only 3 annotated systems" in placed["reason"]
    low, high = placed["prediction_interval"]
    assert low < placed["predicted_human_score"] < high

    folder = tmp_path / "placement"
    assert main(["place", str(out), str(run), "--out", str(folder)]) == 0
    written = json.loads((folder / "placement.json").read_text())
    jsonschema.validate(written, json.loads((folder / "placement.schema.json").read_text()))
    assert written == placement
    assert "| **overall** |" in (folder / "placement.md").read_text()
    assert (folder / "placement.png").read_bytes().startswith(b"\x89PNG")
    assert main(["place", str(out), str(run), "--out", str(out)]) == NNDError.exit_status
    assert "not a placement report" in capsys.readouterr().err  # a verify folder is kept

    other = tmp_path / "other"
    assert (
        main([*argv[:-2], "--out", str(other), "--limit", "5", "--quiet", "--device", "cpu"]) == 0
    )
    assert main(["place", str(out), str(other)]) == NNDError.exit_status
    err = capsys.readouterr().err
    assert "other tests of quiz_design" in err
    # the same suite, another --limit: only the limit is named, not "content hash X vs X"
    assert "tests kept by --limit: 33 of 2,686 (the first 5 groups) vs 29" in err, err
    assert "content hash" not in err


def test_a_model_the_fit_was_made_from_is_not_placed(tiny_models, tmp_path, capsys):
    """`place` placed mixqg's own model on a fit drawn through mixqg's pass rate and human score
    (exit 0, a 'predicted' human score that is its own): now refused, naming the system, for its
    weights found at another path too, and by name for a verify run that predates models by
    content. Its weights are matched, not its whole folder: a copy with a README added, or one
    file that is not a weight left out, was placed (exit 0, mixqg's own pass rate)."""
    import shutil

    out = tmp_path / "verify"
    assert (
        main(["verify", "quiz_design", *_system_args(tiny_models), "--out", str(out), *FAST]) == 0
    )
    shutil.copytree(tiny_models[0], tmp_path / "copy")
    readme = shutil.copytree(tiny_models[0], tmp_path / "with_readme")
    (readme / "README.md").write_text("# my copy\n", encoding="utf-8")
    fewer = shutil.copytree(tiny_models[0], tmp_path / "one_file_fewer")
    (fewer / "generation_config.json").unlink()
    for model in (tiny_models[0], tmp_path / "copy", readme, fewer):
        run = tmp_path / f"run_{model.name}"
        argv = ["--suite", "quiz_design", "--model", str(model), "--out", str(run)]
        assert main(["evaluate", *argv, "--limit", "4", "--quiet", "--device", "cpu"]) == 0
        capsys.readouterr()
        assert main(["place", str(out), str(run)]) == NNDError.exit_status
        err = capsys.readouterr().err
        assert (
            f"{model} is the model the verify run of quiz_design scored for system(s) mixqg" in err
        )
        assert "circular" in err and "run verify without it" in err
    written = json.loads((out / "verify.json").read_text())
    assert written.pop("system_models")["mixqg"] != {"model": str(tiny_models[0])}  # by content
    (out / "verify.json").write_text(json.dumps(written))
    assert (
        main(["place", str(out), str(tmp_path / f"run_{tiny_models[0].name}")])
        == NNDError.exit_status
    )
    assert "scored for system(s) mixqg" in capsys.readouterr().err


def test_unknown_system_suggests_the_annotated_ones(tiny_models, tmp_path, capsys):
    argv = ["verify", "quiz_design", "--system", f"mixgq={tiny_models[0]}", "--system"]
    status = main([*argv, f"dgpt2_sup={tiny_models[1]}", "--out", str(tmp_path / "v"), *FAST])
    assert status == UnknownItemError.exit_status
    err = capsys.readouterr().err
    assert "unknown system of suite quiz_design 'mixgq'; did you mean 'mixqg'?" in err
    assert not (tmp_path / "v").exists()


def test_a_missing_model_folder_fails_before_any_system_is_scored(
    tiny_models, tmp_path, capsys, monkeypatch
):
    import importlib

    evaluation = importlib.import_module("nnd_suites.evaluation.evaluator")  # the module

    def must_not_score(*args, **kwargs):
        raise AssertionError("a system was scored before the missing folder was named")

    monkeypatch.setattr(evaluation, "evaluate", must_not_score)
    missing = tmp_path / "models" / "tinyy"
    (tmp_path / "models").mkdir()
    argv = ["verify", "quiz_design", "--system", f"mixqg={tiny_models[0]}", "--system"]
    status = main([*argv, f"dgpt2_sup={missing}", "--out", str(tmp_path / "v"), *FAST])
    assert status == 9  # ModelLoadError
    assert f"model '{missing}': no such folder" in capsys.readouterr().err


def test_one_system_is_not_enough(tiny_models, tmp_path, capsys):
    argv = ["verify", "quiz_design", "--system", f"mixqg={tiny_models[0]}"]
    assert main([*argv, "--out", str(tmp_path / "v"), *FAST]) == NNDError.exit_status
    assert "at least 2 systems" in capsys.readouterr().err


def test_one_model_for_two_systems_says_why_the_correlations_are_undefined(
    tiny_models, tmp_path, capsys
):
    argv = ["verify", "quiz_design", "--system", f"mixqg={tiny_models[0]}", "--system"]
    assert main([*argv, f"dgpt2_sup={tiny_models[0]}", "--out", str(tmp_path / "v"), *FAST]) == 0
    report = (tmp_path / "v" / "verify.md").read_text()
    assert "| **overall** | " in report and "| n/a | n/a | n/a | n/a |" in report
    assert "n/a: undefined there" in report
    assert f"one model stands for several systems ({tiny_models[0]}: " in report


def test_categories_without_a_correlation_are_listed_with_the_reason(tiny_models, tmp_path):
    argv = ["verify", "challenge300", *_system_args(tiny_models)]
    argv = [a.replace("mixqg", "Macaw-11B").replace("gpt2b_sup", "GPT3-davinci") for a in argv]
    argv = [a.replace("dgpt2_sup", "T5-XXL-SSM-NQ") for a in argv]
    assert main([*argv, "--out", str(tmp_path / "v"), *FAST]) == 0
    report = json.loads((tmp_path / "v" / "verify.json").read_text())
    # the first 4 groups of Challenge 300 hold Common Sense questions only: --limit emptied the
    # other categories, and says so
    assert set(report["by_category"]) == {"Common Sense"}
    why = "--limit left no test of this category"
    assert report["categories_left_out"] == dict.fromkeys(
        ["Science", "Entity", "Creativity", "Comparison"], why
    )
    assert f"- Science: {why}" in (tmp_path / "v" / "verify.md").read_text()


def test_a_systems_file_naming_a_system_twice_is_refused_with_its_line(tmp_path, capsys):
    from nnd_suites.evaluation.verify.run import read_systems_file

    mapping = tmp_path / "systems.yaml"
    mapping.write_text("mixqg: ./a\ndgpt2_sup: ./b\nmixqg: ./c\n")
    with pytest.raises(NNDError, match=r"systems.yaml:3: .*'mixqg' appears twice"):
        read_systems_file(mapping)
    mapping.write_text("base: &m ./a\nmixqg: *m\n")
    with pytest.raises(NNDError, match=r"systems.yaml:2: .*alias"):
        read_systems_file(mapping)
    mapping.write_text("mixqg: ./a\ndgpt2_sup: ./b\x07\n")
    with pytest.raises(NNDError, match=r"systems.yaml:2: .*character 7 is not allowed.*remove it"):
        read_systems_file(mapping)
    mapping.write_text("systems:\n  mixqg: ./a\n  dgpt2_sup: ./b\n")
    assert read_systems_file(mapping) == {"mixqg": "./a", "dgpt2_sup": "./b"}


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"a": ' * 5_000 + "1" + "}" * 5_000, "verify.json: JSON nested 5000 deep"),
        (None, "fifo: is a fifo (named pipe), not a verify report"),
        ("/dev/zero", "/dev/zero: is a device, not a verify report"),
    ],
)
def test_place_reads_the_verify_report_within_bounds(tmp_path, capsys, content, message):
    """place read the verify report whole, as given: a fifo with no writer waited forever,
    /dev/zero filled the memory, JSON nested 5,000 deep failed in the parser. It is read as
    every run file is, a bounded regular file, and refused by name."""
    import os

    if content is None:
        verify = tmp_path / "fifo"
        os.mkfifo(verify)
    elif content.startswith("/"):
        verify = content
    else:
        verify = tmp_path / "verify.json"
        verify.write_text(content)
    assert main(["place", str(verify), str(tmp_path)]) == NNDError.exit_status
    err = capsys.readouterr().err
    assert message in err and "not a readable nnd-suites verify report" in err, err


def test_a_verify_report_edited_out_of_range_is_refused_naming_the_field(
    tiny_models, tmp_path, capsys
):
    """A verify.json whose confidence was edited to 1.5 was placed (exit 0) under a '150%
    prediction interval'; a field out of range is now refused, named with the value found."""
    out = tmp_path / "verify"
    assert (
        main(["verify", "quiz_design", *_system_args(tiny_models), "--out", str(out), *FAST]) == 0
    )
    written = json.loads((out / "verify.json").read_text())
    (out / "verify.json").write_text(json.dumps({**written, "confidence": 1.5}))
    capsys.readouterr()
    assert main(["place", str(out), str(tmp_path)]) == NNDError.exit_status
    assert "confidence: Input should be less than 1 (got 1.5)" in capsys.readouterr().err


def _edits(written: dict) -> list[tuple[str, dict, str]]:
    """(what was edited, the edited report, what the refusal names)."""
    system = next(iter(written["systems"]))
    outcomes = written["outcomes"][system]
    dropped = {**written["outcomes"], system: dict(list(outcomes.items())[1:])}
    low, high = written["score_range"]
    overall = written["overall"]
    models = {n: m for n, m in written["system_models"].items() if n != system}
    category, *_ = written["by_category"]
    fits = {c: fit for c, fit in written["by_category"].items() if c != category}
    twice = {**written["categories_left_out"], category: "edited"}
    over = {**overall["pass_rates"], "mixqg": 1.5}
    past = {"kendall_tau": written["resamples"] + 1, "gap_pearson": 0}
    flipped = {
        **written["outcomes"],
        system: {t: ("fail" if o == "pass" else "pass") for t, o in outcomes.items()},
    }
    return [
        (
            "a NaN human score",
            {
                **written,
                "overall": {
                    **overall,
                    "human_scores": {**overall["human_scores"], system: float("nan")},
                },
            },
            "human_scores",
        ),
        ("an inverted score range", {**written, "score_range": [high, low]}, "score_range"),
        ("a test taken out of the outcomes", {**written, "outcomes": dropped}, "outcomes"),
        ("outcomes edited against the pass rates", {**written, "outcomes": flipped}, "pass_rates"),
        ("every system taken out of every field", _without_systems(written), "systems"),
        ("one system's model taken out", {**written, "system_models": models}, "system_models"),
        ("the systems counted", {**written, "overall": {**overall, "systems": 2}}, "systems says"),
        ("a limit --limit refuses", {**written, "limit": -1}, "limit"),
        ("a limit that kept other groups", {**written, "limit": 7}, "but limit 7 keeps 7"),
        ("a category's fit taken out", {**written, "by_category": fits}, "category_kinds names"),
        ("a fitted category left out", {**written, "categories_left_out": twice}, "left_out"),
        ("a tau of 5", _overall(written, kendall_tau=5), "kendall_tau: Input should be less"),
        ("an interval turned over", _overall(written, gap_pearson_ci=[0.5, -0.5]), "lowest"),
        ("resamples of -1", {**written, "resamples": -1}, "resamples: Input should be greater"),
        ("a pass rate over 1", _overall(written, pass_rates=over), "pass_rates.mixqg"),
        ("undefined past resamples", _overall(written, undefined_resamples=past), "exceed"),
    ]


def _overall(written: dict, **fields) -> dict:
    return {**written, "overall": {**written["overall"], **fields}}


def _without_systems(written: dict) -> dict:
    """The report with no system left in any field that names them (a fit needs two)."""
    empty = {"pass_rates": {}, "human_scores": {}, "systems": 0}
    return {
        **written,
        **{field: {} for field in ("systems", "outcomes", "system_models")},
        "overall": {**written["overall"], **empty},
        "by_category": {c: {**fit, **empty} for c, fit in written["by_category"].items()},
    }


def test_a_verify_report_whose_figures_were_edited_is_refused_not_placed(
    tiny_models, tmp_path, capsys
):
    """place refits the line on the report's per-test outcomes and bounds its prediction by the
    score range: an edited NaN score was placed as null, an inverted range forced 0.0, and a
    test taken out of the outcomes quietly refit on fewer tests, a system's model taken out of
    system_models was no longer refused as circular, a category's fit taken out left it out of
    the placement, and a tau of 5, an interval turned over or resamples of -1 were read as
    figures (each exit 0); a report emptied of its systems ended in StopIteration. Each is
    refused, naming the field, and the report as written still places."""
    out = tmp_path / "verify"
    args = ["verify", "quiz_design", *_system_args(tiny_models), "--out", str(out), *FAST]
    assert main(args) == 0
    report = out / "verify.json"
    written = json.loads(report.read_text())
    run = tmp_path / "run"
    model = str(tiny_models[NEWCOMER])
    argv = ["evaluate", "--suite", "quiz_design", "--model", model, "--out", str(run)]
    assert main([*argv, "--limit", "4", "--quiet", "--device", "cpu"]) == 0
    capsys.readouterr()
    for what, edited, field in _edits(written):
        report.write_text(json.dumps(edited))
        assert main(["place", str(out), str(run)]) == NNDError.exit_status, what
        err = capsys.readouterr().err
        assert field in err and str(report) in err, (what, err)
    # a category's fit and kind both taken out: consistent in itself, but the tests fall there
    category, *_ = written["by_category"]
    kinds = {c: k for c, k in written["category_kinds"].items() if c != category}
    fits = {c: f for c, f in written["by_category"].items() if c != category}
    report.write_text(json.dumps({**written, "by_category": fits, "category_kinds": kinds}))
    assert main(["place", str(out), str(run)]) == NNDError.exit_status
    assert f"categories ['{category}'] that neither by_category" in capsys.readouterr().err
    report.write_text(json.dumps(written))
    assert main(["place", str(out), str(run), "--out", str(tmp_path / "placed")]) == 0


def test_a_verify_report_edited_consistently_is_refused_not_placed(tiny_models, tmp_path, capsys):
    """A verify.json whose human score, confidence, score range or measure was edited, each
    still agreeing with the rest of the file, was placed (exit 0) on figures no verify run
    produced, and a human score of `true` was read as 1.0. Each is refused, naming the file and
    saying to re-run verify, and so is a report without its figures digest (written before it,
    or taken out); the report as written, re-indented, still places."""
    out = tmp_path / "verify"
    args = ["verify", "quiz_design", *_system_args(tiny_models), "--out", str(out), *FAST]
    assert main(args) == 0
    report = out / "verify.json"
    written = json.loads(report.read_text())
    run = tmp_path / "run"
    argv = ["evaluate", "--suite", "quiz_design", "--model", str(tiny_models[NEWCOMER])]
    assert main([*argv, "--out", str(run), "--limit", "4", "--quiet", "--device", "cpu"]) == 0
    capsys.readouterr()
    human = written["overall"]["human_scores"]
    system = min(human, key=human.get)  # raised a little: still within the score range
    raised = {**human, system: (human[system] + max(human.values())) / 2}
    digest = {k: v for k, v in written.items() if k != "figures_digest"}
    edited = "did not write (they no longer match its figures_digest: the file was edited)"
    for what, changed, said in [
        ("a human score", _overall(written, human_scores=raised), edited),
        ("the confidence", {**written, "confidence": 0.5}, edited),
        ("the score range", {**written, "score_range": [-1.0, 2.0]}, edited),
        ("the measure", {**written, "measure": "edited"}, edited),
        ("the digest taken out", digest, "records no figures_digest"),
        (
            "a human score of true",
            _overall(written, human_scores={**human, system: True}),
            "valid number",
        ),
    ]:
        report.write_text(json.dumps(changed))
        assert main(["place", str(out), str(run)]) == NNDError.exit_status, what
        err = capsys.readouterr().err
        assert said in err and str(report) in err, (what, err)
        assert "re-run `nnd-suites verify`" in err or what.endswith("true"), (what, err)
    report.write_text(json.dumps(written, indent=4))
    assert main(["place", str(out), str(run), "--json"]) == 0


def test_place_in_verify_from_python_refuses_figures_verify_did_not_find(tiny_models, tmp_path):
    """place_in_verify(verify, report) from Python placed a model in a verify report whose
    figures were changed (or whose digest was taken out) with no word: only `place` and
    place_saved checked figures_digest. It refuses them as `place` does; the report as verify
    made it places."""
    from nnd_suites.evaluation.saved import load_report
    from nnd_suites.evaluation.verify import place_in_verify, verify_suite

    systems = dict(zip(SYSTEMS, tiny_models[:NEWCOMER], strict=True))
    options = {"limit": 4, "device": "cpu", "cache": False, "progress": False}
    verify = verify_suite("quiz_design", systems, resamples=50, **options)
    run = tmp_path / "run"
    argv = ["evaluate", "--suite", "quiz_design", "--model", str(tiny_models[NEWCOMER])]
    assert main([*argv, "--out", str(run), "--limit", "4", "--quiet", "--device", "cpu"]) == 0
    report = load_report(run)
    assert place_in_verify(verify, report).overall.pass_rate is not None
    named = "the verify report of quiz_design: "
    for changed, said in [
        (verify.model_copy(update={"confidence": 0.5}), "holds figures .* did not write"),
        (verify.model_copy(update={"figures_digest": None}), "records no figures_digest"),
    ]:
        with pytest.raises(NNDError, match=named + said) as refused:
            place_in_verify(changed, report)
        assert "re-run `nnd-suites verify`" in str(refused.value)


def test_a_bootstrap_numpy_or_the_report_refuses_is_refused_before_scoring(
    tiny_models, tmp_path, capsys
):
    """`verify --seed -1` scored every system, then ended in numpy's ValueError traceback
    ("expected non-negative integer"); verify_suite(resamples=0) or confidence=1.5 ended in the
    report's ValidationError after the scoring too. Each is refused before any model loads."""
    from nnd_suites.errors import ArgumentError
    from nnd_suites.evaluation.verify import verify_suite

    argv = ["verify", "quiz_design", *_system_args(tiny_models), "--out", str(tmp_path / "v")]
    with pytest.raises(SystemExit) as usage:
        main([*argv, *FAST, "--seed", "-1"])
    assert usage.value.code == 2 and "--seed: -1 is below 0" in capsys.readouterr().err
    systems = {"mixqg": str(tmp_path / "no_model"), "gpt2b_sup": str(tmp_path / "none")}
    for option, said in [
        ({"seed": -1}, "seed=-1): give a whole number >= 0"),
        ({"resamples": 0}, "resamples=0): give a whole number >= 1"),
        ({"confidence": 1.5}, "confidence=1.5): give a level between 0 and 1"),
    ]:
        with pytest.raises(ArgumentError, match=re.escape(said)):
            verify_suite("quiz_design", systems, **option)


def test_a_verify_of_random_models_says_so_once_they_are_gone(tiny_models, tmp_path, capsys):
    """verify.md said PIPELINE CHECK only while the systems' tiny model folders existed (their
    stamp was looked up again): verify.json re-rendered after they were deleted lost the note,
    and `place` of a real model in such a verify never said it. verify.json records it now."""
    import shutil

    from nnd_suites.evaluation.tiny import EMBEDDED_NOTE
    from nnd_suites.evaluation.tiny.stamp import write_stamp
    from nnd_suites.evaluation.verify.render import load_verify, verify_markdown

    systems = [shutil.copytree(m, tmp_path / "gone" / m.name) for m in tiny_models[:NEWCOMER]]
    for seed, folder in enumerate(systems):  # as `python -m nnd_suites.evaluation.tiny` makes it
        write_stamp(folder, "gpt2", seed, ["quiz_design"])
    out = tmp_path / "verify"
    assert main(["verify", "quiz_design", *_system_args(systems), "--out", str(out), *FAST]) == 0
    assert EMBEDDED_NOTE in (out / "verify.md").read_text()
    shutil.rmtree(tmp_path / "gone")
    assert json.loads((out / "verify.json").read_text())["random_weights"] is True
    assert EMBEDDED_NOTE in verify_markdown(load_verify(out))
    # a model that is not a stamped tiny one, placed among them: the placement says it too
    run = tmp_path / "run"
    newcomer = str(tiny_models[NEWCOMER])
    argv = ["evaluate", "--suite", "quiz_design", "--model", newcomer, "--out", str(run)]
    assert main([*argv, "--limit", "4", "--quiet", "--device", "cpu"]) == 0
    assert json.loads((run / "report.json").read_text())["random_weights"] is False
    capsys.readouterr()
    assert main(["place", str(out), str(run)]) == 0
    assert EMBEDDED_NOTE in capsys.readouterr().out
