"""The implicit reward of a preference-tuned model: its log-probability against its reference's.

A DPO-trained policy's implicit reward for a response is ``log p_policy(y | x) - log p_ref(y | x)``
(up to its beta, which changes no verdict). RewardBench scores DPO models exactly so
(allenai/reward-bench, ``rewardbench/dpo.py``, ``DPOInference.inference_step``: with a reference
model the summed log-probabilities of the response tokens and EOS, ``policy - ref``). With
``normalise=mean`` both sides are per-target means instead, a length-normalised variant.
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


class RatioParams(PluginParams):
    normalise: Literal["none", "mean"] = Field(
        "none",
        description="none: summed log-probabilities (RewardBench's DPO reward); mean: per-target "
        "means of each model",
    )


@register_scorer("ratio")
class Ratio(Scorer):
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
