"""Export suites as an lm-evaluation-harness task folder whose verdicts equal nnd-suites' own.

Layout of the folder (``lm_eval --include_path FOLDER --tasks nnd_<suite>``)::

    utils.py                          fixed code (evaluation/lm_eval_utils.py, copied as is)
    nnd_<suite>.yaml                  a task over every test of the suite
    nnd_<suite>_by_category.yaml      a group of per-category tasks
    nnd_<suite>__<category>.yaml      one task per category
    data/<suite>/all.jsonl            the tests (rendered context, two choices, texts)
    data/<suite>/<category>.jsonl     the tests of one category
    nnd_lm_eval.json                  what was exported: suites, scorer, tokenizer, tasks and
                                      the category each per-category task holds

How the two tools are made to agree, test by test. lm-eval's ``loglikelihood`` (``HFLM``,
``TemplateLM._encode_pair`` in lm_eval/api/model.py, 0.4.13) moves the context's trailing
whitespace into the continuation, tokenises context + continuation jointly, scores the tokens
after the context's own tokens and sums their log-probabilities, with no EOS; an empty context
becomes the tokenizer's BOS (EOS when it has none). nnd-suites' default scoring mode
(evaluation/scoring.py) drops the context's trailing spaces and tabs, tokenises the candidate on
its own with a leading space (byte-level BPE) and scores its tokens plus EOS. So the export:

- renders each context with the suite's template exactly as the evaluator does, then drops
  trailing spaces and tabs (nothing is left for lm-eval to move);
- writes each choice as ``" " + candidate + EOS text`` (no space after an empty context or a line
  break, or before a candidate that starts with whitespace: the rule of ``boundary_texts``), with
  ``target_delimiter: ""``. The EOS text is parsed back into the EOS token, and byte-level BPE
  splits words before a space, so the joint tokenisation gives nnd-suites' tokens and lm-eval's
  sum is nnd-suites' ``logprob_sum``;
- computes the verdict in ``process_results`` with the scorer's own formula (``sum``,
  ``per_char``, ``per_byte``: the sum divided by the text's length + 1) and reports ``pass``
  (strictly higher) and ``tie`` apart, where lm-eval's ``acc`` would count a tie as a pass.

No new scorer is needed on the nnd-suites side: ``sum``, ``per_char`` and ``per_byte`` read the
same (sum, targets) lm-eval reproduces. ``mean`` divides by the number of tokens, which lm-eval
does not give ``process_results``; ``pmi``, ``ratio`` and ``reward`` need a second context, a
second model or a reward head: all are refused. The export is made for one tokenizer (its EOS text
and its leading-space convention): byte-level BPE tokenizers that add no special token after a
text (GPT-2, Llama 3, Qwen ...); others are refused. A context ending in a line break cannot be
expressed (lm-eval would score the line break as part of the candidate) and is refused by name.
"""

from __future__ import annotations

import glob
import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import yaml
from pydantic import Field

from nnd_suites.errors import NNDError, ParameterError
from nnd_suites.evaluation.scoring import SEPARATOR, tokenizer_traits
from nnd_suites.evaluation.templates import resolve_template
from nnd_suites.infra.atomic import atomic_write_text, real_target
from nnd_suites.infra.output_folder import output_folder
from nnd_suites.infra.output_kinds import register_model
from nnd_suites.infra.validation import StrictModel
from nnd_suites.records.pairs import Pair, is_degenerate
from nnd_suites.records.templates import render_template
from nnd_suites.suite import Suite

KIND = "lm-eval-task"
MAIN_FILE = "nnd_lm_eval.json"
UTILS_TEMPLATE = Path(__file__).with_name("lm_eval_utils.py")
#: scorer -> the fixed process_results function of utils.py that computes it
SCORERS = {
    "sum": "process_results_sum",
    "per_char": "process_results_per_char",
    "per_byte": "process_results_per_byte",
}
DEFAULT_SCORER = "per_byte"
#: why a scorer cannot be expressed in lm-eval
REFUSED = {
    "mean": "it divides by the candidate's number of tokens, which lm-eval does not pass to "
    "process_results (only the summed log-likelihood)",
    "pmi": "it scores each candidate again after a neutral context, a request lm-eval's "
    "multiple_choice task does not make",
    "ratio": "it needs a second (reference) model in the same run",
    "reward": "it reads a reward model's scalar head, not log-likelihoods",
}
TASK_NAME = re.compile(r"^[a-z0-9_]+$")
#: the most characters of a category in its task's name (the file name's part)
CATEGORY_PART = 80


class LmEvalExport(StrictModel):
    """What an export folder holds (its main file, which also marks the folder as ours)."""

    scorer: str
    tokenizer: str
    eos_text: str
    suites: dict[str, str]  # suite name -> its task name
    tasks: dict[str, int]  # task name -> number of tests
    groups: dict[str, list[str]]  # group name -> its per-category task names
    # per-category task -> its category as the suite names it (task names are slugs: "日本" and
    # "中文" are tasks x and x_2)
    categories: dict[str, str] = Field(default_factory=dict)


def check_scorer(scorer: str) -> str:
    if scorer in SCORERS:
        return scorer
    why = REFUSED.get(scorer, "it is not a built-in log-likelihood scorer")
    raise ParameterError(
        f"scorer {scorer!r} cannot be expressed in lm-evaluation-harness: {why}; use one of "
        f"{', '.join(SCORERS)}"
    )


def tokenizer_eos_text(tokenizer, name: str) -> str:
    """The EOS text of ``tokenizer``, a byte-level one whose words start with a space (a choice
    gets one before its candidate); refuse what lm-eval cannot match."""
    traits = tokenizer_traits(tokenizer)
    if traits.eos is None or not tokenizer.eos_token:
        raise NNDError(f"tokenizer {name!r} has no EOS token, which nnd-suites scores")
    if traits.trailing:
        raise NNDError(
            f"tokenizer {name!r} adds special token(s) {list(traits.trailing)} after a text: "
            "lm-eval would put them between the context and the candidate; this export "
            "supports tokenizers that do not (GPT-2, Llama 3, Qwen ...)"
        )
    if not traits.space_prefix:
        raise NNDError(
            f"tokenizer {name!r} marks word starts itself (SentencePiece): lm-eval's joint "
            "tokenisation of context and candidate differs from nnd-suites' at the boundary; "
            "this export supports byte-level BPE tokenizers (GPT-2, Llama 3, Qwen ...)"
        )
    return tokenizer.eos_token


def slug(name: str) -> str:
    """A task-name part: lower case letters, digits and single underscores."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "x"


def _task_name(name: str) -> str:
    if not TASK_NAME.match(name) or len(name) > 200:
        raise NNDError(f"task name {name!r} is not letters, digits and '_' (rename the suite)")
    return name


def choice_row(pair: Pair, context: str, eos_text: str, suite: str) -> dict:
    """One test as lm-eval reads it (``context``, ``choices``) and as utils.py judges it."""
    context = context.rstrip(" \t")
    if context and context[-1].isspace():
        raise NNDError(
            f"suite {suite}, test {pair.id}: the rendered context ends with a line break "
            f"({context[-1]!r}), which lm-eval moves into (and scores as part of) the candidate; "
            "export it with a template that does not end with one (--template)"
        )
    choices = []
    for text in (pair.high.text, pair.low.text):
        lead = SEPARATOR if context and text and not text[0].isspace() else ""
        choices.append(lead + text + eos_text)
    return {
        "id": pair.id,
        "group_id": pair.group_id,
        "category": pair.category,
        "context": context,
        "choices": choices,
        "texts": [pair.high.text, pair.low.text],
        "degenerate": is_degenerate(pair),
    }


def _write_jsonl(path: Path, rows: Sequence[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def _task_yaml(task: str, data: Path, scorer: str) -> str:
    # Data (names, paths) goes through yaml.safe_dump; only fixed text is added by hand.
    config = {
        "task": task,
        "dataset_path": "json",
        # datasets reads data_files as glob patterns: a folder 'runs[1]' would read 'runs1'
        "dataset_kwargs": {"data_files": {"test": glob.escape(str(data))}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "target_delimiter": "",
        "num_fewshot": 0,
    }
    metrics = "".join(
        f"  - metric: {metric}\n    aggregation: !function utils.rated_mean\n"
        f"    higher_is_better: {'true' if metric == 'pass' else 'false'}\n"
        for metric in ("pass", "tie", "degenerate")
    )
    return (
        yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
        + "process_docs: !function utils.process_docs\n"
        + "doc_to_text: !function utils.doc_to_text\n"
        + "doc_to_choice: !function utils.doc_to_choice\n"
        + "doc_to_target: !function utils.doc_to_target\n"
        + f"process_results: !function utils.{SCORERS[scorer]}\n"
        + "metric_list:\n"
        + metrics
        + "metadata:\n  version: 1.0\n"
    )


def _write_suite(
    tmp: Path, final: Path, suite: Suite, template: str | None, scorer: str, eos_text: str
) -> tuple[str, dict[str, int], dict[str, str]]:
    base = _task_name("nnd_" + slug(suite.name))
    _, text = resolve_template(suite, template)
    rows = [
        choice_row(pair, render_template(text, pair.context), eos_text, suite.name)
        for pair in suite.pairs
    ]
    if not rows:
        raise NNDError(f"suite {suite.name} has no tests to export")
    tasks = {base: len(rows)}
    data = Path("data") / slug(suite.name)
    _write_jsonl(tmp / data / "all.jsonl", rows)
    atomic_write_text(tmp / f"{base}.yaml", _task_yaml(base, final / data / "all.jsonl", scorer))
    by_category: dict[str, list[dict]] = {}
    for row in rows:
        by_category.setdefault(row["category"], []).append(row)
    members: dict[str, str] = {}  # task -> its category
    for category, kept in by_category.items():
        part = name = slug(category)[:CATEGORY_PART]
        number = 2
        # two categories with one slug ("A b", "a-b"); "all" is the file of every test
        while f"{base}__{part}" in tasks or part == "all":
            part, number = f"{name}_{number}", number + 1
        task = _task_name(f"{base}__{part}")
        tasks[task] = len(kept)
        members[task] = category
        path = data / f"{part}.jsonl"
        _write_jsonl(tmp / path, kept)
        atomic_write_text(tmp / f"{task}.yaml", _task_yaml(task, final / path, scorer))
    group = yaml.safe_dump(
        {"group": f"{base}_by_category", "task": list(members), "metadata": {"version": 1.0}},
        sort_keys=False,
    )
    atomic_write_text(tmp / f"{base}_by_category.yaml", group)
    return base, tasks, members


def export_lm_eval(
    suites: Sequence[Suite],
    to: str | Path,
    tokenizer: str,
    *,
    scorer: str = DEFAULT_SCORER,
    template: str | None = None,
) -> LmEvalExport:
    """Write ``suites`` as an lm-eval task folder at ``to`` (replaced only if it is one)."""
    check_scorer(scorer)
    # lazy: hf_loading imports torch; an export without a tokenizer needs none
    from nnd_suites.evaluation.backends.hf_loading import load_tokenizer

    eos_text = tokenizer_eos_text(load_tokenizer(tokenizer), tokenizer)
    final = real_target(to)  # absolute for the YAML files; a link there is refused
    owners: dict[str, str] = {}  # task or group name -> the suite exporting it
    for suite in suites:
        base = "nnd_" + slug(suite.name)
        for name in (base, f"{base}_by_category"):
            if name in owners:
                raise NNDError(
                    f"suites {owners[name]!r} and {suite.name!r} both export {name}: give "
                    "each suite once, or rebuild one with another --name"
                )
            owners[name] = suite.name
    manifest = LmEvalExport(
        scorer=scorer,
        tokenizer=tokenizer,
        eos_text=eos_text,
        suites={},
        tasks={},
        groups={},
    )
    with output_folder(final, KIND) as tmp:
        shutil.copyfile(UTILS_TEMPLATE, tmp / "utils.py")
        for suite in suites:
            base, tasks, members = _write_suite(tmp, final, suite, template, scorer, eos_text)
            manifest.suites[suite.name] = base
            manifest.tasks |= tasks
            manifest.groups[f"{base}_by_category"] = list(members)
            manifest.categories |= members
        atomic_write_text(tmp / MAIN_FILE, manifest.model_dump_json(indent=2) + "\n")
    return manifest


register_model("lm-eval-task", LmEvalExport)
