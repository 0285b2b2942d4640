"""One registry per plugin kind, fed by Python entry points only.

The built-in plugins are declared in pyproject.toml by one entry point per kind that names the
built-in package (``nnd_suites.adapters``); a third-party package declares its own entry points,
naming either a package (every plugin class in its modules is registered) or a single class.
Nothing is listed by hand, so a plugin folder cannot be silently left out; a test checks every
built-in folder is registered.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from nnd_suites.errors import PluginError, UnknownItemError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(
        self,
        kind: str,
        group: str,
        builtin_package: str,
        base: Callable[[], type],
        validate: Callable[[type], None] | None = None,
    ) -> None:
        self.kind, self.group, self.builtin_package = kind, group, builtin_package
        self._base = base  # a callable, so the base class module may import this one
        self._validate = validate
        self._items: dict[str, type[T]] | None = None
        self._origins: dict[str, str] = {}

    # ----------------------------------------------------------------- loading
    def _load(self) -> dict[str, type[T]]:
        if self._items is not None:
            return self._items
        self._items = {}
        targets: list[tuple[str, object]] = [
            ("builtin", importlib.import_module(self.builtin_package))
        ]
        for ep in entry_points(group=self.group):
            if ep.value == self.builtin_package:
                continue
            try:
                targets.append((f"entry point {ep.name} = {ep.value}", ep.load()))
            except (
                Exception
            ) as exc:  # a broken third-party plugin must not hide the others silently
                raise PluginError(
                    f"{self.kind} entry point {ep.name!r} ({ep.value}) in group "
                    f"{self.group!r} failed to load: {exc}"
                ) from exc
        for origin, target in targets:
            classes = self._scan(target) if isinstance(target, types.ModuleType) else [target]
            for cls in classes:
                self.register(cls, origin)
        return self._items

    def _scan(self, package: types.ModuleType) -> list[type]:
        """Every concrete plugin class defined in the package's modules, sub-packages included."""
        modules = [package]
        if hasattr(package, "__path__"):
            for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
                modules.append(importlib.import_module(info.name))
        base = self._base()
        found: list[type] = []
        for module in modules:
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if (
                    issubclass(obj, base)
                    and obj is not base
                    and obj.__module__ == module.__name__
                    and not inspect.isabstract(obj)
                    and obj not in found
                    and not obj.__dict__.get("abstract", False)
                ):
                    found.append(obj)
        return found

    def register(self, cls: type, origin: str = "direct") -> type:
        items = self._items if self._items is not None else self._load()
        base = self._base()
        if not (inspect.isclass(cls) and issubclass(cls, base)):
            raise PluginError(f"{origin}: {cls!r} is not a {base.__name__} subclass")
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
            raise PluginError(
                f"{cls.__module__}.{cls.__name__}: {self.kind} needs a lower-case "
                f"identifier 'name', got {name!r}"
            )
        if name in items and items[name] is not cls:
            raise PluginError(
                f"{self.kind} {name!r} is registered twice: {self._origins[name]} and {origin}"
            )
        if self._validate:
            self._validate(cls)
        items[name] = cls
        self._origins[name] = origin
        return cls

    # ----------------------------------------------------------------- queries
    def names(self) -> list[str]:
        return sorted(self._load())

    def get(self, name: str) -> type[T]:
        items = self._load()
        if name not in items:
            raise UnknownItemError(self.kind, name, list(items))
        return items[name]

    def items(self) -> list[tuple[str, type[T]]]:
        return sorted(self._load().items())

    def origin(self, name: str) -> str:
        self._load()
        return self._origins[name]
