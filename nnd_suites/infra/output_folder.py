"""One writer for every folder nnd-suites writes: it replaces only what it wrote, and atomically.

Every output folder (a suite, an export config, an evaluation report, a leaderboard, a comparison,
a verification, a placement, a robustness report) is written through :func:`output_folder`:

- **guard**: an existing folder is replaced only when it is empty or holds the same kind of output
  (a typed check: our marker file parsed with :class:`FolderMarker` naming the kind, or, for
  folders written before markers and for suites, the kind's main file parsed with its model)
  and holds nothing its writer did not put there (the marker lists every path written; a suite's
  files are its writer's layout); anything else stops with an
  :class:`~nnd_suites.errors.OutputFolderError` naming what is there. ``--out .`` and parents of
  the current folder are refused (the swap would pull the folder from under the shell);
- **swap**: the new folder is written beside the target and swapped in at once
  (:func:`nnd_suites.infra.atomic.atomic_directory`), so a killed write leaves the old or the new
  folder. Files inside it are written plainly: no reader sees the folder before the swap.

The guard runs in :func:`output_folder` just before the swap (the folder may have changed during
the work); a command that should fail before its work calls :func:`check_output_folder` first.

Report folders share one layout, written by :func:`write_report_files`::

    <kind>.json          the report (its pydantic model)
    <kind>.schema.json   its JSON Schema (also shipped in nnd_suites/schemas/: output_kinds.py)
    <kind>.md            the report for people
    *.png                its charts
    nnd-suites-output.json  the marker: which kind of folder this is, which version wrote it,
                            and every path it wrote
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from fnmatch import fnmatch
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from nnd_suites import __version__
from nnd_suites.errors import NNDError, OutputFolderError
from nnd_suites.infra.atomic import atomic_directory, real_target
from nnd_suites.infra.formatting import plural
from nnd_suites.infra.output_kinds import KINDS, OutputKind, kind_of, model_schema
from nnd_suites.infra.validation import StrictModel

MARKER_FILE = "nnd-suites-output.json"
#: A main file larger than this is not parsed to recognise a folder (it is then not ours).
MAX_MAIN_FILE_BYTES = 512 * 2**20
#: A marker larger than this is not ours (it lists every path of its folder: a few KB).
MAX_MARKER_BYTES = 16 * 2**20


#: A report's charts: role (the key in what the writers return) -> (file name, draw(path)).
Charts = Mapping[str, tuple[str, Callable[[Path], object]]]


class FolderMarker(StrictModel):
    """What marks a folder as written by nnd-suites, and as which kind of output."""

    kind: str
    nnd_suites_version: str
    files: list[str] | None = Field(
        default=None,
        description="every path the writer put in the folder (relative, '/'-separated; folders "
        "end in '/'): a later run replaces the folder only when it holds nothing else (None: "
        "written before inventories, by nnd-suites < 0.9)",
    )


# ------------------------------------------------------------------ recognition
def _read_marker(folder: Path) -> FolderMarker | None:
    path = folder / MARKER_FILE
    if not path.is_file() or path.stat().st_size > MAX_MARKER_BYTES:
        return None
    try:
        return FolderMarker.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None


def holds_kind(folder: str | Path, kind: str) -> bool:
    """Whether ``folder`` is an output of ``kind``: its marker names the kind, or (no marker) its
    main file parses with the kind's model."""
    spec, folder = kind_of(kind), Path(folder)
    if not folder.is_dir() or folder.is_symlink():
        return False
    marker = _read_marker(folder)
    if marker is not None:
        return marker.kind == spec.name
    # a damaged or foreign marker: not ours to judge
    return not (folder / MARKER_FILE).exists() and _main_file_parses(folder, spec)


def held_kind(folder: Path) -> OutputKind | None:
    """The kind of output ``folder`` is (:func:`holds_kind` of each kind, its marker read once),
    or None."""
    if not folder.is_dir() or folder.is_symlink():
        return None
    marker = _read_marker(folder)
    if marker is not None:
        return KINDS.get(marker.kind)
    if (folder / MARKER_FILE).exists():
        return None
    return next((spec for spec in KINDS.values() if _main_file_parses(folder, spec)), None)


def other_kind(folder: Path, kind: str, instead: str) -> str | None:
    """``FOLDER: a verify report (verify.json), not an evaluation report; INSTEAD`` when
    ``folder`` is an output of another kind than ``kind`` (given where ``kind`` was wanted);
    None when it is of no kind nnd-suites writes."""
    held = held_kind(folder)
    if held is None or held.name == kind:
        return None
    return f"{folder}: {held.title} ({held.main_file}), not {kind_of(kind).title}; {instead}"


def _main_file_parses(folder: Path, spec: OutputKind) -> bool:
    main = folder / spec.main_file
    if not main.is_file() or main.is_symlink() or main.stat().st_size > MAX_MAIN_FILE_BYTES:
        return False
    try:
        spec.reader()(folder)  # suites: the manifest's own reader (format version checked)
    except (OSError, ValueError, NNDError):  # ValidationError is a ValueError
        return False
    return True


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError as exc:
        raise OutputFolderError(
            f"{folder}: cannot list the folder ({exc.strerror or exc}); choose another folder"
        ) from exc


def first_five(names: list[str]) -> str:
    """``a, b, c, d, e and 3 more``: the names a refusal shows."""
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def shown_name(name: str) -> str:
    """A file name as a refusal shows it: as it is only when printable (no terminal escape
    sequences from a folder), else as Python's ``ascii`` writes it."""
    return name if name.isprintable() else ascii(name)


def _describe(folder: Path) -> str:
    entries = sorted(shown_name(e.name) for e in _entries(folder))
    shown = first_five(entries)
    marker = _read_marker(folder)
    what = f" (an nnd-suites {marker.kind} folder)" if marker else ""
    return f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}{what}: {shown}"


def check_output_folder(out: str | Path, kind: str) -> Path:
    """Fail before any work when ``out`` cannot receive an output of ``kind``.

    ``out`` must be new, empty, or an earlier output of the same kind (replaced as a whole)."""
    _check(Path(out), real_target(out), kind, None)
    return Path(out)


def _check(shown: Path, out: Path, kind: str, carry: Mapping[str, str] | None) -> None:
    """:func:`check_output_folder` on ``out``, the path :func:`real_target` resolved (the one the
    swap replaces), named in messages as the user gave it (``shown``); ``carry`` (sub-folder ->
    kind) names sub-folders that may already be there, written earlier by the same command, which
    the new output keeps (robustness.write_report keeps the evaluation/ its report was computed
    from)."""
    spec = kind_of(kind)
    _refuse_a_path_that_is_not_utf8(shown, out)
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        what = "a symbolic link" if out.is_symlink() else "not a folder"
        raise OutputFolderError(
            f"{shown}: exists and is {what}; choose a new folder for {spec.title}"
        )
    _refuse_a_folder_that_holds_the_current_one(shown, out)
    refuse_a_path_inside_an_output(shown, out)
    entries = _entries(out) if out.is_dir() else []
    if entries and holds_kind(out, kind):
        foreign = _not_written_by_us(out, spec)
        if foreign:
            raise OutputFolderError(
                f"{shown}: {spec.title} written by nnd-suites, but it also holds "
                f"{plural(len(foreign), 'entry', 'entries')} nnd-suites did not write there: "
                f"{first_five(foreign)}; nothing was written or deleted. Move them out of the "
                f"folder, or choose a new folder (an earlier folder of {spec.title} is replaced "
                "as a whole)"
            )
    elif entries:
        carried = carry or {}
        if not all(e.name in carried and holds_kind(e, carried[e.name]) for e in entries):
            raise OutputFolderError(
                f"{shown}: holds {_describe(out)}, which is not {spec.title} written by "
                f"nnd-suites; nothing was written or deleted. Choose a new or empty folder "
                f"(an earlier folder of {spec.title} is replaced as a whole)"
            )
    blocking = next((p for p in [out, *out.parents] if p.exists() and not p.is_dir()), None)
    if blocking is not None:  # mkdir's "File exists" would not say which
        raise OutputFolderError(
            f"{shown}: cannot write there: {blocking} is a file, not a folder; choose a folder "
            "path (nothing was written)"
        )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out.parent):
            pass
    except OSError as exc:
        raise OutputFolderError(
            f"{shown}: cannot write there ({exc.strerror or exc}); choose a writable folder"
        ) from exc


def _refuse_a_path_that_is_not_utf8(shown: Path, out: Path) -> None:
    """A byte that is not UTF-8 in a folder's name (Python holds it as a lone surrogate): the
    parquet files of a suite or a report cannot be written under it (pyarrow's traceback)."""
    try:
        str(out).encode("utf-8")
    except UnicodeEncodeError:
        raise OutputFolderError(
            f"{str(shown)!a}: the path {str(out)!a} is not valid UTF-8, so the files of "
            "an output cannot be written under it; choose a folder whose path is UTF-8"
        ) from None


def _levels_above(target: Path, folder: str | Path) -> int | None:
    """How many levels ``target`` sits above ``folder`` (0: it is that folder), None when it
    does not hold it. Folders are compared as the kernel finds them (device and inode), so a
    link, ``..``, or a name in another case on a case-insensitive file system is the folder."""
    try:
        chain = [Path(folder), *Path(folder).resolve(strict=True).parents]
    except OSError:  # no such folder (a deleted current folder, builtin:NAME): it holds nothing
        return None
    for level, held in enumerate(chain):
        with contextlib.suppress(OSError):  # either is missing: not the same folder
            if os.path.samefile(target, held):
                return level
    return None


def _refuse_a_folder_that_holds_the_current_one(shown: Path, out: Path) -> None:
    """``--out .`` (or a parent of the current folder): the swap would pull the folder away from
    under the shell standing in it."""
    level = _levels_above(out, ".")  # None when the current folder was deleted
    if level is not None:
        what = "the current folder" if level == 0 else "a parent of the current folder"
        raise OutputFolderError(
            f"{shown}: is {what}, and an output folder is replaced as a whole; give a new "
            f"sub-folder instead (e.g. --out {shown / 'run'})"
        )


def refuse_replacing_an_input(out: str | Path, source: str | Path, what: str, fix: str) -> None:
    """Stop before any work when writing ``out`` would replace ``source``, the folder a command
    reads its input from (``what``: "the input suite 'x'"): ``out`` is that folder, under any
    name, or holds it. A ``source`` that is no folder (``builtin:NAME``, ``hub:...``) is left."""
    level = _levels_above(real_target(out), source)
    if level is not None:
        relation = "the folder" if level == 0 else "a parent folder"
        raise OutputFolderError(
            f"{out}: {relation} of {what} ({source}), which the output would replace"
            f"{' with it' if level else ''}; nothing was written: {fix}"
        )


def refuse_a_path_inside_an_output(shown: Path, out: Path) -> None:
    """An output inside a folder nnd-suites writes would break that folder: a suite's files are
    all read by ``datasets.load_dataset``, and a report folder is replaced as a whole only while
    it holds nothing its writer did not put there."""
    for folder in out.parents:
        spec = held_kind(folder)
        if spec is not None and not spec.marked:
            raise OutputFolderError(
                f"{shown}: is inside the suite folder {folder}, whose files `datasets` would "
                "then read with the suite's own (the suite would no longer be valid); nothing "
                "was written. Choose a folder outside it"
            )
        if spec is not None:
            raise OutputFolderError(
                f"{shown}: is inside {folder}, {spec.title} written by nnd-suites, which "
                "replaces it as a whole only while it holds nothing else; nothing was written. "
                "Choose a folder outside it"
            )


def inventory(folder: Path) -> list[str]:
    """Every path under ``folder`` but the marker: relative, '/'-separated, folders ending in
    '/' (symbolic links are listed, never followed)."""
    found = []
    for root, folders, files in os.walk(folder):
        here = Path(root).relative_to(folder)
        found += [(here / name).as_posix() + "/" for name in folders]
        found += [(here / name).as_posix() for name in files]
    return sorted(path for path in found if path != MARKER_FILE)


def _not_written_by_us(folder: Path, spec: OutputKind) -> list[str]:
    """What an earlier output of ``spec`` holds that its writer did not put there (a foreign
    folder is named once, not file by file)."""
    if not spec.marked:  # suites: their writer's layout, files only
        return [
            shown_name(entry.name) + ("/" if entry.is_dir() else "")
            for entry in sorted(_entries(folder))
            if entry.is_dir() or not any(fnmatch(entry.name, name) for name in spec.layout)
        ]
    marker = _read_marker(folder)
    if marker is None or marker.files is None:  # written before inventories: replaced whole
        return []
    written, foreign = set(marker.files), []
    for path in inventory(folder):
        if path not in written and not any(path.startswith(f) for f in foreign if f[-1] == "/"):
            foreign.append(shown_name(path))
    return foreign


def mark_folder(folder: Path, kind: str, files: list[str] | None = None) -> None:
    """Write the marker that lets a later run replace ``folder`` (a report sub-folder too) when
    it holds only ``files`` (see :func:`inventory`); ``folder`` is not yet swapped in."""
    marker = FolderMarker(kind=kind_of(kind).name, nnd_suites_version=__version__, files=files)
    (folder / MARKER_FILE).write_text(marker.model_dump_json() + "\n", encoding="utf-8")


@contextlib.contextmanager
def output_folder(
    out: str | Path, kind: str, *, carry: Mapping[str, str] | None = None
) -> Iterator[Path]:
    """Yield an empty temporary folder to fill; it replaces ``out`` only when the block succeeds
    and the guard, run just before the swap, lets it (nothing foreign is ever replaced).

    Carried sub-folders are copied in, not moved, so a killed write leaves the old folder whole.
    ``out`` is resolved once (:func:`real_target`): the guard checks the folder the swap replaces.
    """
    spec, shown = kind_of(kind), Path(out)
    out = real_target(shown)
    _refuse_a_path_that_is_not_utf8(shown, out)
    with atomic_directory(out) as tmp:
        if spec.marked:
            mark_folder(tmp, kind)
        for name, sub_kind in (carry or {}).items():
            if holds_kind(out / name, sub_kind):
                shutil.copytree(out / name, tmp / name, symlinks=True)
        yield tmp
        if spec.marked:  # what a later run may replace: exactly what this one wrote
            mark_folder(tmp, kind, files=inventory(tmp))
        _check(shown, out, kind, carry)


def write_report_files(
    folder: Path,
    kind: str,
    report: BaseModel,
    markdown: str,
    charts: Charts | None = None,
) -> dict[str, Path]:
    """The one layout of a report folder: ``<kind>.json``, ``<kind>.schema.json``, ``<kind>.md``
    and each chart (role -> (file name, draw(path))), written into ``folder`` (inside a temporary
    folder of :func:`output_folder`: plain files); role -> path."""
    spec = kind_of(kind)
    stem = spec.main_file.removesuffix(".json")
    files = {
        "json": (spec.main_file, report.model_dump_json(indent=2) + "\n"),
        "schema": (f"{stem}.schema.json", json.dumps(model_schema(type(report)), indent=2) + "\n"),
        "markdown": (f"{stem}.md", markdown if markdown.endswith("\n") else markdown + "\n"),
    }
    folder.mkdir(parents=True, exist_ok=True)
    if spec.marked:
        mark_folder(folder, kind)
    written = {}
    for role, (name, text) in files.items():
        (folder / name).write_text(text, encoding="utf-8")
        written[role] = folder / name
    for role, (name, draw) in (charts or {}).items():
        draw(folder / name)
        written[role] = folder / name
    return written


def write_report_folder(
    out: str | Path,
    kind: str,
    report: BaseModel,
    markdown: str,
    charts: Charts | None = None,
    extra: Callable[[Path], Mapping[str, Path]] | None = None,
    carry: Mapping[str, str] | None = None,
) -> dict[str, Path]:
    """Write a whole report folder through the guard and the swap; role -> final path.

    ``extra(folder)`` writes what else the folder holds (outcome files, sub-reports) first."""
    out = Path(out)
    with output_folder(out, kind, carry=carry) as tmp:
        written = dict(extra(tmp)) if extra is not None else {}
        written |= write_report_files(tmp, kind, report, markdown, charts)
    return {role: out / os.path.relpath(path, tmp) for role, path in written.items()}
