"""``new-adapter NAME --declarative --sample FILE``: a ``source.yaml`` proposed from the header of
the user's own file, with every guess marked ``# CHECK`` and every unknown ``TODO``.

The proposal validates as written (so the registry lists the new adapter at once), but its
harness case fails until the contributor has checked the mapping (deleting each ``# CHECK``
note, named by the harness at its line), put a small shippable sample in ``fixtures/`` and written
the counts it gives into ``fixtures/expected_stats.json``.
"""

from __future__ import annotations

import itertools
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import yaml

from nnd_suites.declarative.model import SCHEMA_FILE
from nnd_suites.errors import NNDError
from nnd_suites.infra.atomic import atomic_directory, atomic_write_text
from nnd_suites.quality_map.model import SCHEMA_FILE as MAP_SCHEMA
from nnd_suites.scaffold.proposed_ratings import (
    field_name,
    is_number,
    propose_ratings,
    propose_scale,
)
from nnd_suites.scaffold.writer import _template, check_name, check_root, schema_line
from nnd_suites.sources import ReadLog
from nnd_suites.sources.delimited import read_csv, sniff_delimiter
from nnd_suites.sources.readers import read_json_array, read_jsonl, read_tsv

TEXT_HINTS = (
    "output", "generation", "completion", "summary", "response", "hyp", "pred", "simplif", "text",
    "target", "translation", "out",
)  # fmt: skip
CONTEXT_HINTS = (
    "original", "source", "src", "context", "article", "input", "prefix", "suffix", "prompt",
)  # fmt: skip
SYSTEM_HINTS = ("system", "model", "sys")
#: the worse text of a preference pair whose better one is `chosen` (hh-rlhf): no winner column
LOSER_HINTS = ("rejected", "dispreferred", "loser")
WINNER_HINTS = ("winner", "accept", "prefer", "choice", "chosen")
#: rows read from the sample to tell a key unique per row (an item id) from a group's
SAMPLE_ROWS = 1000
RATER_HINTS = ("rater", "annotator", "worker", "judge", "assessor", "evaluator")
#: a text column's cleaned variant (`processed_generation`, `clean_output`, `output_detok`)
CLEANED = re.compile(r"process|clean|detok|normali[sz]", re.IGNORECASE)
#: keys of the proposal that are guesses from the header, marked for the contributor
GUESSED = (
    "delimiter", "key", "context", "text", "system", "text_a", "text_b", "winner", "ratings",
    "rater", "system_a", "system_b",
)  # fmt: skip
#: keys of the proposal no header tells, as indented: what to decide (the harness names each
#: note left); by indent, so that an aspect named `low` is not taken for the scale's end
ASSUMED = {
    "  languages": "the language(s) of the texts, en assumed",
    "  source_urls": "where the annotations are published (replace the TODO)",
    "  better": "lower for error counts, ranks or distances",
    "  low": "the sample's smallest rating: the scale's true low end may be lower (a rating off "
    "[low, high] is a malformed row)",
    "  high": "the sample's largest rating: the scale's true high end may be higher",
    "template": "each text is scored as what follows it; write the context as the raters saw it "
    "before the text (a field that comes after the text, as the code after a completion's "
    "cursor, does not belong here)",
}


def sample_columns(sample: Path) -> tuple[dict[str, str], list[dict[str, Any]], list[str]]:
    """The sample's ``file`` declaration (its format; a csv file's delimiter when it is not a
    comma), its first rows (nested JSON objects flattened to ``a.b`` keys) and a note on each
    kind of malformed row among them (left out of the proposal, as ``--skip-malformed`` would)."""
    name = sample.name.lower().removesuffix(".gz")
    fmt = next((f for f in ("csv", "tsv", "jsonl", "json") if name.endswith("." + f)), None)
    if fmt is None:
        raise NNDError(f"{sample}: name it .csv, .tsv, .json or .jsonl (optionally .gz)")
    file = {"format": fmt}
    log = ReadLog(skip_malformed=True)  # a published file's broken row is no reason to stop
    if fmt == "csv":
        delimiter = sniff_delimiter(sample)
        if delimiter == "\t":
            raise NNDError(f"{sample}: its header is tab-separated: name it .tsv")
        if delimiter != ",":
            file["delimiter"] = delimiter
        rows: Any = read_csv(sample, log, delimiter=delimiter)
    elif fmt == "tsv":
        rows = read_tsv(sample, log=log)
    elif fmt == "jsonl":
        rows = read_jsonl(sample, log)
    else:  # one JSON list: read as the build reads it (.gz, located errors)
        rows = read_json_array(sample, log)
    first = [row for _, row in itertools.islice(rows, SAMPLE_ROWS)]
    if not first or not isinstance(first[0], dict):
        raise NNDError(f"{sample}: no first row of named columns to propose a mapping from")
    malformed = [
        f"{found['reason']} ({found['count']:,} in the sample: {', '.join(found['examples'])}): "
        "left out of this proposal; a build stops at such a row unless given --skip-malformed, "
        "which counts it in the manifest"
        for found in log.skipped.records()
    ]
    return file, [_flat(row) for row in first if isinstance(row, dict)], malformed


def _flat(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            found.update(_flat(value, f"{prefix}{key}."))
        else:
            found[f"{prefix}{key}"] = value
    return found


def _pick(columns: list[str], hints: tuple[str, ...]) -> list[str]:
    return [c for hint in hints for c in columns if hint in c.lower()]


def propose(
    name: str, file: dict[str, str], rows: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[str]]:
    """A declaration for the columns found (each choice a guess for the contributor to check),
    and what the sample's rows say against a guess or leave unknown (``# CHECK`` lines)."""
    row, checks = rows[0], []
    columns = list(row)
    numbers = [c for c in columns if is_number(row[c])]
    # `system_output` or `model_response` holds the text, not the system's name
    names = [c for c in columns if c not in numbers and not _pick([c], TEXT_HINTS)]
    systems = _pick(names, SYSTEM_HINTS)
    # a comparison's two systems (`model_a`, `model_b`), else one system per row
    sides = [next((c for c in systems if c.lower().endswith(end)), "") for end in ("_a", "_b")]
    system = sides if all(sides) else systems[:1]
    # a rater's name or id; `rater_1` holding ratings is one column per rater
    raters = _pick(columns, RATER_HINTS)
    rater = [c for c in raters if c not in numbers or c.lower().endswith("id")][:1]
    texts = [c for c in columns if c not in numbers and c not in system + rater]
    ids = [c for c in columns if c.lower().endswith("id") and c not in rater]
    # an id (`prompt_id`, `source_id`) keys the groups: shown to the model, it would be text
    unkeyed = [c for c in texts if c not in ids]
    # `chosen` and `rejected` (hh-rlhf): the two texts, the preference in the columns' names
    losers = _pick(texts, LOSER_HINTS)[:1]
    winners = _pick([c for c in texts if c not in losers], ("chosen", "prefer"))[:1]
    pair = [*winners, *losers] if winners and losers else []
    context = (
        list(dict.fromkeys(_pick(unkeyed, CONTEXT_HINTS)))[:2]
        # a column no hint names (`document`) before an id (`doc_id`): the model reads the
        # context, and an id keys the groups; one named as a text is left to the candidates
        or [c for c in unkeyed if c not in pair and not _pick([c], TEXT_HINTS)][:1]
        or [c for c in texts if c not in pair][:1]
    )
    if not context:
        context = ["TODO_context_column"]
        checks.append(
            "no column holds the context the texts answer: name it in group.context and the "
            "template (a context kept inside each text, as hh-rlhf's, needs a class adapter)"
        )
    # an id repeating over rows of one context (SimpEval's `original_id`) keys the groups, not
    # one unique per row (`id`: an output's) nor one whose rows hold other contexts (a system's)
    key = [c for c in ids if _gathers(rows, c, context)][:1] or ids[:1]
    candidates = (
        [c for c in _pick(texts, TEXT_HINTS) if c not in context]
        or [c for c in texts if c not in context][-1:]
        or texts[-1:]
    )
    spec: dict[str, Any] = {
        "name": name,
        "quality_map": name,
        "metadata": {
            "task": "TODO",
            "languages": ["en"],
            "annotation_type": "numeric",
            "license": "TODO",
            "citation": "TODO",
            "source_urls": ["https://example.org/TODO"],
            "description": "TODO",
        },
        "file": dict(file),
        "group": {"key": key or context, "context": {field_name(c): c for c in context}},
        "template": "\n".join(f"{{{field_name(c)}}}" for c in context) + "\n",
    }
    if context[0] in row:  # else the missing context is said
        checks += _context_checks(context, rows, keyed=bool(key))
    winner = [c for c in _pick(columns, WINNER_HINTS) if c not in pair]
    if winner or len(pair) == 2:
        spec["metadata"]["annotation_type"] = "pairwise"
        if len(pair) == 2:
            winner = ["TODO_winner_column"]
            checks.append(
                f"{pair[0]} and {pair[1]} are the two texts, the preference in their names: a "
                "source.yaml reads the winner from a column (add one, e.g. winner = a on every "
                "row, or read the file with a class adapter, as adapters/hh_rlhf does)"
            )
        else:
            pair = [c for c in candidates if c.lower().endswith(("_a", "_b"))] or candidates[:2]
        if len(pair) < 2:
            pair = [*pair, "TODO_second_text_column"]
            checks.append(f"only one column looks like a compared text ({pair[0]}): name the other")
        spec["comparisons"] = {
            "text_a": pair[0],
            "text_b": pair[-1],
            "winner": winner[0],
            "verdicts": {"TODO_value_meaning_a": "a", "TODO_value_meaning_b": "b"},
        }
        if len(system) == 2:
            spec["comparisons"] |= {"system_a": system[0], "system_b": system[1]}
        else:
            checks.append(_no_system("comparisons.system_a and system_b: COLUMN each"))
        spec["comparisons"] |= {"rater": rater[0]} if rater else {}
        return spec, checks
    # said, never assumed: a count of errors or a rank read as higher-is-better swaps every pair
    # `processed_generation` beside `generation`: the text cleaned up, as raters read it
    text = next((c for c in candidates[1:] if candidates[0] in c and CLEANED.search(c)), None)
    if text:
        checks.append(f"{text} is read as the text, not {candidates[0]}: name the one raters read")
    text = text or candidates[0]
    ratings = propose_ratings(numbers)
    scale, said = propose_scale(rows, ratings)
    spec["candidates"] = {"text": text, "ratings": ratings, **scale, "better": "higher"}
    checks += said
    if system:
        spec["candidates"]["system"] = system[0]
    else:
        checks.append(_no_system("candidates.system: COLUMN, or {value: NAME} for one system"))
    spec["candidates"] |= {"rater": rater[0]} if rater else {}
    return spec, checks + _key_checks(spec["group"], rows)


def _gathers(rows: list[dict[str, Any]], column: str, context: list[str]) -> bool:
    """``column`` repeats over the sample's rows, each value's rows sharing one context."""
    values = {str(row.get(column)) for row in rows}
    shared = {(str(row.get(column)), *(str(row.get(c)) for c in context)) for row in rows}
    return 1 < len(values) < len(rows) and len(shared) == len(values)


def _no_system(add: str) -> str:
    return (
        "no column names the system: every output's system is `unknown` (systems and verify "
        f"refuse the suite); add {add}"
    )


def _context_checks(context: list[str], rows: list[dict[str, Any]], keyed: bool) -> list[str]:
    """What to check of the proposed context: the groups keyed on it for want of an id column,
    and a column empty in some rows of the sample (such a group makes no tests)."""
    checks = [] if keyed else [
        f"no id column: the groups are keyed on the context ({', '.join(context)}), the rows "
        "of one input being those that share it; name a column identifying the input in "
        "group.key if the file has one"
    ]  # fmt: skip
    for column in context:
        empty = sum(not str(row.get(column) or "").strip() for row in rows)
        if empty:
            checks.append(
                f"{column} is empty in {empty:,} of the sample's {len(rows):,} rows: such a "
                "group makes no tests (counted as 'empty context field(s)'); if the empty cell "
                f"is real (code at the start or end of a file), add group.may_be_empty: "
                f"[{field_name(column)}]"
            )
    return checks


def _key_checks(group: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """What the sample says of the proposed ``group.key``: a key different on every row (an item
    id: no group would hold two outputs) gives way to the context columns when they gather rows;
    a sample of one row cannot tell."""
    if len(rows) < 2:
        return ["the sample has one row: check that group.key gathers the outputs of one input"]

    def one_row_each(key: list[str]) -> bool:
        return len({tuple(str(row.get(c)) for c in key) for row in rows}) == len(rows)

    if not one_row_each(group["key"]):
        return []
    said = f"{', '.join(group['key'])} differs on every row of the sample (no group of two outputs)"
    context = list(group["context"].values())
    if not one_row_each(context):
        group["key"] = context
        return [f"{said}: the groups are keyed on the context column(s) instead"]
    return [f"{said}: key the groups on the column(s) naming the input"]


def _unused(spec: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """The sample's columns the proposal does not read (said in its header, never dropped
    unsaid)."""
    used = json.dumps(spec)
    return [column for column in row if json.dumps(column) not in used]


def _mark_guesses(text: str) -> str:
    """Each line of a guessed key, marked ``# CHECK`` (PyYAML writes no comments)."""
    keys = "|".join(GUESSED)
    text = re.sub(
        rf"^(\s*(?:{keys}):.*)$", r"\1  # CHECK: guessed from the header", text, flags=re.M
    )
    for key, note in ASSUMED.items():
        found = re.search(rf"^{key}:.*$", text, flags=re.M)
        if found:
            text = text[: found.start()] + _noted(found[0], note) + text[found.end() :]
    return text


def _noted(line: str, note: str) -> str:
    """``line`` with ``note`` after it, wrapped over comment lines at the line's indent past 99
    characters (the note alone: the line's value is never broken)."""
    head = f"{line}  # CHECK: "
    placeholder = "x" * len(head)  # one word: the wrap starts after it
    indent = " " * (len(line) - len(line.lstrip()))
    wrapped = textwrap.fill(
        placeholder + note, 99, subsequent_indent=f"{indent}#   ", break_long_words=False
    )
    return head + wrapped[len(head) :]


def _dumped(spec: dict[str, Any]) -> str:
    """``spec`` as YAML, the template on one line (JSON's quoting, which YAML reads), for its
    note to follow it: PyYAML writes a text holding a newline over several lines."""
    return "".join(
        f"template: {json.dumps(value, ensure_ascii=False)}\n"
        if key == "template"
        else yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True, width=100)
        for key, value in spec.items()
    )


def _map_text(name: str, spec: dict[str, Any]) -> str:
    head = f"name: {name}\ndescription: TODO the rule in words, as the dataset card shows it.\n"
    if "comparisons" in spec:
        return head + (
            "labels: [preferred, other]\ntiers:\n  - [preferred]\n  - [other]\n"
            "pairwise:\n  high_label: preferred\n  low_label: other\n"
        )
    aspects = ", ".join(spec["candidates"]["ratings"])
    return head + (
        "pairs_per: text\nlabels: [better, rated]\ntiers:\n  - [better]\n  - [rated]\n"
        f"rating_rule:\n  kind: numeric\n  aspects: [{aspects}]\n  aggregate: mean\n"
        "  minimum_gap: 1  # CHECK: the gap that makes one output better, 1 assumed\n"
        "  low_label: rated\n"
    )


def write_declarative(root: Path, name: str, sample: Path) -> tuple[list[Path], list[str]]:
    """Write ``adapters/NAME/`` (``source.yaml``, README, an empty ``__init__.py``) and the
    quality map; return the paths written and the columns found."""
    check_name(name)
    check_root(root)
    file, rows, malformed = sample_columns(sample)
    spec, checks = propose(name, file, rows)
    checks = malformed + checks
    row = rows[0]
    fmt = file["format"]
    folder, map_path = root / "adapters" / name, root / "quality_maps" / f"{name}.yaml"
    for path in (folder, map_path):
        if path.exists():
            raise NNDError(f"{path} already exists; pick another name or remove it first")
    unused = _unused(spec, row)
    header = (
        schema_line(root, folder / "source.yaml", SCHEMA_FILE)
        + f"# Proposed from {sample.name}; columns found: {', '.join(row)}.\n"
        + (f"# Columns not read (add any that matter): {', '.join(unused)}.\n" if unused else "")
        + "# Every value is a guess from the header: check each, and replace every TODO; delete\n"
        + "# each '# CHECK:' note once decided (the adapter harness names every one left).\n"
        + "".join(
            textwrap.fill(check, 99, initial_indent="# CHECK: ", subsequent_indent="#   ") + "\n"
            for check in checks
        )
    )
    fields = {"name": name, "title": name, "fixture": f"sample.{fmt}"}
    with atomic_directory(folder) as tmp:
        (tmp / "__init__.py").write_text("", encoding="utf-8")  # makes the folder a package
        (tmp / "source.yaml").write_text(
            header + _mark_guesses(_dumped(spec)),
            encoding="utf-8",
        )
        (tmp / "README.md").write_text(
            _template("README.md.txt").substitute(fields), encoding="utf-8"
        )
        map_text = schema_line(root, map_path, MAP_SCHEMA) + _map_text(name, spec)
        atomic_write_text(map_path, map_text)
    return [*sorted(p for p in folder.rglob("*") if p.is_file()), map_path], list(row)
