"""One writer for every single file nnd-suites writes beside a user's files (JSON Schemas, GEM
contrast sets): it replaces only an earlier file of the same writer, atomically, and never
writes into a folder nnd-suites replaces as a whole (:mod:`nnd_suites.infra.output_folder`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

from nnd_suites.errors import OutputFolderError
from nnd_suites.infra.atomic import atomic_path, real_target
from nnd_suites.infra.output_folder import MAX_MAIN_FILE_BYTES, refuse_a_path_inside_an_output
from nnd_suites.infra.output_kinds import JSON_SCHEMA_DIALECT

#: recognises a file's bytes as an earlier output of the writer (False, or a ValueError: not ours)
Recogniser = Callable[[bytes], bool]


def _check_file(shown: Path, path: Path, title: str, is_ours: Recogniser) -> None:
    if path.is_symlink() or (path.exists() and not path.is_file()):
        what = "a symbolic link" if path.is_symlink() else "not a file"
        raise OutputFolderError(f"{shown}: exists and is {what}; choose a new file for {title}")
    refuse_a_path_inside_an_output(shown, path)
    if not path.exists():
        return
    try:
        ours = path.stat().st_size <= MAX_MAIN_FILE_BYTES and is_ours(path.read_bytes())
    except (OSError, ValueError):  # ValidationError and JSONDecodeError are ValueErrors
        ours = False
    if not ours:
        raise OutputFolderError(
            f"{shown}: exists and is not {title} written by nnd-suites; nothing was written. "
            f"Choose a new file name (an earlier file of {title} is replaced)"
        )


def check_output_file(out: str | Path, title: str, is_ours: Recogniser) -> Path:
    """Fail before any work when ``out`` cannot receive a file of ``title``: it must be new or
    an earlier output of the same writer (``is_ours`` recognises its bytes); a folder, a
    symbolic link or anyone else's file is refused. The file-level twin of
    :func:`check_output_folder`."""
    _check_file(Path(out), real_target(out), title, is_ours)
    return Path(out)


def write_output_file(out: str | Path, text: str, title: str, is_ours: Recogniser) -> Path:
    """Write ``text`` to ``out`` atomically, only over a file ``is_ours`` recognises (checked
    again under the writer's lock, just before the rename); returns ``out``."""
    shown, path = Path(out), real_target(out)
    _check_file(shown, path, title, is_ours)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
        _check_file(shown, path, title, is_ours)
    return shown


def _schema_titled(title: object) -> Recogniser:
    def is_ours(data: bytes) -> bool:
        schema = json.loads(data)
        return (
            isinstance(schema, dict)
            and schema.get("$schema") == JSON_SCHEMA_DIALECT
            and schema.get("title") == title
        )

    return is_ours


def write_schema_files(folder: str | Path, schemas: Mapping[str, Mapping]) -> list[Path]:
    """Write each JSON Schema (file name -> schema) into ``folder``, every file checked before
    any is written: a file of that name is replaced only when it is a JSON Schema of the same
    title (an earlier ``nnd-suites schema``), never a file of the user's."""
    folder = Path(folder)
    titles = {
        name: f"the JSON Schema {schema.get('title', name)!s}" for name, schema in schemas.items()
    }
    for name, schema in schemas.items():
        check_output_file(folder / name, titles[name], _schema_titled(schema.get("title")))
    return [
        write_output_file(
            folder / name,
            json.dumps(schema, indent=2) + "\n",
            titles[name],
            _schema_titled(schema.get("title")),
        )
        for name, schema in schemas.items()
    ]
