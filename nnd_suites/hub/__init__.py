"""Suites on the Hugging Face Hub: export to a dataset folder, publish it, load it back.

``export_suites`` writes one config per suite (parquet with explicit Features, the manifest, a
generated card); ``publish_suites`` pushes that folder with huggingface_hub;
``load_exported_suite`` (and ``nnd_suites.load_suite``) return the typed, validated suite from a
folder or a repository; ``datasets.load_dataset`` reads the same folder or repository as rows.
"""

from __future__ import annotations

from nnd_suites.hub.export import ExportResult, export_suites, refresh_card
from nnd_suites.hub.layout import SPLIT, exported_configs, suite_features, validate_config_name
from nnd_suites.hub.load import (
    HUB_PREFIX,
    HubSpec,
    is_hub_spec,
    load_exported_suite,
    parse_hub_spec,
)
from nnd_suites.hub.publish import PublishResult, publish_suites

__all__ = [
    "HUB_PREFIX",
    "SPLIT",
    "ExportResult",
    "HubSpec",
    "PublishResult",
    "export_suites",
    "exported_configs",
    "is_hub_spec",
    "load_exported_suite",
    "parse_hub_spec",
    "publish_suites",
    "refresh_card",
    "suite_features",
    "validate_config_name",
]
