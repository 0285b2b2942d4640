"""new-adapter NAME --declarative --sample FILE: a source.yaml proposed from the file's header,
valid as written, that reads the sample into groups once its quality map is loaded."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli import main
from nnd_suites.declarative.loading import load_declaration
from nnd_suites.declarative.plugin import declared_adapter
from nnd_suites.errors import NNDError, SourceFormatError
from nnd_suites.scaffold.declarative import write_declarative
from nnd_suites.sources import ReadLog


def _root(tmp_path: Path) -> Path:
    for folder in ("adapters", "quality_maps"):
        (tmp_path / folder).mkdir()
    return tmp_path


def _fixture(name: str) -> Path:
    return next((ADAPTERS.get(name).folder() / "fixtures").glob("*.csv"))


def _propose(root: Path, name: str, sample: Path | str) -> tuple[Any, str]:
    """``new-adapter NAME --declarative --sample SAMPLE`` in ``root`` (a str sample: the CSV
    text of one, written first): the spec it proposes, and the source.yaml's text (its
    ``# CHECK`` marks)."""
    if isinstance(sample, str):
        (root / f"{name}.csv").write_text(sample)
        sample = root / f"{name}.csv"
    write_declarative(root, name, sample)
    path = root / "adapters" / name / "source.yaml"
    return load_declaration(path).spec, path.read_text("utf-8")


def _read_groups(root: Path, name: str, sample: Path) -> list:
    """The groups the proposed adapter ``name`` reads from ``sample``."""
    cls = declared_adapter(name, root / "adapters" / name)
    cls.name = name  # what registering it would set
    return list(cls().read(sample, ReadLog()))


def test_a_rating_table_gets_its_columns_proposed_and_reads(tmp_path):
    root = _root(tmp_path)
    written, columns = write_declarative(root, "my_simp", _fixture("simpeval_2022"))
    assert "rating_3" in columns and root / "quality_maps" / "my_simp.yaml" in written
    spec = load_declaration(root / "adapters" / "my_simp" / "source.yaml").spec
    assert spec.group.key == ["original_id"]
    assert spec.candidates.text == "generation" and spec.candidates.system == "system"
    assert spec.candidates.ratings == {"rating": ["rating_1", "rating_2", "rating_3"]}
    groups = _read_groups(root, "my_simp", _fixture("simpeval_2022"))
    assert len(groups) == 3 and all(len(g.candidates) == 4 for g in groups)


def test_a_comparison_table_gets_a_winner_and_verdicts_to_fill_in(tmp_path):
    root = _root(tmp_path)
    spec, text = _propose(root, "my_pairs", _fixture("copilot_arena"))
    assert spec.comparisons.winner == "acceptedIndex"
    assert (spec.comparisons.text_a, spec.comparisons.text_b) == ("completion_a", "completion_b")
    assert "TODO_value_meaning_a" in text and "check each" in text


def test_short_column_names_are_guessed_marked_and_every_column_accounted_for(tmp_path):
    # `sys` was proposed as the text with no system, `organization_*` silently left out (any
    # column with a "z"), and no guess carried the promised `# CHECK`
    spec, text = _propose(
        _root(tmp_path),
        "short",
        "id,src,out,sys,organization_1,organization_2,fluency_z,note\n"
        "1,hello world,hi world,A,4,5,0.3,x\n",
    )
    assert (spec.candidates.text, spec.candidates.system) == ("out", "sys")
    assert spec.group.context == {"src": "src"}
    assert spec.candidates.ratings == {"organization": ["organization_1", "organization_2"]}
    assert "  text: out  # CHECK: guessed from the header" in text
    assert "  system: sys  # CHECK: guessed from the header" in text
    assert "# Columns not read (add any that matter): fluency_z, note." in text


def test_an_output_column_named_after_the_system_is_the_text_not_the_system(tmp_path):
    # sfhot's `system_output` was proposed as the system and its `reference` as the text, and
    # WMT MQM's `target` was passed over for the last column, `comment`
    root = _root(tmp_path)
    for name, sample in (("my_hot", "sfhot_sample.json"), ("my_mqm", "mqm_ted_ende_sample.tsv")):
        adapter = "sfhot" if name == "my_hot" else "wmt_mqm"
        write_declarative(root, name, ADAPTERS.get(adapter).folder() / "fixtures" / sample)
    hot = load_declaration(root / "adapters" / "my_hot" / "source.yaml").spec.candidates
    assert (hot.text, hot.system.value) == ("system_output", "unknown")
    mqm = load_declaration(root / "adapters" / "my_mqm" / "source.yaml").spec.candidates
    assert (mqm.text, mqm.system) == ("target", "system")


def test_an_id_column_keys_the_groups_and_is_not_proposed_as_context(tmp_path):
    # a `prompt_id` column holds "prompt": it was proposed as a context field and in the
    # template ('{prompt_id}\n{prompt}'), so the model would have read "p1" before every prompt
    spec, _text = _propose(
        _root(tmp_path),
        "my_votes",
        "prompt_id,prompt,model_a,model_b,response_a,response_b,winner\n"
        "p1,Say hi.,gpt,llama,Hi!,Hello there!,model_a\n",
    )
    assert spec.group.key == ["prompt_id"] and spec.group.context == {"prompt": "prompt"}
    assert spec.template == "{prompt}\n"


def test_a_context_column_without_a_hint_is_proposed_before_the_id_that_keys_it(tmp_path):
    # `doc_id,document,system,summary,score`: the proposal showed the model "d1" as the context
    # (`{doc_id}`) and left `document`, the text the raters read, unread
    root = _root(tmp_path)
    table = "doc_id,document,system,summary,score\nd1,The cat sat.,A,A cat sat.,4\n"
    spec, text = _propose(root, "my_docs", table + "d1,The cat sat.,B,Dog ran.,1\n")
    assert spec.group.key == ["doc_id"] and spec.group.context == {"document": "document"}
    assert (spec.template, spec.candidates.text) == ("{document}\n", "summary")
    assert "Columns not read" not in text
    # with no other column for it, an id is still the context (the texts are the candidates)
    spec, _text = _propose(root, "my_ids", "item_id,output,score\na1,x,2\na2,y,3\n")
    assert spec.group.context == {"item_id": "item_id"} and spec.candidates.text == "output"


def test_the_command_refuses_an_existing_adapter_and_a_missing_sample(tmp_path):
    root = _root(tmp_path)
    (root / "adapters" / "taken").mkdir()
    with pytest.raises(NNDError, match="already exists"):
        write_declarative(root, "taken", _fixture("simpeval_2022"))
    run = subprocess.run(
        [sys.executable, "-m", "nnd_suites", "new-adapter", "x", "--declarative"],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert run.returncode != 0 and "needs --sample FILE" in run.stderr


def test_the_command_refuses_a_type_or_a_sample_it_would_not_read(tmp_path, capsys):
    # `--declarative --type likert` wrote a numeric source.yaml and `--type likert --sample F`
    # a stub that never read F, both with exit status 0
    sample = str(_fixture("simpeval_2022"))
    root = str(_root(tmp_path))
    both = ["new-adapter", "x", "--sample", sample, "--root", root, "--type", "likert"]
    assert main([*both, "--declarative"]) == 2
    assert "give one of the two" in capsys.readouterr().err
    assert main(both) == 2
    assert "is read with --declarative only" in capsys.readouterr().err
    assert not list((tmp_path / "adapters").iterdir())


def test_a_gzipped_json_sample_is_read_and_a_broken_one_named_at_its_line(tmp_path):
    # the .json sample was read with json.loads on its raw text: a .json.gz (the name the
    # command accepts) and a broken list both ended in a traceback
    root = _root(tmp_path)
    rows = [{"id": 1, "source": "Hello world.", "output": "Hi world.", "fluency": 4}]
    sample = tmp_path / "ratings.json.gz"
    sample.write_bytes(gzip.compress(json.dumps(rows).encode()))
    _written, columns = write_declarative(root, "zipped", sample)
    assert columns == ["id", "source", "output", "fluency"]
    spec = load_declaration(root / "adapters" / "zipped" / "source.yaml").spec
    assert spec.file.format == "json" and spec.candidates.ratings == {"fluency": "fluency"}
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"id": 1, "source": "a",\n')
    with pytest.raises(SourceFormatError, match=r"broken\.json:2: not a JSON document"):
        write_declarative(root, "broken", broken)


def test_a_csv_sample_that_is_not_utf8_is_named_at_its_line(tmp_path, capsys):
    # sniffing the delimiter decoded the sample's first block unguarded: a Latin-1 row (even
    # below a plain header) ended `new-adapter --declarative --sample` in a UnicodeDecodeError
    # traceback, exit status 1
    sample = tmp_path / "latin1.csv"
    sample.write_bytes("id,output,rating\n1,caf\xe9,3\n".encode("latin-1"))
    root = str(_root(tmp_path))
    assert main(["new-adapter", "x", "--declarative", "--sample", str(sample), "--root", root]) == 3
    assert "latin1.csv:2: not utf-8 text" in capsys.readouterr().err
    assert not list((tmp_path / "adapters").iterdir())


def test_a_malformed_row_of_the_sample_is_left_out_of_the_proposal_and_named(tmp_path, capsys):
    # Copilot Arena's published CSV has a row holding its prefix alone: `new-adapter --sample`
    # stopped at it (exit status 3, "check the quotes"), though the build takes such a file with
    # --skip-malformed; the proposal is made from the other rows and names the one left out
    root = _root(tmp_path)
    sample = root / "arena.csv"
    sample.write_text("id,source,output,system,rating\n1,hi,hello,A,3\n2,broken\n1,hi,hey,B,4\n")
    argv = ["new-adapter", "arena", "--declarative", "--sample", str(sample), "--root", str(root)]
    assert main(argv) == 0
    said = "malformed row: row has 2 fields, the header 5 (1 in the sample: arena.csv:3)"
    assert f"source.yaml:6: CHECK {said}: left out of this proposal" in capsys.readouterr().out
    spec = load_declaration(root / "adapters" / "arena" / "source.yaml").spec
    assert spec.candidates.text == "output" and spec.candidates.system == "system"


def test_the_proposal_asks_which_end_of_the_rating_scale_is_better(tmp_path):
    # an error count proposed as a rating, read higher-is-better unsaid, swapped every pair
    spec, text = _propose(
        _root(tmp_path), "counted", "id,source,output,system,errors\n1,hello world,hi world,A,3\n"
    )
    assert spec.candidates.better == "higher"
    assert "  better: higher  # CHECK: lower for error counts, ranks or distances" in text


def test_a_semicolon_sample_gets_its_delimiter_proposed_and_reads(tmp_path):
    sample = tmp_path / "simpeval.csv"
    with (
        _fixture("simpeval_2022").open(newline="", encoding="utf-8") as source,
        sample.open("w", newline="", encoding="utf-8") as out,
    ):
        csv.writer(out, delimiter=";").writerows(csv.reader(source))
    (tmp_path / "clone").mkdir()
    root = _root(tmp_path / "clone")
    spec, text = _propose(root, "my_semi", sample)
    assert "delimiter: ;  # CHECK: guessed from the header" in text
    assert spec.file.delimiter == ";"
    assert spec.candidates.ratings == {"rating": ["rating_1", "rating_2", "rating_3"]}
    groups = _read_groups(root, "my_semi", sample)
    assert len(groups) == 3 and all(len(g.candidates) == 4 for g in groups)


def test_a_rater_column_and_a_comparisons_two_systems_are_proposed(tmp_path):
    """A rater column (rater, annotator_id, judge) and a comparison's model_a/model_b were
    listed as "not read": a table of one row per (rater, output) was then refused as duplicate
    candidates, and every comparison's systems were unknown. Both are now proposed."""
    root = _root(tmp_path)
    rows = [
        ("1", "Hello there", s, f"out {s}", r, v) for s in "AB" for r, v in (("al", 4), ("bo", 5))
    ]
    with (tmp_path / "ratings.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(
            [("item_id", "source", "system", "output", "annotator_id", "fluency"), *rows]
        )
    (tmp_path / "pairs.csv").write_text(
        "prompt,model_a,model_b,response_a,response_b,judge,winner\nHi,gpt,llama,Hey,Yo,ann,b\n"
    )
    spec, rated_text = _propose(root, "my_rated", tmp_path / "ratings.csv")
    pairs_spec, pairs_text = _propose(root, "my_pairs", tmp_path / "pairs.csv")
    assert "not read" not in rated_text + pairs_text
    assert (spec.group.key, spec.candidates.rater) == (["item_id"], "annotator_id")
    (group,) = _read_groups(root, "my_rated", tmp_path / "ratings.csv")
    assert [(c.systems, c.raters) for c in group.candidates] == [([s], ["al", "bo"]) for s in "AB"]
    pairs = pairs_spec.comparisons
    assert (pairs.system_a, pairs.system_b, pairs.rater) == ("model_a", "model_b", "judge")
    assert "system_a: model_a  # CHECK" in pairs_text


def test_the_schema_comments_point_at_a_schema_file_in_a_clone_and_in_an_install(tmp_path):
    """`$schema=../../nnd_suites/schemas/...` was written everywhere: outside a clone (nnd-suites
    installed with pip) no file was there for the editor to read."""
    from urllib.request import url2pathname

    from nnd_suites.scaffold.writer import write_adapter

    (tmp_path / "install").mkdir(), (tmp_path / "clone").mkdir()
    for root in (_root(tmp_path / "install"), _root(tmp_path / "clone")):
        if root.name == "clone":
            shutil.copytree(
                Path(str(resources.files("nnd_suites.schemas"))), root / "nnd_suites" / "schemas"
            )
        write_declarative(root, "mine", _fixture("simpeval_2022"))
        write_adapter(root, "stub", "likert")
        written = ("adapters/mine/source.yaml", "quality_maps/mine.yaml", "quality_maps/stub.yaml")
        for path in (root / relative for relative in written):
            target = path.read_text("utf-8").splitlines()[0].split("$schema=", 1)[1]
            if root.name == "clone":
                schema = (path.parent / target).resolve()
                assert schema.parent == (root / "nnd_suites" / "schemas").resolve(), target
            else:
                assert target.startswith("file:///"), target
                schema = Path(url2pathname(target.removeprefix("file://")))
            assert schema.name.removesuffix(".schema.json") in ("quality_map", "declarative_source")
            assert json.loads(schema.read_text("utf-8"))["$id"].endswith(schema.name)


def test_a_chosen_rejected_table_gets_two_texts_and_says_what_it_cannot_know(tmp_path):
    """hh-rlhf's chosen/rejected was proposed as context `chosen` and text_a = text_b =
    `rejected`, the winner `chosen`: a preference in the columns' names, never said."""
    rows = [{"chosen": f"Human: hi {i} Assistant: hello", "rejected": "H: x A: no"} for i in "12"]
    (tmp_path / "hh.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    spec, text = _propose(_root(tmp_path), "my_hh", tmp_path / "hh.jsonl")
    pairs = spec.comparisons
    assert (pairs.text_a, pairs.text_b, pairs.winner) == (
        "chosen",
        "rejected",
        "TODO_winner_column",
    )
    assert spec.group.context == {"todo_context_column": "TODO_context_column"}
    assert "# CHECK: chosen and rejected are the two texts, the preference in their names" in text
    assert "# CHECK: no column holds the context the texts answer" in text


def test_an_id_unique_per_row_does_not_key_the_groups_and_a_missing_system_is_said(tmp_path):
    """sfres was keyed on doc_id, different on every row (no group held two outputs), and with no
    system column every system became `unknown` unsaid."""
    root = _root(tmp_path)
    sample = ADAPTERS.get("sfres").folder() / "fixtures" / "sfres_sample.json"
    spec, text = _propose(root, "my_sf", sample)
    assert spec.group.key == ["source"] and spec.candidates.system.value == "unknown"
    assert "# CHECK: doc_id differs on every row of the sample" in text
    assert "# CHECK: no column names the system: every output's system is `unknown`" in text
    groups = _read_groups(root, "my_sf", sample)
    assert groups and all(len(group.candidates) > 1 for group in groups)


def test_the_command_prints_each_check_where_the_file_marks_it(tmp_path, capsys):
    """new-adapter --declarative wrote its '# CHECK' lines into source.yaml only and printed none:
    each is printed once, FILE:LINE and what to check (a wrapped note on one line, a guessed key
    by its dotted name and value)."""
    rows = [{"chosen": f"Human: hi {i} Assistant: hello", "rejected": "H: x A: no"} for i in "12"]
    (tmp_path / "hh.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    root = _root(tmp_path)
    argv = ["new-adapter", "my_hh", "--declarative", "--sample", str(tmp_path / "hh.jsonl")]
    assert main([*argv, "--root", str(root)]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if " CHECK " in line]
    lines = (root / "adapters" / "my_hh" / "source.yaml").read_text("utf-8").splitlines()
    marked = [n for n, line in enumerate(lines, 1) if "# CHECK: " in line]
    assert [line.split(": CHECK ")[0] for line in printed] == [
        f"adapters/my_hh/source.yaml:{n}" for n in marked
    ]
    assert (
        f"adapters/my_hh/source.yaml:{marked[1]}: CHECK chosen and rejected are the two texts, "
        "the preference in their names: a source.yaml reads the winner from a column (add one,"
    ) in printed[1]
    assert printed[-1].endswith(
        "CHECK comparisons.winner = TODO_winner_column: guessed from the header"
    )


def test_a_context_key_an_empty_context_cell_and_no_comparison_systems_are_said(tmp_path):
    """A comparisons table with no id column was keyed on its first context column alone (the
    rows of one prefix with two suffixes: two contexts under one key, an error at build), unsaid;
    an empty prefix cell (the group makes no tests unless group.may_be_empty names it) and no
    system columns (every system `unknown`) were said by no CHECK either."""
    root = _root(tmp_path)
    sample = (
        "prefix,suffix,completion_a,completion_b,winner\n"
        "def f():,return 1,pass,x = 1,0\n,import os,pass,x = 2,1\ndef f():,return 2,pass,y,1\n"
    )
    spec, text = _propose(root, "my_fim", sample)
    assert spec.group.key == ["prefix", "suffix"]
    notes = " ".join(text.replace("\n#   ", " ").splitlines())
    assert (
        "# CHECK: no id column: the groups are keyed on the context (prefix, suffix), the rows of "
        "one input being those that share it; name a column identifying the input in group.key"
    ) in notes
    assert (
        "# CHECK: prefix is empty in 1 of the sample's 3 rows: such a group makes no tests "
        "(counted as 'empty context field(s)'); if the empty cell is real (code at the start or "
        "end of a file), add group.may_be_empty: [prefix]"
    ) in notes
    assert "suffix is empty" not in notes
    assert (
        "# CHECK: no column names the system: every output's system is `unknown` (systems and "
        "verify refuse the suite); add comparisons.system_a and system_b: COLUMN each"
    ) in notes


def test_a_repeating_id_keys_the_groups_and_a_cleaned_text_column_is_read(tmp_path):
    """SimpEval-past's proposal keyed the groups on `id` (unique per row: the context instead),
    though `original_id` names each input, and read `generation` (lowercased, tokenised) where
    the shipped adapter reads `processed_generation`. An id repeating over rows of one context
    keys the groups; a cleaned variant of the text column is read, with a CHECK note naming both."""
    root, sample = _root(tmp_path), _fixture("simpeval_past")
    spec, text = _propose(root, "my_simp", sample)
    assert spec.group.key == ["original_id"] and spec.candidates.text == "processed_generation"
    assert (
        "# CHECK: processed_generation is read as the text, not generation: name the one raters "
        "read\n" in text
    )
    with sample.open(newline="", encoding="utf-8") as rows:
        first = next(csv.DictReader(rows))
    groups = _read_groups(root, "my_simp", sample)
    assert [group.id for group in groups] == ["0", "1", "2"]
    assert groups[0].candidates[0].text == first["processed_generation"]
    # an id repeating over rows of other inputs (a system's) does not key the groups
    table = "item_id,system_id,source,output,score\n1,7,a,x,1\n2,7,b,y,2\n3,8,a,z,3\n"
    assert _propose(root, "by_system", table)[0].group.key == ["source"]


def test_the_proposal_bounds_the_ratings_by_the_samples_and_says_to_check_the_scale(tmp_path):
    """The proposal wrote no low/high: a typo in the source (44 on a 1-5 scale) built its tests
    with exit 0, nothing said. It proposes the sample's smallest and largest rating as the
    scale, each a CHECK note (the true ends may be wider than the sample shows), so such a value
    is a malformed row named at its line; a sample rated one value alone proposes none, said."""
    from nnd_suites.declarative.notes import check_notes

    root = _root(tmp_path)
    rows = "".join(
        f"{item},context {item},{system},text {item}{system},{a},{b}\n"
        for item, system, a, b in [(1, "A", 5, 4), (1, "B", 2, 1), (2, "A", 3, 2), (2, "B", 4, 3)]
    )
    header = "item_id,source,system,output,r_1,r_2\n"
    spec, text = _propose(root, "scaled", header + rows)
    assert (spec.candidates.low, spec.candidates.high) == (1, 5)
    notes = {what.split(":")[0]: (number, what) for number, _, what in check_notes(text)}
    lines = text.splitlines()
    low, high = notes["candidates.low = 1"], notes["candidates.high = 5"]
    assert lines[low[0] - 1].startswith("  low: 1  # CHECK: the sample's ")
    assert lines[high[0] - 1].startswith("  high: 5  # CHECK: the sample's ")
    assert "true low end may be lower" in low[1] and "true high end may be higher" in high[1]
    typo = tmp_path / "typo.csv"
    typo.write_text(header + rows.replace("A,text 1A,5,4", "A,text 1A,44,4"))
    with pytest.raises(SourceFormatError, match=r"typo\.csv:2: column 'r_1': '44' out of range"):
        _read_groups(root, "scaled", typo)
    flat = "".join(
        f"{item},c{item},{system},t{item}{system},3,3\n" for item in "12" for system in "AB"
    )
    spec, text = _propose(root, "flat", header + flat)
    said = "every rating of the sample is 3: write the scale's ends as candidates.low and high"
    assert (spec.candidates.low, spec.candidates.high) == (None, None)
    assert said in " ".join(text.replace("\n#   ", " ").splitlines()), text


def test_every_check_note_of_a_guessed_key_points_at_the_keys_line(tmp_path, capsys):
    """The template's CHECK note was printed at `source.yaml:5`, the file's header comment, while
    `template:` was on line 27 (written over three lines by YAML). The template is written on
    one line, its note after it (wrapped over comment lines), as each guessed key's note is."""
    from nnd_suites.declarative.notes import check_notes

    root = _root(tmp_path)
    sample = tmp_path / "ratings.csv"
    sample.write_text(
        "item_id,prompt,system,output,r1,r2\n1,Say hi.,A,Hello.,5,4\n1,Say hi.,B,Go.,1,2\n"
    )
    argv = ["new-adapter", "mine", "--declarative", "--sample", str(sample), "--root", str(root)]
    assert main(argv) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if " CHECK " in line]
    text = (root / "adapters" / "mine" / "source.yaml").read_text("utf-8")
    lines = text.splitlines()
    for number, _mark, what in check_notes(text):
        key = what.split(" = ")[0].split(":")[0].split(".")[-1]
        assert lines[number - 1].lstrip().startswith(f"{key}:"), (number, what)
    (template,) = [line for line in printed if " CHECK template" in line]
    line = next(n for n, x in enumerate(lines, 1) if x.startswith("template: "))
    assert template.startswith(f"adapters/mine/source.yaml:{line}: CHECK template = ")
    assert template.endswith("as the code after a completion's cursor, does not belong here)")
    assert load_declaration(root / "adapters" / "mine" / "source.yaml").spec.template == (
        "{prompt}\n"
    )
