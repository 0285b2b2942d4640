"""A third-party package declares a table source with no Python: its package (an empty
``__init__.py`` beside ``source.yaml`` and a quality map) named in the ``nnd_suites.adapters``
entry-point group is registered, listed with its origin and built like any adapter."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint

from nnd_suites import build_suite
from nnd_suites.builder.adapter import ADAPTERS, Adapter
from nnd_suites.declarative.plugin import register_declared
from nnd_suites.plugins import registry
from nnd_suites.plugins.registry import Registry

SOURCE = """\
name: my_table
quality_map: rule.yaml
metadata:
  task: summarization
  languages: [en]
  annotation_type: numeric
  license: MIT
  citation: "@misc{mine}"
  source_urls: [https://example.org/mine]
  description: my ratings
file: {format: jsonl}
group:
  key: [doc]
  context: {document: doc_text}
template: "{document}\\n"
candidates:
  text: summary
  system: model
  ratings: {score: score}
"""
RULE = """\
name: my_table
description: higher by at least 1
labels: [better, rated]
tiers: [[better], [rated]]
rating_rule: {kind: numeric, rating: score, aggregate: mean, minimum_gap: 1, low_label: rated}
"""
ROWS = "".join(
    f'{{"doc": "d{d}", "doc_text": "text {d}", "summary": "s{s}", "model": "m{s}", "score": {s}}}\n'
    for d in range(2)
    for s in range(3)
)


def test_a_declared_package_named_by_an_entry_point_is_registered_and_builds(tmp_path, monkeypatch):
    package = tmp_path / "my_declared_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "source.yaml").write_text(SOURCE)
    (package / "rule.yaml").write_text(RULE)
    (tmp_path / "rows.jsonl").write_text(ROWS)
    monkeypatch.syspath_prepend(str(tmp_path))
    ADAPTERS.names()  # the real registry discovers its plugins now, not under the fake below
    group = "nnd_suites.adapters"
    plugins = Registry(
        "adapter",
        group,
        base=lambda: Adapter,
        declare=lambda module: register_declared(module, plugins.register),
    )
    points = [EntryPoint("mine", "my_declared_pkg", group)]
    monkeypatch.setattr(registry, "entry_points", lambda group: points)
    cls = plugins.get("my_table")
    assert cls.definition == "declarative" and plugins.origin("my_table") == "my_declared_pkg"
    suite = build_suite(cls(), tmp_path / "rows.jsonl")
    # per document, scores 0, 1, 2: three pairs differ by at least 1
    assert len(suite.pairs) == 6
    monkeypatch.delitem(sys.modules, "my_declared_pkg")
