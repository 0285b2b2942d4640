"""News summarization in the era of GPT-3 (Goyal, Li and Durrett, 2022): for each CNN or BBC
article, 3 annotators picked the best and the worst of three zero-shot summaries (GPT-3, T0,
BRIO); a summary scores +1 per best vote and -1 per worst vote."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.builder.adapter import Adapter, AdapterMetadata, register_adapter
from nnd_suites.errors import SourceFormatError
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.sources import ReadLog, read_json_object

CITATION = """@article{goyal2022news,
  title={News Summarization and Evaluation in the Era of {GPT-3}},
  author={Goyal, Tanya and Li, Junyi Jessy and Durrett, Greg},
  journal={arXiv preprint arXiv:2209.12356},
  year={2022}
}"""

SYSTEMS = ("gpt3", "t0", "brio")
#: Every article was judged by three annotators (paper, section 3); a record with another number
#: would put its scores on another scale, so it is malformed.
ANNOTATORS = 3
#: The one rating each candidate carries: the annotator's vote on the summary (+1 best, -1
#: worst, 0 neither); the quality map sums it over annotators.
VOTE = "vote"
#: The release's folder inside the archive (``human_annotations.zip``), or the folder itself.
RELEASE_FOLDER = "human_annotations"


class Gpt3SummOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dataset: Literal["cnn", "bbc"] = Field(
        "cnn",
        description="cnn: CNN articles, 3-sentence summaries (suite gpt3_summ_cnn); bbc: BBC "
        "articles, 1-sentence summaries (suite gpt3_summ_bbc)",
    )
    votes: Literal["first", "all"] = Field(
        "first",
        description="first: only the first system an annotator lists as best (worst) gets the "
        "vote, as salesforce/nnd_evaluation reads the file (its 205 and 208 tests); all: every "
        "listed system gets it",
    )


def _named_systems(value: Any, where: str, path: Path, line: int) -> list[str]:
    if (
        not isinstance(value, list)
        or not value
        or any(not isinstance(name, str) or name not in SYSTEMS for name in value)
    ):
        raise SourceFormatError(
            str(path),
            line,
            f"{where} is {value!r}; expected a non-empty list of names among {list(SYSTEMS)}",
        )
    return value


@register_adapter("gpt3_summ")
class Gpt3SummAdapter(Adapter):
    """One group per article; one candidate per system summary, with each annotator's vote."""

    quality_map = "gpt3_summ"
    source_kind = "folder"
    context_fields = ("document",)
    default_template = "{document}"
    default_source = "human_annotations.zip"
    Options = Gpt3SummOptions
    metadata = AdapterMetadata(
        task="summarization",
        languages=["en"],
        annotation_type="numeric",
        license="CC-BY-4.0",
        citation=CITATION,
        source_urls=["https://tagoyal.github.io/zero-shot-explorer/human_annotations.zip"],
        description="Zero-shot summaries of 100 CNN (3 sentences) or 100 BBC (1 sentence) "
        "articles by GPT-3 (text-davinci-002), T0 and BRIO; 3 annotators each picked the best "
        "and the worst summary of an article (score +1 per best, -1 per worst vote).",
    )

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        name = f"{self.options.dataset}_human.json"
        file = path / RELEASE_FOLDER / name
        if not file.is_file():
            file = path / name
        if not file.is_file():
            raise SourceFormatError(
                str(path),
                None,
                f"no {RELEASE_FOLDER}/{name} in the source",
                "pass the release's human_annotations.zip (or the folder it unpacks to)",
            )
        for line, doc_id, record in read_json_object(file, log):
            with log.each_row():
                yield self._group(record, doc_id, file, line)

    def _group(self, record: Any, doc_id: str, file: Path, line: int) -> Group:
        """One article's group; a fault of its record is a SourceFormatError at its line."""
        where = f"{file.name}:{line}"
        if not isinstance(record, dict):
            raise SourceFormatError(str(file), line, f"{doc_id}: not an object")
        for field in ("article", "annotators", *SYSTEMS):
            if field not in record:
                raise SourceFormatError(str(file), line, f"{doc_id}: no {field!r} field")
        if not isinstance(record["article"], str):
            raise SourceFormatError(str(file), line, f"{doc_id}.article: expected a string")
        votes = self._votes(record["annotators"], doc_id, file, line)
        candidates = []
        for system in SYSTEMS:
            summary = record[system]
            if not isinstance(summary, dict) or not isinstance(summary.get("text"), str):
                raise SourceFormatError(
                    str(file), line, f"{doc_id}.{system}: expected {{'text': summary}}"
                )
            candidates.append(
                Candidate(
                    text=summary["text"],
                    systems=[system],
                    ratings={VOTE: votes[system]},
                    # positions within this article: the same 3 people did not judge every
                    # article, but each judged all three summaries of it (votes compare them)
                    raters=[f"annotator{i + 1}" for i in range(ANNOTATORS)],
                    where=f"{where} {doc_id}.{system}",
                )
            )
        return Group(
            id=doc_id,
            context={"document": record["article"]},
            candidates=candidates,
            where=f"{where} {doc_id}",
        )

    def _votes(self, annotators: Any, doc_id: str, path: Path, line: int) -> dict[str, list[float]]:
        """Each system's vote from each annotator: +1 best, -1 worst (both: 0)."""
        if not isinstance(annotators, list) or len(annotators) != ANNOTATORS:
            raise SourceFormatError(
                str(path), line, f"{doc_id}.annotators: expected a list of {ANNOTATORS} annotators"
            )
        votes: dict[str, list[float]] = {system: [] for system in SYSTEMS}
        for index, annotator in enumerate(annotators):
            where = f"{doc_id}.annotators[{index}]"
            if not isinstance(annotator, dict):
                raise SourceFormatError(str(path), line, f"{where}: not an object")
            best, worst = (
                _named_systems(annotator.get(key), f"{where}.{key}", path, line)
                for key in ("best_summary", "worst_summary")
            )
            if self.options.votes == "first":
                best, worst = best[:1], worst[:1]
            for system in SYSTEMS:
                votes[system].append(float((system in best) - (system in worst)))
        return votes
