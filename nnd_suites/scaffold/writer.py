"""Write a new adapter's contribution unit: folder, class stub, README, fixture, expectations, map.

The stub works as written: its fixture builds, and the expected statistics (derived by hand for
each annotation type below) match, so the harness passes before the contributor changes anything.
"""

from __future__ import annotations

import json
import os
import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from nnd_suites.errors import NNDError
from nnd_suites.infra.atomic import atomic_directory, atomic_write_text
from nnd_suites.quality_map.model import SCHEMA_FILE as MAP_SCHEMA
from nnd_suites.scaffold import numeric, pairwise
from nnd_suites.scaffold.samples import CONTEXTS, EXPECTED_STATS, FIXTURE, FIXTURES, TEXTS

ANNOTATION_TYPES = ("likert", "hierarchical", "single_label", "graded", "numeric", "pairwise")
#: Longest adapter name: its files' temporary names must stay under the 255-byte file-name limit.
MAX_NAME = 64


@dataclass(frozen=True)
class TypeSpec:
    """Everything that differs between annotation types in the stub."""

    annotations: tuple[tuple[dict[str, Any], ...], ...]  # per group, per candidate
    candidate_fields: tuple[str, ...]
    candidate_body: str
    quality_map: str
    expected: dict[str, Any]


SPECS: dict[str, TypeSpec] = {
    # g1: 2 good x 2 errors = 4 (error_a 2, error_b 2); g2: 1 good x 2 error_a = 2.
    "single_label": TypeSpec(
        annotations=(
            ({"label": "good"}, {"label": "error_a"}, {"label": "error_b"}, {"label": "good"}),
            ({"label": "good"}, {"label": "error_a"}, {"label": "error_a"}),
        ),
        candidate_fields=("system", "text", "label"),
        candidate_body='        return Candidate(text=raw["text"], systems=[raw["system"]], '
        'label=raw["label"], where=where)',
        quality_map="labels: [good, error_a, error_b]\n"
        "tiers:\n  - [good]\n  - [error_a, error_b]\n",
        expected={
            "pairs": 6,
            "breakdowns": {
                "category": {"error_a": 4, "error_b": 2},
                "label": {"error_a": 4, "error_b": 2},
            },
            "skipped": {},
        },
    ),
    # g1: 2 no_error x 2 errors = 4 (Accuracy 2, Fluency 2); g2: 1 x 2 Accuracy = 2.
    "hierarchical": TypeSpec(
        annotations=(
            (
                {"label": "no_error"},
                {"label": "error", "category": "Accuracy/Mistranslation"},
                {"label": "error", "category": "Fluency/Grammar"},
                {"label": "no_error"},
            ),
            (
                {"label": "no_error"},
                {"label": "error", "category": "Accuracy/Mistranslation"},
                {"label": "error", "category": "Accuracy/Addition"},
            ),
        ),
        candidate_fields=("system", "text", "label"),
        candidate_body='        return Candidate(\n            text=raw["text"],\n'
        '            systems=[raw["system"]],\n            label=raw["label"],\n'
        '            category=raw.get("category"),  # an error path: Accuracy/Mistranslation\n'
        "            where=where,\n        )",
        quality_map="labels: [no_error, error]\ntiers:\n  - [no_error]\n  - [error]\n"
        'hierarchy:\n  separator: "/"\n',
        expected={
            "pairs": 6,
            "breakdowns": {"category": {"Accuracy": 4, "Fluency": 2}, "label": {"error": 6}},
            "skipped": {},
        },
    ),
    # overall: g1 high = [5,5,4], [5,5,5]; low = [4,4,5], [5,3,2] -> 4; g2 1 high x 2 low = 2.
    "likert": TypeSpec(
        annotations=(
            (
                {"ratings": {"overall": [5, 5, 4]}},
                {"ratings": {"overall": [4, 4, 5]}},
                {"ratings": {"overall": [5, 3, 2]}},
                {"ratings": {"overall": [5, 5, 5]}},
            ),
            (
                {"ratings": {"overall": [5, 5, 5]}},
                {"ratings": {"overall": [1, 2, 3]}},
                {"ratings": {"overall": [5, 4, 4]}},
            ),
        ),
        candidate_fields=("system", "text", "ratings"),
        candidate_body="        ratings = {aspect: [float(v) for v in values] "
        'for aspect, values in raw["ratings"].items()}\n'
        '        return Candidate(text=raw["text"], systems=[raw["system"]], ratings=ratings, '
        "where=where)",
        quality_map="labels: [high, low]\ntiers:\n  - [high]\n  - [low]\nrating_rule:\n"
        "  kind: majority_top\n  aspects: [overall]\n  top: 5\n  high_label: high\n"
        "  low_label: low\n",
        expected={
            "pairs": 6,
            "breakdowns": {
                "category": {"overall": 6},
                "label": {"low": 6},
                "aspect": {"overall": 6},
            },
            "skipped": {},
        },
    ),
    # g1: 2 correct x 1 incorrect = 2 (credit 0.5 left out, counted); g2: 1 x 2 = 2.
    "graded": TypeSpec(
        annotations=(
            ({"credit": 1}, {"credit": 0}, {"credit": 0.5}, {"credit": 1}),
            ({"credit": 1}, {"credit": 0}, {"credit": 0}),
        ),
        candidate_fields=("system", "text", "credit"),
        candidate_body='        return Candidate(\n            text=raw["text"],\n'
        '            systems=[raw["system"]],\n            ratings={"credit": '
        '[float(raw["credit"])]},\n            where=where,\n        )',
        quality_map="labels: [correct, incorrect]\ntiers:\n  - [correct]\n  - [incorrect]\n"
        'rating_rule:\n  kind: graded\n  rating: credit\n  levels: {"1": correct, "0": incorrect}\n'
        '  exclude: ["0.5"]\n',
        expected={
            "pairs": 4,
            "breakdowns": {"category": {"incorrect": 4}, "label": {"incorrect": 4}},
            "skipped": {"credit 0.5 takes no part (quality map $name)": 1},
        },
    ),
}


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Adapter"


def fixture_lines(spec: TypeSpec) -> str:
    rows = []
    for index, (context, texts, judged) in enumerate(
        zip(CONTEXTS, TEXTS, spec.annotations, strict=True), start=1
    ):
        candidates = [
            {"system": f"system_{'abcd'[i]}", "text": text, **annotation}
            for i, (text, annotation) in enumerate(zip(texts, judged, strict=True))
        ]
        rows.append(json.dumps({"id": f"g{index}", "context": context, "candidates": candidates}))
    return "\n".join(rows) + "\n"


def expected_stats(spec: TypeSpec, name: str) -> dict[str, Any]:
    groups, candidates = len(CONTEXTS), sum(len(texts) for texts in TEXTS)
    skipped = {k.replace("$name", name): v for k, v in spec.expected["skipped"].items()}
    return {
        "source": FIXTURE,
        "options": {},
        "pairs": spec.expected["pairs"],
        "groups": groups,
        "candidates": candidates,
        "breakdowns": spec.expected["breakdowns"],
        "skipped": skipped,
    }


def schema_line(root: Path, written: Path, schema_file: str) -> str:
    """The editor's schema comment for ``written``: the clone's shipped schema by its relative
    path, else (nnd-suites installed with pip) the installed package's copy."""
    clone = root / "nnd_suites" / "schemas" / schema_file
    if clone.is_file():
        return f"# yaml-language-server: $schema={os.path.relpath(clone, written.parent)}\n"
    installed = Path(str(resources.files("nnd_suites.schemas"))).resolve() / schema_file
    return (
        f"# yaml-language-server: $schema={installed.as_uri()}\n"
        "# (this machine's install; `nnd-suites schema --out DIR` writes a copy to point at)\n"
    )


def _map_text(rule: str, name: str) -> str:
    return (
        f"name: {name}\n"
        "description: >-\n  TODO: the quality rule in words (the dataset card shows it).\n" + rule
    )


def _template(file_name: str) -> string.Template:
    text = resources.files("nnd_suites.scaffold").joinpath("templates", file_name).read_text()
    return string.Template(text)


def check_root(root: Path) -> None:
    missing = [name for name in ("adapters", "quality_maps") if not (root / name).is_dir()]
    if missing:
        raise NNDError(
            f"{root.resolve()}: no {' or '.join(missing)} folder here; run new-adapter from the "
            "root of your nnd-suites clone, or pass --root"
        )


def check_name(name: str) -> str:
    """An adapter name names a folder, a module, a quality map and the suites built with it:
    checked before anything is written, so no half scaffold is ever left."""
    if not (name.isidentifier() and name == name.lower() and not name.startswith("_")):
        raise NNDError(
            f"adapter name {name!r} must be a lower-case Python identifier, e.g. wmt_mqm"
        )
    if len(name) > MAX_NAME:
        raise NNDError(
            f"adapter name {name[:20]!r}... has {len(name)} characters; at most {MAX_NAME} (it "
            "names files and folders, and the suites built with it)"
        )
    return name


def write_adapter(root: Path, name: str, annotation_type: str) -> list[Path]:
    """Write the contribution unit of adapter ``name`` under ``root``; return the paths written.

    All or nothing: the quality map is written last inside the folder's write, and the adapter
    folder is swapped in only then (a map left by a killed run, unchanged, is written again)."""
    check_name(name)
    if annotation_type not in ANNOTATION_TYPES:
        raise NNDError(f"unknown annotation type {annotation_type!r}; one of {ANNOTATION_TYPES}")
    check_root(root)
    folder = root / "adapters" / name
    map_path = root / "quality_maps" / f"{name}.yaml"
    stub = _stub(annotation_type, name)
    map_text = schema_line(root, map_path, MAP_SCHEMA) + stub.map_text
    if folder.exists() or folder.is_symlink():
        raise NNDError(f"{folder} already exists; pick another name or remove it first")
    if map_path.exists() and not _left_by_a_killed_run(map_path, map_text):
        raise NNDError(f"{map_path} already exists; pick another name or remove it first")
    fields = {
        "name": name,
        "title": name.replace("_", " ").title(),
        "class_name": class_name(name),
        "annotation_type": annotation_type,
        "fixture": FIXTURE,
        **stub.fields,
    }
    try:
        with atomic_directory(folder) as tmp:
            (tmp / "__init__.py").write_text(f'"""The {name} adapter."""\n', encoding="utf-8")
            (tmp / "adapter.py").write_text(
                _template(stub.template).substitute(fields), encoding="utf-8"
            )
            (tmp / "README.md").write_text(
                _template("README.md.txt").substitute(fields), encoding="utf-8"
            )
            for relative, text in stub.fixture.items():
                (tmp / FIXTURES / relative).parent.mkdir(parents=True, exist_ok=True)
                (tmp / FIXTURES / relative).write_text(text, encoding="utf-8")
            expected = json.dumps(stub.expected, indent=2) + "\n"
            (tmp / FIXTURES / EXPECTED_STATS).write_text(expected, encoding="utf-8")
            atomic_write_text(map_path, map_text)  # last: the folder follows it in
    except BaseException:
        if not folder.exists() and _left_by_a_killed_run(map_path, map_text):
            map_path.unlink()
        raise
    written = sorted(p for p in folder.rglob("*") if p.is_file())
    return [*written, map_path]


@dataclass(frozen=True)
class _Stub:
    """The files that differ between annotation types."""

    template: str
    fields: dict[str, str]
    fixture: dict[str, str]  # path under fixtures/ -> text
    expected: dict[str, Any]  # fixtures/expected_stats.json
    map_text: str


def _stub(annotation_type: str, name: str) -> _Stub:
    if annotation_type == "pairwise":  # judgments of two responses, not labelled candidates
        return _Stub(
            "adapter_pairwise.py.txt",
            {},
            {FIXTURE: pairwise.fixture_lines()},
            pairwise.expected(),
            _map_text(pairwise.QUALITY_MAP, name),
        )
    if annotation_type == "numeric":  # a folder release: outputs and ratings per system
        return _Stub(
            "adapter_numeric.py.txt",
            {},
            numeric.fixture_files(),
            numeric.expected(),
            _map_text(numeric.QUALITY_MAP, name),
        )
    spec = SPECS[annotation_type]
    fields = {
        "candidate_fields": "(" + ", ".join(f'"{f}"' for f in spec.candidate_fields) + ")",
        "candidate_body": spec.candidate_body,
    }
    return _Stub(
        "adapter.py.txt",
        fields,
        {FIXTURE: fixture_lines(spec)},
        expected_stats(spec, name),
        _map_text(spec.quality_map, name),
    )


def _left_by_a_killed_run(map_path: Path, text: str) -> bool:
    """A quality map exactly as this scaffold writes it, without its adapter folder."""
    try:
        return map_path.is_file() and map_path.read_text("utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False
