"""Start-up: `nnd-suites --help` builds every command's parser without the suite package
(pyarrow, numpy) or any model library, and `import nnd_suites` loads only its errors; the
public names still resolve when asked for. benchmarks/bench_startup.py times the same calls."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: what a model, a suite or the Hub needs, and `--help` does not
NOT_FOR_HELP = ("pyarrow", "numpy", "torch", "transformers", "datasets", "matplotlib", "scipy")
#: listing plugins reads their registries: applying a transformation or a slice needs the suite
#: model (pyarrow), listing them does not
NOT_FOR_LIST = (
    "torch",
    "transformers",
    "datasets",
    "matplotlib",
    "scipy",
    "huggingface_hub",
    "pyarrow",
)


def _loaded_after(code: str, libraries: tuple[str, ...]) -> list[str]:
    probe = (
        "import json, sys\n"
        f"{code}\n"
        f"print(json.dumps(sorted(m for m in {libraries!r} if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", ["", "build", "new-adapter", "validate", "schema", "stats"])
def test_help_loads_no_suite_or_model_library(command):
    argv = [*command.split(), "--help"]
    code = "from nnd_suites.cli import main\n"
    code += f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    assert _loaded_after(code, NOT_FOR_HELP) == []


def test_list_loads_no_model_library():
    code = "from nnd_suites.cli import main\nmain(['list'])"
    assert _loaded_after(code, NOT_FOR_LIST) == []


def test_importing_the_package_is_light_and_its_names_resolve():
    assert _loaded_after("import nnd_suites", (*NOT_FOR_HELP, "pydantic")) == []
    loaded = _loaded_after("from nnd_suites import Suite, build_suite, load_suite", ("pyarrow",))
    assert loaded == ["pyarrow"]  # asked for, the suite package loads as before
