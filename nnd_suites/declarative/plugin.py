"""A folder with a ``source.yaml`` is an adapter: one class made from the declaration and
registered by the adapter registry, as a decorated class is.

The registry calls :func:`register_declared` on every module it imports (the built-in adapter
packages, and each module a third-party package names in the ``nnd_suites.adapters`` entry-point
group): a package whose folder holds ``source.yaml`` registers the adapter it declares.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import ClassVar

from nnd_suites.builder.adapter import Adapter, register_adapter
from nnd_suites.declarative.loading import Declared, load_declaration
from nnd_suites.declarative.model import DECLARATION_FILE, MAP_SUFFIXES
from nnd_suites.declarative.reader import read_declared
from nnd_suites.errors import DeclarationError, SourceFormatError, TemplateError
from nnd_suites.infra.reading import sha256_file
from nnd_suites.quality_map import QualityMap
from nnd_suites.records.groups import Group
from nnd_suites.records.judgments import JudgedGroup
from nnd_suites.records.templates import check_template
from nnd_suites.sources import ReadLog

#: where a module keeps the adapter its source.yaml declared (a second import registers nothing)
DECLARED_ATTRIBUTE = "DeclaredSource"


class DeclarativeAdapter(Adapter):
    """The adapter of one ``source.yaml``; subclasses are made by :func:`declared_adapter`."""

    definition: ClassVar[str] = "declarative"
    declared: ClassVar[Declared]

    @classmethod
    def declaration_path(cls) -> Path:
        return cls.declared.path

    @classmethod
    def folder(cls) -> Path:
        return cls.declared.path.parent  # where its data/, fixtures and README are

    def read(self, path: Path, log: ReadLog) -> Iterator[Group] | Iterator[JudgedGroup]:
        spec = self.declared.spec.file
        if spec.member is not None:  # a folder: the archive --source named, extracted
            path = _member(path, spec.member, self.declared.at("file", "member"))
        shipped = self.default_source_path()
        if shipped is not None and path == shipped:
            _linked_inside(shipped, self.folder(), self.declared.at("file", "shipped"))
        if spec.sha256 and shipped is not None and path.resolve() == shipped.resolve():
            digest = sha256_file(path)
            if digest != spec.sha256:
                raise DeclarationError(
                    f"{self.declared.at('file', 'sha256')}: the shipped {path.name} has sha256 "
                    f"{digest}, not the declared one; ship the published file unmodified"
                )
        return read_declared(self.declared, path, log)

    def check_quality_map(self, quality_map: QualityMap) -> None:
        """Ratings need a map that rates and comparisons a map that judges pairs: the other
        kind is this declaration's fault, named at its line before the file is read."""
        spec, where = self.declared.spec, f"quality map {quality_map.name} ({quality_map.origin})"
        if spec.comparisons is not None and quality_map.pairwise is None:
            raise DeclarationError(
                f"{self.declared.at('comparisons')}: the source declares comparisons (judged "
                f"pairs), but {where} has no 'pairwise' rule saying what a verdict means; "
                "name a map with one in quality_map, or declare candidates if rows are rated"
            )
        if spec.candidates is not None and quality_map.pairwise is not None:
            raise DeclarationError(
                f"{self.declared.at('candidates')}: the source declares candidates (ratings), "
                f"but {where} judges pairs (a 'pairwise' rule); name a map with a rating_rule "
                "in quality_map, or declare comparisons if rows judge two responses"
            )


def _linked_inside(path: Path, folder: Path, declared_at: str) -> None:
    """A file of the adapter's ``folder`` that is a link to a file outside it is refused: it is
    there on its author's machine only (the declaration already refuses '..' and '/')."""
    target = path.resolve()
    if not target.is_relative_to(folder.resolve()):
        raise DeclarationError(
            f"{declared_at}: {path} links to {target}, outside the adapter's folder "
            f"{folder}: copy the file into the folder instead"
        )


def _member(folder: Path, member: str, declared_at: str) -> Path:
    """The file ``member`` names in ``folder``: the extracted archive, whose single top folder
    is where its files start (extraction hands that folder on), so ``release/data/t.csv`` and
    ``data/t.csv`` both name release/data/t.csv of an archive whose one top folder is
    release/."""
    parts = Path(member).parts
    found = [folder / member]
    if len(parts) > 1 and parts[0] == folder.name:  # written with the archive's top folder
        found.append(folder.joinpath(*parts[1:]))
    for path in found:
        if path.is_file():
            return path
    inside = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    shown = ", ".join(inside[:10]) + (f" (and {len(inside) - 10} more)" if len(inside) > 10 else "")
    raise SourceFormatError(
        str(folder),
        None,
        f"no member {member!r} ({declared_at}); the files there are: {shown or 'none'}",
        "pass the release's archive or folder, or fix file.member",
    )


def declared_adapter(module_name: str, folder: Path) -> type[DeclarativeAdapter]:
    """The adapter class ``folder/source.yaml`` declares, as if defined in ``module_name``."""
    declared = load_declaration(folder / DECLARATION_FILE)
    spec = declared.spec
    for keys, template in [(("template",), spec.template)] + [
        (("templates", family), text) for family, text in spec.templates.items()
    ]:
        try:  # here, where the file and line are known (the registry checks it again)
            check_template(template, tuple(spec.group.context), declared.at(*keys))
        except TemplateError as exc:
            raise DeclarationError(str(exc)) from None
    quality_map = spec.quality_map
    if quality_map.endswith(MAP_SUFFIXES):  # a map beside the declaration
        _linked_inside(folder / quality_map, folder, declared.at("quality_map"))
        quality_map = str(folder / quality_map)
    attributes = {
        "__module__": module_name,
        "__doc__": spec.metadata.description,
        "declared": declared,
        "quality_map": quality_map,
        "context_fields": tuple(spec.group.context),
        "optional_context_fields": tuple(spec.group.may_be_empty),
        "default_template": spec.template,
        "templates": dict(spec.templates),
        "default_source": spec.file.shipped,
        "source_kind": "folder" if spec.file.member else "file",
        "metadata": spec.metadata,
    }
    return type(DECLARED_ATTRIBUTE, (DeclarativeAdapter,), attributes)


def register_declared(
    module: ModuleType, register: Callable[[str], Callable[[type], type]] = register_adapter
) -> bool:
    """Register (with ``register``, the adapter registry's decorator) the adapter a package's
    ``source.yaml`` declares; whether it declares one."""
    file = getattr(module, "__file__", None)
    if file is None or Path(file).name != "__init__.py":
        return False
    folder = Path(file).parent
    if not (folder / DECLARATION_FILE).is_file():
        return False
    if DECLARED_ATTRIBUTE not in vars(module):
        cls = declared_adapter(module.__name__, folder)
        register(cls.declared.spec.name)(cls)
        setattr(sys.modules[module.__name__], DECLARED_ATTRIBUTE, cls)
    return True
