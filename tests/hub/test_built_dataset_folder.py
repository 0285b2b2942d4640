"""What `build` writes is a dataset `datasets.load_dataset` reads as written (issue 20 §5): a
folder of several suites gets the card `export` writes, listing every config present; a build
into a dataset folder adds its config to the card; a README.md nnd-suites did not write is never
replaced."""

from __future__ import annotations

import json
import re
from pathlib import Path

import datasets
import pytest
import yaml

from nnd_suites import NNDError, Suite, SuiteValidationError, load_suite
from nnd_suites.builder import suites as building
from nnd_suites.cli import main
from nnd_suites.errors import OutputFolderError, PairBudgetError
from nnd_suites.hub import export_suites
from nnd_suites.hub.building import build_shipped_suites, build_suite
from nnd_suites.hub.export import adding_configs, misnamed_suites
from nnd_suites.hub.layout import CARD_FILE, exported_configs
from nnd_suites.resolve import shipped_suites
from nnd_suites.suite import CANDIDATES_FILE

USER_README = "# My project\n\nNotes about the suites we build here.\n"


def card_configs(folder) -> list[str]:
    front = (folder / CARD_FILE).read_text("utf-8").split("---\n", 2)[1]
    return [c["config_name"] for c in yaml.safe_load(front)["configs"]]


def rows(path, tmp_path, config: str | None = None) -> datasets.Dataset:
    return datasets.load_dataset(str(path), config, split="test", cache_dir=str(tmp_path / "hf"))


def give_session_builds(monkeypatch, builds: dict[str, Suite]) -> None:
    """Every build of a shipped suite gives the session's build of it (``build_suite(name)``,
    made once per worker; the build itself is the builder's tests'): these tests are about the
    dataset folder the builds are written into."""

    def shipped_build(name: str, **options) -> Suite:
        assert not options.get("skip_malformed")
        return builds[name]

    monkeypatch.setattr(building, "build_suite", shipped_build)


def test_build_all_then_one_more_build_through_the_cli(
    shipped_suite_builds, quiz_design_suite, tmp_path, monkeypatch, capsys
):
    folder = tmp_path / "suites"
    with monkeypatch.context() as patched:  # the single builds below are built here
        give_session_builds(patched, shipped_suite_builds)
        assert main(["build", "--all", "--out", str(folder)]) == 0
    assert f'datasets.load_dataset("{folder}", "challenge300"' in capsys.readouterr().out
    assert card_configs(folder) == sorted(shipped_suites()) == exported_configs(folder)
    assert rows(folder, tmp_path, "quiz_design").num_rows == len(quiz_design_suite) == 2686
    assert load_suite(folder, "quiz_design") == quiz_design_suite
    assert rows(folder / "challenge300", tmp_path).num_rows == 807  # one suite's folder, alone

    # a suite built into the dataset folder is added to its card
    argv = ["build", "challenge300", "--name", "c300", "--out", str(folder / "c300")]
    assert main(argv) == 0
    assert f"updated {folder / CARD_FILE}" in capsys.readouterr().out
    assert card_configs(folder) == sorted([*shipped_suites(), "c300"])
    assert rows(folder, tmp_path, "c300").num_rows == 807
    assert load_suite(folder, "c300").name == "c300"

    # configs are named after their suites: a suite folder named otherwise stays out, said so
    card = (folder / CARD_FILE).read_bytes()
    assert main(["build", "challenge300", "--out", str(folder / "other")]) == 0
    said = capsys.readouterr().out
    assert f"not in {folder / CARD_FILE}: {folder / 'other'} holds suite 'challenge300'" in said
    assert "--name other" in said
    assert (folder / CARD_FILE).read_bytes() == card
    assert load_suite(folder / "other").name == "challenge300"


def test_build_all_keeps_the_configs_already_there(
    shipped_suite_builds, challenge300_suite, quiz_design_suite, tmp_path, monkeypatch
):
    give_session_builds(monkeypatch, shipped_suite_builds)  # about the configs already there
    folder = tmp_path / "dataset"
    mine = challenge300_suite.derive(challenge300_suite.pairs[:50], name="mine")
    export_suites([mine], folder)
    challenge300_suite.save(folder / "c300")  # `build challenge300 --out suites/c300`: no config
    built = dict(build_shipped_suites(folder))
    assert sorted(name for name, suite in built.items() if suite) == sorted(shipped_suites())
    assert card_configs(folder) == sorted([*shipped_suites(), "mine"])
    assert misnamed_suites(folder) == {"c300": "challenge300"}
    assert load_suite(folder / "c300") == challenge300_suite  # left as it was
    assert rows(folder, tmp_path, "quiz_design").num_rows == len(quiz_design_suite)
    assert rows(folder, tmp_path, "mine").num_rows == 50
    assert load_suite(folder, "quiz_design") == quiz_design_suite
    assert load_suite(folder, "mine") == mine


def test_an_interrupted_build_all_keeps_listing_the_configs_it_did_not_reach(
    shipped_suite_builds, tmp_path, monkeypatch
):
    # stopped after its first config (Ctrl-C, `| head`), `build --all` over a folder it had
    # built wrote a card listing that config alone: the others, still there and whole, were no
    # longer read by load_dataset, and validate failed on the folder
    give_session_builds(monkeypatch, shipped_suite_builds)
    folder = tmp_path / "suites"
    for _ in build_shipped_suites(folder):
        pass
    card = (folder / CARD_FILE).read_text("utf-8")
    rebuilding = build_shipped_suites(folder)
    first = next(name for name, suite in rebuilding if suite is not None)
    rebuilding.close()  # what an interrupt does to the loop of `build --all`
    assert card_configs(folder) == sorted(shipped_suites()) == exported_configs(folder)
    assert (folder / CARD_FILE).read_text("utf-8") == card  # the same configs, the same card
    assert main(["validate", str(folder)]) == 0
    assert rows(folder, tmp_path, first).num_rows == len(shipped_suite_builds[first])
    # a config it did not reach that is damaged is left out of the card, with a warning
    second = sorted(set(shipped_suites()) - {first})[0]
    (folder / second / CANDIDATES_FILE).write_bytes(b"damaged")
    rebuilding = build_shipped_suites(folder)
    next(name for name, suite in rebuilding if suite is not None)
    rebuilding.close()
    assert card_configs(folder) == sorted(set(shipped_suites()) - {second})


def test_build_all_says_a_transformed_suite_is_made_again_by_transform(
    shipped_suite_builds, challenge300_suite, tmp_path, monkeypatch, capsys
):
    # a child that `transform --out suites/lc` wrote was left out of the card with the advice
    # "build it with --name lc", though no build makes a transformed suite
    from nnd_suites.transformations import transform_suite

    give_session_builds(monkeypatch, shipped_suite_builds)
    folder = tmp_path / "suites"
    export_suites([challenge300_suite], folder)
    transform_suite(challenge300_suite, "lowercase").save(folder / "lc")
    challenge300_suite.save(folder / "c300")  # a built suite named otherwise: `build --name`
    assert main(["build", "--all", "--out", str(folder)]) == 0
    said = capsys.readouterr().out
    assert f"{folder / 'lc'} holds suite 'challenge300.lowercase'" in said
    assert "(transform its parent challenge300 again (lowercase) with --name lc, or" in said
    assert "build it with --name lc" not in said
    assert "(build it with --name c300, or move it away)" in said


@pytest.mark.parametrize(
    ("flag", "refused"), [("--max-pairs-per-group", "pairs per group"), ("--max-pairs", "pairs;")]
)
def test_build_all_builds_within_the_pair_limits_it_is_given(tmp_path, capsys, flag, refused):
    """`build --all --max-pairs 1` built every shipped suite, challenge300's 807 tests among them
    (exit 0): the limits were never passed on. Each build now takes them, as a single one does."""
    folder = tmp_path / "suites"
    assert main(["build", "--all", flag, "1", "--out", str(folder)]) == PairBudgetError.exit_status
    assert f"over the limit of 1 {refused}" in capsys.readouterr().err
    assert not (folder / "challenge300").exists()


def test_build_all_never_replaces_a_readme_it_did_not_write(tmp_path, capsys):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / CARD_FILE).write_text(USER_README)
    assert main(["build", "--all", "--out", str(folder)]) == OutputFolderError.exit_status
    error = capsys.readouterr().err
    assert "README.md: this card was not written by nnd-suites" in error
    assert "nothing was written" in error and "move the file away" in error
    assert [p.name for p in folder.iterdir()] == [CARD_FILE]  # refused before any build
    assert (folder / CARD_FILE).read_text() == USER_README


def test_a_single_build_leaves_a_folder_that_is_no_dataset_as_it_is(tmp_path, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / CARD_FILE).write_text(USER_README)  # a project's README: not a card to refresh
    assert main(["build", "challenge300", "--out", str(project / "challenge300")]) == 0
    assert (project / CARD_FILE).read_text() == USER_README
    assert "updated" not in capsys.readouterr().out
    assert rows(project / "challenge300", tmp_path).num_rows == 807  # the suite's own folder

    plain = tmp_path / "plain"  # two suites side by side, never made a dataset: no card
    build_suite("challenge300", out=plain / "challenge300")
    build_suite("quiz_design", out=plain / "quiz_design")
    assert sorted(p.name for p in plain.iterdir()) == ["challenge300", "quiz_design"]
    assert load_suite(plain, "quiz_design").name == "quiz_design"


def test_a_library_build_into_a_dataset_folder_joins_its_card(challenge300_suite, tmp_path):
    folder = tmp_path / "dataset"
    export_suites([challenge300_suite], folder)
    suite = build_suite("quiz_design", out=folder / "quiz_design")
    assert card_configs(folder) == ["challenge300", "quiz_design"]
    assert rows(folder, tmp_path, "quiz_design").num_rows == len(suite)
    card = (folder / CARD_FILE).read_bytes()
    assert build_suite("quiz_design", out=folder / "qd") == suite  # a suite folder, no config
    assert (folder / CARD_FILE).read_bytes() == card
    # export, whose folder is published as it is, refuses a suite folder named otherwise
    with pytest.raises(SuiteValidationError, match="config 'qd' holds suite 'quiz_design'"):
        export_suites([challenge300_suite], folder)


def test_a_build_into_a_dataset_folder_checks_its_configs_before_reading_the_source(
    challenge300_suite, tmp_path
):
    # `build quiz_design --out ds/quiz_design` read its source (a whole build) before it found a
    # config it keeps damaged: the dataset folder is now claimed (checked, locked) first
    folder = tmp_path / "ds"
    export_suites([challenge300_suite], folder)
    candidates = folder / "challenge300" / CANDIDATES_FILE
    candidates.write_bytes(candidates.read_bytes()[:100])
    card = (folder / CARD_FILE).read_bytes()
    with pytest.raises(SuiteValidationError, match=r"config 'challenge300'.*damaged"):
        build_suite("quiz_design", tmp_path / "no-such-source.csv", folder / "quiz_design")
    assert (folder / CARD_FILE).read_bytes() == card
    assert not (folder / "quiz_design").exists()


def test_the_card_lists_what_was_written_when_a_writer_stops(challenge300_suite, tmp_path):
    parts = [challenge300_suite.derive(challenge300_suite.pairs[:20], name=n) for n in "ab"]
    folder = tmp_path / "dataset"
    with pytest.raises(RuntimeError, match="stopped"), adding_configs(folder, ["a", "b"]) as d:
        d.add(parts[0])
        raise RuntimeError("stopped")  # a build failing after the first suite
    assert card_configs(folder) == ["a"] == exported_configs(folder)
    assert rows(folder, tmp_path, "a").num_rows == 20
    with pytest.raises(NNDError, match="not one of"), adding_configs(folder, ["b"]) as d:
        d.add(parts[0])  # only the names checked before the lock may be written
    assert card_configs(folder) == ["a"]


def test_an_export_names_a_misnamed_suite_folder_for_what_it_is(challenge300_suite, tmp_path):
    # `build challenge300 --out ds/c300` leaves c300 out of the card; the next export called it
    # "damaged", as if its files were broken
    folder = tmp_path / "ds"
    export_suites([challenge300_suite.derive(challenge300_suite.pairs[:20], name="mine")], folder)
    challenge300_suite.save(folder / "c300")
    other = challenge300_suite.derive(challenge300_suite.pairs[20:40], name="other")
    with pytest.raises(SuiteValidationError) as refused:
        export_suites([other], folder)
    assert "damaged" not in str(refused.value)
    assert "config 'c300' holds suite 'challenge300'" in str(refused.value)
    assert (
        "rebuild it with --name c300 (build, or transform for a transformed suite) or move it "
        "out of"
    ) in str(refused.value)


def test_a_transform_into_a_dataset_folder_joins_its_card(
    challenge300_suite, tmp_path, monkeypatch, capsys
):
    # `transform ... --out suites/NAME` (its default) after `build --all --out suites` wrote
    # the child there, but the card never listed it: load_dataset(folder, NAME) could not read it
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "suites"
    export_suites([challenge300_suite], folder)
    challenge300_suite.save(tmp_path / "c300")
    assert main(["transform", "c300/", "--transform", "lowercase"]) == 0
    said = capsys.readouterr().out
    assert f"updated {Path('suites') / CARD_FILE}" in said
    assert card_configs(folder) == ["challenge300", "challenge300.lowercase"]
    assert rows(folder, tmp_path, "challenge300.lowercase").num_rows == len(challenge300_suite)

    # a child folder named otherwise stays out of the card, said so with the --out that fits
    card = (folder / CARD_FILE).read_bytes()
    assert main(["transform", "c300/", "--transform", "lowercase", "--out", "suites/lc"]) == 0
    said = capsys.readouterr().out
    assert "suites/lc holds suite 'challenge300.lowercase'" in said
    assert "write it with --out suites/challenge300.lowercase" in said
    assert (folder / CARD_FILE).read_bytes() == card


def test_transform_json_says_whether_the_card_lists_the_child(
    challenge300_suite, tmp_path, monkeypatch, capsys
):
    # `transform ... --out suites/NAME --json` updated the card, as the text output says, but its
    # JSON said nothing of it (nor that a child named otherwise was left out of the card)
    monkeypatch.chdir(tmp_path)
    export_suites([challenge300_suite], tmp_path / "suites")
    challenge300_suite.save(tmp_path / "c300")
    card = str(Path("suites") / CARD_FILE)
    for out, card_said in (
        ("suites/challenge300.lowercase", {"file": card, "lists_suite": True}),
        ("suites/lc", {"file": card, "lists_suite": False}),
        ("elsewhere/lc", None),  # in no dataset folder
    ):
        assert main(["transform", "c300/", "--transform", "lowercase", "--out", out, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["card"] == card_said
    assert card_configs(tmp_path / "suites") == ["challenge300", "challenge300.lowercase"]


def test_the_load_hint_loads_a_folder_whose_path_holds_glob_characters(
    challenge300_suite, tmp_path, monkeypatch, capsys
):
    # `export c300 --to 'g[1]/ds'` printed datasets.load_dataset("g[1]/ds", "challenge300", ...),
    # which reads "[1]" as a glob: "No (supported) data files found"; so did transform (and build)
    # into such a folder
    monkeypatch.chdir(tmp_path)
    challenge300_suite.save(tmp_path / "c300")
    lowercase = ["transform", "c300/", "--transform", "lowercase"]
    for argv in (
        ["export", "c300", "--to", "g[1]/ds"],
        [*lowercase, "--out", "g[1]/ds/challenge300.lowercase"],
    ):
        assert main(argv) == 0
        (call,) = re.findall(r"datasets\.load_dataset\(.*\)", capsys.readouterr().out)
        cached = call.replace('split="test")', f'split="test", cache_dir={str(tmp_path / "hf")!r})')
        assert eval(cached, {"datasets": datasets}).num_rows == len(challenge300_suite)


def test_a_suite_of_another_name_never_replaces_a_config_of_the_card(
    challenge300_suite, quiz_design_suite, tmp_path, capsys
):
    # `build challenge300 --out ds/quiz_design` replaced config quiz_design, which the card
    # still listed, with challenge300 (exit 0): load_dataset(ds, "quiz_design") failed, and
    # validate said the folder held no config at all
    folder = tmp_path / "ds"
    export_suites([quiz_design_suite], folder)
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    quiz_design_suite.save(tmp_path / "qd")
    lowercase = ["transform", str(tmp_path / "qd"), "--transform", "lowercase"]
    for argv in (
        ["build", "challenge300", "--out", str(folder / "quiz_design")],
        [*lowercase, "--out", str(folder / "quiz_design")],
    ):
        assert main(argv) == 2
        said = capsys.readouterr().err
        assert f"{folder / 'quiz_design'}: config 'quiz_design' of the dataset folder" in said
        assert "nothing was written" in said
    with pytest.raises(OutputFolderError, match="its card lists it"):
        build_suite("challenge300", out=folder / "quiz_design")
    # a name differing only in case is that config's folder on macOS and Windows file systems
    with pytest.raises(OutputFolderError, match="config 'quiz_design' of the dataset folder"):
        build_suite("challenge300", out=folder / "Quiz_Design")
    after = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == before
    assert load_suite(folder, "quiz_design") == quiz_design_suite
    # the suite's own name still replaces its config, as a rebuild does
    assert build_suite("quiz_design", out=folder / "quiz_design") == quiz_design_suite


def test_build_all_is_said_to_build_each_adapter_once_and_not_every_catalogue_suite():
    # "--all: build every adapter that ships its source", and the README's "every shipped
    # suite": gpt3_summ_bbc ships but --all never builds it, and nothing said where it is built
    from pathlib import Path

    from nnd_suites.builder.adapter import ADAPTERS
    from nnd_suites.catalogue.entries import load_catalogue
    from nnd_suites.cli import build_parser

    built = {name for name, cls in ADAPTERS.items() if cls.default_source_path() is not None}
    assert "gpt3_summ_bbc" in {entry.name for entry in load_catalogue()} - built
    said = " ".join(build_parser().commands["build"].format_help().split())
    assert (
        "--all build each adapter that ships its source, once with its default options, as a "
        "suite named after the adapter; a catalogue suite of other options (gpt3_summ_bbc) or "
        "of a downloaded source is built by --catalogue"
    ) in said
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    line = next(line for line in readme.splitlines() if "build --all --out suites  " in line)
    assert "each adapter that ships its source" in line and "every shipped suite" not in line
    assert "catalogue suite: build --catalogue" in readme


def exported_800(suite: Suite, tmp_path: Path) -> tuple[Path, Path]:
    """A dataset folder ``ds`` of challenge300's first 800 tests, and that suite's folder."""
    folder, fewer = tmp_path / "ds", tmp_path / "fewer"
    suite.derive(suite.pairs[:800]).save(fewer)
    export_suites([load_suite(fewer)], folder)
    return folder, fewer


def test_a_build_that_replaces_a_config_says_so_as_export_does(
    challenge300_suite, tmp_path, capsys
):
    """`build --out DS/NAME` replaced a config of 800 tests with one of 807 saying only
    "wrote DS/NAME (807 pairs)"; it now says what it replaced, in export's words."""
    folder, fewer = exported_800(challenge300_suite, tmp_path)
    argv = ["build", "challenge300", "--out", str(folder / "challenge300")]
    assert main(argv) == 0
    old, new = load_suite(fewer).manifest.content_hash, challenge300_suite.manifest.content_hash
    assert (
        f"wrote {folder / 'challenge300'} (807 pairs; written, replacing a config of 800 tests "
        f"whose content hash differs: {old[:12]} before, {new[:12]} now)"
    ) in capsys.readouterr().out
    assert main(argv) == 0
    again = "(807 pairs; written again, the same tests as the config it replaced)"
    assert again in capsys.readouterr().out
    assert main(["build", "challenge300", "--out", str(tmp_path / "plain")]) == 0
    assert main(["build", "challenge300", "--out", str(tmp_path / "plain")]) == 0
    assert "replacing a config" not in capsys.readouterr().out  # no dataset folder: no config


def test_build_all_that_replaces_a_config_says_so_as_export_does(
    shipped_suite_builds, challenge300_suite, tmp_path, monkeypatch, capsys
):
    """`build --all --out DS` replaced configs saying only "wrote DS/NAME (807 pairs)"."""
    folder, fewer = exported_800(challenge300_suite, tmp_path)
    give_session_builds(monkeypatch, shipped_suite_builds)
    assert main(["build", "--all", "--out", str(folder)]) == 0
    said = capsys.readouterr().out
    assert (
        f"wrote {folder / 'challenge300'} (807 pairs; written, replacing a config of 800 " in said
    )
    assert f"differs: {load_suite(fewer).manifest.content_hash[:12]} before, " in said
    assert f"wrote {folder / 'quiz_design'} (2,686 pairs)\n" in said  # nothing replaced


def test_a_transform_that_replaces_a_config_says_so_as_export_does(
    challenge300_suite, tmp_path, capsys
):
    """`transform --out DS/NAME` replaced a config saying only "wrote DS/NAME (NAME, ...)"."""
    folder, fewer = exported_800(challenge300_suite, tmp_path)
    argv = ["transform", str(fewer), "--name", "lc", "--out", str(folder / "lc")]
    for transform, state in [
        ("lowercase", ")\n"),
        ("lowercase", "; written again, the same tests as the config it replaced)"),
        ("typos", "; written, replacing a config of 800 tests whose content hash differs: "),
    ]:
        assert main([*argv, "--transform", transform]) == 0
        assert f"(lc, 800 tests, parent challenge300{state}" in capsys.readouterr().out
    assert main([*argv, "--transform", "typos", "--json"]) == 0
    replaced = "written again, the same tests as the config it replaced"
    assert json.loads(capsys.readouterr().out)["replaced"] == replaced
