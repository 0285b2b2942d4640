"""Bounded reading of the files nnd-suites is handed: regular files only, sizes, depths and digits
capped, so no small or strange input costs unbounded time or memory.

Every data file (suite manifests, quality maps, systems files, dataset cards, run reports) is
read through :func:`read_data_text` and parsed by :func:`parse_json` or a :class:`BoundedYAML`
loader. A fifo, a device (``/dev/zero``) or a folder where a file is expected, a file over its
size cap, nesting deeper than :data:`MAX_DEPTH` and integers longer than :data:`MAX_INT_DIGITS`
digits are :class:`DataFileError` s naming the file (callers re-raise them as their own class).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import stat
from typing import Any, TypeVar

import yaml

from nnd_suites.errors import NNDError

#: config-like files (quality maps, systems files, cards, reports): far above any real one
CONFIG_FILE_LIMIT = 16 * 2**20
#: suite manifests embed their quality map and every skipped-row record
MANIFEST_FILE_LIMIT = 256 * 2**20
#: no data file of ours nests deeper than about 8; recursion fails near 1,000
MAX_DEPTH = 100
#: counts and seeds fit in 20 digits; int() is quadratic in the digits and refused past 4,300
MAX_INT_DIGITS = 100
#: the largest magnitude of a number read from data (a rating, a score): far beyond any human
#: scale, and small enough that a sum or mean of any number of them, or the gap of two, stays
#: finite (1.7e308 + 1.7e308 is inf)
MAX_NUMBER = 1e100

#: A JSON escape of a UTF-16 surrogate: the only way a lone surrogate gets into a decoded text.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# A string (left open: to the end, so an open string is scanned once) or a bracket.
_JSON_NESTING = re.compile(r'"(?:[^"\\]|\\.)*+"?|[\[\]{}]', re.DOTALL)


class DataFileError(NNDError):
    """A data file cannot be read safely: not a regular file, too large, too deep, a huge integer
    (the message names the file and, where known, the line)."""

    def __init__(self, path: str | os.PathLike, reason: str, line: int | None = None) -> None:
        self.path, self.reason, self.line = str(path), reason, line
        super().__init__(f"{path}{f':{line}' if line else ''}: {reason}")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a fifo (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular_file(path: str | os.PathLike, what: str = "file") -> int:
    """An open read-only descriptor of ``path``, refused unless it is a regular file.

    Opened without blocking (a fifo with no writer would wait forever), then checked with
    ``fstat`` on the open descriptor, so a swap after the check cannot slip a device in.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError:
        raise DataFileError(path, f"is a folder, not a {what}; name the file") from None
    except OSError as exc:
        raise DataFileError(path, f"cannot read the {what} ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise DataFileError(path, f"is {_kind(mode)}, not a {what}; name a regular file")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return fd


def check_regular_file(path: str | os.PathLike, what: str = "file") -> None:
    """Refuse ``path`` unless it is a regular file (see :func:`open_regular_file`)."""
    os.close(open_regular_file(path, what))


def read_regular_bytes(
    path: str | os.PathLike, what: str = "file", limit: int = CONFIG_FILE_LIMIT
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (read at most ``limit + 1``)."""
    with os.fdopen(open_regular_file(path, what), "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise DataFileError(
            path, f"larger than {limit:,} bytes, more than any {what}; is it the right file?"
        )
    return data


def read_data_text(
    path: str | os.PathLike, what: str = "file", limit: int = CONFIG_FILE_LIMIT
) -> str:
    """A bounded regular file as UTF-8 text (a byte-order mark is dropped); bad bytes -> an error
    at their line."""
    data = read_regular_bytes(path, what, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataFileError(
            path, f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8", line
        ) from None


def bounded_int(text: str) -> int:
    """``int(text)`` for JSON's ``parse_int``, refusing more than :data:`MAX_INT_DIGITS` digits."""
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text):,} digits (at most {MAX_INT_DIGITS})")
    return int(text)


class Overflowing(float):
    """A JSON number beyond a float's range (``1e400``): infinite, shown as the file writes it."""

    __slots__ = ("written",)

    def __new__(cls, text: str) -> Overflowing:
        number = super().__new__(cls, text)
        number.written = text
        return number

    def __str__(self) -> str:
        return self.written


def bounded_float(text: str) -> float:
    """``float(text)`` for JSON's ``parse_float``; one that overflows is :class:`Overflowing`."""
    number = float(text)
    return number if math.isfinite(number) else Overflowing(text)


def unique_keys_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object for ``object_pairs_hook``, refusing a repeated key (the last would win)."""
    obj = dict(pairs)
    if len(obj) < len(pairs):  # linear: a row of many keys is not read in quadratic time
        seen: set[str] = set()
        repeated = sorted({key for key, _ in pairs if key in seen or seen.add(key)})
        raise ValueError(f"key(s) {repeated} appear twice in one object; keep one")
    return obj


def json_depth(text: str) -> int:
    """The deepest nesting of lists and objects in a JSON text (strings skipped), linear time."""
    depth = deepest = 0
    for match in _JSON_NESTING.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
    return deepest


def parse_json(text: str, origin: str, *, unique_keys: bool = False) -> Any:
    """``text`` parsed as JSON within the bounds; any fault -> a :class:`DataFileError` naming
    ``origin``. ``unique_keys`` refuses an object that repeats a key (the last would win)."""
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise DataFileError(origin, f"JSON nested {depth} deep (at most {MAX_DEPTH})")
    try:
        return json.loads(
            text,
            parse_int=bounded_int,
            object_pairs_hook=unique_keys_object if unique_keys else None,
        )
    except json.JSONDecodeError as exc:
        raise DataFileError(origin, f"invalid JSON ({exc.msg})", exc.lineno) from None
    except (ValueError, RecursionError) as exc:
        raise DataFileError(origin, str(exc) or "JSON nested too deeply") from None


def read_json_file(
    path: str | os.PathLike,
    what: str = "JSON file",
    limit: int = CONFIG_FILE_LIMIT,
    *,
    unique_keys: bool = False,
) -> Any:
    """A bounded regular JSON file, parsed (see :func:`parse_json`); a lone surrogate escape
    (text no file can hold: every writer of it would fail) is refused."""
    text = read_data_text(path, what, limit)
    value = parse_json(text, str(path), unique_keys=unique_keys)
    if has_lone_surrogate(text, value):
        raise DataFileError(path, "a text holds a lone UTF-16 surrogate escape (e.g. \\ud800)")
    return value


def has_lone_surrogate(text: str, value: Any) -> bool:
    """Whether ``value``, parsed from the JSON ``text``, holds a lone UTF-16 surrogate: not valid
    Unicode. Only a text with a surrogate escape can, so the value is walked only then."""
    if not _SURROGATE_ESCAPE.search(text):
        return False
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class BoundedYAML(yaml.SafeLoader):
    """PyYAML's safe loader with nesting and integer digits bounded (both raise
    ``yaml.YAMLError`` with the mark of the place, as every other YAML fault does)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_DEPTH}", self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = str(node.value).lstrip("+-").replace("_", "")
        if len(digits) > MAX_INT_DIGITS:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"an integer of {len(digits):,} digits (at most {MAX_INT_DIGITS})",
                node.start_mark,
            )
        return super().construct_yaml_int(node)


BoundedYAML.add_constructor("tag:yaml.org,2002:int", BoundedYAML.construct_yaml_int)


def unacceptable_character(exc: yaml.reader.ReaderError, text: str) -> tuple[int, str]:
    """(1-based line, what is wrong) of a character PyYAML's reader refuses in ``text``: it
    refuses while the loader is made, with the character's position and no mark."""
    line = text.count("\n", 0, exc.position) + 1
    return line, f"character {exc.character!r} is not allowed in YAML ({exc.reason})"


LoaderT = TypeVar("LoaderT", bound=BoundedYAML)


def parse_yaml(text: str, origin: str, loader: type[BoundedYAML] = BoundedYAML) -> Any:
    """``text`` parsed as YAML by ``loader``; any fault -> a :class:`DataFileError` at its line."""
    return load_yaml(text, origin, loader)[0]


def load_yaml(text: str, origin: str, loader: type[LoaderT]) -> tuple[Any, LoaderT]:
    """:func:`parse_yaml`, also handing back the (disposed) loader, for what a subclass recorded
    as it parsed (a quality map's loader records the line of every key)."""
    instance = None
    try:
        instance = loader(text)  # PyYAML's reader refuses control characters here
        return instance.get_single_data(), instance
    except yaml.reader.ReaderError as exc:
        line, problem = unacceptable_character(exc, text)
        raise DataFileError(origin, f"cannot parse the YAML: {problem}; remove it", line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark else None
        raise DataFileError(origin, f"cannot parse the YAML: {problem}", line) from None
    except RecursionError:
        raise DataFileError(origin, "YAML nested too deeply") from None
    finally:
        if instance is not None:
            instance.dispose()


def read_yaml_file(
    path: str | os.PathLike,
    what: str = "YAML file",
    limit: int = CONFIG_FILE_LIMIT,
    loader: type[BoundedYAML] = BoundedYAML,
) -> Any:
    """A bounded regular YAML file, parsed (see :func:`parse_yaml`)."""
    return parse_yaml(read_data_text(path, what, limit), str(path), loader)


def read_front_matter(
    path: str | os.PathLike, what: str, limit: int, block: re.Pattern[str]
) -> tuple[str, Any]:
    """A bounded text file (:func:`read_data_text`) and its front matter: ``block``'s second
    group parsed by :func:`parse_yaml` (None without one), once per text, so its callers read
    it and never change it."""
    text = read_data_text(path, what, limit)
    return text, _front_matter(text, str(path), block)


@functools.lru_cache(maxsize=4)  # a card's front matter can take PyYAML a good part of a second
def _front_matter(text: str, origin: str, block: re.Pattern[str]) -> Any:
    front = block.search(text)
    return parse_yaml(front.group(2), origin) if front is not None else None


def sha256_file(path: str | os.PathLike) -> str:
    """The file's sha256, read in blocks (the digest that pins sources and weights)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
