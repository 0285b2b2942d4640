"""Suites on the Hugging Face Hub: export to a dataset folder, publish it, load it back.

``export_suites`` writes one config per suite (parquet with explicit Features, the manifest, a
generated card); ``publish_suites`` pushes that folder with huggingface_hub;
``nnd_suites.load_suite`` returns the typed, validated suite of a config from a folder or a
repository (through ``read_exported_config`` and ``load_hub_config``); ``datasets.load_dataset``
reads the same folder or repository as rows.
"""

from __future__ import annotations

from nnd_suites.hub.export import ExportResult, export_suites, refresh_card
from nnd_suites.hub.layout import exported_configs
from nnd_suites.hub.load import (
    HUB_PREFIX,
    HubSpec,
    load_hub_config,
    parse_hub_spec,
    read_exported_config,
)
from nnd_suites.hub.publish import PublishResult, publish_suites
from nnd_suites.suite import suite_features

__all__ = [
    "HUB_PREFIX",
    "ExportResult",
    "HubSpec",
    "PublishResult",
    "export_suites",
    "exported_configs",
    "load_hub_config",
    "parse_hub_spec",
    "publish_suites",
    "read_exported_config",
    "refresh_card",
    "suite_features",
]
