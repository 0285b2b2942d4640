"""Where a plugin comes from: its origin, the file or target registering it, why its module
failed to import, and what to do with a plugin folder that registers none (the registry and the
harness name these in every clash and failure)."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path


def failure(exc: Exception) -> str:
    """Why a module failed to import, at the line that failed: ``FILE, line N: TEXT: Error``
    (a syntax error at its own line, else the traceback's last line of Python source)."""
    frames = [(f.filename, f.lineno, f.line) for f in traceback.extract_tb(exc.__traceback__)]
    problem = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError) and exc.filename:
        frames.append((exc.filename, exc.lineno, (exc.text or "").strip()))
        problem = f"{type(exc).__name__}: {exc.msg}"  # its str repeats the file and line
    frames = [f for f in frames if not f[0].startswith("<")]  # importlib's frozen frames
    if not frames:
        return problem
    file, line, text = frames[-1]
    return f"{file}, line {line}: {text}: {problem}" if text else f"{file}, line {line}: {problem}"


def origin_of(module: str) -> str:
    """``builtin`` for nnd-suites' own plugins, else the module that registered the plugin."""
    return "builtin" if module.startswith("nnd_suites.") else module


def defined_in(cls: type) -> str:
    """The declaration of a declared plugin, else its module's file (its name where none)."""
    if hasattr(cls, "declaration_path"):  # an adapter's source.yaml
        return str(cls.declaration_path())
    return getattr(sys.modules.get(cls.__module__), "__file__", None) or cls.__module__


def target_of(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def registers_nothing(kind: str, folder: Path) -> str:
    """A built-in plugin ``folder`` that registers no plugin of ``kind``, and what to do."""
    return (
        f"{folder.parent.name}/{folder.name} registers no {kind}: decorate its class with "
        f"@register_{kind}(NAME), or move the folder out of {folder.parent.name}/"
    )
