"""utils.py of an lm-evaluation-harness task exported by ``nnd-suites export-lm-eval``.

This file is copied verbatim into every exported task folder (it holds no suite content: the
tests are in the data files beside it) and imports nothing of nnd-suites, so lm-eval runs it
without nnd-suites installed.

Each row of the data is one NND test. ``context`` is the rendered context as nnd-suites' default
scoring mode tokenises it (trailing spaces and tabs dropped); ``choices`` are the better and the
worse candidate as lm-eval must score them: with the leading space nnd-suites puts before a
candidate, and the tokenizer's EOS text after it, so that lm-eval's summed log-likelihood of a
choice is nnd-suites' sum over the candidate's tokens and EOS. ``texts`` are the candidates
themselves, whose length the ``per_char`` and ``per_byte`` scorers divide by.

Metrics (lm-eval's ``acc`` would count equal log-likelihoods as a pass for the first choice):
``pass`` the better candidate's value is strictly higher, ``tie`` the values are equal, both over
the rated tests; ``degenerate`` tests (both candidates the same text) are counted apart and left
out of ``pass`` and ``tie``, as nnd-suites does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def process_docs(dataset):
    """The tests as exported (nothing is dropped or reordered)."""
    return dataset


def doc_to_text(doc: dict) -> str:
    return doc["context"]


def doc_to_choice(doc: dict) -> list[str]:
    return list(doc["choices"])


def doc_to_target(doc: dict) -> int:
    return 0  # the better candidate is always the first choice


def _value_sum(loglikelihood: float, text: str) -> float:
    return loglikelihood


def _value_per_char(loglikelihood: float, text: str) -> float:
    return loglikelihood / (len(text) + 1)  # +1: the end of the text, scored as EOS


def _value_per_byte(loglikelihood: float, text: str) -> float:
    return loglikelihood / (len(text.encode("utf-8")) + 1)


def _verdict(doc: dict, results: Sequence, value: Callable[[float, str], float]) -> dict:
    if doc["degenerate"]:
        return {"pass": None, "tie": None, "degenerate": 1.0}
    (ll_high, _), (ll_low, _) = results
    high = value(ll_high, doc["texts"][0])
    low = value(ll_low, doc["texts"][1])
    return {"pass": float(high > low), "tie": float(high == low), "degenerate": 0.0}


def process_results_sum(doc: dict, results: Sequence) -> dict:
    return _verdict(doc, results, _value_sum)


def process_results_per_char(doc: dict, results: Sequence) -> dict:
    return _verdict(doc, results, _value_per_char)


def process_results_per_byte(doc: dict, results: Sequence) -> dict:
    return _verdict(doc, results, _value_per_byte)


def rated_mean(values: Sequence) -> float:
    """Mean over the rated tests (degenerate ones give None); NaN when there are none."""
    rated = [v for v in values if v is not None]
    return sum(rated) / len(rated) if rated else float("nan")
