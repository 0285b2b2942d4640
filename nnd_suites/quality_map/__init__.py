"""Quality maps: declared partial orders of quality over labels (paper step 2, "assign quality").

Maps are data files in ``quality_maps/`` (YAML or JSON) described by pydantic models
(:mod:`~nnd_suites.quality_map.model`, rating rules in :mod:`~nnd_suites.quality_map.rules`,
their contract in :mod:`~nnd_suites.quality_map.rule_base`);
``schemas/quality_map.schema.json`` is generated from them. Loading also checks what a schema
cannot: unknown or unordered labels, contradictions and cycles, each named in the error with the
file and line.
"""

from nnd_suites.quality_map.core import QualityMap, builtin_quality_maps
from nnd_suites.quality_map.model import QualityMapDefinition, generate_schema, write_schema
from nnd_suites.quality_map.rule_base import Assessment, level_key
from nnd_suites.quality_map.rules import GradedRule, MajorityTopRule, NumericRule, RatingRule

__all__ = [
    "Assessment",
    "GradedRule",
    "MajorityTopRule",
    "NumericRule",
    "QualityMap",
    "QualityMapDefinition",
    "RatingRule",
    "builtin_quality_maps",
    "generate_schema",
    "level_key",
    "write_schema",
]
