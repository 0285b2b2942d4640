"""Verification of a suite against human judgments (paper 2.3) and placement of new models (5.1):
the two library calls. Their statistics (``stats.py``), typed results (``models.py``) and folders
(``render.py``) are imported from those modules."""

from nnd_suites.evaluation.verify.place import place_in_verify
from nnd_suites.evaluation.verify.run import verify_suite

__all__ = ["place_in_verify", "verify_suite"]
