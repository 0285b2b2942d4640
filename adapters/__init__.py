"""The built-in adapters, one folder each: a class (``adapter.py``) or a declaration
(``source.yaml``, :mod:`nnd_suites.declarative`). The registry imports this package before it
walks the folders, so the hook that registers declarations is in place for every folder."""

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.declarative.plugin import register_declared

ADAPTERS.declare_with(register_declared)
