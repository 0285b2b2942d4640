"""WMT MQM (Freitag et al., 2021): professional translators marked every error in MT output."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.builder.adapter import Adapter, AdapterMetadata, register_adapter
from nnd_suites.errors import ParameterError, SourceFormatError
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.sources import ReadLog, read_tsv, unattributable

CITATION = """@article{freitag2021experts,
  title={Experts, Errors, and Context: A Large-Scale Study of Human Evaluation for Machine Translation},
  author={Freitag, Markus and Foster, George and Grangier, David and Ratnakar, Viresh and Tan, Qijun and Macherey, Wolfgang},
  journal={Transactions of the Association for Computational Linguistics},
  volume={9},
  pages={1460--1474},
  year={2021}
}"""  # noqa: E501

COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
#: Required columns that may be blank: the pair builder counts empty texts; a candidate with a
#: blank rater on any of its rows names no raters (its rows cannot all be attributed).
MAY_BE_EMPTY = ("rater", "source", "target")
#: Each rater's own judgment of a candidate, kept as its rating (``Candidate.ratings``): minus the
#: MQM score of that rater's rows (the sum of their error weights), so higher is better and 0 is
#: no error; the pair builder compares a rater's two scores to give that rater's vote on a test.
RATER_SCORE = "mqm"
#: Released files end with a free-text comment column, or do not have it at all.
OPTIONAL_TRAILING = ("comment",)
SEVERITIES = {
    "no-error": "No-error",
    "neutral": "Neutral",
    "minor": "Minor",
    "major": "Major",
    "critical": "Critical",
}
#: MQM weights of the release (README): Major 5, Minor 1, Minor Fluency/Punctuation 0.1,
#: Non-translation 25. Critical (later campaigns) takes the MQM scoring model's 25.
SEVERITY_WEIGHTS = {"Minor": 1.0, "Major": 5.0, "Critical": 25.0}
NON_TRANSLATION_WEIGHT = 25.0
MINOR_PUNCTUATION_WEIGHT = 0.1
#: Categories that mark a problem of the source, not of the translation (2020: "Source error",
#: 2022: "Source issue").
SOURCE_CATEGORIES = ("source error", "source issue")
MARKS = re.compile(r"</?v>")
#: "ende", "en-de" or "en_de" as a token of a file name such as mqm_newstest2020_ende.tsv.
PAIR_IN_NAME = re.compile(r"(?:^|[_.-])([a-z]{2})[-_]?([a-z]{2})(?=$|[_.-])")


class WmtMqmOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    language_pair: str | None = Field(
        None,
        pattern=r"^[a-z]{2,3}-[a-z]{2,3}$",
        description="e.g. en-de; default: read from the file name (mqm_ted_ende.tsv -> en-de)",
    )
    judge_identical_together: bool = Field(
        False,
        description="one candidate per distinct translation of a segment, judged on the "
        "rows of every system that produced it (default: one per system)",
    )


def language_pair_from_name(name: str) -> tuple[str, str] | None:
    matches = PAIR_IN_NAME.findall(Path(name).name.split(".")[0].lower())
    return matches[-1] if matches else None


def error_weight(severity: str, category: str) -> float:
    if category.lower().startswith("non-translation"):
        return NON_TRANSLATION_WEIGHT
    if severity == "Minor" and category.lower() == "fluency/punctuation":
        return MINOR_PUNCTUATION_WEIGHT
    return SEVERITY_WEIGHTS[severity]


@dataclass
class _Annotated:
    """All rows of one system's translation of one segment (every rater's)."""

    systems: list[str]
    text: str
    line: int
    no_error_rows: int = 0
    ignored_rows: int = 0
    #: (weight, severity, category) of each translation error, in file order
    errors: list[tuple[float, str, str]] = field(default_factory=list)
    #: (rater, system) -> the MQM score (sum of error weights) of that rater's rows
    penalties: dict[tuple[str, str], float] = field(default_factory=dict)
    #: a row had a blank rater: the rows cannot all be attributed, so no rater is named
    unnamed_rows: int = 0

    def rater_scores(self) -> dict[str, Any]:
        """``ratings`` and ``raters`` of the candidate (see RATER_SCORE): a rater who rated the
        text for several systems (judge_identical_together) gets the mean of those scores."""
        if self.unnamed_rows or not self.penalties:
            return {}
        by_rater: dict[str, list[float]] = {}
        for (rater, _), penalty in self.penalties.items():
            by_rater.setdefault(rater, []).append(-penalty)
        scores = [statistics.fmean(values) + 0.0 for values in by_rater.values()]  # no -0.0
        return {"ratings": {RATER_SCORE: scores}, "raters": list(by_rater)}


@dataclass
class _Segment:
    source: str
    line: int
    candidates: dict[str, _Annotated] = field(default_factory=dict)


@dataclass
class _Refused:
    """What malformed rows (left out with --skip-malformed) were part of: a candidate judged
    without one of its rows could lose its worst error and pass as No-error, so it is left out
    whole. A row without a system is told by its translation, where the segment has it."""

    candidates: set[tuple[tuple[str, ...], str]] = field(default_factory=set)
    texts: set[tuple[tuple[str, ...], str]] = field(default_factory=set)
    #: (segment, error) of rows with the wrong number of fields, told by their leading fields
    #: (system and segment come first): trusted only where that segment has other rows
    unsplit: list[tuple[tuple[str, ...], SourceFormatError]] = field(default_factory=list)

    def holds(self, key: tuple[str, ...], candidate_key: str, text: str) -> bool:
        return (key, candidate_key) in self.candidates or (key, text) in self.texts

    def check_unsplit(self, segments: dict[tuple[str, ...], _Segment]) -> None:
        """A row whose leading fields name no segment of the file was split in the wrong place
        (a tab missing or added among them): the output it rates cannot be told."""
        for key, error in self.unsplit:
            if key not in segments:
                raise unattributable(error)


@register_adapter("wmt_mqm")
class WmtMqmAdapter(Adapter):
    """One group per source segment; one candidate per system, with every rater's rows."""

    quality_map = "wmt_mqm"
    context_fields = ("source", "source_language", "target_language")
    default_template = "{source}"
    templates: ClassVar[dict[str, str]] = {
        "instruct": "Translate from {source_language} to {target_language}:\n{source}\n"
    }
    breakdown_fields = ("severity",)
    default_source = "mqm_ted_ende.tsv"
    Options = WmtMqmOptions
    #: The release's columns, and those that name a segment (a group), in key order: later
    #: releases (the side-by-side MQM of WMT23) name them differently.
    columns: ClassVar[tuple[str, ...]] = COLUMNS
    segment_columns: ClassVar[tuple[str, ...]] = ("doc", "doc_id", "seg_id")
    optional_trailing: ClassVar[tuple[str, ...]] = OPTIONAL_TRAILING
    metadata = AdapterMetadata(
        task="machine translation",
        languages=["en", "de", "zh", "ru"],
        annotation_type="hierarchical",
        license="Apache-2.0",
        citation=CITATION,
        source_urls=["https://github.com/google/wmt-mqm-human-evaluation"],
        description="MQM annotations of WMT submissions by professional translators: every "
        "error span marked with a category path (Accuracy/Mistranslation, ...) and a "
        "severity, or a No-error row.",
    )

    def language_pair(self, path: Path) -> tuple[str, str]:
        found = language_pair_from_name(path.name)
        if self.options.language_pair:
            source, target = self.options.language_pair.split("-")
            # a pair that contradicts the file's own name would label every context wrongly
            # (the instruct template would ask for a translation the candidates are not)
            if found is not None and found != (source, target):
                raise ParameterError(
                    f"adapter wmt_mqm: --option language_pair={source}-{target} contradicts "
                    f"the pair {'-'.join(found)} in the file name {path.name!r}; leave the "
                    f"option out (or pass language_pair={'-'.join(found)}), or, if the name is "
                    "wrong, rename the file"
                )
            return source, target
        if found is None:
            raise SourceFormatError(
                str(path),
                None,
                "cannot tell the language pair from the file name",
                "pass --option language_pair=en-de",
            )
        return found

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        source_language, target_language = self.language_pair(path)
        log.gathers_rows = True  # a row per error and rater: see _Refused
        refused = _Refused()
        segments = self._collect(path, log, refused)
        refused.check_unsplit(segments)
        for key, segment in segments.items():
            candidates = []
            for candidate_key, annotated in segment.candidates.items():
                if refused.holds(key, candidate_key, annotated.text):
                    log.skip(
                        "candidate left out whole: a row of it is malformed (counted apart), so "
                        "its worst error and rater scores cannot be told",
                        f"{path.name}:{annotated.line} {'|'.join(annotated.systems)}",
                    )
                    continue
                candidate = self._judge(annotated, path, log)
                if candidate is not None:
                    candidates.append(candidate)
            yield Group(
                id=":".join(key),
                context={
                    "source": segment.source,
                    "source_language": source_language,
                    "target_language": target_language,
                },
                candidates=candidates,
                where=f"{path.name}:{segment.line}",
            )

    def _candidate_key(self, row: dict[str, str]) -> str:
        """What one candidate's rows share: its text, or its system (see the options)."""
        return (
            self._unmarked(row["target"])
            if self.options.judge_identical_together
            else row["system"]
        )

    def _refuse(
        self, refused: _Refused, row: dict[str, str], error: SourceFormatError, split: bool = True
    ) -> None:
        """Note what a malformed row was part of (see :class:`_Refused`); a row that names no
        segment, or neither system nor translation, stops the build (:func:`unattributable`).
        ``split`` is False for a row with the wrong number of fields (see :func:`read_tsv`)."""
        key = tuple(row.get(column, "") for column in self.segment_columns)
        system = row.get("system", "").strip()
        identical_together = self.options.judge_identical_together
        if not all(part.strip() for part in key):
            raise unattributable(error)
        if not split:  # only its leading fields can be trusted, and only once checked
            if not system or identical_together or not self._names_come_first(list(row)):
                raise unattributable(error)
            refused.unsplit.append((key, error))
        if system and not identical_together:
            refused.candidates.add((key, system))
        elif row["target"].strip():
            refused.texts.add((key, self._unmarked(row["target"])))
        else:
            raise unattributable(error)

    def _names_come_first(self, columns: list[str]) -> bool:
        """Whether the system and segment columns all come before any text column: a stray
        or missing tab inside a text moves only the fields after it."""
        names = ("system", *self.segment_columns)
        texts = [columns.index(c) for c in ("source", "target") if c in columns]
        last_name = max((columns.index(c) for c in names if c in columns), default=len(columns))
        return all(c in columns for c in names) and all(last_name < t for t in texts)

    def _collect(
        self, path: Path, log: ReadLog, refused: _Refused
    ) -> dict[tuple[str, ...], _Segment]:
        """Gather rows by segment and system (released files are not sorted the same way)."""
        segments: dict[tuple[str, ...], _Segment] = {}
        rows = read_tsv(
            path,
            quoted=False,
            required=self.columns,
            may_be_empty=MAY_BE_EMPTY,
            optional_trailing=self.optional_trailing,
            log=log,
            refused=lambda error, row, split: self._refuse(refused, row, error, split),
        )
        for line, row in rows:
            left_out = self._row_left_out(row)
            if left_out:
                log.skip(left_out, f"{path.name}:{line}")
                continue
            problem = self._row_problem(row) or self._gather(segments, row, line, path, log)
            if problem:
                error = SourceFormatError(str(path), line, problem, "fix or remove the row")
                log.malformed(error)
                self._refuse(refused, row, error)
        return segments

    def _gather(
        self,
        segments: dict[tuple[str, ...], _Segment],
        row: dict[str, str],
        line: int,
        path: Path,
        log: ReadLog,
    ) -> str | None:
        """Add a row to its segment's candidate, or say why it contradicts the rows before."""
        key = tuple(row[column] for column in self.segment_columns)
        source = self._unmarked(row["source"])
        segment = segments.setdefault(key, _Segment(source, line))
        if source != segment.source:
            return f"source differs from line {segment.line} for segment {':'.join(key)}"
        text = self._unmarked(row["target"])
        annotated = segment.candidates.setdefault(
            self._candidate_key(row), _Annotated([], text, line)
        )
        if row["system"] not in annotated.systems:
            annotated.systems.append(row["system"])
        if text != annotated.text:
            return (
                f"target of {row['system']} differs from line {annotated.line} for segment "
                f"{':'.join(key)}"
            )
        self._add_row(annotated, row, f"{path.name}:{line}", log)
        return None

    @staticmethod
    def _unmarked(text: str) -> str:
        """A source or target without its error-span marks, as the rows of a segment share it."""
        return MARKS.sub("", text)

    @staticmethod
    def _row_left_out(row: dict[str, str]) -> str | None:
        """Why a row that is no rating is left out (counted), or None: every row of these
        releases is a rating."""
        return None

    @staticmethod
    def _row_problem(row: dict[str, str]) -> str | None:
        if row["severity"].strip().lower() not in SEVERITIES:
            return (
                f"unknown severity {row['severity']!r}; expected one of "
                f"{sorted(SEVERITIES.values())}"
            )
        return None

    @staticmethod
    def _add_row(annotated: _Annotated, row: dict[str, str], where: str, log: ReadLog) -> None:
        severity = SEVERITIES[row["severity"].strip().lower()]
        category = row["category"].strip()
        rater = row["rater"].strip()
        annotated.unnamed_rows += not rater
        scored = (rater, row["system"])
        annotated.penalties.setdefault(scored, 0.0)  # a rater with only No-error rows scores 0
        if severity == "No-error":
            annotated.no_error_rows += 1
        elif category.lower().split("/")[0] in SOURCE_CATEGORIES:
            annotated.ignored_rows += 1
            log.skip("annotation row ignored: source error, not a translation error", where)
        elif severity == "Neutral":
            annotated.ignored_rows += 1
            log.skip("annotation row ignored: Neutral severity (weight 0, a preference)", where)
        else:
            weight = error_weight(severity, category)
            annotated.errors.append((weight, severity, category))
            annotated.penalties[scored] += weight

    @staticmethod
    def _judge(annotated: _Annotated, path: Path, log: ReadLog) -> Candidate | None:
        where = f"{path.name}:{annotated.line} {'|'.join(annotated.systems)}"
        if annotated.errors:
            # The worst error decides; on equal weight the first marked one (file order).
            _, severity, category = max(annotated.errors, key=lambda error: error[0])
            return Candidate(
                text=annotated.text,
                systems=annotated.systems,
                label=severity,
                category=category,
                breakdown={"severity": severity},
                where=where,
                **annotated.rater_scores(),
            )
        if annotated.ignored_rows:
            log.skip(
                "candidate with only source-error or Neutral rows: neither error-free nor in error",
                where,
            )
            return None
        return Candidate(
            text=annotated.text,
            systems=annotated.systems,
            label="No-error",
            breakdown={"severity": "No-error"},
            where=where,
            **annotated.rater_scores(),
        )
