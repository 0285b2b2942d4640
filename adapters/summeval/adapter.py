"""SummEval (Fabbri et al., 2021): Likert ratings of CNN/DM summaries on four aspects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.builder.adapter import Adapter, AdapterMetadata, register_adapter
from nnd_suites.errors import SourceFormatError
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.sources import ReadLog, parse_number, read_jsonl, require_fields

CITATION = """@article{fabbri2021summeval,
  title={{S}umm{E}val: Re-evaluating Summarization Evaluation},
  author={Fabbri, Alexander R. and Kry{\\'s}ci{\\'n}ski, Wojciech and McCann, Bryan and Xiong, Caiming and Socher, Richard and Radev, Dragomir},
  journal={Transactions of the Association for Computational Linguistics},
  volume={9},
  pages={391--409},
  year={2021}
}"""  # noqa: E501

ASPECTS = ("consistency", "coherence", "fluency", "relevance")
SCALE = range(1, 6)
ANNOTATOR_FIELDS = {"expert": "expert_annotations", "turker": "turker_annotations"}
#: The same three experts rated every summary, the i-th annotation being the i-th expert's
#: (SummEval section 4.1; the file lists them in a fixed order), so they are named by position.
#: The crowd workers differed from summary to summary and are not identified: no raters.
EXPERTS = ("expert1", "expert2", "expert3")


class SummEvalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    annotators: Literal["expert", "turker"] = Field(
        "expert", description="whose ratings decide: the 3 experts (paper) or the 5 crowd workers"
    )
    split: Literal["all", "val", "test"] = Field(
        "all",
        description="the reference implementation's halves of the file: records at even "
        "0-based positions are 'val', odd ones 'test'",
    )


@register_adapter("summeval")
class SummEvalAdapter(Adapter):
    """One group per CNN/DM article; one candidate per system summary, rated on four aspects."""

    quality_map = "summeval"
    context_fields = ("document",)
    default_template = "{document}"
    Options = SummEvalOptions
    metadata = AdapterMetadata(
        task="summarization",
        languages=["en"],
        annotation_type="likert",
        license="MIT",
        citation=CITATION,
        source_urls=["https://github.com/Yale-LILY/SummEval"],
        description="Summaries of 100 CNN/DailyMail articles by 16 systems, rated 1-5 on "
        "consistency, coherence, fluency and relevance by 3 experts and 5 crowd "
        "workers (paired file: model_annotations.aligned.paired.jsonl).",
    )

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        ratings_field = ANNOTATOR_FIELDS[self.options.annotators]
        groups: dict[str, Group] = {}
        record = -1
        for line, row in read_jsonl(path, log):
            record += 1
            where = f"{path.name}:{line}"
            try:
                require_fields(
                    row,
                    ("id", "model_id", "decoded", "text", ratings_field),
                    path,
                    line,
                    "summary record",
                    texts=("id", "model_id", "decoded", "text"),
                )
                ratings = self._ratings(row[ratings_field], path, line)
                raters = self._raters(ratings, path, line)
            except SourceFormatError as error:
                log.malformed(error)
                continue
            if self.options.split != "all" and ("val", "test")[record % 2] != self.options.split:
                log.skip(
                    f"record outside split {self.options.split!r} (even/odd position "
                    "convention of the reference implementation)",
                    where,
                )
                continue
            doc_id = row["id"]
            with log.each_row():  # the candidate first: a row refused makes no empty group
                candidate = Candidate(
                    text=row["decoded"],
                    systems=[row["model_id"]],
                    ratings=ratings,
                    raters=raters,
                    where=where,
                )
                if doc_id not in groups:
                    groups[doc_id] = Group(
                        id=doc_id, context={"document": row["text"]}, candidates=[], where=where
                    )
                group = groups[doc_id]
                if row["text"] != group.context["document"]:
                    raise SourceFormatError(
                        str(path), line, f"article text differs from {group.where} for id {doc_id}"
                    )
                group.candidates.append(candidate)
        yield from groups.values()

    def _raters(self, ratings: dict[str, list[float]], path: Path, line: int) -> list[str] | None:
        """The experts by position (see EXPERTS); the crowd workers are not identified."""
        if self.options.annotators != "expert":
            return None
        if len(ratings[ASPECTS[0]]) != len(EXPERTS):
            raise SourceFormatError(
                str(path),
                line,
                f"expert_annotations holds {len(ratings[ASPECTS[0]])} annotations; SummEval's "
                f"{len(EXPERTS)} experts rated every summary, one annotation each",
            )
        return list(EXPERTS)

    @staticmethod
    def _ratings(annotations: object, path: Path, line: int) -> dict[str, list[float]]:
        if not isinstance(annotations, list) or not annotations:
            raise SourceFormatError(str(path), line, "annotations must be a non-empty list")
        ratings: dict[str, list[float]] = {aspect: [] for aspect in ASPECTS}
        for index, annotation in enumerate(annotations):
            require_fields(annotation, ASPECTS, path, line, f"annotation {index}")
            for aspect in ASPECTS:
                key = f"annotation {index}: {aspect}"
                number = parse_number(annotation[aspect], path, line, key=key, low=1, high=5)
                if number not in SCALE:
                    raise SourceFormatError(
                        str(path), line, f"{key} is {number:g}, not an integer from 1 to 5"
                    )
                ratings[aspect].append(number)
        return ratings
