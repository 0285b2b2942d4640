"""One registry per plugin kind: explicit registration, lazy entries, third-party entry points.

A plugin class registers itself with a decorator that gives its name (and aliases)::

    @register_adapter("quiz_design")
    class QuizDesignAdapter(Adapter): ...

Heavy plugins (the model backends, which import torch) are *lazy entries*, ``name ->
"module:Class"`` plus a one-line summary, imported only when asked for by name, so listing
plugins and building suites never import torch or transformers (the pattern of
lm-evaluation-harness's ``lm_eval/api/registry.py``).

Built-in adapters and transformations are found by importing every module of their package (the
decorators run on import): nothing is listed by hand, and a test fails when a plugin folder
registers nothing. Third-party packages declare an entry point in the registry's group naming a
module (imported, so its decorators run) or a ``module:Class`` (a lazy entry under the entry
point's name).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Generic, TypeVar

from nnd_suites.errors import PluginError, UnknownItemError
from nnd_suites.plugins.provenance import (
    defined_in,
    failure,
    origin_of,
    registers_nothing,
    target_of,
)

T = TypeVar("T")


@dataclass(frozen=True)
class LazyEntry:
    target: str  # "package.module:Class"
    summary: str
    origin: str


class Registry(Generic[T]):
    def __init__(
        self,
        kind: str,
        group: str,
        base: Callable[[], type],
        *,
        builtin_package: str | None = None,
        import_builtins: bool = True,
        validate: Callable[[type], None] | None = None,
        declare: Callable[[ModuleType], bool] | None = None,
        plugins_are_folders: bool = False,
        unknown_hint: Callable[[str], str] | None = None,
    ) -> None:
        # where the built-in plugins live (the harness checks that package); discovery imports
        # it unless they are lazy entries (backends: importing them would load torch)
        self.kind, self.group, self.builtin_package = kind, group, builtin_package
        self.import_builtins = import_builtins
        self._base = base  # a callable, so the base class module may import this one
        self._validate = validate
        # plugins declared as data beside a module (an adapter's source.yaml): registers them
        self._declare = declare
        # each plugin is a folder: the package's own modules (the base class, applying plugins)
        # are not walked, so listing the plugins loads none of what applying them needs
        self.plugins_are_folders = plugins_are_folders
        # what to add to an unknown name's error (an adapter folder here that is not loaded)
        self._unknown_hint = unknown_hint
        self._classes: dict[str, type[T]] = {}
        self._lazy: dict[str, LazyEntry] = {}
        self._aliases: dict[str, str] = {}
        self._origins: dict[str, str] = {}
        self._defined: dict[str, str] = {}  # name -> the file or target registering it
        self._discovered = False
        self._broken: dict[str, str] = {}  # a plugin that failed to import -> where and why

    # ------------------------------------------------------------ registration
    def register(self, name: str, *, aliases: Iterable[str] = ()) -> Callable[[type], type]:
        """Class decorator: register the class under ``name`` (and ``aliases``)."""

        def decorate(cls: type) -> type:
            self._add(cls, name, tuple(aliases), origin_of(cls.__module__))
            return cls

        return decorate

    def add_lazy(
        self, name: str, target: str, *, summary: str, aliases: Iterable[str] = ()
    ) -> None:
        """Register ``module:Class`` under ``name`` without importing it."""
        self._check_name(name, target)
        module, _, attribute = target.partition(":")
        if not module or not attribute:
            raise PluginError(f"{self.kind} {name!r}: lazy target {target!r} is not module:Class")
        origin = origin_of(module)
        self._claim(name, tuple(aliases), origin, target)
        self._lazy[name] = LazyEntry(target, summary, origin)

    def _add(
        self, cls: type, name: str, aliases: tuple[str, ...], origin: str, claimed: bool = False
    ) -> None:
        base = self._base()
        if not (inspect.isclass(cls) and issubclass(cls, base)):
            raise PluginError(f"{origin}: {cls!r} is not a {base.__name__} subclass")
        self._check_name(name, origin)
        lazy = self._lazy.get(name)
        if self._classes.get(name) is cls or (lazy is not None and lazy.target == target_of(cls)):
            claimed = True  # a module imported twice, or a lazy entry's module registering it
        if not claimed:
            self._claim(name, aliases, origin, defined_in(cls))
        cls.name = name  # type: ignore[attr-defined]  # the registered name is the one name
        if self._validate:
            self._validate(cls)
        self._classes[name] = cls

    def _check_name(self, name: str, origin: str) -> None:
        if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
            raise PluginError(
                f"{origin}: a {self.kind} name must be a lower-case identifier, got {name!r}"
            )

    def _claim(self, name: str, aliases: tuple[str, ...], origin: str, where: str) -> None:
        """``where``: the file (or ``module:Class``) registering it, named in a clash, since two
        built-in folders share the origin ``builtin``."""
        for key in (name, *aliases):
            holder = self._holder(key)
            if holder is None:
                continue
            owner = self._aliases.get(key, key)
            held = self._defined[owner]
            # among the project's own folders, one named like the key owns it; a third-party
            # module never takes a built-in's name, whatever its folder
            if Path(where).parent.name == key != Path(held).parent.name and all(
                self._in_builtin_folders(file) for file in (where, held)
            ):
                self._evict(owner, key, where)
                continue
            rename = "one of them"
            if self._origins[owner] == "builtin" != origin:
                rename = f"the one of {origin}: a built-in {self.kind} keeps its name"
            raise PluginError(
                f"{self.kind} {key!r} is registered twice: by {holder} and by {origin} "
                f"(in {where}); rename {rename}"
            )
        self._origins[name] = origin
        self._defined[name] = where
        for alias in aliases:
            self._aliases[alias] = name

    def _evict(self, holder: str, key: str, where: str) -> None:
        """The folder that took ``key`` first (folders load in name order) is the one broken."""
        defined = self._defined.pop(holder)
        folder = Path(defined).parent
        self._broken[folder.name] = (
            f"{self.kind} folder {folder} failed to load: {defined} registers {key!r}, the name of "
            f"the {self.kind} in {where}; rename it there (e.g. its folder's name: {folder.name})"
        )
        for table in (self._classes, self._lazy, self._origins):
            table.pop(holder, None)
        self._aliases = {a: n for a, n in self._aliases.items() if n != holder}

    def _in_builtin_folders(self, where: str) -> bool:
        """Whether ``where`` (a file, or an entry point's ``module:Class``) lies in the folders
        the built-in plugins are loaded from."""
        path = Path(where)
        folders = self.builtin_folders()
        return path.is_absolute() and any(path.resolve().is_relative_to(f) for f in folders)

    def _holder(self, key: str) -> str | None:
        """Where ``key`` (a name or an alias) was registered, if it was."""
        if key in self._origins:
            return f"{self._origins[key]} ({key}, in {self._defined[key]})"
        target = self._aliases.get(key)
        if target is None:
            return None
        return f"{self._origins[target]} (alias of {target}, in {self._defined[target]})"

    # --------------------------------------------------------------- discovery
    def declare_with(self, declare: Callable[[ModuleType], bool]) -> None:
        """Install the hook that registers plugins declared as data beside a module (the
        built-in package installs it when imported, before its modules are walked)."""
        self._declare = declare

    def _discover(self, strict: bool = True) -> None:
        """Import every plugin module; ``strict``: a plugin module that failed to import (kept
        in ``_broken``, the others loaded) fails the query, naming each."""
        if not self._discovered:
            self._discovered = True
            try:
                self._import_plugins()
            except BaseException:
                self._discovered = False  # every later query fails the same way
                raise
        if strict and self._broken:
            raise PluginError("; ".join(self._broken.values()))

    def _import_plugins(self) -> None:
        if self.builtin_package and self.import_builtins:
            package = importlib.import_module(self.builtin_package)
            prefix = package.__name__ + "."
            # a package that fails to import is recorded below, before the walk imports it
            for info in pkgutil.walk_packages(package.__path__, prefix, onerror=lambda _: None):
                plugin = info.name[len(prefix) :]
                if self.plugins_are_folders and not info.ispkg and "." not in plugin:
                    continue
                folder = Path(info.module_finder.path)  # type: ignore[union-attr]
                where = f"{self.kind} folder {folder / plugin if info.ispkg else folder}"
                module = self._import(info.name, plugin.split(".")[0], where)
                if module is not None and self._declare is not None:
                    self._declare(module)
        for point in entry_points(group=self.group):
            if point.value != self.builtin_package:
                self._load_entry_point(point)

    def _import(self, module: str, plugin: str, where: str) -> ModuleType | None:
        """The module (its decorators register), or None where it failed to import: a broken
        plugin must not hide silently, nor hide the others from `list`."""
        try:
            return importlib.import_module(module)
        except Exception as exc:
            # a registry's own refusal says what is wrong and where: not the registry's line
            self._break(plugin, where, str(exc) if isinstance(exc, PluginError) else failure(exc))
            return None

    def _break(self, plugin: str, where: str, why: str) -> None:
        """Keep why ``plugin`` failed to load: `list` shows it beside the others, and every
        query of the kind names it."""
        self._broken[plugin] = f"{where} failed to load: {why}; fix it or remove it"

    def broken(self) -> dict[str, str]:
        """Each plugin that failed to import (folder or entry point name) -> where and why."""
        self._discover(strict=False)
        return dict(self._broken)

    def _load_entry_point(self, point) -> None:  # type: ignore[no-untyped-def]
        dist = getattr(point, "dist", None)  # the installed package; None in a hand-made one
        package = f" of package {dist.name!r}" if dist is not None else ""
        where = f"{self.kind} entry point {point.name!r} ({point.value}){package} in group "
        where += repr(self.group)
        if ":" in point.value:
            held = self._lazy.get(point.name)
            if held is None or held.target != point.value:  # the same class: no choice
                try:
                    self.add_lazy(point.name, point.value, summary=f"({point.value})")
                except PluginError as exc:  # a clash or a bad name: broken, as a module's
                    self._break(point.name, where, str(exc))
            return
        before = set(self._classes)
        module = self._import(point.value, point.name, where)
        if module is None:
            return
        defined_here = any(
            cls.__module__.startswith(module.__name__) for cls in self._classes.values()
        )
        if self._declare is not None and self._declare(module):
            defined_here = True
        if set(self._classes) == before and not defined_here:
            self._broken[point.name] = (
                f"{where} registers nothing: decorate its classes with @register_{self.kind}"
                "(NAME), or name one class as module:Class"
            )

    def _load_lazy(self, name: str) -> type[T]:
        entry = self._lazy[name]
        module, _, attribute = entry.target.partition(":")
        try:
            cls = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as exc:
            raise PluginError(
                f"{self.kind} {name!r}: cannot import {entry.target} ({exc}); check the "
                "entry point or install the plugin's dependencies"
            ) from exc
        if name not in self._classes:
            self._add(cls, name, (), entry.origin, claimed=True)
        return self._classes[name]

    # ------------------------------------------------------------------ queries
    def base_class(self) -> type:
        """The class every plugin of the kind subclasses."""
        return self._base()

    def lazy_summary(self, name: str) -> str | None:
        """The summary a lazy entry declares (what listings show without importing it)."""
        entry = self._lazy.get(name)
        return None if entry is None else entry.summary

    def names(self) -> list[str]:
        self._discover()
        return sorted({*self._classes, *self._lazy})

    def canonical(self, name: str) -> str:
        self._discover()
        return self._aliases.get(name, name)

    def get(self, name: str) -> type[T]:
        key = self.canonical(name)
        if key in self._classes:
            return self._classes[key]
        if key in self._lazy:
            return self._load_lazy(key)
        hints = [self._folder_registering_nothing(name)]
        hints.append(self._unknown_hint(name) if self._unknown_hint else "")
        raise UnknownItemError(self.kind, name, self.names(), "; ".join(filter(None, hints)))

    def _folder_registering_nothing(self, name: str) -> str:
        """What to do where a built-in plugin folder is named ``name`` but registers nothing
        (its class lost its decorator): else the unknown name hides why."""
        package = f"{self.builtin_package}.{name}"
        modules = [cls.__module__ for cls in self._classes.values()]
        modules += [entry.target.partition(":")[0] for entry in self._lazy.values()]
        if any(module == package or module.startswith(package + ".") for module in modules):
            return ""
        for folder in (root / name for root in self.builtin_folders()):
            if (folder / "__init__.py").is_file():
                return registers_nothing(self.kind, folder)
        return ""

    def items(self) -> list[tuple[str, type[T]]]:
        """Every plugin class (imports lazy entries: use :meth:`summaries` to list cheaply)."""
        return [(name, self.get(name)) for name in self.names()]

    def summaries(self, describe: Callable[[type[T]], str], broken: bool = False) -> dict[str, str]:
        """Name -> one line, without importing lazy entries (their declared summary); with
        ``broken``, each plugin that failed to import is listed as such instead of failing."""
        self._discover(strict=not broken)
        found = {name: describe(cls) for name, cls in self._classes.items()}
        for name, entry in self._lazy.items():
            found.setdefault(name, f"{entry.summary} ({entry.origin})")
        found |= {name: f"BROKEN: {why}" for name, why in self._broken.items()}
        return dict(sorted(found.items()))

    def builtin_folders(self) -> list[Path]:
        """The folders the built-in plugins are loaded from (an editable install: the clone's
        ``adapters/``), found without importing the package."""
        if self.builtin_package is None:
            return []
        spec = importlib.util.find_spec(self.builtin_package)
        locations = [] if spec is None else spec.submodule_search_locations or []
        return [Path(location).resolve() for location in locations]

    def aliases(self, name: str) -> list[str]:
        return sorted(alias for alias, target in self._aliases.items() if target == name)

    def origin(self, name: str) -> str:
        self._discover(strict=False)  # `list` names the origin of each plugin that loaded
        return self._origins[self._aliases.get(name, name)]
