"""The dataset card of an export: YAML metadata built with the libraries, text from the manifests.

The metadata block is assembled with ``huggingface_hub.DatasetCardData`` plus the `datasets`
classes that ``push_to_hub`` itself uses (``DatasetInfosDict`` for features and split sizes,
``MetadataConfigs`` for the configs and their data files), so the Hub and ``load_dataset`` read
it exactly as they read a card they wrote.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jinja2
from datasets import DatasetInfo, SplitDict, SplitInfo
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCardData

from nnd_suites import __version__
from nnd_suites.hub.card_agreement import agreement_section
from nnd_suites.hub.configs import ConfigInfo
from nnd_suites.hub.layout import CARD_TAG
from nnd_suites.hub.remote import check_repo_id
from nnd_suites.infra.formatting import cell, plural, table
from nnd_suites.records.margins import MARGIN_MEANINGS
from nnd_suites.suite import CANDIDATES_FILE, DATA_GLOB, MANIFEST_FILE, SPLIT

NND_CITATION = "\n".join(
    [
        "@inproceedings{laban2022near,",
        "  title={Near-Negative Distinction: Giving a Second Life to Human Evaluation Datasets},",
        "  author={Laban, Philippe and Wu, Chien-Sheng and Liu, Wenhao and Xiong, Caiming},",
        "  booktitle={Proceedings of the 2022 Conference on Empirical Methods in Natural Language "
        "Processing},",
        "  year={2022}",
        "}",
    ]
)

#: License ids the Hub knows (https://huggingface.co/docs/hub/repositories-licenses); a suite's
#: SPDX id is lower-cased and looked up here, anything else is declared as "other".
HUB_LICENSES = frozenset(
    [
        "apache-2.0",
        "mit",
        "openrail",
        "afl-3.0",
        "artistic-2.0",
        "bsl-1.0",
        "bsd",
        "bsd-2-clause",
        "bsd-3-clause",
        "bsd-3-clause-clear",
        "c-uda",
        "cc",
        "cc0-1.0",
        "cc-by-2.0",
        "cc-by-2.5",
        "cc-by-3.0",
        "cc-by-4.0",
        "cc-by-sa-3.0",
        "cc-by-sa-4.0",
        "cc-by-nc-2.0",
        "cc-by-nc-3.0",
        "cc-by-nc-4.0",
        "cc-by-nd-4.0",
        "cc-by-nc-nd-3.0",
        "cc-by-nc-nd-4.0",
        "cc-by-nc-sa-2.0",
        "cc-by-nc-sa-3.0",
        "cc-by-nc-sa-4.0",
        "cdla-sharing-1.0",
        "cdla-permissive-1.0",
        "cdla-permissive-2.0",
        "wtfpl",
        "ecl-2.0",
        "epl-1.0",
        "epl-2.0",
        "etalab-2.0",
        "eupl-1.1",
        "eupl-1.2",
        "agpl-3.0",
        "gfdl",
        "gpl",
        "gpl-2.0",
        "gpl-3.0",
        "lgpl",
        "lgpl-2.1",
        "lgpl-3.0",
        "isc",
        "lppl-1.3c",
        "ms-pl",
        "mpl-2.0",
        "odc-by",
        "odbl",
        "osl-3.0",
        "postgresql",
        "ofl-1.1",
        "ncsa",
        "unlicense",
        "zlib",
        "pddl",
        "unknown",
    ]
)

#: Hub size categories, smallest first, with their exclusive upper bounds.
SIZE_CATEGORIES = [
    ("n<1K", 10**3),
    ("1K<n<10K", 10**4),
    ("10K<n<100K", 10**5),
    ("100K<n<1M", 10**6),
    ("1M<n<10M", 10**7),
    ("10M<n<100M", 10**8),
    ("100M<n<1B", 10**9),
]

#: Hub task categories for the generation task a suite comes from (matched on the task's words).
TASK_CATEGORIES = [
    ("summar", "summarization"),
    ("translat", "translation"),
    ("question answering", "question-answering"),
]


def hub_license(spdx: str) -> str:
    lowered = spdx.strip().lower()
    return lowered if lowered in HUB_LICENSES else "other"


def size_category(rows: int) -> str:
    return next((name for name, bound in SIZE_CATEGORIES if rows < bound), "n>1B")


def task_categories(tasks: Iterable[str]) -> list[str]:
    """Hub categories of each suite's task; a task none matches (e.g. question generation) is
    text generation, which every NND suite evaluates."""
    found: set[str] = set()
    for task in tasks:
        matched = [category for words, category in TASK_CATEGORIES if words in task.lower()]
        found.update(matched or ["text-generation"])
    return sorted(found)


def pretty_name(names: list[str]) -> str:
    if len(names) <= 3:
        return "NND test suites: " + ", ".join(names)
    return "Near-Negative Distinction (NND) test suites"


def card_data(configs: list[ConfigInfo]) -> DatasetCardData:
    manifests = [c.manifest for c in configs]
    licenses = sorted({hub_license(m.license) for m in manifests})
    data = DatasetCardData(
        pretty_name=pretty_name([c.name for c in configs]),
        language=sorted({lang for m in manifests for lang in m.languages}) or None,
        license=licenses[0] if len(licenses) == 1 else licenses,
        task_categories=task_categories(m.task for m in manifests),
        size_categories=[size_category(sum(c.num_examples for c in configs))],
        source_datasets=["extended"],
        language_creators=["found", "machine-generated"],
        annotations_creators=["expert-generated"],
        tags=[
            CARD_TAG,
            "near-negative-distinction",
            "evaluation",
            "human-evaluation",
            *sorted({m.adapter.name for m in manifests}),
        ],
    )
    others = sorted({m.license for m in manifests if hub_license(m.license) == "other"})
    if others:  # the Hub asks for a name with `license: other`; the card text says which suite
        data["license_name"] = "-and-".join(re.sub(r"[^a-z0-9.]+", "-", o.lower()) for o in others)
        data["license_details"] = "; ".join(f"{m.name}: {m.license}" for m in manifests)
    infos = DatasetInfosDict(
        {
            c.name: DatasetInfo(
                config_name=c.name,
                features=c.features,
                splits=SplitDict(
                    {
                        SPLIT: SplitInfo(
                            name=SPLIT, num_bytes=c.num_bytes, num_examples=c.num_examples
                        )
                    }
                ),
                download_size=c.download_size,
                dataset_size=c.num_bytes,
            )
            for c in configs
        }
    )
    infos.to_dataset_card_data(data)
    MetadataConfigs(
        {
            c.name: {"data_files": [{"split": SPLIT, "path": f"{c.name}/{DATA_GLOB}"}]}
            for c in configs
        }
    ).to_dataset_card_data(data)
    return data


def card_text(value: object) -> str:
    """Source text (a description, a category or skip reason, a license) as one inline line of
    the card: line breaks collapsed and ``|`` escaped (:func:`cell`), HTML escaped so that a
    ``<!--`` cannot hide the rest of the card on the Hub nor a tag open, and a leading ``#``,
    ``>``, ``-``, ``+``, ``*`` or ``=`` escaped so that it starts no heading, quote or list."""
    line = cell(html.escape(str(value), quote=False)).strip()
    return "\\" + line if line and line[0] in "#>-+*=" else line


def build_card(configs: list[ConfigInfo], repo_id: str | None = None) -> str:
    """The card of the configs in an export folder: ``templates/dataset_card.md`` rendered as
    ``DatasetCard.from_template`` renders it, without its parsing the card back and writing its
    YAML again (two passes of pure-Python PyYAML over a front matter that grows with each config)
    for the same text (``test_the_card_is_the_text_huggingface_hub_gives``)."""
    data, values = card_values(configs, repo_id)
    return jinja2.Template(card_template()).render(card_data=data.to_yaml(), **values)


def card_template() -> str:
    """The card's jinja2 template."""
    # jinja drops a template's final line break: the card keeps one
    return CARD_TEMPLATE.read_text(encoding="utf-8") + "\n"


def card_values(
    configs: list[ConfigInfo], repo_id: str | None = None
) -> tuple[DatasetCardData, dict[str, Any]]:
    """The card's metadata and the values its template fills in."""
    configs = sorted(configs, key=lambda c: c.name)
    data = card_data(configs)
    # Pasted into the card's Python and shell snippets: only a valid Hub id (letters, digits,
    # "-", "_", "." and one "/") may go there, never quotes or line breaks.
    repo = check_repo_id(repo_id) if repo_id is not None else "ORG/NAME"
    return data, dict(
        title=data.pretty_name,
        version=__version__,
        repo=repo,
        first=configs[0].name,
        configs_table=table(
            ["config", "task", "tests", "groups", "annotation license", "source"],
            [
                [
                    f"`{c.name}`",
                    card_text(c.manifest.task),
                    f"{c.num_examples:,}",
                    f"{c.manifest.counts.groups:,}",
                    card_text(c.manifest.license),
                    card_text(c.manifest.description),
                ]
                for c in configs
            ],
        ),
        fields_table=table(["column", "meaning"], FIELDS),
        sections=[_config_section(c) for c in configs],
        agreement="\n\n".join(agreement_section((c.name, c.agreement) for c in configs)),
        candidates_file=CANDIDATES_FILE,
        manifest_file=MANIFEST_FILE,
        licenses=[
            {
                "name": c.name,
                "license": card_text(c.manifest.license),
                "citation": c.manifest.citation.strip(),
            }
            for c in configs
        ],
        nnd_citation=NND_CITATION,
    )


CARD_TEMPLATE = Path(__file__).with_name("templates") / "dataset_card.md"
#: the columns of every config, for the card's Fields table
FIELDS = [
    ["`id`", "stable test id (content hash)"],
    ["`group_id`", "the annotated input the two candidates share"],
    ["`context`", "the input, as named fields (rendered with a template per model)"],
    [
        "`high`, `low`",
        "candidates: `text`, `label`, `systems` that produced it, "
        "`score` (aggregated rating, if any)",
    ],
    ["`label`", "the low candidate's label"],
    [
        "`category`, `category_path`",
        "error category of the low candidate and its roll-up (root first)",
    ],
    ["`aspect`", "quality aspect, for suites judged on several"],
    ["`score_gap`", "high minus low score, when scores exist"],
    [
        "`votes`, `margin`",
        "each rater's judgment of the two candidates (`rater`, `prefers` high, low "
        "or tie, `strength`) and the test's human margin, in the config's margin kind",
    ],
    ["`breakdown`", "the suite's sub-population fields (absent if it has none)"],
    ["`parent_id`", "for a transformed suite, the id of the untouched test"],
]


def _config_section(config: ConfigInfo) -> dict[str, str]:
    """One config's part of "How the tests were built", as single-line texts (a description
    with line breaks cannot break the card's list)."""
    m, counts = config.manifest, config.manifest.counts
    repeats = (
        f"; {plural(counts.pairs_repeating_texts, 'test')} with the texts of another test of "
        "its group (identical outputs annotated separately)"
        if counts.pairs_repeating_texts
        else ""
    )
    t = m.transformation
    return {
        "name": config.name,
        "description": card_text(m.description),
        "adapter": m.adapter.name,
        "adapter_version": m.adapter.version,
        "options": card_text(", ".join(f"{k}={v}" for k, v in m.adapter.options.items())),
        "sources": ", ".join(
            f"`{s.path.rsplit('/', 1)[-1]}` (sha256 {s.sha256[:12]}…, {s.bytes:,} bytes)"
            for s in m.sources
        ),
        "quality_map": m.quality_map.name,
        "quality_map_description": card_text(m.quality_map.description),
        "counts": f"{plural(counts.pairs, 'test')} from {plural(counts.groups, 'group')} and "
        f"{plural(counts.candidates, 'candidate')} read; "
        f"{plural(counts.groups_without_pairs, 'group')} gave no test" + repeats,
        "margin": MARGIN_MEANINGS[m.margin_kind]
        if m.margin_kind
        else "none (no rater votes, scores or confidences)",
        "fields": ", ".join(f"`{f}`" for f in m.context_fields),
        "default_template": repr(m.default_template),
        "family_templates": ", ".join(f"{k} `{v!r}`" for k, v in m.templates.items()),
        "transformation": (
            f"Transformation `{t.name}` {t.version} of `{t.parent_suite}` "
            f"(params {t.params}, seed {t.seed}): {plural(t.changed, 'test')} changed, "
            f"{t.identical:,} identical, {t.degenerate:,} degenerate"
        )
        if t
        else "",
        "categories": table(
            ["category", "tests"],
            [[card_text(k), f"{v:,}"] for k, v in counts.breakdowns["category"].items()],
        ),
        "skipped": table(
            ["reason", "count"], [[card_text(s.reason), f"{s.count:,}"] for s in m.skipped]
        )
        if m.skipped
        else "",
    }
