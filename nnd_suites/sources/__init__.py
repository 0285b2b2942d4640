"""Reading annotation sources: local paths or URLs, with line numbers for every error.

The package exports the readers and the skip log, which every adapter uses. Downloading
(:mod:`nnd_suites.sources.download`) and HTML tables (:mod:`nnd_suites.sources.html_table`) are
imported from their modules: they load an HTTP client and an HTML parser that a build from a
local file, and the command line's start-up, do without.
"""

from nnd_suites.sources.json_object import read_json_object
from nnd_suites.sources.log import ReadLog, SkipLog, unattributable
from nnd_suites.sources.readers import (
    SOURCE_JSON,
    parse_number,
    read_json_array,
    read_jsonl,
    read_number,
    read_text_lines,
    read_tsv,
    require_fields,
)

__all__ = [
    "SOURCE_JSON",
    "ReadLog",
    "SkipLog",
    "parse_number",
    "read_json_array",
    "read_json_object",
    "read_jsonl",
    "read_number",
    "read_text_lines",
    "read_tsv",
    "require_fields",
    "unattributable",
]
