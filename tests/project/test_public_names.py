"""Every name a package offers in ``__all__`` can be imported from it: a lazily loaded name that
points at a module not holding it (``nnd_suites.evaluation.resolve_suites`` once did) fails
only when a user asks for it."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

#: the installed top-level packages (evaluation/, transformations/ and slices/ install under
#: nnd_suites; walking nnd_suites' own folder does not reach them)
ROOTS = ["nnd_suites", "nnd_suites.evaluation", "nnd_suites.transformations", "nnd_suites.slices"]
PACKAGES = sorted(
    {
        *ROOTS,
        *(
            info.name
            for root in ROOTS
            for info in pkgutil.walk_packages(importlib.import_module(root).__path__, root + ".")
            if info.ispkg
        ),
    }
)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_in_a_packages_all_can_be_imported_from_it(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in getattr(module, "__all__", []) if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ names what it does not hold: {missing}"
