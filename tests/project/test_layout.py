"""The code's shape: packages are layers and data flows one way through them (no module imports a
layer above its own, at the top or inside a function, and no import circle of any kind), every
import inside a function says why it is there, and no module grows past 400 lines."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: top-level folders installed under the ``nnd_suites`` namespace (see setup.py)
MAPPED = {
    "nnd_suites": "nnd_suites",
    "adapters": "nnd_suites.adapters",
    "transformations": "nnd_suites.transformations",
    "evaluation": "nnd_suites.evaluation",
    "quality_maps": "nnd_suites.quality_maps",
    "slices": "nnd_suites.slices",
}
MAX_LINES = 400
#: The layers, lowest first (ARCHITECTURE.md): a module imports only its own package and the
#: layers below it; packages sharing a layer are independent of each other.
LAYERS: list[tuple[str, ...]] = [
    ("errors",),
    ("infra",),
    ("sources",),
    ("records",),
    ("suite",),
    ("plugins",),
    ("statistics",),
    ("quality_map",),
    ("human",),
    ("builder",),
    ("transformations", "slices", "declarative"),
    ("adapters", "scaffold", "hub"),
    ("resolve", "catalogue"),
    ("evaluation",),
    ("cli",),
    ("__main__",),
]


def _modules(folder: str) -> dict[str, Path]:
    found = {}
    for path in (ROOT / folder).rglob("*.py"):
        parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join([MAPPED[folder], *parts])] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module of ``known`` that ``path`` imports, at the top, inside a function or under
    ``if TYPE_CHECKING:`` (a name used in a type is a dependency too, and a circle of types is a
    circle of concepts), with the packages whose ``__init__`` that import runs first (not the
    module's own packages: they are initialised before it, and re-export it)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    root = min(known, key=len)  # the package every module is in
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in known else base)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    with_packages = set(found)
    for module in found:
        parts = module.split(".")
        with_packages.update(".".join(parts[:i]) for i in range(1, len(parts)))
    own = {".".join(name.split(".")[:i]) for i in range(1, len(name.split(".")) + 1)}
    return {m for m in with_packages if m in known and m not in own | {root}}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_walker_finds_a_circle_through_a_function_level_import(tmp_path):
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_an_import_for_type_checking_counts(tmp_path):
    """A name used only in a type still ties its module to the other: a circle through an
    ``if TYPE_CHECKING:`` import is a circle of concepts."""
    module = tmp_path / "votes.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from nnd_suites.records.pairs import Pair\n"
    )
    known = {"nnd_suites": tmp_path, "nnd_suites.records.pairs": tmp_path / "pairs.py"}
    assert _imports("nnd_suites.records.votes", module, known) == {"nnd_suites.records.pairs"}


def _project_imports() -> dict[str, set[str]]:
    modules = {name: path for folder in MAPPED for name, path in _modules(folder).items()}
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _package(module: str) -> str | None:
    """The layer package of a module (``nnd_suites.records.pairs`` -> ``records``); None for the
    root package, the facade above every layer."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _layer_breaches(edges: dict[str, set[str]]) -> list[str]:
    layer_of = {package: i for i, packages in enumerate(LAYERS) for package in packages}
    breaches = []
    for module, imported in sorted(edges.items()):
        package = _package(module)
        if package in (None, "quality_maps", "schemas"):  # the facade, and two folders of data
            continue
        if package not in layer_of:
            breaches.append(f"{module}: its package {package!r} is in no layer of LAYERS")
            continue
        for target in sorted(imported):
            other = _package(target)
            if other in (None, package):
                continue
            if other not in layer_of or layer_of[other] >= layer_of[package]:
                breaches.append(f"{module} imports {target}")
    return breaches


def test_the_layer_check_finds_an_import_of_a_layer_above():
    edges = {"nnd_suites.records.pairs": {"nnd_suites.builder.pairs", "nnd_suites.errors"}}
    assert _layer_breaches(edges) == ["nnd_suites.records.pairs imports nnd_suites.builder.pairs"]
    sibling = {"nnd_suites.hub.card": {"nnd_suites.scaffold.writer"}}
    assert _layer_breaches(sibling) == ["nnd_suites.hub.card imports nnd_suites.scaffold.writer"]


def test_every_package_imports_only_the_layers_below_it():
    """The Hub and the rest of the core never reach the evaluator, the build never reaches the
    Hub, records never reach the build: function-level imports counted, and an import counted as
    running every package ``__init__`` above the module it names."""
    assert _layer_breaches(_project_imports()) == []


def test_no_import_circle_anywhere():
    assert _cycles(_project_imports()) == []


def test_no_module_passes_400_lines():
    long = {
        str(path.relative_to(ROOT)): lines
        for folder in MAPPED
        for path in (ROOT / folder).rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_evaluator_readme_lists_every_module():
    readme = (ROOT / "evaluation" / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("## Modules") :]
    missing = [
        str(path.relative_to(ROOT / "evaluation"))
        for path in sorted((ROOT / "evaluation").rglob("*.py"))
        if f"`{path.name}`" not in table
        and f"`{path.parent.name}/`" not in table  # a folder listed as a whole
        and f"{path.stem}.py" not in table
    ]
    assert missing == []


def test_the_architecture_map_names_the_layers_in_their_order():
    """ARCHITECTURE.md's table of layers is LAYERS, package for package and in the same order
    (``__main__`` aside), so the map a newcomer reads is the order this file holds."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = text[text.index("## The layers") : text.index("## Where contributors work")]
    rows = [line.split("|")[2] for line in table.splitlines() if re.match(r"\| \d+ \|", line)]
    named = [
        tuple(Path(path).stem for path in re.findall(r"`([\w/.]+)`", packages)) for packages in rows
    ]
    assert named == [layer for layer in LAYERS if layer != ("__main__",)]


def _function_import_blocks(tree: ast.AST) -> list[list[ast.stmt]]:
    """Runs of consecutive import statements inside function bodies (a run shares one reason)."""
    blocks: list[list[ast.stmt]] = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            for field in ("body", "orelse", "finalbody"):
                body = getattr(node, field, None)
                if not isinstance(body, list):
                    continue
                run: list[ast.stmt] = []
                for statement in [*body, None]:
                    if isinstance(statement, (ast.Import, ast.ImportFrom)):
                        run.append(statement)
                    elif run:
                        blocks.append(run)
                        run = []
    unique = {id(block[0]): block for block in blocks}  # nested bodies are walked twice
    return list(unique.values())


def _unexplained_imports(text: str) -> list[int]:
    """Lines of function-level imports without a comment on their line or the line above."""
    comments = {
        token.start[0]
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.COMMENT
    }
    return sorted(
        block[0].lineno
        for block in _function_import_blocks(ast.parse(text))
        if not comments & set(range(block[0].lineno - 1, block[0].end_lineno + 1))
    )


def test_the_reason_check_finds_an_import_without_a_comment():
    text = (
        "def a():\n    import os\n\n    return os\n\n\n"
        "def b():\n    # lazy: keeps start-up light\n    import json\n    import csv\n"
        "    return json, csv\n\n\n"
        "def c():\n    if True:\n        import re  # lazy: only here\n"
    )
    assert _unexplained_imports(text) == [2]


def test_every_function_level_import_says_why():
    """Imports inside functions remain only where they keep start-up light (`nnd-suites list`,
    `import nnd_suites` without torch), each with a one-line reason on its line or the line
    above."""
    missing = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in ("nnd_suites", "evaluation")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line in _unexplained_imports(path.read_text(encoding="utf-8"))
    ]
    assert missing == []


#: test folders that mirror no single package: the project as a whole, and shared helpers
WHOLE_PROJECT_TESTS = {"project", "support"}


def mirrored_package(test_folder: Path) -> Path | None:
    """The package (or module) that ``tests/X`` or ``tests/evaluation/X`` tests, if it
    exists: ``nnd_suites/X``, a top-level folder ``X`` (adapters, ...), ``evaluation/X``."""
    parts = test_folder.relative_to(ROOT / "tests").parts
    candidates = (
        [ROOT / "evaluation" / parts[1]]
        if parts[0] == "evaluation" and len(parts) == 2
        else [
            ROOT / "nnd_suites" / parts[0],
            ROOT / "nnd_suites" / f"{parts[0]}.py",
            ROOT / parts[0],
        ]
        if len(parts) == 1
        else []
    )
    return next((c for c in candidates if c.exists()), None)


def test_tests_mirror_the_packages():
    folders = {p.parent for p in (ROOT / "tests").rglob("test_*.py")}
    unmirrored = sorted(
        str(f.relative_to(ROOT))
        for f in folders
        if f.name not in WHOLE_PROJECT_TESTS and mirrored_package(f) is None
    )
    assert not unmirrored, f"test folders named after no package: {unmirrored}"
    assert (
        mirrored_package(ROOT / "tests" / "evaluation" / "verify") == ROOT / "evaluation" / "verify"
    )
    assert mirrored_package(ROOT / "tests" / "core") is None  # a folder named after no package
