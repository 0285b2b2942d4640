"""The adapter harness: one case per registered adapter, collected from the registry.

A new adapter needs no edit here: its folder, README and fixtures/expected_stats.json are found by
convention (nnd_suites.scaffold.harness).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import nnd_suites.adapters
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.plugins.harness import plugin_problems
from nnd_suites.scaffold import harness

ADAPTERS_FOLDER = Path(nnd_suites.adapters.__path__[0])
#: The repository's own adapters (third-party ones installed beside are tested by their package).
BUILTIN = [name for name in ADAPTERS.names() if ADAPTERS.origin(name) == "builtin"]


@pytest.mark.parametrize("name", BUILTIN)
def test_fixture_builds_validates_and_gives_expected_stats(name, tmp_path):
    problems = harness.check_fixture(ADAPTERS.get(name), tmp_path)
    assert not problems, f"adapter {name}: " + "; ".join(problems)


@pytest.mark.parametrize("name", BUILTIN)
def test_readme_has_required_sections(name):
    problems = harness.readme_problems(ADAPTERS.get(name).folder())
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("name", BUILTIN)
def test_metadata_holds_no_placeholder(name):
    problems = harness.placeholder_problems(ADAPTERS.get(name))
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_extras_are_declared(name):
    import tomllib

    declared = tomllib.loads((ADAPTERS_FOLDER.parent / "pyproject.toml").read_text("utf-8"))
    extras = set(declared["project"].get("optional-dependencies", {}))
    assert set(ADAPTERS.get(name).metadata.extras) <= extras


def test_every_adapter_folder_is_registered_documented_and_has_its_case():
    """The plugin harness every kind runs (its planted defects:
    tests/plugins/test_plugin_problems.py)."""
    assert len(BUILTIN) >= 6
    assert plugin_problems(ADAPTERS) == []


# ------------------------------------------------- the checks catch what they are meant to catch
def test_readme_without_a_section_or_with_an_empty_one_is_reported(tmp_path):
    readme = ADAPTERS.get("frank").folder() / "README.md"
    text = readme.read_text("utf-8")
    (tmp_path / "README.md").write_text(text.replace("## License", "## Licence"))
    assert harness.readme_problems(tmp_path) == [
        f"{tmp_path / 'README.md'}: no '## License' section"
    ]
    (tmp_path / "README.md").write_text("## Source\nx\n## License\n\n## Citation\nx\n")
    problems = harness.readme_problems(tmp_path)
    assert any("'## License' is empty" in p for p in problems)
    assert any("no '## Quality rule'" in p for p in problems)
    assert harness.readme_problems(tmp_path / "nowhere") == [
        f"{tmp_path / 'nowhere' / 'README.md'} is missing"
    ]


def test_wrong_expected_stats_are_reported():
    cls = ADAPTERS.get("frank")
    expected = harness.load_expected(cls)
    wrong = expected.model_copy(update={"pairs": expected.pairs + 1})
    from nnd_suites import build_suite

    stats = build_suite(cls.name, cls.folder() / "fixtures" / expected.source).stats()
    assert harness.stats_differences(expected, stats) == []
    differences = harness.stats_differences(wrong, stats)
    assert differences == [f"pairs: expected {expected.pairs + 1}, got {expected.pairs}"]


def test_suite_file_validation_rejects_a_corrupt_manifest(tmp_path):
    import jsonschema

    from nnd_suites import build_suite

    cls = ADAPTERS.get("quiz_design")
    source = cls.folder() / "fixtures" / harness.load_expected(cls).source
    build_suite(cls.name, source, tmp_path / "suite")
    harness.validate_suite_files(tmp_path / "suite", tmp_path / "schemas")
    manifest_path = tmp_path / "suite" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["counts"]["pairs"] = -1
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(jsonschema.ValidationError):
        harness.validate_suite_files(tmp_path / "suite", tmp_path / "schemas")


def _proposed(tmp_path: Path, sample: Path):
    """``new-adapter my_votes --declarative --sample SAMPLE``'s adapter, as the registry would
    load it (its map beside its source.yaml: not in the shipped ones)."""
    from nnd_suites.declarative.plugin import declared_adapter
    from nnd_suites.scaffold.declarative import write_declarative

    for folder in ("adapters", "quality_maps"):
        (tmp_path / folder).mkdir()
    write_declarative(tmp_path, "my_votes", sample)
    folder = tmp_path / "adapters" / "my_votes"
    (tmp_path / "quality_maps" / "my_votes.yaml").rename(folder / "my_votes.yaml")
    yaml = folder / "source.yaml"
    yaml.write_text(yaml.read_text("utf-8").replace("map: my_votes", "map: my_votes.yaml"))
    cls = declared_adapter("my_votes", folder)
    cls.name = "my_votes"  # what registering it would set
    return cls


def test_an_adapter_without_a_fixture_yet_is_told_what_to_write(tmp_path):
    """new-adapter --declarative writes no fixture: test_metadata_holds_no_placeholder then
    failed with "no fixtures/expected_stats.json" (an exception) instead of the TODOs, and the
    fixture test raised it. Each now lists what to write."""
    sample = ADAPTERS.get("simpeval_2022").folder() / "fixtures"
    cls = _proposed(tmp_path, next(sample.glob("*.csv")))
    folder = cls.folder()
    assert harness.placeholder_problems(cls)[0] == (
        "adapter my_votes: description, license, citation, task, quality map description, "
        "source_urls still hold the scaffold's TODO; write them (metadata in adapter.py or "
        "source.yaml, the description in its quality map)"
    )
    assert harness.check_fixture(cls, tmp_path) == [
        f"no {folder / 'fixtures' / 'expected_stats.json'}; every adapter ships a small fixture "
        "and its expected statistics (see CONTRIBUTING.md)"
    ]


def test_a_proposals_unresolved_guesses_are_named_at_their_lines(tmp_path):
    """A proposal's guesses were checked by nothing: its map's `minimum_gap: 1  # TODO` (the
    rule's gap, 10 in simpeval_past: 22,180 tests instead of 13,552 on SimpEval-past), the
    `en` assumed, `source_urls: https://example.org/TODO` went through the harness once the
    metadata was written. Each note the proposal leaves is now named at its line until deleted;
    the TODO URL also as a metadata field, for a class adapter's stub writes one too."""
    cls = _proposed(
        tmp_path, ADAPTERS.get("simpeval_past").folder() / "fixtures" / "simpeval_past_sample.csv"
    )
    source, rule = cls.folder() / "source.yaml", cls.folder() / "my_votes.yaml"
    problems = harness.placeholder_problems(cls)
    assert "source_urls still hold the scaffold's TODO" in problems[0]

    def at(path: Path, start: str) -> str:
        lines = path.read_text("utf-8").splitlines()
        return f"{path}:{next(n for n, x in enumerate(lines, 1) if x.lstrip().startswith(start))}"

    decide = " (decide, then delete the CHECK note)"
    assert problems[-1] == (
        f"{at(rule, 'minimum_gap:')}: CHECK rating_rule.minimum_gap = 1: the gap that makes one "
        f"output better, 1 assumed{decide}"
    )
    assert (
        f"{at(source, 'languages:')}: CHECK metadata.languages: the language(s) of the texts, en "
        f"assumed{decide}" in problems
    )
    assert (
        f"{at(source, 'source_urls:')}: CHECK metadata.source_urls: where the annotations are "
        f"published (replace the TODO){decide}" in problems
    )
    assert (
        f"{at(source, 'text:')}: CHECK candidates.text = processed_generation: guessed from "
        f"the header{decide}" in problems
    )
    assert all(p.startswith(f"{source}:") for p in problems[1:-1])
    # decided: every note deleted (the metadata written), nothing is left to name
    for path in (source, rule):
        notes = r"  # CHECK: .*|^# CHECK: .*\n(#   .*\n)*"
        path.write_text(re.sub(notes, "", path.read_text("utf-8"), flags=re.M))
    assert harness.guess_problems(cls) == []


def test_the_proposed_template_is_a_guess_to_confirm(tmp_path):
    """Copilot Arena's proposal got the template `{prefix}\\n{suffix}\\n`, unmarked: each
    completion would be scored after the code that follows its cursor. The template is a CHECK
    note, printed and named by the harness until it is confirmed."""
    cls = _proposed(
        tmp_path, ADAPTERS.get("copilot_arena").folder() / "fixtures" / "copilot_arena_sample.csv"
    )
    note = (
        'CHECK template = "{prefix}\\n{suffix}\\n": each text is scored as what follows it; '
        "write the context as the raters saw it before the text (a field that comes after the "
        "text, as the code after a completion's cursor, does not belong here) (decide, then "
        "delete the CHECK note)"
    )
    source = cls.folder() / "source.yaml"
    lines = enumerate(source.read_text("utf-8").splitlines(), 1)
    # at the template's own line, as every guessed key's note (it was the header's line 5)
    line = next(n for n, text in lines if text.startswith("template: "))
    assert f"{source}:{line}: {note}" in harness.guess_problems(cls)


def test_a_suite_built_from_unconfirmed_guesses_is_warned_of_and_not_published(
    tmp_path, monkeypatch, capsys
):
    """Only the harness named a proposal's CHECK notes: `build` of SimpEval-past's proposal
    (`minimum_gap: 1` guessed) printed its figures and not a word of them, and `validate`,
    `export` and `publish` took the suite, exit 0. build and validate now warn on stderr,
    naming each note (FILE:LINE, the key); export and publish refuse the suite until the notes
    are deleted and it is built again."""
    from nnd_suites.cli import main
    from nnd_suites.declarative.plugin import declared_adapter
    from nnd_suites.errors import SuiteValidationError
    from nnd_suites.hub import publish_suites
    from nnd_suites.suite import Suite

    sample = ADAPTERS.get("simpeval_past").folder() / "fixtures" / "simpeval_past_sample.csv"
    cls = _proposed(tmp_path, sample)
    files = (cls.folder() / "source.yaml", cls.folder() / "my_votes.yaml")
    for path in files:  # the metadata written (export refuses a TODO): the guesses are left
        path.write_text(re.sub(r"\bTODO\b", "written", path.read_text("utf-8")))
    cls = declared_adapter("my_votes", cls.folder())  # as a new process loads it
    cls.name = "my_votes"
    ADAPTERS.names()  # discovered first: the proposal, under tmp_path, is not among them
    monkeypatch.setitem(ADAPTERS._classes, "my_votes", cls)
    notes = harness.guess_problems(cls)
    gap = next(note for note in notes if "CHECK rating_rule.minimum_gap = 1" in note)
    suite, folder = tmp_path / "suite", tmp_path / "ds"
    build = ["build", "my_votes", "--source", str(sample), "--out", str(suite)]
    assert main(build) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: suite 'my_votes' was built from guesses")
    assert all(f"\n  {note}\n" in err for note in notes)
    assert main(["validate", str(suite)]) == 0 and f"\n  {gap}\n" in capsys.readouterr().err
    assert main(["export", str(suite), "--to", str(folder)]) == 5
    assert gap in capsys.readouterr().err and not folder.exists()
    with pytest.raises(SuiteValidationError, match="the suite was not written") as refused:
        publish_suites([Suite.load(suite)], "me/nnd", dry_run=True, folder=tmp_path / "up")
    assert gap in str(refused.value)
    # decided: every note deleted, the suite built again; nothing is said, and it is exported
    for path in files:
        marked = r"  # CHECK: .*|^# CHECK: .*\n(#   .*\n)*"
        path.write_text(re.sub(marked, "", path.read_text("utf-8"), flags=re.M))
    assert main(build) == 0 and "CHECK" not in capsys.readouterr().err
    assert main(["export", str(suite), "--to", str(folder)]) == 0


def test_a_map_proposed_before_the_check_notes_has_its_todo_gap_named(tmp_path):
    """A map proposed before the CHECK notes holds `minimum_gap: 1  # TODO: ...`: the harness,
    build and export looked for `# CHECK` notes only, and let it through. A `# TODO` comment is
    named as a CHECK note is, at its line with its key."""
    cls = _proposed(
        tmp_path, ADAPTERS.get("simpeval_past").folder() / "fixtures" / "simpeval_past_sample.csv"
    )
    rule = cls.folder() / "my_votes.yaml"
    old = "minimum_gap: 1  # TODO: the gap that makes one output better"
    rule.write_text(re.sub(r"minimum_gap: 1  # CHECK: .*", old, rule.read_text("utf-8")))
    line = rule.read_text("utf-8").splitlines().index(f"  {old}") + 1
    assert harness.guess_problems(cls)[-1] == (
        f"{rule}:{line}: TODO rating_rule.minimum_gap = 1: the gap that makes one output better "
        "(decide, then delete the TODO note)"
    )
