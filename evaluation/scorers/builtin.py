"""The built-in scorers. ``mean``, ``sum``, ``per_char`` and ``per_byte``: the same cached sum of
log-probabilities, normalised four ways; ``pmi`` and ``ratio`` set it against a neutral context's
or a reference model's; ``reward`` reads a reward model's scalar.

Every log-likelihood scorer counts the end of the text: the targets are the candidate's tokens
plus EOS, so an empty candidate (Challenge 300 has some) still has a score, and ``per_char`` /
``per_byte`` divide by the text's length plus one for that end.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from nnd_suites.evaluation.scorers.base import (
    CandidateScores,
    Scorer,
    ScorerMetadata,
    register_scorer,
)
from nnd_suites.plugins.params import PluginParams


@register_scorer("mean")
class Mean(Scorer):
    metadata = ScorerMetadata(
        summary="mean log-probability per target token (the paper's; default)",
        description="The mean log-probability of the candidate's tokens and EOS (the NND "
        "paper's eq. 1, what its reference code computes). Length-normalised per token: the "
        "default, and the one whose figures reproduce the paper. Its normalisation depends on "
        "the tokenizer, so two models with different tokenizers are normalised differently.",
    )

    def value(self, scores: CandidateScores, text: str) -> float:
        return scores.model.logprob_sum / scores.model.n_targets


@register_scorer("sum")
class Sum(Scorer):
    metadata = ScorerMetadata(
        summary="total log-probability (no length normalisation)",
        description="The sum of the log-probabilities of the candidate's tokens and EOS: the "
        "probability of the whole text. No normalisation, so it prefers short candidates; pick "
        "it to ask which text the model finds more likely outright, or to match tools that "
        "sum (lm-evaluation-harness's acc).",
    )

    def value(self, scores: CandidateScores, text: str) -> float:
        return scores.model.logprob_sum


@register_scorer("per_char")
class PerChar(Scorer):
    metadata = ScorerMetadata(
        summary="total log-probability per character (+1 for the end)",
        description="The sum of log-probabilities divided by the candidate's length in "
        "characters plus one (the end of the text, scored as EOS). Independent of the "
        "tokenizer: pick it to compare models whose tokenizers differ on one footing.",
    )

    def value(self, scores: CandidateScores, text: str) -> float:
        return scores.model.logprob_sum / (len(text) + 1)


@register_scorer("per_byte")
class PerByte(Scorer):
    metadata = ScorerMetadata(
        summary="total log-probability per UTF-8 byte (+1 for the end)",
        description="The sum of log-probabilities divided by the candidate's length in UTF-8 "
        "bytes plus one (the end of the text). Like per_char, independent of the tokenizer, "
        "and comparable across scripts whose characters take several bytes (bits per byte).",
    )

    def value(self, scores: CandidateScores, text: str) -> float:
        return scores.model.logprob_sum / (len(text.encode("utf-8")) + 1)


@register_scorer("pmi")
class PMI(Scorer):
    metadata = ScorerMetadata(
        summary="log p(candidate | context) - log p(candidate | empty fields)",
        description="Pointwise mutual information: the candidate's total log-probability after "
        "its context minus after a neutral context, the suite's template with every field "
        "empty (so the model reads the same scaffolding without the content). It separates "
        "'fits this context' from 'is a likely string': pick it for errors of context "
        "(off_target, wrong_context) rather than of fluency. Costs one more request per "
        "distinct candidate.",
    )
    needs_neutral = True

    def value(self, scores: CandidateScores, text: str) -> float:
        if scores.neutral is None:
            raise ValueError("pmi needs the candidate's score after the neutral context")
        return scores.model.logprob_sum - scores.neutral.logprob_sum


class RatioParams(PluginParams):
    normalise: Literal["none", "mean"] = Field(
        "none",
        description="none: summed log-probabilities (RewardBench's DPO reward); mean: per-target "
        "means of each model",
    )


@register_scorer("ratio")
class Ratio(Scorer):
    """The implicit reward of a preference-tuned model: its log-probability against its
    reference's. A DPO-trained policy's implicit reward for a response is
    ``log p_policy(y | x) - log p_ref(y | x)`` (up to its beta, which changes no verdict).
    RewardBench scores DPO models exactly so (allenai/reward-bench, ``rewardbench/dpo.py``,
    ``DPOInference.inference_step``: with a reference model the summed log-probabilities of the
    response tokens and EOS, ``policy - ref``). With ``normalise=mean`` both sides are per-target
    means instead, a length-normalised variant.
    """

    metadata = ScorerMetadata(
        summary="log p(model) - log p(reference model): DPO implicit reward",
        description="The candidate's log-probability under the model minus under a reference "
        "model (--reference-model), the implicit reward of a DPO-tuned model as RewardBench "
        "computes it (sums of the response's log-probabilities; normalise=mean for per-token "
        "means). Pick it to test what preference tuning taught a model, on the suite's human "
        "judgments. Costs the reference model's scoring of every request (cached like any).",
    )
    Params = RatioParams
    needs_reference = True

    def value(self, scores: CandidateScores, text: str) -> float:
        if scores.reference is None:
            raise ValueError("ratio needs the candidate's score under the reference model")
        if self.params.normalise == "mean":
            return scores.model.mean - scores.reference.mean
        return scores.model.logprob_sum - scores.reference.logprob_sum


@register_scorer("reward")
class Reward(Scorer):
    metadata = ScorerMetadata(
        summary="a reward model's scalar for (context, candidate)",
        description="The output of a sequence-classification reward model (one label) reading "
        "the context and the candidate as a text pair; the model is loaded by the hf_reward "
        "backend. Pick it to test a reward model on the suite's human judgments, with the "
        "suite's categories, margins and intervals (as RewardBench does for its own pairs).",
    )
    backend = "hf_reward"

    def value(self, scores: CandidateScores, text: str) -> float:
        return scores.model.logprob_sum  # the reward backend stores the scalar as the sum
