"""Shared fixtures. Suites are built once per session from the shipped annotation files."""

from __future__ import annotations

import os

import pytest

# Tests never reach the Hugging Face Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def quiz_design_suite():
    from nnd_suites import build_suite

    return build_suite("quiz_design")


@pytest.fixture(scope="session")
def challenge300_suite():
    from nnd_suites import build_suite

    return build_suite("challenge300")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own nnd-suites cache folder (downloads, scores)."""
    monkeypatch.setenv("NND_SUITES_CACHE", str(tmp_path_factory.mktemp("nnd_cache")))
