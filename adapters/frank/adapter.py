"""FRANK (Pagnoni et al., 2021): sentence-level factual-error annotations of summaries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.builder.adapter import Adapter, AdapterMetadata, register_adapter
from nnd_suites.errors import SourceFormatError
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.sources import ReadLog, read_json_array, read_text_lines, require_fields
from nnd_suites.sources.download import is_url, public_source_name, resolve_source

CITATION = """@inproceedings{pagnoni2021understanding,
  title={Understanding Factuality in Abstractive Summarization with {FRANK}: A Benchmark for Factuality Metrics},
  author={Pagnoni, Artidoro and Balachandran, Vidhisha and Tsvetkov, Yulia},
  booktitle={Proceedings of the 2021 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies},
  pages={4812--4829},
  year={2021}
}"""  # noqa: E501

NO_ERROR = "NoE"
#: A sentence is error-free when at least this many NoE labels were given to it (all annotators).
MIN_NO_ERROR_VOTES = 2
#: FRANK identifies CNN/DM articles by their 40-character hash, XSum ones by a short number.
CNNDM_HASH_LENGTH = 40
FIELDS = ("hash", "model_name", "article", "summary", "summary_sentences_annotations")
#: Fields that must be JSON strings (``str(None)`` would make a system called "None"); the hash
#: is not one of them, an XSum article's number being an id as good as its text.
TEXT_FIELDS = ("model_name", "article", "summary")


class FrankOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    split: Literal["test", "validation", "all"] = Field(
        "test", description="FRANK split whose article hashes are kept"
    )
    split_file: str | None = Field(
        None,
        description="path or URL of the split's hash list; default: <split>_split.txt "
        "beside the source file",
    )
    dataset: Literal["cnndm", "xsum", "all"] = Field(
        "cnndm", description="articles kept: CNN/DM (40-character hash), XSum, or both"
    )


def summary_label(sentences: list[dict[str, list[str]]]) -> str | None:
    """NoE when every sentence has 2+ NoE votes; else the most common error label.

    Error labels are counted over every annotator's labels (annotators in order of appearance,
    sentences in order) and ties go to the label seen first, as in the reference implementation.
    ``None`` when a sentence lacks NoE votes but nobody named an error.
    """
    by_annotator: dict[str, list[str]] = {}
    error_free = True
    for sentence in sentences:
        votes = [label for labels in sentence.values() for label in labels]
        if votes.count(NO_ERROR) < MIN_NO_ERROR_VOTES:
            error_free = False
        for annotator, labels in sentence.items():
            by_annotator.setdefault(annotator, []).extend(labels)
    if error_free:
        return NO_ERROR
    errors = [label for labels in by_annotator.values() for label in labels if label != NO_ERROR]
    return Counter(errors).most_common(1)[0][0] if errors else None


@register_adapter("frank")
class FrankAdapter(Adapter):
    """One group per article; one candidate per system summary, labelled from its sentences."""

    quality_map = "frank"
    context_fields = ("article",)
    default_template = "{article}"
    Options = FrankOptions
    metadata = AdapterMetadata(
        task="summarization",
        languages=["en"],
        annotation_type="hierarchical",
        license="MIT",
        citation=CITATION,
        source_urls=["https://github.com/artidoro/frank"],
        description="Summaries of CNN/DM and XSum articles by 9 systems, each summary sentence "
        "labelled by 3 annotators with FRANK's factual-error typology "
        "(human_annotations_sentence.json + test_split.txt).",
    )

    def split_hashes(self, path: Path, log: ReadLog) -> set[str] | None:
        if self.options.split == "all":
            return None
        given = self.options.split_file or path.parent / f"{self.options.split}_split.txt"
        if self.options.split_file is None and not Path(given).is_file():
            raise SourceFormatError(
                str(given),
                None,
                f"split file for split {self.options.split!r} not found beside the source",
                "pass --option split_file=PATH_OR_URL or --option split=all",
            )
        split_path = resolve_source(given)
        log.note_file(split_path, public_source_name(given) if is_url(given) else None)
        hashes = {line.strip() for _, line in read_text_lines(split_path, log) if line.strip()}
        if not hashes:
            raise SourceFormatError(
                str(split_path),
                None,
                "the split file lists no article",
                "pass a split file with one article hash per line, or --option split=all",
            )
        return hashes

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        keep = self.split_hashes(path, log)
        groups: dict[str, Group] = {}
        for index, (line, item) in enumerate(read_json_array(path, log)):
            where = f"{path.name} item {index}"
            candidate = self._candidate(item, where, path, line, keep, log)
            if candidate is None:
                continue
            key = str(item["hash"])
            with log.each_row():
                if key not in groups:
                    groups[key] = Group(
                        id=key, context={"article": item["article"]}, candidates=[], where=where
                    )
                group = groups[key]
                if item["article"] != group.context["article"]:
                    raise SourceFormatError(
                        str(path),
                        line,
                        f"{where}: article differs from {group.where} for hash {key}",
                    )
                group.candidates.append(candidate)
        yield from groups.values()

    def _candidate(
        self, item: Any, where: str, path: Path, line: int, keep: set[str] | None, log: ReadLog
    ) -> Candidate | None:
        try:
            require_fields(item, FIELDS, path, line, where, texts=TEXT_FIELDS)
            sentences = item["summary_sentences_annotations"]
            if (
                not isinstance(sentences, list)
                or not sentences
                or not all(
                    isinstance(s, dict)
                    and all(
                        isinstance(v, list) and all(isinstance(x, str) for x in v)
                        for v in s.values()
                    )
                    for s in sentences
                )
            ):
                raise SourceFormatError(
                    str(path),
                    line,
                    f"{where}: summary_sentences_annotations "
                    "must be a non-empty list of {annotator: [labels]}",
                )
        except SourceFormatError as error:
            log.malformed(error)
            return None
        article_hash = str(item["hash"])
        if keep is not None and article_hash not in keep:
            log.skip(f"article not in the {self.options.split} split", where)
            return None
        origin = "cnndm" if len(article_hash) >= CNNDM_HASH_LENGTH else "xsum"
        if self.options.dataset not in ("all", origin):
            log.skip(f"{origin} article (dataset={self.options.dataset})", where)
            return None
        label = summary_label(sentences)
        if label is None:
            log.skip("sentence with fewer than 2 NoE votes but no error label", where)
            return None
        with log.each_row():
            return Candidate(
                text=item["summary"],
                systems=[item["model_name"]],
                label=label,
                where=f"{where} ({item['model_name']})",
            )
        return None  # the row was malformed and is counted as such
