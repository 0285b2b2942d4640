"""hh_rlhf: the figures on the shipped harmless-base test split, the transcript split, the fixture
derived by hand, malformed rows named by file and line, and scoring with the plain template."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main
from nnd_suites.errors import SourceFormatError
from nnd_suites.records.conversation import decode_turns
from nnd_suites.records.templates import render_template

ADAPTER = get_adapter("hh_rlhf")
SHIPPED = ADAPTER.default_source_path()
FIXTURE = ADAPTER.folder() / "fixtures" / "hh_sample.jsonl.gz"


def shipped_rows() -> list[dict]:
    with gzip.open(SHIPPED, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def write_gz(path: Path, rows: list[object]) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode("utf-8")))
    return path


def test_figures_on_the_shipped_file(tmp_path, capsys):
    assert main(["build", "hh_rlhf", "--out", str(tmp_path / "hh")]) == 0
    capsys.readouterr()
    assert main(["stats", str(tmp_path / "hh"), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    # 2,312 rows: 5 compare replies to different conversations, 4 have an empty final reply.
    assert stats["pairs"] == 2303
    assert stats["groups"] == 2305  # 2,307 usable rows on 2,305 distinct conversations
    assert stats["candidates"] == 2 * 2307
    assert stats["groups_without_pairs"] == 4
    assert stats["skipped"] == {
        "transcripts differ before the final reply": 5,
        "empty candidate text": 4,
    }
    assert stats["breakdowns"]["conversation"] == {"multi-turn": 1645, "single-turn": 658}
    assert stats["breakdowns"]["category"] == {"rejected": 2303}
    assert stats["conflicting_texts"] == 0 and stats["degenerate_pairs"] == 0


def test_skips_name_their_lines(hh_suite):
    examples = {record.reason: record.examples for record in hh_suite.manifest.skipped}
    assert examples["transcripts differ before the final reply"] == [
        f"test.jsonl.gz:{n}" for n in (1255, 1689, 1951, 1953, 2037)
    ]
    assert examples["empty candidate text"] == [f"test.jsonl.gz:{n}" for n in (87, 517, 926, 1104)]
    assert hh_suite.manifest.conflicts == []
    assert hh_suite.manifest.sources[0].path == "shipped:hh_rlhf/data/test.jsonl.gz"


def test_repeated_contexts(hh_suite):
    """Two conversations were judged twice, each time with two other replies."""
    tests_per_context = Counter(pair.group_id for pair in hh_suite.pairs)
    repeated = {group: n for group, n in tests_per_context.items() if n > 1}
    assert sorted(repeated.values()) == [2, 2]
    firsts = sorted(
        decode_turns(next(p for p in hh_suite.pairs if p.group_id == g).context["dialogue"])[
            0
        ].content
        for g in repeated
    )
    assert firsts == ["call me a bad name", "what are racist words"]


def test_every_test_is_a_row_and_renders_back_to_its_transcripts(hh_suite):
    """Context (default template) + the reply is the release's own transcript, for every test:
    the chosen one for the high side, the rejected one for the low side of the same row."""
    rows = {(row["chosen"], row["rejected"]) for row in shipped_rows()}
    template = hh_suite.manifest.default_template
    for pair in hh_suite.pairs:
        prompt = "\n\n" + render_template(template, pair.context)
        assert (f"{prompt} {pair.high.text}", f"{prompt} {pair.low.text}") in rows


def test_no_cross_pair_on_a_context_judged_twice():
    """Fixture lines 5 and 7 (shipped lines 251 and 1484) judge four different replies to the same
    one-turn conversation: exactly their two (chosen, rejected) pairs are tests."""
    suite = build_suite("hh_rlhf", FIXTURE)
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    split = [
        (
            row["chosen"].rpartition("\n\nAssistant: ")[2],
            row["rejected"].rpartition("\n\nAssistant: ")[2],
        )
        for row in (rows[4], rows[6])
    ]
    group = [p for p in suite.pairs if "racist words" in p.context["dialogue"]]
    assert [(p.high.text, p.low.text) for p in group] == split
    assert len({p.group_id for p in group}) == 1
    # 4 replies labelled chosen/rejected per candidate would have given 2 x 2 = 4 tests.
    assert len(group) == 2


def test_fixture_counts_derived_by_hand():
    """Fixture rows (shipped lines 1, 2, 3, 87, 251, 1255, 1484):
    - 1255: transcripts differ before the final reply -> skipped, no group;
    - 87: empty chosen reply -> its judgment skipped, its group makes no test;
    - 251 and 1484 share a context -> one group, two tests;
    so 5 groups (1, 2, 3, 87, 251+1484), 6 judgments = 12 replies, 5 tests. Human turns in the
    contexts: lines 1, 2 and 3 have 3, 3 and 2 (multi-turn), 251 and 1484 one (single-turn)."""
    stats = build_suite("hh_rlhf", FIXTURE).stats()
    assert (stats["pairs"], stats["groups"], stats["candidates"]) == (5, 5, 12)
    assert stats["breakdowns"]["conversation"] == {"multi-turn": 3, "single-turn": 2}
    assert stats["skipped"] == {
        "empty candidate text": 1,
        "transcripts differ before the final reply": 1,
    }


def test_turns_are_structured():
    suite = build_suite("hh_rlhf", FIXTURE)
    turns = decode_turns(suite.pairs[0].context["dialogue"])
    # shipped line 1: Human, Assistant, Human, Assistant, Human before the final reply
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[0].content == "what are some pranks with a pen i can do?"
    assert suite.manifest.default_template == "{dialogue:transcript}\n\nAssistant:"


GOOD = {
    "chosen": "\n\nHuman: Hi\n\nAssistant: Hello.",
    "rejected": "\n\nHuman: Hi\n\nAssistant: Go.",
}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("{not json", "invalid JSON"),
        ({"chosen": GOOD["chosen"]}, r"missing required field\(s\) \['rejected'\]"),
        ({**GOOD, "chosen": "Human: Hi\n\nAssistant: x"}, "must start with"),
        ({**GOOD, "chosen": "\n\nAssistant: x"}, "must start with"),
        ({**GOOD, "rejected": "\n\nHuman: Hi\n\nAssistant: x\n\nHuman: y"}, "does not end with"),
        ({**GOOD, "chosen": 3}, "must be a JSON string"),
    ],
)
def test_malformed_rows_name_file_and_line(tmp_path, row, message):
    path = write_gz(tmp_path / "bad.jsonl.gz", [GOOD, row])
    with pytest.raises(SourceFormatError, match=message) as raised:
        build_suite("hh_rlhf", path)
    assert "bad.jsonl.gz:2" in str(raised.value)


def test_skip_malformed_counts_an_unreadable_line(tmp_path):
    path = write_gz(
        tmp_path / "bad.jsonl.gz", [GOOD, "{not json", GOOD | {"rejected": GOOD["rejected"] + "!"}]
    )
    suite = build_suite("hh_rlhf", path, skip_malformed=True)
    malformed = "malformed row: invalid JSON: Expecting property name enclosed in double quotes"
    assert suite.stats()["skipped"] == {malformed: 1}
    assert [r.examples for r in suite.manifest.skipped] == [["bad.jsonl.gz:2"]]
    # lines 1 and 3 judge two different reply pairs on the same conversation: one group, 2 tests
    assert len(suite.pairs) == 2 and suite.stats()["groups"] == 1


def test_damaged_and_fake_gzip_are_named_errors(tmp_path):
    data = FIXTURE.read_bytes()
    (tmp_path / "cut.jsonl.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceFormatError, match="damaged gzip data") as raised:
        build_suite("hh_rlhf", tmp_path / "cut.jsonl.gz")
    assert "cut.jsonl.gz:" in str(raised.value)
    (tmp_path / "plain.jsonl.gz").write_text(json.dumps(GOOD) + "\n", "utf-8")
    with pytest.raises(SourceFormatError, match="not gzip data"):
        build_suite("hh_rlhf", tmp_path / "plain.jsonl.gz")
    bad_utf8 = gzip.compress(json.dumps(GOOD).encode() + b"\n" + b'{"chosen": "\xff"}\n')
    (tmp_path / "latin.jsonl.gz").write_bytes(bad_utf8)
    with pytest.raises(SourceFormatError, match="not UTF-8") as raised:
        build_suite("hh_rlhf", tmp_path / "latin.jsonl.gz")
    assert "latin.jsonl.gz:2" in str(raised.value)


def test_the_dataset_card_warns_of_offensive_content(hh_suite, tmp_path):
    from nnd_suites.hub import export_suites

    export_suites([hh_suite], tmp_path / "nnd")
    card = (tmp_path / "nnd" / "README.md").read_text("utf-8")
    assert "offensive and upsetting content by design" in card
    assert "offensive" in (ADAPTER.folder() / "README.md").read_text("utf-8")


def test_a_source_of_ties_only_says_why_no_test_was_made(tmp_path):
    """Every row compares a reply with itself: each judgment is skipped, no test is built."""
    same = {"chosen": GOOD["chosen"], "rejected": GOOD["chosen"]}
    with pytest.raises(SourceFormatError, match="no pair built") as raised:
        build_suite("hh_rlhf", write_gz(tmp_path / "same.jsonl.gz", [same, same]))
    message = str(raised.value)
    assert "1 group(s) with 4 judged response(s)" in message  # both rows: one context
    assert "the two responses are the same text: 2" in message
    assert "had no judgment the pairwise rule makes a test of" in message


def test_a_pair_judged_both_ways_is_reported_once(tmp_path):
    """Fixture lines 1 and 2 judged again by other workers (issue 33 §6): line 1 once the other
    way (1 to 1: no majority, no test), line 2 twice more, once each way (2 to 1: its test).
    The first is skipped and not kept; only the second, a test made, is a kept conflict."""
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as handle:
        first, second = (json.loads(line) for line in list(handle)[:2])
    swapped = [{"chosen": row["rejected"], "rejected": row["chosen"]} for row in (first, second)]
    rows = [first, swapped[0], second, second, swapped[1]]
    suite = build_suite("hh_rlhf", write_gz(tmp_path / "twice.jsonl.gz", rows))
    stats = suite.stats()
    assert stats["pairs"] == 1 and stats["groups"] == 2
    assert suite.pairs[0].high.text == second["chosen"].rpartition("\n\nAssistant: ")[2]
    assert stats["skipped"] == {"no majority (majority)": 2}
    assert stats["conflicts"] == {"pair judged both ways (majority applied)": 1}
    [kept] = suite.manifest.conflicts
    assert kept.examples == ["twice.jsonl.gz:3"]  # line 2's pair, not line 1's
