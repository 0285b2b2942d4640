"""The catalogue's entries, read from ``catalogue.yaml`` (or a file of the same shape): each one
a suite, the adapter that builds it, where its source comes from and the figures it must give.
Task, languages, license and citation are the adapter's own metadata, never repeated here."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from nnd_suites.builder.adapter import ADAPTERS, AdapterMetadata
from nnd_suites.errors import NNDError
from nnd_suites.infra.reading import DataFileError, read_yaml_file, sha256_file
from nnd_suites.infra.strict_yaml import StrictYAML
from nnd_suites.infra.validation import StrictModel

CATALOGUE_FILE = Path(__file__).with_name("catalogue.yaml")
SHA256 = r"^[0-9a-f]{64}$"


class CatalogueError(NNDError):
    """The catalogue file is malformed, or a built suite does not give a declared figure."""


class SourceCopy(StrictModel):
    """A source that does not ship with nnd-suites: where to get it and how to recognise it."""

    path: str = Field(
        min_length=1,
        description="the file (or folder) relative to a source folder, e.g. wmt23_mqm or "
        "simpeval/simpeval_past.csv",
    )
    sha256: str = Field(pattern=SHA256, description="sha256 of the file (of check_file)")
    check_file: str | None = Field(
        None, description="for a folder source: the file inside it whose sha256 is given"
    )
    url: str = Field(min_length=1, description="where to download it")
    license_note: str = Field(min_length=1, description="why it is not shipped")


class Figures(StrictModel):
    """What the build must give: the test count, counts per value of a breakdown field, and the
    published figure it reproduces (in words)."""

    tests: int = Field(ge=1)
    groups: int | None = Field(None, ge=1, description="context groups read (rated inputs)")
    breakdowns: dict[str, dict[str, int]] = Field(default_factory=dict)
    published: str = Field(min_length=1)


class CatalogueEntry(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    adapter: str
    options: dict[str, Any] = Field(default_factory=dict)
    task_type: str = Field(min_length=1, description="the column the catalogue groups by")
    judgment: Literal[
        "single label", "graded credit", "error spans", "likert", "ratings", "pairwise", "votes"
    ]
    source: Literal["shipped"] | SourceCopy
    #: the published file has malformed rows: record them (with line numbers), build the rest
    skip_malformed: bool = False
    figures: Figures

    @property
    def shipped(self) -> bool:
        return self.source == "shipped"

    def metadata(self) -> AdapterMetadata:
        return ADAPTERS.get(self.adapter).metadata


def load_catalogue(path: str | Path = CATALOGUE_FILE) -> list[CatalogueEntry]:
    """Every entry of the catalogue at ``path``; a malformed file or entry, an unknown adapter
    or a name used twice is a :class:`CatalogueError` naming the file and the entry."""
    try:
        data = read_yaml_file(path, "catalogue", loader=StrictYAML)
    except DataFileError as exc:
        raise CatalogueError(str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("suites"), list):
        raise CatalogueError(f"{path}: expected a mapping with a list 'suites'")
    entries, seen = [], set()
    for index, raw in enumerate(data["suites"]):
        where = f"{path}: suite #{index + 1}" + (
            f" ({raw['name']})" if isinstance(raw, dict) and "name" in raw else ""
        )
        try:
            entry = CatalogueEntry.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"])
            raise CatalogueError(f"{where}: {field}: {first['msg']}") from None
        if entry.adapter not in ADAPTERS.names():
            raise CatalogueError(
                f"{where}: no adapter {entry.adapter!r} (known: {', '.join(ADAPTERS.names())})"
            )
        if entry.name in seen:
            raise CatalogueError(f"{where}: the name {entry.name!r} is used twice")
        seen.add(entry.name)
        entries.append(entry)
    return entries


def how_to_build(name: str) -> str:
    """How to build the catalogue suite ``name`` when it was given where an adapter or a
    suite is asked for (``build gpt3_summ_bbc``: the adapter is gpt3_summ with an option);
    '' for a name that is no catalogue suite, or the name of its adapter."""
    entry = next((e for e in load_catalogue() if e.name == name), None)
    if entry is None or entry.name == entry.adapter:
        return ""
    options = "".join(f" --option {key}={value}" for key, value in entry.options.items())
    source = "" if entry.shipped else " --source FILE"
    return (
        f"{name!r} is a suite of the catalogue, built by adapter {entry.adapter!r}"
        f"{' with' + options if options else ''}: `nnd-suites build {entry.adapter}{options}"
        f"{source} --name {name} --out suites/{name}`, then give suites/{name}; or build "
        "every catalogue suite with `nnd-suites build --catalogue --out DIR`"
    )


def locate_source(
    copy: SourceCopy, source_dir: Path | None
) -> tuple[Path | None, list[tuple[Path, str]]]:
    """The source in ``source_dir``: at its declared path, else the first file of its name below
    the folder, used only when its sha256 (of ``check_file`` for a folder) is the declared one;
    and, when there is none, (path, sha256) of the files in ``source_dir`` that bear the
    source's name but not its sha256 (another version of the file, or a damaged download):
    each file is hashed once."""
    others: list[tuple[Path, str]] = []
    if source_dir is None:
        return None, others
    name = Path(copy.path).name
    for candidate in dict.fromkeys([source_dir / copy.path, *sorted(source_dir.rglob(name))]):
        checked = candidate / copy.check_file if copy.check_file else candidate
        if not checked.is_file():
            continue
        sha256 = sha256_file(checked)
        if sha256 == copy.sha256:
            return candidate, []
        others.append((candidate, sha256))
    return None, others
