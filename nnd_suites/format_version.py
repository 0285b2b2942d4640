"""Suite manifest format versions, and reading a manifest file into checked JSON.

A format version is ``MAJOR.MINOR``. A newer minor version only adds optional fields: this
version reads such a manifest when it uses none of them, and otherwise says to upgrade. A
different major version is not readable at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nnd_suites.errors import SuiteValidationError

#: The manifest format this version of nnd-suites writes.
FORMAT_VERSION = "1.0"
_VERSION = re.compile(r"^(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})$")


def parse_format_version(value: object, where: str) -> tuple[int, int]:
    """``"1.7"`` -> ``(1, 7)``; anything but ``MAJOR.MINOR`` is a SuiteValidationError."""
    match = _VERSION.match(value) if isinstance(value, str) else None
    if match is None:
        raise SuiteValidationError(
            f"{where}: invalid format_version {value!r}: expected MAJOR.MINOR such as "
            f"{FORMAT_VERSION!r}; the manifest is damaged or was not written by nnd-suites"
        )
    return int(match.group(1)), int(match.group(2))


def check_format_version(data: dict[str, Any], where: str, known_fields: Iterable[str]) -> None:
    """Refuse a manifest this version cannot read fully, saying whether to upgrade."""
    version = data.get("format_version", FORMAT_VERSION)
    major, minor = parse_format_version(version, where)
    ours = parse_format_version(FORMAT_VERSION, "nnd-suites")
    if major != ours[0]:
        newer = "upgrade nnd-suites" if major > ours[0] else "rebuild the suite"
        raise SuiteValidationError(
            f"{where}: format version {version} is not readable by this version of "
            f"nnd-suites (format {FORMAT_VERSION}); {newer}"
        )
    unknown = sorted(set(data) - set(known_fields))
    if minor > ours[1] and unknown:
        raise SuiteValidationError(
            f"{where}: written by a newer nnd-suites (format {version}, field(s) "
            f"{', '.join(unknown)}); upgrade nnd-suites to read it"
        )


def newer_format_hint(data: dict[str, Any]) -> str:
    """A sentence to add to a schema error when the manifest is of a newer minor version."""
    try:
        minor = parse_format_version(data.get("format_version", FORMAT_VERSION), "")[1]
    except SuiteValidationError:
        return ""
    if minor <= parse_format_version(FORMAT_VERSION, "")[1]:
        return ""
    return (
        f" (written by a newer nnd-suites (format {data['format_version']}); "
        "upgrade nnd-suites to read it)"
    )


def parse_manifest_text(path: Path, known_fields: Iterable[str]) -> dict[str, Any]:
    """The JSON object of a manifest file, its format version checked; errors name the file."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteValidationError(
            f"{path}: invalid manifest: not UTF-8 text (byte {exc.start}: {exc.reason}); "
            "the file is damaged: rebuild or download the suite again"
        ) from exc
    except OSError as exc:
        raise SuiteValidationError(f"{path}: unreadable manifest: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SuiteValidationError(
            f"{path}:{exc.lineno}: invalid manifest: not JSON ({exc.msg}, column {exc.colno}); "
            "rebuild or download the suite again"
        ) from exc
    except RecursionError as exc:  # nesting deeper than the parser's stack
        raise SuiteValidationError(f"{path}: invalid manifest: JSON nested too deeply") from exc
    if not isinstance(data, dict):
        raise SuiteValidationError(
            f"{path}: invalid manifest: a JSON object is expected, not {type(data).__name__}"
        )
    check_format_version(data, str(path), known_fields)
    return data
