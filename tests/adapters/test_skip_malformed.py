"""--skip-malformed in the class adapters: a row with a fault of its own (a field missing, of the
wrong type, a value the records refuse) is left out and counted with its file and line, and the
build goes on with what the other rows give; without the flag the same row stops the build with a
SourceFormatError at its line. (Before, only unreadable lines were counted: a row whose text was
null, or whose system name was empty, stopped a --skip-malformed build.)"""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main
from nnd_suites.errors import SourceFormatError
from nnd_suites.suite import Suite


def fixtures(name: str) -> Path:
    return get_adapter(name).folder() / "fixtures"


def damage_jsonl_row(path: Path, change: Callable[[dict], object]) -> None:
    """Apply ``change`` to the first row of a JSON-lines file (gzip-compressed or not)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    change(rows[0])
    with opener(path, "wt", encoding="utf-8") as out:
        out.write("".join(json.dumps(row) + "\n" for row in rows))


def damage_json_item(path: Path, change: Callable[[dict], object], key: int | str = 0) -> None:
    """Apply ``change`` to one item of a JSON array, or one value of a JSON object."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data[key])
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


@dataclass
class Damage:
    adapter: str
    source: str  # the fixture's source (a file or a folder), relative to its fixtures folder
    damaged_file: str  # the file damaged, relative to the copied source folder
    change: Callable[[Path], None]
    reason: str  # what the skip reason says
    line: int  # the damaged row's line in the damaged file
    texts: tuple[str, ...]  # the start of the damaged row's candidate texts: its pairs are lost


def set_field(field: str, value: object) -> Callable[[dict], object]:
    return lambda row: row.__setitem__(field, value)


SUMMEVAL = "model_annotations.aligned.paired.sample.jsonl"
SUMMEVAL_TEXT = "paul merson has restarted his row with andros townsend ."
THUMB = "cnndm_THumB-1.0.jsonl"
FRANK = "human_annotations_sentence.json"
GPT3 = "human_annotations/cnn_human.json"
HH = "hh_sample.jsonl.gz"

CASES = {
    "summeval-null-summary": Damage(
        "summeval",
        SUMMEVAL,
        SUMMEVAL,
        lambda p: damage_jsonl_row(p, set_field("decoded", None)),
        "summary record: 'decoded' must be a JSON string, got null",
        1,
        (SUMMEVAL_TEXT,),
    ),
    "summeval-null-system": Damage(
        "summeval",
        SUMMEVAL,
        SUMMEVAL,
        lambda p: damage_jsonl_row(p, set_field("model_id", None)),
        "summary record: 'model_id' must be a JSON string, got null",
        1,
        (SUMMEVAL_TEXT,),
    ),
    "summeval-blank-system": Damage(
        "summeval",
        SUMMEVAL,
        SUMMEVAL,
        lambda p: damage_jsonl_row(p, set_field("model_id", " ")),
        "a system name is empty",
        1,
        (SUMMEVAL_TEXT,),
    ),
    # 'M11 ' beside 'M11' was a system apart with its own human score, with exit 0
    "summeval-spaced-system": Damage(
        "summeval",
        SUMMEVAL,
        SUMMEVAL,
        lambda p: damage_jsonl_row(
            p, lambda row: row.__setitem__("model_id", row["model_id"] + " ")
        ),
        "has spaces around it: read as written, it names a system apart",
        1,
        (SUMMEVAL_TEXT,),
    ),
    "summeval-blank-id": Damage(
        "summeval",
        SUMMEVAL,
        SUMMEVAL,
        lambda p: damage_jsonl_row(p, set_field("id", "")),
        "a group id is empty",
        1,
        (SUMMEVAL_TEXT,),
    ),
    "summeval_experts-number-summary": Damage(
        "summeval_experts",
        "sample",
        THUMB,
        lambda p: damage_jsonl_row(p, set_field("hyp", 5)),
        "THumB record: 'hyp' must be a JSON string, got int",
        1,
        ("The council voted on Tuesday to close the old bridge for repairs.",),
    ),
    "frank-number-article": Damage(
        "frank",
        FRANK,
        FRANK,
        lambda p: damage_json_item(p, set_field("article", 7)),
        "'article' must be a JSON string, got int",
        2,
        ("Springfield opened a new public library on Saturday.",),
    ),
    "frank-blank-system": Damage(
        "frank",
        FRANK,
        FRANK,
        lambda p: damage_json_item(p, set_field("model_name", "")),
        "a system name is empty",
        2,
        ("Springfield opened a new public library on Saturday.",),
    ),
    "gpt3_summ-number-article": Damage(
        "gpt3_summ",
        "sample",
        GPT3,
        lambda p: damage_json_item(p, set_field("article", 3), key="0"),
        "0.article: expected a string",
        2,
        ("",),  # the whole article's group: every pair of group 0
    ),
    "gpt3_summ-no-annotators": Damage(
        "gpt3_summ",
        "sample",
        GPT3,
        lambda p: damage_json_item(p, set_field("annotators", []), key="0"),
        "0.annotators: expected a list of 3 annotators",
        2,
        ("",),
    ),
    "hh_rlhf-not-a-transcript": Damage(
        "hh_rlhf",
        HH,
        HH,
        lambda p: damage_jsonl_row(p, set_field("chosen", "no transcript")),
        "'chosen' is not an HH transcript",
        1,
        ("",),  # the row's judgment: its group's pairs
    ),
}


def damaged_copy(case: Damage, tmp_path: Path) -> Path:
    source = fixtures(case.adapter) / case.source
    copy = tmp_path / source.name
    if source.is_dir():
        shutil.copytree(source, copy)
        case.change(copy / case.damaged_file)
    else:
        shutil.copy2(source, copy)
        for beside in source.parent.iterdir():  # split files and the like, read beside it
            if beside.is_file() and not (tmp_path / beside.name).exists():
                shutil.copy2(beside, tmp_path / beside.name)
        case.change(copy)
    return copy


def lost_pairs(whole: Suite, kept: Suite) -> list:
    kept_ids = {pair.id for pair in kept.pairs}
    assert kept_ids <= {pair.id for pair in whole.pairs}, "a damaged row changed other tests"
    return [pair for pair in whole.pairs if pair.id not in kept_ids]


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_faulty_row_is_counted_and_left_out(case, tmp_path):
    whole = build_suite(case.adapter, fixtures(case.adapter) / case.source)
    damaged = damaged_copy(case, tmp_path)
    kept = build_suite(case.adapter, damaged, skip_malformed=True)
    malformed = {k: v for k, v in kept.stats()["skipped"].items() if k.startswith("malformed")}
    assert len(malformed) == 1, malformed
    (reason, count), *_ = malformed.items()
    assert case.reason in reason and count == 1
    record = next(r for r in kept.manifest.skipped if r.reason == reason)
    assert record.examples == [f"{Path(case.damaged_file).name}:{case.line}"]
    lost = lost_pairs(whole, kept)
    assert lost, "the damaged row gave tests before"
    # only the damaged row's tests are lost (a whole group's where the row is the group)
    groups = {pair.group_id for pair in lost}
    for pair in lost:
        assert any(text in pair.high.text + pair.low.text for text in case.texts), pair
    if case.texts == ("",):
        assert len(groups) == 1


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_without_the_flag_a_faulty_row_stops_the_build_at_its_line(case, tmp_path):
    damaged = damaged_copy(case, tmp_path)
    with pytest.raises(SourceFormatError) as error:
        build_suite(case.adapter, damaged)
    assert case.reason in str(error.value)
    assert error.value.line == case.line
    assert Path(error.value.path).name == Path(case.damaged_file).name


def test_a_refused_row_alone_in_its_article_leaves_no_empty_group(tmp_path):
    # summeval made the article's group before the candidate: the refused row's article stayed
    # behind as a group without candidates, counted among the groups without pairs
    path = tmp_path / SUMMEVAL
    shutil.copy2(fixtures("summeval") / SUMMEVAL, path)
    row = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    row.update(id="an article of one row", model_id=" ")
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")
    whole = build_suite("summeval", fixtures("summeval") / SUMMEVAL).stats()
    kept = build_suite("summeval", path, skip_malformed=True).stats()
    assert (kept["groups"], kept["groups_without_pairs"]) == (whole["groups"], 0)
    assert sum(kept["skipped"].values()) == 1


def test_a_repeated_row_is_a_source_fault_exit_status_3(tmp_path, capsys):
    # the build said "error: ...: duplicate candidate" with exit status 2, a usage error
    rows = (fixtures("simpeval_2022") / "simpeval_2022_sample.csv").read_text().splitlines()
    path = tmp_path / "repeated.csv"
    path.write_text("\n".join([*rows[:2], rows[1], *rows[2:]]) + "\n", encoding="utf-8")
    out = str(tmp_path / "out")
    assert main(["build", "simpeval_2022", "--source", str(path), "--out", out]) == 3
    err = capsys.readouterr().err
    assert "repeated.csv:3: duplicate candidate: system 'Muss'" in err and "(first at" in err
    assert not (tmp_path / "out").exists()
