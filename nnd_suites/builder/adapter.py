"""The Adapter base class: one annotation source in, groups of annotated candidates out."""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from nnd_suites.builder.adapter_folders import how_to_load, loaded_from
from nnd_suites.errors import PluginError, TemplateError
from nnd_suites.infra.validation import NonBlank, StrictModel
from nnd_suites.plugins.params import parse_params
from nnd_suites.plugins.plugin import Plugin
from nnd_suites.plugins.registry import Registry
from nnd_suites.quality_map import QualityMap
from nnd_suites.records.groups import Group
from nnd_suites.records.judgments import JudgedGroup
from nnd_suites.records.templates import check_template
from nnd_suites.sources import ReadLog

AnnotationType = Literal["likert", "hierarchical", "single_label", "graded", "numeric", "pairwise"]
#: Loose shape checks: a reviewer still reads the values, these catch typos and placeholders.
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8})*")
SPDX_EXPRESSION = re.compile(r"[A-Za-z0-9.+-]+( (AND|OR|WITH) [A-Za-z0-9.+-]+)*")
EXTRA_NAME = re.compile(r"[a-z0-9]+([-_.][a-z0-9]+)*")


class AdapterMetadata(StrictModel):
    """What a dataset card and a reviewer need to know about an annotation source."""

    task: NonBlank = Field(description="e.g. question generation, summarization")
    languages: list[str] = Field(min_length=1, description="BCP-47 codes, e.g. ['en']")
    annotation_type: AnnotationType
    license: str = Field(min_length=1, description="license of the annotation source (SPDX id)")
    citation: NonBlank = Field(description="BibTeX of the source annotations")
    source_urls: list[str] = Field(min_length=1)
    description: NonBlank
    extras: list[str] = Field(
        default_factory=list, description="pip extras a heavy dependency of this adapter needs"
    )

    @property
    def summary(self) -> str:
        """One line for listings, like every plugin kind's: derived, so manifests and dataset
        cards that record this model are unchanged."""
        return f"{self.annotation_type}: {self.task}"

    @field_validator("languages")
    @classmethod
    def _bcp47(cls, codes: list[str]) -> list[str]:
        bad = [code for code in codes if not LANGUAGE_CODE.fullmatch(code)]
        if bad:
            raise ValueError(f"not BCP-47 language codes: {bad} (e.g. 'en', 'de', 'zh-Hant')")
        return codes

    @field_validator("license")
    @classmethod
    def _spdx(cls, value: str) -> str:
        if not SPDX_EXPRESSION.fullmatch(value):
            raise ValueError(f"{value!r} is not an SPDX license id or expression (e.g. 'MIT')")
        return value

    @field_validator("source_urls")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        bad = [url for url in urls if not url.startswith(("https://", "http://"))]
        if bad:
            raise ValueError(f"source URLs must be http(s) URLs: {bad}")
        return urls

    @field_validator("extras")
    @classmethod
    def _extras(cls, names: list[str]) -> list[str]:
        bad = [name for name in names if not EXTRA_NAME.fullmatch(name)]
        if bad:
            raise ValueError(
                f"not pip extra names: {bad}; declare the heavy dependency as an extra in "
                "pyproject.toml and name it here"
            )
        return names


class NoOptions(StrictModel):
    pass  # an adapter without options refuses any given (no docstring: none in its schema)


class Adapter(Plugin, ABC):
    """Read one annotation source and yield :class:`~nnd_suites.records.groups.Group` objects.

    Subclasses declare everything else as class attributes; the registry validates them.
    """

    version: ClassVar[str] = "1.0.0"
    quality_map: ClassVar[str]
    context_fields: ClassVar[tuple[str, ...]]
    default_template: ClassVar[str]
    #: Other renderings of the context, by model family (paper's reference implementation).
    templates: ClassVar[dict[str, str]] = {}
    #: Fields of each pair's ``breakdown`` (pass rates are also reported per value).
    breakdown_fields: ClassVar[tuple[str, ...]] = ()
    #: File name in the adapter's ``data/`` folder read when no source is given.
    default_source: ClassVar[str | None] = None
    #: ``"folder"``: ``read`` gets a folder (``--source`` a folder, or a local or remote archive
    #: of one). Every file read through the shared readers (or ``log.note_file``) is hashed into
    #: the manifest.
    source_kind: ClassVar[Literal["file", "folder"]] = "file"
    #: Keep empty candidate texts: only for sources where people judged an empty output.
    allow_empty_candidates: ClassVar[bool] = False
    #: Context fields whose empty value is real (an empty suffix: the cursor at the file's end);
    #: a group with any other context field empty makes no tests (counted).
    optional_context_fields: ClassVar[tuple[str, ...]] = ()
    metadata: ClassVar[AdapterMetadata]
    Options: ClassVar[type[BaseModel]] = NoOptions
    #: One harness case: the fixture and its expected statistics (nnd_suites.scaffold.harness
    #: builds it). The file names no adapter: the one adapter of its folder owns it.
    examples_key: ClassVar[str] = "adapter"
    examples_file: ClassVar[str] = "fixtures/expected_stats.json"
    min_examples: ClassVar[int] = 1
    #: "class" (an Adapter subclass) or "declarative" (an adapters/NAME/source.yaml)
    definition: ClassVar[str] = "class"
    #: a file that declares an adapter with no Python (nnd_suites.declarative)
    declaration_file: ClassVar[str] = "source.yaml"

    def __init__(self, **options: Any) -> None:
        self.options = parse_params("adapter", self.name, self.Options, options)

    @abstractmethod
    def read(self, path: Path, log: ReadLog) -> Iterator[Group] | Iterator[JudgedGroup]:
        """Yield the groups of the source at ``path`` (a file, or a folder for ``source_kind =
        "folder"``); report skips and bad rows to ``log``. A pairwise source (its quality map has
        a ``pairwise`` rule) yields :class:`~nnd_suites.records.judgments.JudgedGroup` objects
        instead."""

    def check_quality_map(self, quality_map: QualityMap) -> None:
        """Refuse, before the source is read, a map this adapter's groups cannot be judged by.
        A class adapter says nothing here (its groups are checked as they come); a declared
        source knows whether it gives ratings or judged pairs."""

    @classmethod
    def examples_in(cls, folder: Path) -> list[dict[str, Any]]:
        """None named: expected statistics name no adapter, so none can name a wrong one."""
        return []

    @classmethod
    def examples(cls) -> list[dict[str, Any]]:
        """The adapter's one harness case: its expected statistics, if the file is there."""
        path = cls.folder() / cls.examples_file
        return [json.loads(path.read_text(encoding="utf-8"))] if path.is_file() else []

    @classmethod
    def default_source_path(cls) -> Path | None:
        """The shipped copy of the source, installed beside the adapter's module."""
        return None if cls.default_source is None else cls.folder() / "data" / cls.default_source

    @classmethod
    def all_templates(cls) -> dict[str, str]:
        return {"default": cls.default_template, **cls.templates}


def validate_adapter(cls: type[Adapter]) -> None:
    where = f"adapter {getattr(cls, 'name', cls.__name__)} ({cls.__module__})"
    for attribute in ("quality_map", "context_fields", "default_template", "metadata"):
        if not hasattr(cls, attribute):
            raise PluginError(f"{where}: missing class attribute {attribute!r}")
    if not isinstance(cls.metadata, AdapterMetadata):
        raise PluginError(f"{where}: 'metadata' must be an AdapterMetadata")
    try:  # again, in case it was built without validation (model_construct, later edits)
        AdapterMetadata.model_validate(cls.metadata.model_dump())
    except ValidationError as exc:
        raise PluginError(f"{where}: invalid metadata: {exc}") from exc
    for family, template in cls.all_templates().items():
        try:
            check_template(template, cls.context_fields, f"{where}, template {family!r}")
        except TemplateError as exc:
            raise PluginError(str(exc)) from exc


def _folder_here_not_loaded(name: str) -> str:
    """An unknown adapter whose folder is in ``./adapters`` (written by ``new-adapter`` outside
    the installed clone): say so and how to load it."""
    here = Path.cwd()
    folder = here / "adapters" / name
    if not folder.is_dir() or loaded_from(here, ADAPTERS.builtin_folders()):
        return ""
    return (
        f"./adapters/{name} exists in {here} but is not loaded (this nnd-suites loads its "
        f"adapters from {', '.join(map(str, ADAPTERS.builtin_folders()))}); to load it, "
        f"{how_to_load(here)}"
    )


ADAPTERS: Registry[Adapter] = Registry(
    "adapter",
    "nnd_suites.adapters",
    base=lambda: Adapter,
    builtin_package="nnd_suites.adapters",
    validate=validate_adapter,
    unknown_hint=_folder_here_not_loaded,
)
#: ``@register_adapter("name")`` on an Adapter subclass registers it.
register_adapter = ADAPTERS.register


def get_adapter(name: str) -> type[Adapter]:
    return ADAPTERS.get(name)


def shipping_their_source() -> dict[str, bool]:
    """Every registered adapter, in registry order: whether its annotation source ships with
    nnd-suites (what ``all`` and ``build --all`` build). Each source is looked up once: it is a
    file-system lookup."""
    return {name: cls.default_source_path() is not None for name, cls in ADAPTERS.items()}
