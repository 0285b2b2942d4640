"""Verification of a suite against human judgments (paper 2.3) and placement of new models (5.1)."""

from nnd_suites.evaluation.verify.stats import (
    Bootstrap,
    Placement,
    bootstrap_correlations,
    gap_correlation,
    pairwise_gaps,
    place_model,
    rank_correlation,
)

__all__ = [
    "Bootstrap",
    "Placement",
    "bootstrap_correlations",
    "gap_correlation",
    "pairwise_gaps",
    "place_model",
    "rank_correlation",
]
