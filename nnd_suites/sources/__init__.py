"""Reading annotation sources: local paths or URLs, with line numbers for every error."""

from nnd_suites.sources.download import (
    DOWNLOAD_TIMEOUT_ENV,
    cache_dir,
    download_timeout,
    is_url,
    public_source_name,
    resolve_source,
    resolve_source_folder,
    sha256_file,
)
from nnd_suites.sources.html_table import parse_html_table, read_html_table
from nnd_suites.sources.json_object import read_json_object
from nnd_suites.sources.log import SKIP_EXAMPLES, ReadLog, SkipLog
from nnd_suites.sources.readers import (
    FIELD_SIZE_LIMIT,
    parse_number,
    read_json_array,
    read_jsonl,
    read_number,
    read_text_lines,
    read_tsv,
    require_fields,
)

__all__ = [
    "DOWNLOAD_TIMEOUT_ENV",
    "FIELD_SIZE_LIMIT",
    "SKIP_EXAMPLES",
    "ReadLog",
    "SkipLog",
    "cache_dir",
    "download_timeout",
    "is_url",
    "parse_html_table",
    "parse_number",
    "public_source_name",
    "read_html_table",
    "read_json_array",
    "read_json_object",
    "read_jsonl",
    "read_number",
    "read_text_lines",
    "read_tsv",
    "require_fields",
    "resolve_source",
    "resolve_source_folder",
    "sha256_file",
]
