"""The one output-folder writer: replaces only what nnd-suites wrote, swaps atomically."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from folder_snapshot import snapshot

from nnd_suites.errors import OutputFolderError
from nnd_suites.evaluation.outputs import write_report
from nnd_suites.evaluation.report_schemas import report_schemas
from nnd_suites.infra.output_folder import (
    MARKER_FILE,
    check_output_folder,
    holds_kind,
    output_folder,
    refuse_replacing_an_input,
)
from nnd_suites.infra.output_kinds import KINDS

ROOT = Path(__file__).resolve().parents[2]
REPORT_FILE = KINDS["report"].main_file


@pytest.fixture
def report(heuristic_report, quiz_design_suite):
    return heuristic_report([quiz_design_suite], "length", lambda text: -len(text))


def test_a_report_folder_is_marked_and_replaced_whole(report, tmp_path):
    out = tmp_path / "run"
    written = write_report(report, out)
    assert json.loads((out / MARKER_FILE).read_text())["kind"] == "report"
    assert holds_kind(out, "report") and not holds_kind(out, "leaderboard")
    data = json.loads(written["json"].read_text())
    jsonschema.validate(data, json.loads(written["schema"].read_text()))
    assert written["json"] == out / REPORT_FILE
    marker = json.loads((out / MARKER_FILE).read_text())
    assert set(marker["files"]) == {"outcomes/", "outcomes/quiz_design.parquet", *_names(out)}
    # a file an earlier run wrote (its marker lists it) goes with the folder it was part of
    (out / "outcomes" / "stale.parquet").write_bytes(b"an earlier run's file")
    marker["files"].append("outcomes/stale.parquet")
    (out / MARKER_FILE).write_text(json.dumps(marker))
    write_report(report, out)
    assert not (out / "outcomes" / "stale.parquet").exists()  # replaced as a whole
    assert json.loads((out / REPORT_FILE).read_text())["model"] == "length"


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_file() and p.name != MARKER_FILE}


@pytest.mark.parametrize(
    "added",
    [
        {"my_notes.md": b"my analysis"},
        {"mydata/a.csv": b"x", "mydata/b.csv": b"y"},
        {"outcomes/mine.parquet": b"a file of mine among the tool's"},
    ],
)
def test_a_file_the_user_put_in_an_earlier_report_folder_stops_the_rewrite(report, tmp_path, added):
    """The probe's finding: notes put into a report folder were deleted by the next run into it
    (the marker said "report", so the whole folder was swapped)."""
    out = tmp_path / "run"
    write_report(report, out)
    for name, data in added.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    before = snapshot(out)
    with pytest.raises(OutputFolderError, match="did not write there") as caught:
        write_report(report, out)
    assert snapshot(out) == before
    first = sorted(added)[0]
    assert (first.split("/")[0] + "/" if first.startswith("mydata") else first) in str(caught.value)
    assert "mydata/a.csv" not in str(caught.value)  # a foreign folder is named once


def test_a_suite_folder_with_a_file_of_the_users_is_not_replaced(quiz_design_suite, tmp_path):
    out = tmp_path / "suite"
    quiz_design_suite.save(out)
    (out / "notes.txt").write_text("mine")
    before = snapshot(out)
    with pytest.raises(OutputFolderError, match="notes.txt"):
        quiz_design_suite.save(out)
    assert snapshot(out) == before
    (out / "notes.txt").unlink()
    quiz_design_suite.save(out)  # only its own files: replaced


def test_an_output_inside_a_suite_folder_is_refused_and_the_suite_left_valid(
    quiz_design_suite, tmp_path
):
    """``export S --to S`` (and ``build --out S/sub``) exited 0 and left parquet files that
    ``datasets.load_dataset(S)`` reads beside the suite's pairs: the suite no longer validated."""
    from nnd_suites.hub.export import export_suites
    from nnd_suites.suite import Suite

    suite_dir = tmp_path / "suite"
    quiz_design_suite.save(suite_dir)
    before = snapshot(suite_dir)
    for target, write in [
        (suite_dir, lambda: export_suites([quiz_design_suite], suite_dir)),
        (suite_dir / "deeper" / "x", lambda: quiz_design_suite.save(suite_dir / "deeper" / "x")),
    ]:
        with pytest.raises(OutputFolderError, match=f"is inside the suite folder {suite_dir}"):
            write()
        assert snapshot(suite_dir) == before, target
    Suite.load(suite_dir)  # still valid
    export_suites([quiz_design_suite], tmp_path / "dataset")  # beside it: written
    quiz_design_suite.save(tmp_path / "dataset" / "copy")  # inside an export folder: fine


@pytest.mark.parametrize("where", [".", "..", "sub/.."])
def test_the_current_folder_and_its_parents_are_refused(report, tmp_path, monkeypatch, where):
    """``--out .`` used to name its own temporary folder as the reason it refused, and an empty
    current folder would have been swapped away from under the shell."""
    here = tmp_path / "a" / "b"
    (here / "sub").mkdir(parents=True)
    monkeypatch.chdir(here)
    with pytest.raises(OutputFolderError, match="current folder") as caught:
        write_report(report, where)
    assert ".tmp" not in str(caught.value)
    assert sorted(p.name for p in here.iterdir()) == ["sub"]


def test_an_output_that_is_or_holds_its_input_folder_is_refused(quiz_design_suite, tmp_path):
    """A suite read from a folder and written back there replaced the user's suite by what was
    made from it; one folder under another name (a link to it, a linked parent) is that folder."""
    folder = quiz_design_suite.save(tmp_path / "suites" / "quiz_design")
    (tmp_path / "link").symlink_to(folder)
    (tmp_path / "alias").symlink_to(tmp_path / "suites")
    before = snapshot(tmp_path / "suites")
    for source, out, relation in [
        (folder, folder, "the folder"),
        (tmp_path / "link", folder, "the folder"),
        (folder, tmp_path / "link", "the folder"),
        (str(folder) + "/", tmp_path / "alias" / "quiz_design", "the folder"),
        (folder, tmp_path / "suites", "a parent folder"),
        (folder, tmp_path / "alias" / "..", "a parent folder"),
    ]:
        with pytest.raises(OutputFolderError) as caught:
            refuse_replacing_an_input(out, source, "the input suite 'quiz_design'", "FIX")
        assert str(caught.value) == (
            f"{out}: {relation} of the input suite 'quiz_design' ({source}), which the output "
            f"would replace{' with it' if relation != 'the folder' else ''}; nothing was "
            "written: FIX"
        )
    assert snapshot(tmp_path / "suites") == before
    # a sibling (one whose name starts alike too), a folder inside it (the guard's to refuse),
    # a new folder, and an input that is no folder (builtin:NAME): nothing to protect
    for source, out in [
        (folder, tmp_path / "suites" / "quiz_design2"),
        (folder, folder / "sub"),
        (folder, tmp_path / "new"),
        ("builtin:quiz_design", folder),
    ]:
        refuse_replacing_an_input(out, source, "the input suite 'quiz_design'", "FIX")


@pytest.mark.parametrize(
    "contents",
    [
        {"thesis.tex": b"\\chapter{One}"},
        # a file named like our main file is not ours: a coverage report
        {"report.json": b'{"coverage": 0.93, "files": 12}'},
        # our marker naming another kind: a leaderboard folder is no evaluation report
        {MARKER_FILE: b'{"kind": "leaderboard", "nnd_suites_version": "0.1.0"}', "x.md": b"x"},
        # a damaged marker is not taken for ours
        {MARKER_FILE: b'{"kind": "report"', "notes.txt": b"mine"},
        {"sub/deep.txt": b"nested"},
        {"\x1b]0;TITLE\x07.txt": b"a name with a terminal escape sequence"},
    ],
)
def test_a_foreign_folder_is_refused_and_left_byte_identical(report, tmp_path, contents):
    out = tmp_path / "taken"
    for name, data in contents.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    before = snapshot(out)
    with pytest.raises(
        OutputFolderError, match=r"not an evaluation report written by nnd-suites"
    ) as caught:
        write_report(report, out)
    assert "\x1b" not in str(caught.value)  # printed names carry no escape sequence
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]  # no leftover beside it
    assert OutputFolderError.exit_status == 2


def test_a_suite_folder_names_a_foreign_file_without_its_escape_sequence(
    challenge300_suite, tmp_path
):
    # a suite's foreign files were named as they are, a terminal escape sequence included
    out = tmp_path / "suite"
    challenge300_suite.save(out)
    (out / "\x1b]0;TITLE\x07.txt").write_text("mine")
    with pytest.raises(OutputFolderError, match="did not write there") as caught:
        check_output_folder(out, "suite")
    assert "\x1b" not in str(caught.value) and "'\\x1b]0;TITLE\\x07.txt'" in str(caught.value)


def test_a_legacy_folder_without_marker_is_recognised_by_its_parsed_main_file(report, tmp_path):
    out = tmp_path / "old-run"
    write_report(report, out)
    (out / MARKER_FILE).unlink()  # as written before markers existed
    assert holds_kind(out, "report")
    write_report(report, out)
    assert (out / MARKER_FILE).is_file()
    (out / MARKER_FILE).unlink()
    (out / REPORT_FILE).write_text(json.dumps({"model": "x"}))  # not a valid EvaluationReport
    assert not holds_kind(out, "report")


def test_a_file_a_symlink_and_an_empty_folder(report, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("mine")
    with pytest.raises(OutputFolderError, match="exists and is not a folder"):
        check_output_folder(blocker, "report")
    target = tmp_path / "real"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(OutputFolderError, match="is a symbolic link"):
        write_report(report, link)
    assert link.is_symlink() and not any(target.iterdir())
    write_report(report, target)  # an empty folder is taken
    assert holds_kind(target, "report")


def test_a_failed_write_leaves_the_old_folder(report, tmp_path):
    out = tmp_path / "run"
    write_report(report, out)
    before = snapshot(out)
    with pytest.raises(RuntimeError), output_folder(out, "report") as tmp:
        (tmp / "half.json").write_text("{")
        raise RuntimeError("killed")
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_the_guard_runs_again_before_the_swap(report, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(OutputFolderError), output_folder(out, "report") as tmp:
        (tmp / "a.txt").write_text("ours")
        out.mkdir()
        (out / "theirs.txt").write_text("created meanwhile")
    assert (out / "theirs.txt").read_text() == "created meanwhile"


def test_carried_sub_folders_must_hold_their_kind(report, tmp_path):
    out = tmp_path / "rob"
    write_report(report, out / "evaluation")
    with pytest.raises(OutputFolderError):
        check_output_folder(out, "robustness")  # not carried: a foreign folder
    (out / "notes.txt").write_text("mine")
    with (
        pytest.raises(OutputFolderError, match="notes.txt"),
        output_folder(out, "robustness", carry={"evaluation": "report"}),
    ):
        pass
    (out / "notes.txt").unlink()
    with output_folder(out, "robustness", carry={"evaluation": "report"}):
        pass
    assert holds_kind(out, "robustness") and holds_kind(out / "evaluation", "report")


def test_every_report_kind_is_in_the_schema_table_and_shipped():
    """The one table the `schema` command writes and the staleness test (test_multi.py) reads."""
    shipped = ROOT / "nnd_suites" / "schemas"
    table = report_schemas()
    assert {k.schema_file for k in KINDS.values() if k.schema_file} == set(table)
    assert {"verify.schema.json", "placement.schema.json", "robustness.schema.json"} <= set(table)
    assert all((shipped / name).is_file() for name in table)


def test_pyplot_appears_nowhere_in_the_project():
    """Charts use matplotlib's object API only (no global state, no backend switching)."""
    forbidden = re.compile(r"pyplot|matplotlib\.use\(")
    folders = [
        "nnd_suites",
        "evaluation",
        "adapters",
        "transformations",
        "slices",
        "benchmarks",
        "examples",
    ]
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in folders
        for path in (ROOT / folder).rglob("*.py")
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if forbidden.search(line)
    ]
    assert found == []


@pytest.fixture
def link_up(tmp_path, monkeypatch):
    """``link/../run`` from ``tmp_path``: the kernel reaches ``real/run`` (``..`` of the link's
    target), a lexical clean-up ``./run``, where the user keeps an unrelated folder."""
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real" / "sub")
    mine = tmp_path / "run"
    mine.mkdir()
    (mine / "thesis.tex").write_bytes(b"\\chapter{One}")
    monkeypatch.chdir(tmp_path)
    yield "link/../run", tmp_path / "real" / "run"
    assert snapshot(mine) == {"thesis.tex": b"\\chapter{One}"}  # the user's folder survives


def test_a_path_through_a_link_and_dotdot_writes_where_the_guard_looked(report, link_up):
    """The guard checked the folder the kernel reaches, the swap replaced the lexical one: the
    user's folder was deleted. Both now use one resolved path (atomic.real_target)."""
    given, reached = link_up
    write_report(report, given)  # what evaluate --out writes
    assert (reached / REPORT_FILE).is_file()
    write_report(report, given)  # and replaces, again where the guard looked
    assert holds_kind(reached, "report")


def test_a_suite_and_an_export_through_a_link_and_dotdot(quiz_design_suite, link_up):
    from nnd_suites.hub.export import export_suites

    given, reached = link_up
    quiz_design_suite.save(given)  # what build --out writes
    assert holds_kind(reached, "suite")
    export_suites([quiz_design_suite], "link/../dataset")  # the dataset folder beside it
    assert (reached.parent / "dataset" / quiz_design_suite.name).is_dir()
    assert not Path("dataset").exists()


def test_build_out_through_a_link_and_dotdot(link_up, capsys):
    from nnd_suites.cli import main

    given, reached = link_up
    assert main(["build", "challenge300", "--out", given]) == 0
    assert holds_kind(reached, "suite")


def test_a_single_output_file_replaces_only_what_its_writer_recognises(tmp_path):
    from nnd_suites.infra.output_file import write_output_file

    def ours(data: bytes) -> bool:
        return data.startswith(b"ours")

    target = tmp_path / "out.txt"
    write_output_file(target, "ours 1", "a test file", ours)
    write_output_file(target, "ours 2", "a test file", ours)  # its own: replaced
    assert target.read_text() == "ours 2"
    target.write_text("theirs")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("ours, but reached through a link")
    (tmp_path / "link.txt").symlink_to(elsewhere)
    (tmp_path / "folder.txt").mkdir()
    for name, what in [
        ("out.txt", "is not a test file written by nnd-suites"),
        ("link.txt", "is a symbolic link"),
        ("folder.txt", "is not a file"),
    ]:
        with pytest.raises(OutputFolderError, match=f"{name}: exists and {what}"):
            write_output_file(tmp_path / name, "ours 3", "a test file", ours)
    assert target.read_text() == "theirs"
    assert elsewhere.read_text() == "ours, but reached through a link"


def test_an_out_path_through_a_file_names_the_file(tmp_path):
    # mkdir said only "File exists"
    (tmp_path / "afile").write_text("mine")
    for out in (tmp_path / "afile" / "x", tmp_path / "afile" / "x" / "y"):
        with pytest.raises(OutputFolderError, match=rf"{tmp_path / 'afile'} is a file, not a"):
            check_output_folder(out, "report")
    assert (tmp_path / "afile").read_text() == "mine"


def test_schema_files_are_never_written_into_a_suite_or_a_report(
    report, quiz_design_suite, tmp_path, capsys
):
    """``schema --out`` into a suite or a report folder wrote its files there with exit 0, and
    the folder's next write then refused to replace it (files "nnd-suites did not write")."""
    from nnd_suites.cli import main

    suite_folder = quiz_design_suite.save(tmp_path / "suite")
    run = tmp_path / "run"
    write_report(report, run)
    before = {folder: snapshot(folder) for folder in (suite_folder, run)}
    for out, inside in [
        (suite_folder, f"is inside the suite folder {suite_folder}, whose files `datasets`"),
        (suite_folder / "pairs.parquet", f"is inside the suite folder {suite_folder}, whose"),
        (run, f"is inside {run}, an evaluation report written by nnd-suites, which replaces"),
        (run / "outcomes", f"is inside {run}, an evaluation report written by"),
    ]:
        assert main(["schema", "--out", str(out)]) == OutputFolderError.exit_status
        err = capsys.readouterr().err
        assert inside in err and "nothing was written" in err
    assert {folder: snapshot(folder) for folder in (suite_folder, run)} == before
    quiz_design_suite.save(suite_folder)  # both can still be written again
    write_report(report, run)
    assert main(["schema", "--out", str(tmp_path / "schemas")]) == 0


def test_an_output_folder_inside_a_report_is_refused(report, tmp_path):
    """``evaluate --out RUN/again`` wrote a report inside an earlier one, whose next write was
    then refused (an entry "nnd-suites did not write")."""
    run = tmp_path / "run"
    write_report(report, run)
    before = snapshot(run)
    with pytest.raises(OutputFolderError, match=f"is inside {run}, an evaluation report"):
        write_report(report, run / "again")
    assert snapshot(run) == before
    write_report(report, run)


def test_a_path_that_is_not_utf8_is_refused_before_anything_is_written(tmp_path, capsys):
    """`build --out $'b\\xff'` (a byte that is not UTF-8, which Python holds as a lone
    surrogate) ended in pyarrow's UnicodeEncodeError traceback, as did `export --to` and,
    after every request was scored, `evaluate --out`."""
    from nnd_suites.cli import main

    out = tmp_path / "b\udcff"
    for argv in (["build", "challenge300", "--out"], ["export", "challenge300", "--to"]):
        assert main([*argv, str(out)]) == OutputFolderError.exit_status
        assert "is not valid UTF-8, so the files of an output" in capsys.readouterr().err
        assert list(tmp_path.iterdir()) == []
    with pytest.raises(OutputFolderError, match="not valid UTF-8"):
        check_output_folder(out, "report")  # what evaluate checks before scoring
