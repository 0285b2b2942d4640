"""The side-by-side MQM of WMT23 (Song, Riley, Deutsch and Freitag, 2025): the shared reader of
the ``wmt23_sxs_ende`` and ``wmt23_sxs_zhen`` adapters.

A release is an archive holding one TSV in Google's MQM format: one row per marked error, or one
``No-error`` row, of one rater on one system's translation of one paragraph, 3 raters per item.
The rows are read and judged by the ``wmt_mqm`` adapter's code; this class only names the
release's columns, leaves out its attention checks and finds the TSV in the archive.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.adapters.wmt_mqm.adapter import WmtMqmAdapter, language_pair_from_name
from nnd_suites.builder.adapter import AdapterMetadata
from nnd_suites.errors import SourceFormatError
from nnd_suites.records.groups import Group
from nnd_suites.sources import ReadLog

CITATION = """@article{song2025enhancing,
  title={Enhancing Human Evaluation in Machine Translation with Comparative Judgment},
  author={Song, Yixiao and Riley, Parker and Deutsch, Daniel and Freitag, Markus},
  journal={arXiv preprint arXiv:2502.17797},
  year={2025}
}"""
SOURCE_URL = "https://github.com/google/wmt-mqm-human-evaluation/tree/main/generalMT2023"
COLUMNS = ("system", "doc", "docSegId", "globalSegId", "rater", "source", "target", "category")
#: The header ends with a link to the documentation that no data row fills (10 fields against
#: the header's 11); the JSON ``metadata`` (timings) is not read.
DOCUMENTATION_FIELD = (
    "# Documentation: https://github.com/google-research/google-research/tree/master/MAROT_viewer"
)
#: Rows of this severity are attention checks: an error planted into a copy of the translation
#: (``target`` differs from the rated one) that the rater ``Found`` or ``Missed``.
ATTENTION_CHECK = "HOTW-test"


class SxsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judge_identical_together: bool = Field(
        False,
        description="one candidate per distinct translation of a paragraph, judged on the rows "
        "of every system that produced it (default: one per system)",
    )


def sxs_metadata(source: str, target: str) -> AdapterMetadata:
    return AdapterMetadata(
        task="machine translation",
        languages=[source, target],
        annotation_type="hierarchical",
        license="Apache-2.0",
        citation=CITATION,
        source_urls=[SOURCE_URL],
        description=f"WMT23 general MT {source}-{target}: paragraphs translated by 10 systems, "
        "every error marked (MQM category and severity) by 3 professional raters per item, "
        "shown side by side (Song et al., 2025).",
    )


class WmtSxsMqmAdapter(WmtMqmAdapter):
    """One group per rated paragraph; one candidate per system, with its 3 raters' rows."""

    source_kind = "folder"
    Options = SxsOptions
    columns: ClassVar[tuple[str, ...]] = (*COLUMNS, "severity")
    segment_columns: ClassVar[tuple[str, ...]] = ("doc", "docSegId", "globalSegId")
    optional_trailing: ClassVar[tuple[str, ...]] = ("metadata", DOCUMENTATION_FIELD)

    @property
    @abstractmethod
    def release_pair(self) -> tuple[str, str]:
        """The release's language pair, e.g. ("en", "de")."""

    def language_pair(self, path: Path) -> tuple[str, str]:
        found = language_pair_from_name(path.name)
        if found is not None and found != self.release_pair:
            raise SourceFormatError(
                str(path),
                None,
                f"the file name names the pair {'-'.join(found)}, adapter {self.name} reads "
                f"{'-'.join(self.release_pair)}",
                "pass the release of this adapter's language pair",
            )
        return self.release_pair

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        tables = sorted(path.rglob("*.tsv"))
        if len(tables) != 1:
            raise SourceFormatError(
                str(path),
                None,
                f"expected the release's one .tsv file, found {len(tables)}",
                "pass the release's .tsv.tar.gz archive, or a folder holding its one TSV",
            )
        yield from super().read(tables[0], log)

    @staticmethod
    def _unmarked(text: str) -> str:
        # A marked span sometimes takes the paragraph's trailing space along ("said. </v>"
        # against "said."): rows of one paragraph then differ only there (en-de 5 rows, zh-en
        # 114), so texts are compared and kept without leading and trailing whitespace.
        return WmtMqmAdapter._unmarked(text).strip()

    @staticmethod
    def _row_left_out(row: dict[str, str]) -> str | None:
        if row["severity"].strip() == ATTENTION_CHECK:
            return "HOTW-test row: an attention check (a planted error), not a rating"
        return None
