"""WMT MQM segment scores as the metrics task releases them (google-research/mt-metrics-eval,
``mt-metrics-eval-v2/<year>/``): line-aligned sources and system outputs, one score per system
and segment, and, where the release has them, the raters' error spans."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.builder.adapter import Adapter, AdapterMetadata, register_adapter
from nnd_suites.errors import SourceFormatError
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.sources import SOURCE_JSON, ReadLog, parse_number, read_text_lines

CITATION = """@inproceedings{freitag2023results,
  title={Results of {WMT}23 Metrics Shared Task: Metrics Might Be Guilty but References Are Not Innocent},
  author={Freitag, Markus and Mathur, Nitika and Lo, Chi-kiu and Avramidis, Eleftherios and Rei, Ricardo and Thompson, Brian and Kocmi, Tom and Blain, Frederic and Deutsch, Daniel and Stewart, Craig and Zerva, Chrysoula and Castilho, Sheila and Lavie, Alon and Foster, George},
  booktitle={Proceedings of the Eighth Conference on Machine Translation},
  pages={578--628},
  year={2023}
}"""  # noqa: E501
#: The one rating of a candidate: the segment's MQM score as released (negated: 0 is no error,
#: a Major error costs 5), so higher is better.
RATING = "mqm"
NOT_RATED = "None"


class MtMetricsEvalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    language_pair: str = Field(
        pattern=r"^[a-z]{2,3}-[a-z]{2,3}$",
        description="the pair to read, e.g. en-de (files <pair>.* in the year folder)",
    )


@dataclass
class _Scored:
    """One system's released segment scores (None: not rated), the worst error's category of
    each segment where span ratings exist, and each named rater's score of a segment where the
    release has one file per rater. A segment whose score or span rating line is malformed
    (left out under --skip-malformed, counted there) is in ``left_out``: no candidate, and not
    counted again as unrated."""

    scores: list[float | None] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    worst: dict[int, tuple[float, str]] = field(default_factory=dict)
    by_rater: dict[int, dict[str, float]] = field(default_factory=dict)
    left_out: set[int] = field(default_factory=set)

    def leave_out(self, index: int) -> None:
        """The segment's line was malformed and counted: its candidate is left out."""
        self.scores[index] = None
        self.left_out.add(index)

    def ratings(self, index: int) -> dict[str, Any]:
        """The segment's ``ratings`` and ``raters`` (a Candidate's): each rater's own score when
        they average to the released one (WMT23 zh-en: the released score is the raters' mean),
        else the released score alone, no rater named."""
        released = self.scores[index]
        assert released is not None
        by_rater = self.by_rater.get(index, {})
        if by_rater and math.isclose(
            sum(by_rater.values()) / len(by_rater), released, rel_tol=0, abs_tol=1e-9
        ):
            return {"ratings": {RATING: list(by_rater.values())}, "raters": list(by_rater)}
        return {"ratings": {RATING: [released]}, "raters": None}


def _system_blocks(path: Path, log: ReadLog, segments: int) -> Iterator[tuple[str, list]]:
    """``system\\tvalue`` lines, each system's ``segments`` lines one after another: yield
    (system, [(line, value), ...]) per system; a block of another length is an error."""
    blocks: dict[str, list[tuple[int, str]]] = {}
    for line, text in read_text_lines(path, log):
        system, tab, value = text.partition("\t")
        if not tab or not system:
            raise SourceFormatError(str(path), line, "expected 'system<TAB>value'")
        block = blocks.setdefault(system, [])
        if block and block[-1][0] != line - 1:
            raise SourceFormatError(
                str(path), line, f"{system}'s lines are not one block (last at {block[-1][0]})"
            )
        block.append((line, value))
    for system, block in blocks.items():
        if len(block) != segments:
            raise SourceFormatError(
                str(path),
                block[-1][0],
                f"{system} has {len(block)} lines; the sources have {segments}",
                "the file is truncated or not of this language pair",
            )
        yield system, block


def _errors(
    value: str, path: Path, line: int
) -> tuple[list[tuple[float, str]], list[tuple[float, str]]]:
    """(penalty, category) of every error of one span rating, and of its translation errors
    (source errors left out); a rating that is not ``{'errors': [...]}`` raises."""
    try:
        errors = SOURCE_JSON.decode(value)["errors"]
        every = []
        for error in errors:
            if not isinstance(error["category"], str):
                raise TypeError(f"category {error['category']!r} is not a JSON string")
            score = parse_number(error["score"], path, line, key="score", low=0)
            every.append((score, error["category"]))
        found = [error for error, e in zip(every, errors, strict=True) if not e["is_source_error"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise SourceFormatError(
            str(path), line, f"not an MQM rating {{'errors': [...]}}: {exc}"
        ) from None
    return every, found


@register_adapter("mt_metrics_eval")
class MtMetricsEvalAdapter(Adapter):
    """One group per segment with MQM scores; one candidate per rated system output."""

    quality_map = "mt_metrics_eval"
    source_kind = "folder"
    context_fields = ("source", "source_language", "target_language")
    default_template = "{source}"
    templates = {"instruct": "Translate from {source_language} to {target_language}:\n{source}\n"}
    breakdown_fields = ("domain",)
    Options = MtMetricsEvalOptions
    metadata = AdapterMetadata(
        task="machine translation",
        languages=["en", "de", "zh"],
        annotation_type="numeric",
        license="Apache-2.0",
        citation=CITATION,
        source_urls=[
            "https://github.com/google-research/mt-metrics-eval",
            "https://github.com/google/wmt-mqm-human-evaluation",
        ],
        description="Expert MQM scores of WMT system outputs per segment (negated: 0 is no "
        "error), as the metrics task releases them (mt-metrics-eval-v2 year folders), with "
        "the raters' error spans where released.",
    )

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        pair = self.options.language_pair
        source_language, target_language = pair.split("-")
        sources = [text for _, text in read_text_lines(path / "sources" / f"{pair}.txt", log)]
        domains = self._domains(path / "documents" / f"{pair}.docs", log, len(sources))
        scored = self._scores(path / "human-scores" / f"{pair}.mqm.seg.score", log, len(sources))
        for ratings in sorted((path / "human-scores").glob(f"{pair}.mqm.*.seg.rating")):
            self._add_errors(ratings, log, scored, len(sources))
        outputs = {system: self._output(path, pair, system, log, len(sources)) for system in scored}
        for file in sorted((path / "system-outputs" / pair).glob("*.txt")):
            if file.stem not in scored:
                log.skip("system without MQM scores: its output file is not read", file.name)
        for index, source in enumerate(sources):
            rated = [system for system in scored if scored[system].scores[index] is not None]
            left_out = {system for system in scored if index in scored[system].left_out}
            if not rated:
                if not left_out:  # else its malformed lines are counted
                    log.skip("segment without MQM scores", f"{pair}.txt:{index + 1}")
                continue
            for system in scored.keys() - set(rated) - left_out:
                log.skip("system output not rated in a rated segment", f"{system}:{index + 1}")
            yield Group(
                id=f"{pair}:{index + 1}",
                context={
                    "source": source,
                    "source_language": source_language,
                    "target_language": target_language,
                },
                candidates=[
                    Candidate(
                        text=outputs[system][index],
                        systems=[system],
                        **scored[system].ratings(index),
                        category=scored[system].worst.get(index, (0.0, None))[1],
                        breakdown={"domain": domains[index]},
                        where=f"{pair}.mqm.seg.score:{scored[system].lines[index]}",
                    )
                    for system in rated
                ],
                where=f"{pair}.txt:{index + 1}",
            )

    @staticmethod
    def _domains(path: Path, log: ReadLog, segments: int) -> list[str]:
        domains = []
        for line, text in read_text_lines(path, log):
            fields = text.split("\t")
            if len(fields) != 2 or not fields[0]:
                raise SourceFormatError(str(path), line, "expected 'domain<TAB>document id'")
            domains.append(fields[0])
        if len(domains) != segments:
            raise SourceFormatError(
                str(path), None, f"{len(domains)} lines; the sources have {segments}"
            )
        return domains

    @staticmethod
    def _scores(path: Path, log: ReadLog, segments: int) -> dict[str, _Scored]:
        scored: dict[str, _Scored] = {}
        for system, block in _system_blocks(path, log, segments):
            entry = scored[system] = _Scored()
            for index, (line, value) in enumerate(block):
                entry.lines.append(line)
                entry.scores.append(None)
                if value == NOT_RATED:
                    continue
                # one system's score of one segment: a malformed one leaves that candidate out;
                # negated MQM: 0 is no error, so a positive score is out of range
                score = log.value_of(parse_number, value, path, line, high=0)
                if score is None:
                    entry.leave_out(index)
                else:
                    entry.scores[index] = score
        return scored

    @staticmethod
    def _add_errors(path: Path, log: ReadLog, scored: dict[str, _Scored], segments: int) -> None:
        """The worst translation error (by its score; the first on a tie) of each segment, and
        from a per-rater file (``<pair>.mqm.rater1.seg.rating``) that rater's score of it: minus
        the sum of every penalty, source errors included, as the released scores count them."""
        kind = path.name.split(".")[2]  # <pair>.mqm.<kind>.seg.rating
        rater = kind if kind.startswith("rater") else None  # "merged" is no one rater
        for system, block in _system_blocks(path, log, segments):
            if system not in scored:
                rated = next((line for line, value in block if value != NOT_RATED), None)
                if rated is not None:  # a rating without a score would be read as no error
                    raise SourceFormatError(
                        str(path), rated, f"{system} has span ratings but no MQM scores"
                    )
                continue
            for index, (line, value) in enumerate(block):
                if value == NOT_RATED or index in scored[system].left_out:
                    continue
                # one system's span rating of one segment: a malformed one leaves that candidate
                # out (its category and rater scores cannot be told), nothing of it is kept
                errors = log.value_of(_errors, value, path, line)
                if errors is None:
                    scored[system].leave_out(index)
                    continue
                every, found = errors
                if rater is not None:  # negated MQM: minus the sum of the rater's penalties
                    scored[system].by_rater.setdefault(index, {})[rater] = -sum(
                        penalty for penalty, _ in every
                    )
                worst = scored[system].worst
                for error in found:
                    if index not in worst or error[0] > worst[index][0]:
                        worst[index] = error

    @staticmethod
    def _output(path: Path, pair: str, system: str, log: ReadLog, segments: int) -> list[str]:
        file = path / "system-outputs" / pair / f"{system}.txt"
        if not file.is_file():
            raise SourceFormatError(str(file), None, f"no output file for scored system {system}")
        texts = [text for _, text in read_text_lines(file, log)]
        if len(texts) != segments:
            raise SourceFormatError(
                str(file),
                len(texts),
                f"{len(texts)} lines; the sources have {segments}",
                "the file is truncated or not aligned with the sources",
            )
        return texts
