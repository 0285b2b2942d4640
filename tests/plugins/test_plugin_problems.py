"""The one plugin harness check catches planted defects in every kind, whatever its layout: an
unregistered class in an adapter folder, a folder without README.md or __init__.py, a plugin
short of harness cases, cases naming a plugin of no folder or of another folder, a lazy summary
that is not the class's. Each planted package lives in tmp_path with a registry of its own."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from nnd_suites.builder.adapter import Adapter
from nnd_suites.errors import UnknownItemError
from nnd_suites.plugins.harness import plugin_problems
from nnd_suites.plugins.registry import Registry
from nnd_suites.slices import Slice
from nnd_suites.transformations import TRANSFORMATIONS, Transformation

ADAPTER_MODULE = """
    from nnd_suites.builder.adapter import Adapter, AdapterMetadata

    class Quiz(Adapter):
        quality_map = "quiz_design"
        context_fields = ("question",)
        default_template = "{question}"
        metadata = AdapterMetadata(
            task="question answering", languages=["en"], annotation_type="single_label",
            license="MIT", citation="@misc{x}", source_urls=["https://example.org"],
            description="A planted adapter.",
        )

        def read(self, path, log):
            return iter(())

    class Forgotten(Quiz):  # concrete, defined in the adapter's folder, registered by no name
        pass
"""
SLICE_MODULE = """
    from nnd_suites.slices import Slice, SliceMetadata

    class {name}(Slice):
        metadata = SliceMetadata(summary="{name}", description="A planted slice.")

        def sets(self, data):
            return {{}}
"""


@pytest.fixture
def planted(tmp_path, monkeypatch) -> Iterator[Callable[[str, dict[str, str]], Path]]:
    """``plant(package, files)`` writes a package under tmp_path (files: relative path -> text)
    importable by name; its modules are forgotten afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    packages: list[str] = []

    def plant(package: str, files: dict[str, str]) -> Path:
        packages.append(package)
        for relative, text in {"__init__.py": "", **files}.items():
            path = tmp_path / package / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text), encoding="utf-8")
        importlib.invalidate_caches()
        return tmp_path / package

    yield plant
    for name in [m for m in sys.modules if m.split(".")[0] in packages]:
        del sys.modules[name]


def _registry(kind: str, base: type, package: str) -> Registry:
    return Registry(kind, "nnd_suites.no_such_group", base=lambda: base, builtin_package=package)


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


def test_an_adapter_folder_with_an_unregistered_class_or_no_readme_or_case_fails(planted):
    expected = {"source": "tiny.jsonl", "pairs": 1, "groups": 1, "candidates": 2, "breakdowns": {}}
    root = planted(
        "planted_adapters",
        {
            "quiz/__init__.py": "",
            "quiz/adapter.py": ADAPTER_MODULE,
            "quiz/README.md": "# quiz\n",
            "quiz/fixtures/expected_stats.json": json.dumps(expected),
            "notes/todo.md": "a folder the registry cannot import\n",
        },
    )
    registry = _registry("adapter", Adapter, "planted_adapters")
    module = _module("planted_adapters.quiz.adapter")
    registry.register("quiz")(module.Quiz)
    assert plugin_problems(registry) == [
        "planted_adapters/notes: no __init__.py; add one so the registry imports it",
        "planted_adapters.quiz.adapter:Forgotten is a adapter registered under no name: "
        "decorate it with @register_adapter(NAME) (or add it as a lazy entry)",
    ]
    (root / "notes" / "todo.md").unlink()
    (root / "notes").rmdir()
    registry.register("forgotten")(module.Forgotten)  # two adapters, one folder: both covered
    assert plugin_problems(registry) == []
    # the folder's README and its one harness case are required too
    (root / "quiz" / "README.md").unlink()
    (root / "quiz" / "fixtures" / "expected_stats.json").unlink()
    folder = (root / "quiz").resolve()
    assert plugin_problems(registry) == [
        f"adapter forgotten: 0 harness case(s) in {folder / 'fixtures/expected_stats.json'}; "
        'add at least 1 ({"adapter": "forgotten", ...})',
        f"adapter quiz: 0 harness case(s) in {folder / 'fixtures/expected_stats.json'}; "
        'add at least 1 ({"adapter": "quiz", ...})',
        f"{folder}: no README.md; write one saying what forgotten, quiz (its adapter plugins) "
        "do and when a user would pick each",
    ]


def test_a_slice_folder_short_of_cases_or_readme_or_plugin_fails(planted):
    cases = [{"slice": "halves"}, {"slice": "thirds"}, {"slice": "gone"}]
    root = planted(
        "planted_slices",
        {
            "halves/__init__.py": "",
            "halves/halves.py": SLICE_MODULE.format(name="Halves"),
            "halves/examples.json": json.dumps({"examples": cases}),
            "thirds/__init__.py": "",
            "thirds/thirds.py": SLICE_MODULE.format(name="Thirds"),
            "thirds/README.md": "# thirds\n",
            "thirds/examples.json": json.dumps(
                {"examples": [{"slice": "thirds", "case": 1}, {"slice": "thirds", "case": 2}]}
            ),
            "empty/__init__.py": "",
        },
    )
    registry = _registry("slice", Slice, "planted_slices")
    registry.register("halves")(_module("planted_slices.halves.halves").Halves)
    registry.register("thirds")(_module("planted_slices.thirds.thirds").Thirds)
    halves = (root / "halves").resolve()
    assert plugin_problems(registry) == [
        "planted_slices/empty registers no slice: decorate its class with "
        "@register_slice(NAME), or move the folder out of planted_slices/",
        f"slice halves: 1 harness case(s) in {halves / 'examples.json'}; add at least 2 "
        '({"slice": "halves", ...})',
        f"{halves}: no README.md; write one saying what halves (its slice plugins) do and when "
        "a user would pick each",
        f"{halves / 'examples.json'}: example for 'gone', which is no registered slice; "
        "remove it or fix its name",
        f"{halves / 'examples.json'}: example for 'thirds', a slice of another folder; move it "
        "beside that plugin",
    ]


def test_a_lazy_transformation_whose_summary_is_not_its_class_fails():
    """Any kind may register a plugin lazily; its declared summary must be the class's."""
    registry = _registry("transformation", Transformation, "nnd_suites.transformations")
    for name, cls in TRANSFORMATIONS.items():
        registry.register(name)(cls)
    assert plugin_problems(registry) == []
    fresh = _registry("transformation", Transformation, "nnd_suites.transformations")
    for name, cls in TRANSFORMATIONS.items():
        if name == "lowercase":
            target = f"{cls.__module__}:{cls.__qualname__}"
            fresh.add_lazy(name, target, summary="an old summary")
        else:
            fresh.register(name)(cls)
    summary = TRANSFORMATIONS.get("lowercase").metadata.summary
    assert plugin_problems(fresh) == [
        f"transformation lowercase: the lazy entry's summary 'an old summary' is not its "
        f"metadata.summary {summary!r}; make them the same (listings show the first)"
    ]


def test_a_repeated_harness_case_is_named_and_counts_once(planted):
    """Two identical cases passed for the two a slice needs; the repeat is now named, and the
    plugin is one case short."""
    root = planted(
        "planted_repeats",
        {
            "halves/__init__.py": "",
            "halves/halves.py": SLICE_MODULE.format(name="Halves"),
            "halves/README.md": "# halves\n",
            "halves/examples.json": json.dumps({"examples": [{"slice": "halves"}] * 2}),
        },
    )
    registry = _registry("slice", Slice, "planted_repeats")
    registry.register("halves")(_module("planted_repeats.halves.halves").Halves)
    file = (root / "halves").resolve() / "examples.json"
    assert plugin_problems(registry) == [
        f"slice halves: its harness case 2 in {file} repeats its case 1; change it into another "
        "check, or remove it",
        f'slice halves: 1 harness case(s) in {file}; add at least 2 ({{"slice": "halves", ...}})',
    ]


def test_a_plugin_folder_that_fails_to_import_is_named_and_listed_as_broken(
    planted, monkeypatch, capsys
):
    """A plugin module with a SyntaxError or an ImportError gave `nnd-suites list` (and every
    command that loads the kind) a traceback. Each query now names the folder, the file and
    line that failed and why; `list` shows the others with the broken ones, and exits 7."""
    import nnd_suites.slices
    from nnd_suites.cli import main
    from nnd_suites.errors import PluginError

    root = planted(
        "planted_broken",
        {
            "halves/__init__.py": "",
            "halves/halves.py": SLICE_MODULE.format(name="Halves"),
            "typo/__init__.py": "",
            "typo/typo.py": '"""A slice."""\n\nSETS = (\n',
            "missing/__init__.py": "",
            "missing/missing.py": "import json\nimport no_such_module_xyz\n",
            "boom/__init__.py": "raise RuntimeError('boom')\n",  # the walk imports it too
        },
    )
    registry = _registry("slice", Slice, "planted_broken")
    registry.register("halves")(_module("planted_broken.halves.halves").Halves)
    typo = f"slice folder {root / 'typo'} failed to load: {root / 'typo' / 'typo.py'}, line 3"
    missing = (
        f"slice folder {root / 'missing'} failed to load: {root / 'missing' / 'missing.py'}, "
        "line 2: import no_such_module_xyz: ModuleNotFoundError: No module named "
        "'no_such_module_xyz'"
    )
    for _ in range(2):  # every query fails the same way
        with pytest.raises(PluginError) as raised:
            registry.get("halves")
        assert typo + ": SETS = (: SyntaxError: '(' was never closed" in str(raised.value)
        assert missing in str(raised.value)
        assert f"{root / 'boom' / '__init__.py'}, line 1: raise" in str(raised.value)
    monkeypatch.setattr(nnd_suites.slices, "SLICES", registry)
    assert main(["list"]) == PluginError.exit_status
    captured = capsys.readouterr()
    listed = {line.split()[0]: line for line in captured.out.splitlines() if line[:2] == "  "}
    assert {"halves", "typo", "missing", "boom"} <= set(listed)
    assert f"BROKEN: {typo}" in listed["typo"] and f"BROKEN: {missing}" in listed["missing"]
    assert typo in captured.err and missing in captured.err and "Traceback" not in captured.err


def test_a_folder_reusing_the_name_of_the_folder_named_so_is_the_one_broken(planted):
    """A new adapters/my_votes/source.yaml declaring `name: quiz` loads before adapters/quiz (name
    order), so the refusal said "adapter folder .../quiz failed to load ... fix it or remove it",
    the folder named after the name. The newcomer is now the one broken, named with what to do,
    and quiz loads."""
    from nnd_suites.declarative.plugin import register_declared

    sfhot = (Path(__file__).parents[2] / "adapters" / "sfhot" / "source.yaml").read_text("utf-8")
    quiz = sfhot.replace("name: sfhot", "name: quiz")
    folder = {"__init__.py": "", "source.yaml": quiz}
    root = planted(
        "planted_clash", {f"{f}/{n}": t for f in ("my_votes", "quiz") for n, t in folder.items()}
    )
    registry = _registry("adapter", Adapter, "planted_clash")
    registry.declare_with(lambda module: register_declared(module, registry.register))
    assert registry.broken() == {
        "my_votes": f"adapter folder {root / 'my_votes'} failed to load: {root / 'my_votes'}"
        f"/source.yaml registers 'quiz', the name of the adapter in {root / 'quiz'}/source.yaml; "
        "rename it there (e.g. its folder's name: my_votes)"
    }
    listed = registry.summaries(lambda cls: str(cls.declaration_path()), broken=True)
    assert listed["quiz"] == str(root / "quiz" / "source.yaml")


def test_an_unknown_name_whose_plugin_folder_registers_nothing_says_so(planted):
    """`nnd-suites build my_sl`, where adapters/my_sl's class had lost its @register_adapter,
    said only "unknown adapter 'my_sl' (known: ...)". The refusal now says that the folder named
    so registers no adapter and what to do, in the harness's words; a name without such a
    folder, or whose folder registers another name, is refused as before."""
    folders = ("my_sl", "quiz", "other")
    files = {
        f"{f}/{n}": t for f in folders for n, t in (("__init__.py", ""), ("a.py", ADAPTER_MODULE))
    }
    planted("planted_lost", files)
    registry = _registry("adapter", Adapter, "planted_lost")
    registry.register("quiz")(_module("planted_lost.quiz.a").Quiz)
    registry.register("renamed")(_module("planted_lost.other.a").Quiz)
    words = (
        "planted_lost/my_sl registers no adapter: decorate its class with "
        "@register_adapter(NAME), or move the folder out of planted_lost/"
    )
    with pytest.raises(UnknownItemError) as raised:
        registry.get("my_sl")
    assert str(raised.value) == f"unknown adapter 'my_sl' (known: quiz, renamed); {words}"
    assert words in plugin_problems(registry)  # the harness says the same
    for name in ("other", "nowhere"):
        with pytest.raises(UnknownItemError) as raised:
            registry.get(name)
        assert str(raised.value) == f"unknown adapter {name!r} (known: quiz, renamed)"
