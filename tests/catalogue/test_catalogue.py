"""The catalogue: entries as data, `nnd-suites catalogue`, and `build --catalogue`, whose declared
figures are checked against each build."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from datasets import load_dataset

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.catalogue.building import build_catalogue
from nnd_suites.catalogue.entries import CatalogueError, load_catalogue
from nnd_suites.cli import main

CHALLENGE300 = """
suites:
  - name: c300
    adapter: challenge300
    task_type: question answering
    judgment: graded credit
    source: {source}
    figures:
      tests: {tests}
      breakdowns:
        category: {{Common Sense: 518, Science: 193, Entity: 47, Creativity: 34, Comparison: 15}}
      published: "807 tests"
"""


def _shipped_file(name: str) -> Path:
    return ADAPTERS.get(name).default_source_path()


def _catalogue(tmp_path: Path, source: str = "shipped", tests: int = 807) -> Path:
    path = tmp_path / "catalogue.yaml"
    path.write_text(CHALLENGE300.format(source=source, tests=tests))
    return path


def test_every_entry_names_a_registered_adapter_and_the_shipped_figures_hold():
    entries = load_catalogue()
    assert {e.name for e in entries} >= {"quiz_design", "challenge300", "wmt_mqm", "hh_rlhf"}
    assert all(e.metadata().license for e in entries)


def test_the_catalogue_command_lists_each_suite_with_its_source(capsys):
    assert main(["catalogue", "--json"]) == 0
    rows = {row["suite"]: row for row in json.loads(capsys.readouterr().out)["suites"]}
    assert rows["quiz_design"]["source"] == "shipped"
    assert rows["challenge300"]["tests"] == 807
    assert rows["wmt_mqm"]["license"] == "Apache-2.0"


def test_a_build_checks_the_declared_figures_and_loads_with_datasets(tmp_path):
    out = tmp_path / "catalogue"
    built = list(build_catalogue(load_catalogue(_catalogue(tmp_path)), out))
    assert [len(b.suite) for b in built] == [807]
    rows = load_dataset(str(out), "c300", split="test")
    assert rows.num_rows == 807


def test_build_catalogue_says_which_figures_it_checked(tmp_path, monkeypatch, capsys):
    """It printed "declared figures hold: none checked here: ..." (the entry's published figure
    in words) for suites whose test count and breakdowns it had checked."""
    entries = load_catalogue(_catalogue(tmp_path))
    entries[0].figures.published = "none checked here: the rule's count"
    monkeypatch.setattr("nnd_suites.catalogue.entries.load_catalogue", lambda: entries)
    assert main(["build", "--catalogue", "--out", str(tmp_path / "out")]) == 0
    assert (
        "  declared figures hold (807 tests, tests per category); published: none checked here: "
        "the rule's count\n"
    ) in capsys.readouterr().out


def test_build_catalogue_says_when_it_replaces_a_config(tmp_path, monkeypatch, capsys):
    """A second `build --catalogue --out DS` replaced each config saying only "wrote DS/NAME
    (807 pairs)"; it says so now, in export's words."""
    entries = load_catalogue(_catalogue(tmp_path))
    monkeypatch.setattr("nnd_suites.catalogue.entries.load_catalogue", lambda: entries)
    for state in [")\n", "; written again, the same tests as the config it replaced)"]:
        assert main(["build", "--catalogue", "--out", str(tmp_path / "out")]) == 0
        assert f"wrote {tmp_path / 'out' / 'c300'} (807 pairs{state}" in capsys.readouterr().out


def test_a_figure_the_build_does_not_give_is_a_named_error(tmp_path):
    path = _catalogue(tmp_path, tests=806)  # the breakdown summing to 806 too: well-formed
    path.write_text(path.read_text().replace("Comparison: 15", "Comparison: 14"))
    entries = load_catalogue(path)
    with pytest.raises(CatalogueError, match=r"c300: tests: expected 806, the build gave 807"):
        list(build_catalogue(entries, tmp_path / "out"))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("    figures:", "    options: {nope: 1}\n    figures:"), r"unknown parameter 'nope'"),
        (("Comparison: 15", "Comparison: 14"), r"category: its counts sum to 806, not tests 807"),
        (("Comparison: 15", "Comparison: 0"), r"category: a value counts no test"),
        (("category:", "question_type:"), r"no build counts tests per 'question_type'"),
        (
            ("r: challenge300", "r: quiz_design"),
            r"the citation of adapter 'quiz_design' holds the TODO",
        ),
    ],
)
def test_a_bad_entry_is_named_before_any_suite_is_built(tmp_path, monkeypatch, edit, message):
    """A bad entry stopped `build --catalogue` only once it was reached, every entry before it
    built (about 23 s for the shipped catalogue), and an unknown option named the adapter only."""
    good = CHALLENGE300.format(source="shipped", tests=807)
    bad = good.replace("suites:", "").replace("name: c300", "name: late").replace(*edit)
    (tmp_path / "catalogue.yaml").write_text(good + bad)
    entries = load_catalogue(tmp_path / "catalogue.yaml")
    # quiz_design's metadata as `nnd-suites new-adapter` writes it
    metadata = ADAPTERS.get("quiz_design").metadata.model_copy(update={"citation": "TODO"})
    monkeypatch.setattr(ADAPTERS.get("quiz_design"), "metadata", metadata)
    built = lambda *_, **__: pytest.fail("a suite was built before the bad entry was named")  # noqa: E731
    monkeypatch.setattr("nnd_suites.catalogue.building.build_suite", built)
    with pytest.raises(CatalogueError, match=rf"^catalogue suite late: .*{message}"):
        list(build_catalogue(entries, tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def _copy_entry(tmp_path: Path, sha256: str) -> Path:
    source = (
        "{path: challenge300/challenge300-outputs.tsv, sha256: '" + sha256 + "', "
        "url: https://example.org/c300.tsv, license_note: a test}"
    )
    return _catalogue(tmp_path, source=source)


def test_a_source_is_found_in_the_source_folder_by_its_sha256(tmp_path):
    shipped = _shipped_file("challenge300")
    digest = hashlib.sha256(shipped.read_bytes()).hexdigest()
    downloads = tmp_path / "downloads" / "elsewhere"
    downloads.mkdir(parents=True)
    shutil.copy(shipped, downloads / shipped.name)
    entries = load_catalogue(_copy_entry(tmp_path, digest))
    built = list(build_catalogue(entries, tmp_path / "out", tmp_path / "downloads"))
    assert len(built[0].suite) == 807


def test_a_source_not_found_is_skipped_with_where_to_get_it(tmp_path):
    (tmp_path / "downloads").mkdir()
    entries = load_catalogue(_copy_entry(tmp_path, "0" * 64))
    built = list(build_catalogue(entries, tmp_path / "out", tmp_path / "downloads"))
    assert built[0].suite is None
    assert "download https://example.org/c300.tsv" in built[0].skipped


def _built_with_another_sha256(tmp_path: Path) -> str:
    """What build_catalogue says of a downloads folder holding the entry's file with another
    sha256: the error it raises, nothing built."""
    shipped = _shipped_file("challenge300")
    (tmp_path / "downloads").mkdir()
    shutil.copy(shipped, tmp_path / "downloads" / shipped.name)
    entries = load_catalogue(_copy_entry(tmp_path, "0" * 64))
    with pytest.raises(CatalogueError) as raised:
        list(build_catalogue(entries, tmp_path / "out", tmp_path / "downloads"))
    assert not (tmp_path / "out").exists()
    return str(raised.value)


def test_a_source_there_with_another_sha256_is_named_not_called_missing(tmp_path):
    """The skip said "not found in DOWNLOADS" about a file that was there, under its declared
    path, with another sha256: the user went looking for a file they had."""
    shipped = _shipped_file("challenge300")
    digest = hashlib.sha256(shipped.read_bytes()).hexdigest()
    message = _built_with_another_sha256(tmp_path)
    assert "not found" not in message
    assert f"{tmp_path / 'downloads' / shipped.name} is not the declared file" in message
    assert f"its sha256 is {digest[:12]}" in message
    assert "download https://example.org/c300.tsv" in message


def test_a_source_there_with_another_sha256_is_an_error_not_a_skip(tmp_path, monkeypatch, capsys):
    """`build --catalogue --source-dir` skipped a file of the source's name with another sha256
    (exit 0, the other suites built): a wrong file is an error now, naming the file and what to
    do, before anything is built."""
    message = _built_with_another_sha256(tmp_path)
    assert message.startswith("catalogue suite c300: ") and message.endswith("nothing was built")
    assert "move that file out of --source-dir to build the other suites without it" in message
    entries = load_catalogue(_copy_entry(tmp_path, "0" * 64))
    monkeypatch.setattr("nnd_suites.catalogue.entries.load_catalogue", lambda: entries)
    argv = ["build", "--catalogue", "--source-dir", str(tmp_path / "downloads")]
    assert main([*argv, "--out", str(tmp_path / "out")]) == CatalogueError.exit_status
    assert "is not the declared file" in capsys.readouterr().err


def test_a_folder_source_not_found_says_the_folder_name_and_the_file_it_is_known_by(tmp_path):
    """For WMT23's mt-metrics-eval folder the skip said "download .../wmt23 (any mt-metrics-eval-v2
    wmt23 folder) as wmt23_mqm (sha256 6f6e…)": the sha256 of a folder, and no word that the
    folder is found by that name (downloaded as wmt23, it was "not found")."""
    (entry,) = [e for e in load_catalogue() if e.name == "wmt23_mqm_ende"]
    downloads = tmp_path / "downloads"
    score = downloads / "wmt23" / "human-scores" / "en-de.mqm.seg.score"
    score.parent.mkdir(parents=True)
    score.write_text("refA\t0\n")
    (built,) = build_catalogue([entry], tmp_path / "out", downloads)
    assert built.suite is None
    assert "as a folder named wmt23_mqm (its human-scores/en-de.mqm.seg.score: sha256 6f6e617a" in (
        built.skipped
    )
    assert built.skipped.endswith("and give the folder that holds it with --source-dir")
    # under that name, the file it is known by is the one named as not the declared one
    (downloads / "wmt23").rename(downloads / "wmt23_mqm")
    with pytest.raises(CatalogueError) as raised:
        list(build_catalogue([entry], tmp_path / "out", downloads))
    assert f"{downloads / 'wmt23_mqm' / 'human-scores' / 'en-de.mqm.seg.score'} is not the" in (
        str(raised.value)
    )


def test_build_catalogue_prints_what_it_skipped_and_refuses_to_build_nothing(
    tmp_path, monkeypatch, capsys
):
    entries = load_catalogue(_copy_entry(tmp_path, "0" * 64))
    monkeypatch.setattr("nnd_suites.catalogue.entries.load_catalogue", lambda: entries)
    assert main(["build", "--catalogue", "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert "c300: skipped, not shipped (a test): download https://example.org/c300.tsv" in (
        captured.out
    )
    assert "no catalogue suite was built" in captured.err


@pytest.mark.parametrize(
    "given", [["--skip-malformed"], ["--max-pairs", "1"], ["--max-pairs-per-group", "100"]]
)
def test_a_build_option_the_catalogue_does_not_take_is_refused_not_ignored(tmp_path, capsys, given):
    """`build --catalogue --skip-malformed` (or --max-pairs 1) built every suite as catalogue.yaml
    declares it, wmt_mqm's 17,722 tests among them, the option ignored without a word (exit 0)."""
    out = tmp_path / "out"
    assert main(["build", "--catalogue", *given, "--out", str(out)]) == 2
    assert (
        f"--catalogue builds each suite as catalogue.yaml declares it; {given[0]} belong(s) to "
        "one build: run `nnd-suites build ADAPTER ...`"
    ) in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("suites: 3", "expected a mapping with a list 'suites'"),
        ("suites:\n  - {name: x}", r"suite #1 \(x\): adapter: Field required"),
        (
            CHALLENGE300.format(source="shipped", tests=807).replace("challenge300", "nope"),
            "no adapter 'nope'",
        ),
        ("suites: [\n", "cannot parse the YAML"),
        # a figure written twice: the second silently won, and the build blamed the source
        (
            CHALLENGE300.format(source="shipped", tests="807\n      tests: 2000"),
            r"catalogue\.yaml:10: .*key 'tests' appears twice",
        ),
    ],
)
def test_a_malformed_catalogue_names_the_file_and_the_entry(tmp_path, text, message):
    path = tmp_path / "catalogue.yaml"
    path.write_text(text)
    with pytest.raises(CatalogueError, match=message):
        load_catalogue(path)


def test_the_readme_lists_every_catalogue_suite_with_its_test_count():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## The catalogue") :]
    section = section[: section.index("\n## ")]
    missing = [
        entry.name
        for entry in load_catalogue()
        if f"| `{entry.name}` | {entry.judgment} | {entry.figures.tests:,} |" not in section
    ]
    assert missing == []


SHIPPED = [entry for entry in load_catalogue() if entry.shipped]
#: sources that record no system per output: pairwise preferences (HH-RLHF), and UniEval's
#: bundle of SF-RES/SF-HOT, which names each output by an item id only
NO_SYSTEM_NAMES = {"hh_rlhf", "sfres", "sfhot"}


@pytest.mark.parametrize("entry", SHIPPED, ids=[entry.name for entry in SHIPPED])
def test_every_shipped_catalogue_suite_validates_and_scores_its_systems(entry, tmp_path, capsys):
    # as a user gets it: built into a catalogue folder, then read back by the CLI
    out = tmp_path / "catalogue"
    list(build_catalogue([entry], out))
    config = str(out / entry.name)
    assert main(["validate", config]) == 0
    assert f"valid suite {entry.name!r}, {entry.figures.tests:,} pairs" in capsys.readouterr().out
    code = main(["systems", config, "--json"])
    captured = capsys.readouterr()
    if entry.adapter in NO_SYSTEM_NAMES:  # refused, saying why
        assert code == 2 and "name no system that generated them" in captured.err
        return
    assert code == 0
    systems = json.loads(captured.out)["systems"]
    assert len(systems) >= 2 and all(s["candidates"] >= 1 for s in systems.values())
    # a system generated several outputs: an item id read as a system gives one each
    assert sum(s["candidates"] for s in systems.values()) >= 2 * len(systems)


#: a normalisation, a punctuation change, seeded typos and numbers (which touch contexts too)
ROBUSTNESS_TRANSFORMS = ["lowercase", "no_final_punctuation", "typos:rate=0.05,seed=1", "numbers"]


@pytest.mark.slow
@pytest.mark.parametrize("entry", SHIPPED, ids=[entry.name for entry in SHIPPED])
def test_robustness_runs_on_every_shipped_catalogue_suite(
    entry, tiny_causal_model, tmp_path, capsys
):
    # as a user gets it: built into a catalogue folder, then read back by the CLI
    folder = tmp_path / "catalogue"
    list(build_catalogue([entry], folder))
    out = tmp_path / "robustness"
    argv = ["robustness", "--model", str(tiny_causal_model), "--suite", str(folder / entry.name)]
    argv += ["--limit", "2", "--device", "cpu", "--quiet", "--no-cache", "--out", str(out)]
    for spec in ROBUSTNESS_TRANSFORMS:
        argv += ["--transform", spec]
    assert main([*argv, "--json"]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    assert [(c["suite"], c["transform"]) for c in cells] == [
        (entry.name, spec) for spec in ROBUSTNESS_TRANSFORMS
    ]
    evaluation = json.loads((out / "evaluation" / "report.json").read_text(encoding="utf-8"))
    parent = evaluation["suites"][entry.name]
    # every test of the kept groups is paired with its transformed child, none dropped
    assert all(c["n"] + c["degenerate"] == parent["pairs"] > 0 for c in cells)
    assert (out / "robustness.md").stat().st_size > 0 and (out / "robustness.png").stat().st_size
