"""The one harness check every plugin kind runs: what is wrong with a kind's built-in plugins.

Everything it needs comes from the registry (``builtin_package``: where the built-in plugins
live) and the kind's base class (``examples_file``, ``examples_key``, ``min_examples``), so
adapters, transformations, slices, scorers and backends are checked by the same rules whether
each plugin has a folder of its own or several share one. The tests run it; nothing at start-up
imports this module (it imports every plugin module, torch included for backends).
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

from nnd_suites.plugins.provenance import registers_nothing, target_of
from nnd_suites.plugins.registry import Registry


def plugin_problems(registry: Registry[Any]) -> list[str]:
    """Every problem of the built-in plugins in ``registry.builtin_package``, each naming the
    folder or plugin and what to do (empty: all well).

    - every sub-folder of the package (``_``/``.`` folders aside) is a package that registers a
      plugin: a folder the registry cannot import must fail, not drop out of the tests (the
      flaw of NL-Augmenter's hand-kept list);
    - every concrete plugin class defined in the package is registered (by its decorator, or as
      a lazy entry);
    - every folder holding a plugin has a README.md;
    - every plugin has at least ``min_examples`` harness cases, and every case in a folder names
      a plugin registered from that folder;
    - a lazy entry's declared summary is its class's ``metadata.summary``.
    """
    package = registry.builtin_package
    if package is None:
        return [f"the {registry.kind} registry names no builtin_package to check"]
    base = registry.base_class()
    modules = _import_all(package)
    root = _folder(modules[0])
    problems = _subfolder_problems(registry, root)
    problems += _declaration_problems(registry, root)
    builtin = {
        name: cls
        for name, cls in registry.items()
        if target_of(cls).startswith((package + ".", package + ":"))
    }
    if not builtin:
        problems.append(f"{package} registers no {registry.kind}")
    registered = {target_of(cls) for cls in builtin.values()}
    problems += [
        f"{target} is a {registry.kind} registered under no name: decorate it with "
        f"@register_{registry.kind}(NAME) (or add it as a lazy entry)"
        for target in _concrete_plugin_targets(modules, base)
        if target not in registered
    ]
    by_folder: dict[Path, set[str]] = {}
    for name, cls in builtin.items():
        by_folder.setdefault(cls.folder().resolve(), set()).add(name)
        problems += _plugin_problems(registry, name, cls)
    for folder, names in sorted(by_folder.items()):
        if not (folder / "README.md").is_file():
            problems.append(
                f"{folder}: no README.md; write one saying what {', '.join(sorted(names))} "
                f"(its {registry.kind} plugins) do and when a user would pick each"
            )
    for folder in sorted({_folder(module) for module in modules}):
        named = {case.get(base.examples_key) for case in base.examples_in(folder)}
        for other in sorted(named - by_folder.get(folder, set()), key=str):
            problems.append(
                f"{folder / base.examples_file}: example for {other!r}, "
                + (
                    f"a {registry.kind} of another folder; move it beside that plugin"
                    if other in builtin
                    else f"which is no registered {registry.kind}; remove it or fix its name"
                )
            )
    return problems


def _import_all(package: str) -> list[ModuleType]:
    """The package and every module under it (importing runs the registration decorators)."""
    root = importlib.import_module(package)
    return [root] + [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(root.__path__, prefix=root.__name__ + ".")
    ]


def _folder(module: ModuleType) -> Path:
    return Path(module.__file__).resolve().parent  # type: ignore[arg-type]


def _subfolder_problems(registry: Registry[Any], root: Path) -> list[str]:
    """Sub-folders of the package that are not packages, or register no plugin."""
    homes = {Path(cls.folder()).resolve() for _, cls in registry.items()}
    problems = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if folder.name.startswith(("_", ".")):
            continue
        where = f"{root.name}/{folder.name}"
        if not (folder / "__init__.py").is_file():
            problems.append(f"{where}: no __init__.py; add one so the registry imports it")
        elif not any(home.is_relative_to(folder.resolve()) for home in homes):
            problems.append(registers_nothing(registry.kind, folder))
    return problems


def _declaration_problems(registry: Registry[Any], root: Path) -> list[str]:
    """Declarations (an adapter folder's ``source.yaml``) that no registered plugin was made
    from: a folder the registry never imports, or a declaration beside an unrelated class."""
    name = getattr(registry.base_class(), "declaration_file", None)
    if name is None:
        return []
    made_from = {
        Path(cls.declaration_path()).resolve()
        for _, cls in registry.items()
        if hasattr(cls, "declaration_path")
    }
    return [
        f"{root.name}/{path.relative_to(root).as_posix()} is registered as no {registry.kind}: "
        "give its folder an empty __init__.py (the registry imports packages)"
        for path in sorted(root.glob(f"*/{name}"))
        if path.resolve() not in made_from
    ]


def _concrete_plugin_targets(modules: list[ModuleType], base: type) -> list[str]:
    """``module:Class`` of every concrete ``base`` subclass the modules define."""
    return [
        target_of(cls)
        for module in modules
        for cls in vars(module).values()
        if inspect.isclass(cls)
        and issubclass(cls, base)
        and cls is not base
        and cls.__module__ == module.__name__
        and not inspect.isabstract(cls)
    ]


def _plugin_problems(registry: Registry[Any], name: str, cls: type) -> list[str]:
    """One plugin's harness cases and lazy summary."""
    problems = []
    cases = cls.examples()  # type: ignore[attr-defined]
    file = cls.folder() / cls.examples_file  # type: ignore[attr-defined]
    first: dict[str, int] = {}
    for number, case in enumerate(cases, 1):
        text = json.dumps(case, sort_keys=True)
        if text in first:  # one check run twice: it must not count towards the minimum
            problems.append(
                f"{registry.kind} {name}: its harness case {number} in {file} repeats its case "
                f"{first[text]}; change it into another check, or remove it"
            )
        first.setdefault(text, number)
    found, needed = len(first), cls.min_examples  # type: ignore[attr-defined]
    if found < needed:
        problems.append(
            f"{registry.kind} {name}: {found} harness case(s) in "
            f"{file}; add at least {needed} "
            f'({{"{cls.examples_key}": "{name}", ...}})'  # type: ignore[attr-defined]
        )
    lazy = registry.lazy_summary(name)
    summary = getattr(getattr(cls, "metadata", None), "summary", None)
    if lazy is not None and lazy != summary:
        problems.append(
            f"{registry.kind} {name}: the lazy entry's summary {lazy!r} is not its "
            f"metadata.summary {summary!r}; make them the same (listings show the first)"
        )
    return problems
