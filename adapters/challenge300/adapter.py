"""Challenge 300 (Tafjord and Clark, 2021): graded credit for answers of five QA models."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from nnd_suites.builder.adapter import Adapter, AdapterMetadata, register_adapter
from nnd_suites.errors import QualityMapError, SourceFormatError
from nnd_suites.quality_map import GradedRule, QualityMap, level_key
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.sources import ReadLog, parse_number, read_tsv

CITATION = """@article{tafjord2021general,
  title={General-Purpose Question-Answering with {M}acaw},
  author={Tafjord, Oyvind and Clark, Peter},
  journal={arXiv preprint arXiv:2109.02593},
  year={2021}
}"""
CREDIT_PREFIX = "credit-"


@register_adapter("challenge300")
class Challenge300Adapter(Adapter):
    """One group per question; only the models with a ``credit-<model>`` column take part."""

    quality_map = "challenge300"
    context_fields = ("question",)
    default_template = "{question}"
    templates: ClassVar[dict[str, str]] = {"macaw": "$answer$ ; $question$ = {question}"}
    breakdown_fields = ("group", "question_category")
    default_source = "challenge300-outputs.tsv"
    # T5-XXL-SSM-NQ answered nothing to one question and was graded 0: a judged output, kept.
    allow_empty_candidates = True
    metadata = AdapterMetadata(
        task="generative question answering",
        languages=["en"],
        annotation_type="graded",
        license="Apache-2.0",
        citation=CITATION,
        source_urls=["https://github.com/allenai/macaw/blob/main/challenge300-outputs.tsv"],
        description="300 hand-written challenge questions; answers of five large QA models "
        "graded with credit 1 (correct), 0.5 (partial) or 0 (incorrect).",
    )

    #: the credit levels the build's map compares or excludes (None: not a graded map)
    levels: set[str] | None = None

    def check_quality_map(self, quality_map: QualityMap) -> None:
        """A credit level the map does not know is its row's fault (a typo such as 0.7, skipped
        and counted with --skip-malformed), as an unknown MQM severity is: keep the map's."""
        rule = quality_map.rule
        if isinstance(rule, GradedRule):
            self.levels = {*rule.levels, *map(str, rule.exclude)}

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        hierarchy = QualityMap.load(self.quality_map)
        rows = read_tsv(path, required=("id", "question", "category"), log=log)
        for line, row in rows:
            credited = [c[len(CREDIT_PREFIX) :] for c in row if c.startswith(CREDIT_PREFIX)]
            if not credited:
                raise SourceFormatError(
                    str(path),
                    1,
                    "no 'credit-<model>' column",
                    "this is not a Challenge 300 outputs file",
                )
            uncredited = [
                c
                for c in row
                if c not in credited
                and c not in ("id", "question", "category", "Credits->")
                and not c.startswith(CREDIT_PREFIX)
            ]
            missing = [model for model in credited if model not in row]
            if missing:
                raise SourceFormatError(
                    str(path), 1, f"credit column for {missing[0]!r} but no answer column"
                )
            category = row["category"]
            try:
                group_name = hierarchy.category_path("", category)[0]
            except QualityMapError as exc:
                log.malformed(SourceFormatError(str(path), line, str(exc)))
                continue
            with log.each_row():  # an unreadable credit: the row's fault
                # read as every numeric cell and credit level is: -0 is 0, １ is 1
                credits = {
                    model: parse_number(
                        row[CREDIT_PREFIX + model], path, line, CREDIT_PREFIX + model
                    )
                    for model in credited
                }
                for model, credit in credits.items():
                    if self.levels is not None and level_key(credit) not in self.levels:
                        raise SourceFormatError(
                            str(path),
                            line,
                            "a credit level the quality map neither compares nor excludes",
                            "fix the cell, or add the level to the map's 'levels' or 'exclude' "
                            "(--skip-malformed counts such rows instead)",
                            f"{CREDIT_PREFIX}{model}: {level_key(credit)}",
                        )
                yield Group(
                    id=row["id"],
                    context={"question": row["question"]},
                    candidates=[
                        Candidate(
                            text=row[model],
                            systems=[model],
                            ratings={"credit": [credit]},
                            category=category,
                            where=f"{path.name}:{line} {model}",
                        )
                        for model, credit in credits.items()
                    ],
                    breakdown={"group": group_name, "question_category": category},
                    where=f"{path.name}:{line}",
                )
                for model in uncredited:
                    log.skip(
                        f"system output without a credit column ({model}): never graded in the "
                        "source",
                        f"{path.name}:{line}",
                    )
