"""Challenge 300's 20 question categories roll up into the five groups the NND paper reports
(section 4; the quality map's hierarchy). The suite's 807 tests cannot pin every category's
group: the two temporal questions have no correct answer, so they make no test, yet their group
still counts in each system's human score by category."""

from __future__ import annotations

import csv

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.quality_map import QualityMap

#: the paper's roll-up, as published (group -> its categories)
PAPER_GROUPS = {
    "Common Sense": [
        "commonsense",
        "explanation",
        "general knowledge",
        "human behavior",
        "hypothetical",
        "story understanding",
        "Winograd",
        "history",
    ],
    "Entity": ["entity substitution", "entity tracking"],
    "Comparison": ["comparison", "estimation", "temporal"],
    "Creativity": ["example generation", "false presupposition", "generation", "riddle"],
    "Science": ["math", "meta-reasoning", "science", "spatial", "steps"],
}


def test_each_category_rolls_up_into_the_papers_group():
    quality_map = QualityMap.load("challenge300")
    rolled = {
        category: quality_map.category_path("incorrect", category)[0]
        for categories in PAPER_GROUPS.values()
        for category in categories
    }
    assert rolled == {c: group for group, cs in PAPER_GROUPS.items() for c in cs}


def test_the_shipped_file_holds_exactly_the_papers_categories():
    data = next((ADAPTERS.get("challenge300").folder() / "data").glob("*.tsv"))
    with data.open(encoding="utf-8", newline="") as handle:
        found = {row["category"] for row in csv.DictReader(handle, delimiter="\t")}
    assert found == {c for categories in PAPER_GROUPS.values() for c in categories}


def test_a_question_category_written_two_ways_is_named_not_read_as_two(tmp_path, capsys):
    """A 'Science' row beside the file's 'science' rows was built (exit 0) as a question
    category of its own; the build now stops at the row written otherwise, naming both."""
    from nnd_suites.cli import main
    from nnd_suites.errors import SourceFormatError

    lines = ADAPTERS.get("challenge300").default_source_path().read_text("utf-8").split("\n")
    first = next(i for i, line in enumerate(lines) if '\t"science"\t' in line)
    lines[first] = lines[first].replace('\t"science"\t', '\t"Science"\t')
    source = tmp_path / "challenge300-outputs.tsv"
    source.write_text("\n".join(lines), "utf-8")
    argv = ["build", "challenge300", "--source", str(source), "--out", str(tmp_path / "s")]
    assert main(argv) == SourceFormatError.exit_status
    err = capsys.readouterr().err
    assert "category 'science' is 'Science' (first at challenge300-outputs.tsv:" in err
    assert "written another way" in err and not (tmp_path / "s").exists()
