"""Example: crowd ratings (0-100) on five aspects of several systems' summaries.

The release is a folder: ``inputs.html`` (an HTML table of the documents), ``outputs/SYSTEM.tsv``
(each system's summaries) and ``ratings/SYSTEM.tsv`` (one row per rater and document, a 0-100
score per aspect). A group is one document; a candidate is one system's summary with every
rater's scores; the quality map compares the mean scores of each aspect separately.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from nnd_suites.builder.adapter import Adapter, AdapterMetadata, register_adapter
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.sources import ReadLog, parse_number, read_tsv
from nnd_suites.sources.html_table import read_html_table

ASPECTS = ("fluency", "coherence", "relevance", "consistency", "informativeness")
CITATION = """@misc{example_ratings,
  title = {A synthetic five-aspect rating study (nnd-suites contributor example)},
  year = {2026}
}"""


@register_adapter("example_ratings")
class ExampleRatingsAdapter(Adapter):
    """A group is one document; a candidate is one system's summary of it."""

    quality_map = "example_ratings"
    source_kind = "folder"
    context_fields = ("document",)
    default_template = "{document}"
    metadata = AdapterMetadata(
        task="summarization",
        languages=["en"],
        annotation_type="numeric",
        license="CC-BY-4.0",
        citation=CITATION,
        source_urls=["https://example.org/five-aspect-ratings"],
        description="Summaries by several systems, each rated 0-100 on five aspects by crowd "
        "workers; pairs where an aspect's mean rating differs by at least 20.",
    )

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        outputs: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
        for file in sorted((path / "outputs").glob("*.tsv")):
            for line, row in read_tsv(file, required=("doc_id", "summary"), log=log):
                outputs[row["doc_id"]][file.stem] = (row["summary"], f"{file.name}:{line}")
        scores: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(
            lambda: defaultdict(list)
        )
        raters: dict[tuple[str, str], list[str]] = defaultdict(list)  # who gave each score
        for file in sorted((path / "ratings").glob("*.tsv")):
            for line, row in read_tsv(file, required=("doc_id", "rater", *ASPECTS), log=log):
                raters[row["doc_id"], file.stem].append(row["rater"])
                for aspect in ASPECTS:
                    value = parse_number(row[aspect], file, line, aspect, low=0, high=100)
                    scores[row["doc_id"], file.stem][aspect].append(value)
        for line, row in read_html_table(path / "inputs.html", log):
            candidates = [
                Candidate(
                    text=text,
                    systems=[system],
                    ratings=dict(scores.get((row["id"], system), {})) or None,
                    raters=raters.get((row["id"], system)),
                    where=where,
                )
                for system, (text, where) in sorted(outputs[row["id"]].items())
            ]
            yield Group(
                id=row["id"],
                context={"document": row["document"]},
                candidates=candidates,
                where=f"inputs.html:{line}",
            )
