"""Verification of a suite against human judgments (paper 2.3) and placement of new models (5.1)."""

from nnd_suites.evaluation.verify.models import (
    Correlation,
    PlacedScore,
    PlacementReport,
    VerifyReport,
)
from nnd_suites.evaluation.verify.place import place_in_verify
from nnd_suites.evaluation.verify.render import (
    load_verify,
    verify_markdown,
    write_placement,
    write_verify,
)
from nnd_suites.evaluation.verify.run import read_systems_file, verify_suite
from nnd_suites.evaluation.verify.stats import (
    Bootstrap,
    Placement,
    bootstrap_correlations,
    gap_correlation,
    pairwise_gaps,
    place_model,
    rank_correlation,
    weighted_pass_rates,
)

__all__ = [
    "Bootstrap",
    "Correlation",
    "PlacedScore",
    "Placement",
    "PlacementReport",
    "VerifyReport",
    "bootstrap_correlations",
    "gap_correlation",
    "load_verify",
    "pairwise_gaps",
    "place_in_verify",
    "place_model",
    "rank_correlation",
    "read_systems_file",
    "verify_markdown",
    "verify_suite",
    "weighted_pass_rates",
    "write_placement",
    "write_verify",
]
