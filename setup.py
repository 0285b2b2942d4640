"""Maps the top-level contribution folders under the ``nnd_suites`` namespace.

``adapters/``, ``transformations/``, ``evaluation/``, ``quality_maps/`` and ``slices/`` live at
the top of the repository (contributors find them there) but install as ``nnd_suites.adapters``
etc., so that a user's ``import evaluation`` never resolves to us. Sub-packages are discovered,
not listed by hand.
"""

from setuptools import find_packages, setup

MAPPED = {
    "nnd_suites": "nnd_suites",
    "nnd_suites.adapters": "adapters",
    "nnd_suites.transformations": "transformations",
    "nnd_suites.evaluation": "evaluation",
    "nnd_suites.quality_maps": "quality_maps",
    "nnd_suites.slices": "slices",
}

packages = []
package_dir = {}
for name, folder in MAPPED.items():
    package_dir[name] = folder
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=package_dir)
