"""WebNLG-shaped ratings (test fixture): 16 systems' verbalisations of RDF triples, 0-100 scores.

The release is a folder: ``inputs.json`` ({id: an HTML table of subject/property/object}),
``outputs/SYSTEM.json`` ({id: text}) and ``ratings/SYSTEM.json`` ({id: {rater: {aspect: score}}},
2-3 raters). A group is one input; a candidate is one system's text with every rater's scores.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

from nnd_suites.builder.adapter import Adapter, AdapterMetadata, register_adapter
from nnd_suites.errors import SourceFormatError
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.sources import ReadLog, parse_number, read_json_object
from nnd_suites.sources.html_table import parse_html_table

ASPECTS = ("fluency", "grammar", "semantics", "correctness", "data_coverage")
score = partial(parse_number, low=0, high=100)


@register_adapter("webnlg_ratings")
class WebNLGRatingsAdapter(Adapter):
    """A group is one input (a set of triples); a candidate is one system's text for it."""

    quality_map = str(Path(__file__).with_name("quality_map.yaml"))
    source_kind = "folder"
    context_fields = ("triples",)
    default_template = "Triples:\n{triples}\nText:"
    metadata = AdapterMetadata(
        task="data-to-text generation",
        languages=["en"],
        annotation_type="numeric",
        license="CC-BY-4.0",
        citation="@misc{webnlg_ratings, title = {A WebNLG-shaped rating fixture}, year = {2026}}",
        source_urls=["https://example.org/webnlg-shaped-ratings"],
        description="Texts by 16 systems from RDF triples, rated 0-100 on five aspects by 2-3 "
        "raters; pairs where an aspect's mean rating is higher by more than 20.",
    )

    def read(self, path: Path, log: ReadLog) -> Iterator[Group]:
        outputs = {  # system -> input id -> (text, file:line)
            file.stem: {k: (text, f"{file.name}:{n}") for n, k, text in read_json_object(file, log)}
            for file in sorted((path / "outputs").glob("*.json"))
        }
        scores: dict[tuple[str, str], dict[str, dict[str, float]]] = {}  # rater -> aspect -> score
        for file in sorted((path / "ratings").glob("*.json")):
            for line, item, raters in read_json_object(file, log):
                for rater, got in raters.items():
                    if not isinstance(got, dict):
                        raise SourceFormatError(file, line, f"{item}.{rater}: not an object")
                    scores.setdefault((item, file.stem), {})[rater] = {
                        a: score(got.get(a), file, line, key=f"{item}.{rater}.{a}") for a in ASPECTS
                    }
        inputs = path / "inputs.json"
        for line, item, table in read_json_object(inputs, log):
            rows = parse_html_table(table, inputs, line, key=item, log=log)
            candidates = [
                Candidate(
                    text=text,
                    systems=[system],
                    ratings={a: [r[a] for r in rated.values()] for a in ASPECTS} if rated else None,
                    raters=list(rated) or None,
                    where=where,
                )
                for system, texts in outputs.items()
                if item in texts
                for text, where in [texts[item]]
                for rated in [scores.get((item, system), {})]
            ]
            triples = "\n".join(" | ".join(row.values()) for _, row in rows)
            yield Group(
                id=item,
                context={"triples": triples},
                candidates=candidates,
                where=f"inputs.json:{line}",
            )
