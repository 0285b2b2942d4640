"""SummEval (Fabbri et al., 2021) from the files one can get: THumB's per-expert republication of
the ratings (``cnndm_THumB-1.0.jsonl``) joined with the articles of BARTScore's SummEval pickle
(converted to ``summeval_articles.jsonl``). Candidates are judged as by the ``summeval`` adapter."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.adapters.summeval.adapter import (
    ANNOTATOR_FIELDS,
    ASPECTS,
    CITATION,
    SummEvalAdapter,
)
from nnd_suites.builder.adapter import AdapterMetadata, register_adapter
from nnd_suites.errors import SourceFormatError
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.sources import ReadLog, read_jsonl, require_fields

RATINGS_FILE = "cnndm_THumB-1.0.jsonl"
ARTICLES_FILE = "summeval_articles.jsonl"
#: THumB's system names -> SummEval's model ids (SummEval, Table 2). THumB's Pegasus-huge-news
#: is SummEval's M23: its per-document expert means equal M23's in all 100 documents.
SUMMEVAL_IDS = {
    "Lead-3": "M0",
    "NEUSUM": "M1",
    "BanditSum": "M2",
    "RNES": "M5",
    "Pointer-Generator": "M8",
    "Fast-abs-rl": "M9",
    "Bottom-Up": "M10",
    "Improve-abs": "M11",
    "Unified-ext-abs": "M12",
    "ROUGESal": "M13",
    "Multi-task-Ent-QG": "M14",
    "Closed-book-decoder": "M15",
    "T5": "M17",
    "GPT-2-zero-shot": "M20",
    "BART": "M22",
    "Pegasus-huge-news": "M23",
}
#: THumB rows of systems SummEval did not rate: left out and counted.
NOT_SUMMEVAL = {
    "Pegasus-dynamic-mix": "THumB system Pegasus-dynamic-mix: not a SummEval system",
    "Human-H": "THumB system Human-H (a human summary): not a SummEval system",
}
#: The articles file's expert means and the ratings' own means agree to rounding only.
MEAN_TOLERANCE = 1e-9


class SummEvalExpertsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    annotators: Literal["expert", "turker"] = Field(
        "expert", description="whose ratings decide: the 3 experts (paper) or the 5 crowd workers"
    )


@register_adapter("summeval_experts")
class SummEvalExpertsAdapter(SummEvalAdapter):
    """One group per CNN/DM article; one candidate per SummEval system summary (M0..M23)."""

    source_kind = "folder"
    Options = SummEvalExpertsOptions
    metadata = AdapterMetadata(
        task="summarization",
        languages=["en"],
        annotation_type="likert",
        license="MIT",
        citation=CITATION,
        source_urls=[
            "https://github.com/jungokasai/THumB/tree/master/cnndm",
            "https://github.com/neulab/BARTScore/tree/main/SUM/SummEval",
        ],
        description="SummEval's summaries of 100 CNN/DailyMail articles by 16 systems, rated "
        "1-5 on consistency, coherence, fluency and relevance by 3 experts (and 5 crowd "
        "workers), read from THumB's cnndm_THumB-1.0.jsonl and the articles of BARTScore's "
        "SummEval data.",
    )

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        articles = self._articles(path / ARTICLES_FILE, log)
        file = path / RATINGS_FILE
        ratings_field = ANNOTATOR_FIELDS[self.options.annotators]
        groups: dict[str, Group] = {}
        seen: dict[tuple[str, str], int] = {}
        for line, row in read_jsonl(file, log):
            where = f"{file.name}:{line}"
            try:
                require_fields(
                    row, ("SYS", "seg_id", "hyp"), file, line, "THumB record", texts=("SYS", "hyp")
                )
                system = row["SYS"]
                if system in NOT_SUMMEVAL:
                    log.skip(NOT_SUMMEVAL[system], where)
                    continue
                model_id = self._model_id(system, file, line)
                require_fields(row, ("expert_annotations", ratings_field), file, line, system)
                ratings = self._ratings(row[ratings_field], file, line)
                raters = self._raters(ratings, file, line)
                article = self._article(articles, row, model_id, file, line)
            except SourceFormatError as error:
                log.malformed(error)
                continue
            key = (article["id"], model_id)
            if key in seen:
                log.malformed(
                    SourceFormatError(
                        str(file),
                        line,
                        f"{system} rated twice for {row['seg_id']} (line {seen[key]})",
                    )
                )
                continue
            seen[key] = line
            with log.each_row():
                candidate = Candidate(
                    text=row["hyp"], systems=[model_id], ratings=ratings, raters=raters, where=where
                )
                groups.setdefault(
                    article["id"],
                    Group(
                        id=article["id"],
                        context={"document": article["src"]},
                        candidates=[],
                        where=f"{ARTICLES_FILE}:{article['line']}",
                    ),
                ).candidates.append(candidate)
        yield from groups.values()

    @staticmethod
    def _model_id(system: str, path: Path, line: int) -> str:
        if system not in SUMMEVAL_IDS:
            raise SourceFormatError(
                str(path),
                line,
                f"unknown system {system!r}; THumB's SummEval systems are "
                f"{sorted(SUMMEVAL_IDS)}, and {sorted(NOT_SUMMEVAL)} are left out",
            )
        return SUMMEVAL_IDS[system]

    @staticmethod
    def _articles(path: Path, log: ReadLog) -> dict[str, dict[str, Any]]:
        """CNN/DM hash -> {id, src, sys_summs, line}."""
        articles: dict[str, dict[str, Any]] = {}
        for line, row in read_jsonl(path, log):
            with log.each_row():
                fields = ("id", "src", "sys_summs")
                require_fields(row, fields, path, line, "article record", texts=("id", "src"))
                digest = row["id"].rsplit("-", 1)[-1]
                if digest in articles:
                    raise SourceFormatError(
                        str(path),
                        line,
                        f"article {row['id']} repeats line {articles[digest]['line']}",
                    )
                articles[digest] = {**row, "line": line}
        return articles

    def _article(
        self, articles: dict[str, dict[str, Any]], row: dict, model_id: str, path: Path, line: int
    ) -> dict[str, Any]:
        """The record's article; its expert means must be the articles file's (the check that
        THumB's system name is read as the right SummEval model)."""
        article = articles.get(str(row["seg_id"]))
        if article is None:
            raise SourceFormatError(
                str(path), line, f"seg_id {row['seg_id']} names no article of {ARTICLES_FILE}"
            )
        scores = (article["sys_summs"].get(model_id) or {}).get("scores")
        if not isinstance(scores, dict) or any(aspect not in scores for aspect in ASPECTS):
            raise SourceFormatError(
                ARTICLES_FILE, article["line"], f"{article['id']}: no {model_id} scores"
            )
        experts = self._ratings(row["expert_annotations"], path, line)
        for aspect in ASPECTS:
            mean = sum(experts[aspect]) / len(experts[aspect])
            if not math.isclose(mean, scores[aspect], abs_tol=MEAN_TOLERANCE):
                raise SourceFormatError(
                    str(path),
                    line,
                    f"{row['SYS']} ({model_id}): expert mean {aspect} {mean:.4f} differs from "
                    f"{ARTICLES_FILE}:{article['line']} ({scores[aspect]!r})",
                    "the system name does not match the article file's model",
                )
        return article
