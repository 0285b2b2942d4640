"""Whether an ``adapters/`` folder is the one the running nnd-suites loads, and what to tell a
user whose adapter sits in another one.

``new-adapter`` writes into any folder holding ``adapters/`` and ``quality_maps/``, but the
registry imports only the ``adapters/`` of the installed clone (an editable install) and the
packages of the ``nnd_suites.adapters`` entry-point group: an adapter written elsewhere is
unknown to ``build`` until one of those loads it.
"""

from __future__ import annotations

from pathlib import Path

OWN_PACKAGE = (
    "ship the adapter in a package of your own listed in the `nnd_suites.adapters` entry-point "
    'group (CONTRIBUTING.md, "Adapters in your own package")'
)


def loaded_from(root: Path, loaded: list[Path]) -> bool:
    """Whether ``root/adapters`` is one of the ``loaded`` adapter folders."""
    return (root / "adapters").resolve() in loaded


def how_to_load(root: Path) -> str:
    """What makes the nnd-suites being run load the adapters under ``root``."""
    root = root.resolve()
    is_clone = (root / "nnd_suites").is_dir() and (root / "setup.py").is_file()
    if is_clone:
        return f"install this clone with `pip install -e {root}`, or {OWN_PACKAGE}"
    return (
        f"{root} is not an nnd-suites clone: run new-adapter in your clone and install it with "
        f"`pip install -e CLONE`, or {OWN_PACKAGE}"
    )


def not_loaded_note(root: Path, name: str, loaded: list[Path]) -> str:
    """One line: adapter ``name``, written under ``root``, is not among those being loaded, what
    the next steps then do, and how to load it ('' when it is)."""
    if loaded_from(root, loaded):
        return ""
    where = ", ".join(str(folder) for folder in loaded) or "no adapters/ folder"
    return (
        f"{(root / 'adapters' / name).resolve()} is not loaded: the nnd-suites you ran loads "
        f"its adapters from {where}; until it is loaded, `nnd-suites build {name}` says unknown "
        f"adapter and the harness runs none of its cases (pytest says 'deselected', no "
        f"failure); to load it, {how_to_load(root)}"
    )
