"""The project's own docs point only at files that exist inside the project."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: a path in backticks with at least one folder: `evaluation/plots.py`, `slices/<name>/`
PATH = re.compile(r"`((?:[\w.-]+/)+[\w.-]*)`")


def _docs() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    return [ROOT / name for name in listed] or sorted(ROOT.glob("*.md"))


@pytest.mark.parametrize("doc", _docs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_paths_named_in_the_docs_exist(doc: Path) -> None:
    missing = []
    for number, line in enumerate(doc.read_text("utf-8").splitlines(), 1):
        for path in PATH.findall(line):
            top = path.split("/")[0]
            if not (ROOT / top).is_dir() or top in ("runs", "suites") or "<" in path:
                continue  # not a path of this project (a label, a user's folder, a placeholder)
            if not ((ROOT / path).exists() or (doc.parent / path).exists()):
                missing.append(f"{doc.name}:{number}: {path}")
    assert not missing, "docs name files that do not exist: " + "; ".join(missing)


def test_docs_never_point_outside_the_project() -> None:
    for doc in _docs():
        text = doc.read_text("utf-8")
        assert "../shared" not in text and "PRODUCT.md" not in text, doc


def _main_job_line() -> str:
    """The README's main-job one-liner (the bash block after "**Main job**")."""
    readme = (ROOT / "README.md").read_text("utf-8")
    block = readme.split("**Main job**", 1)[1].split("```bash\n", 1)[1].split("\n```", 1)[0]
    assert "\n" not in block.strip(), "the main job is one command line"
    return block.strip()


def test_readme_main_job_is_one_line_whose_default_model_needs_no_download():
    line = _main_job_line()
    assert '--model "${MODEL:-nnd-suites:tiny-random}"' in line
    assert line.startswith("python3 -m venv .venv && ") and " --out runs/main" in line


@pytest.mark.slow
def test_readme_main_job_builds_and_evaluates_with_the_default_model(tmp_path):
    """The one-liner after the installation, run as written in an empty folder with MODEL unset
    and the Hub out of reach: exit 0, a report labelled as a pipeline check."""
    import os
    import sys

    line = _main_job_line()
    commands = line.split("pip install -q -e . && ", 1)[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("MODEL", None)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # the venv's script
    run = subprocess.run(
        ["bash", "-c", commands], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "PIPELINE CHECK" in run.stdout and "pass rates mean nothing" in run.stdout
    assert "quiz_design: " in run.stdout and "challenge300: " in run.stdout
    report = (tmp_path / "runs" / "main" / "report.md").read_text("utf-8")
    assert "tiny-random-PIPELINE-CHECK-figures-mean-nothing" in report.splitlines()[0]
    for suite in ("quiz_design", "challenge300", "wmt_mqm"):
        assert (tmp_path / "suites" / suite / "manifest.json").is_file()


def _readme_commands() -> list[list[str]]:
    """Every ``nnd-suites`` command of the README's bash blocks, as argv (continued lines
    joined, comments dropped)."""
    readme = (ROOT / "README.md").read_text("utf-8")
    commands = []
    for block in re.findall(r"```bash\n(.*?)\n```", readme, flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                if part.strip().startswith("nnd-suites "):
                    commands.append(shlex.split(part, comments=True)[1:])
    return commands


def _option_values(argv: list[str], option: str) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == option]


def test_readme_reads_each_run_with_a_suite_it_scored():
    """A README command reading a run (``slices SUITE --run RUN``) names a suite that the
    README's ``evaluate ... --out RUN`` scored: another build of it (``challenge300`` for a run
    of ``suites/c300``, built from a --source file) is refused."""
    commands = _readme_commands()
    scored = {
        out: _option_values(argv, "--suite")
        for argv in commands
        if argv[0] == "evaluate"
        for out in _option_values(argv, "--out")
    }
    readers = [argv for argv in commands if _option_values(argv, "--run")]
    assert readers, "the README shows a command reading a run"
    for argv in readers:
        (run,) = _option_values(argv, "--run")
        if run in scored:
            assert argv[1] in scored[run], f"{' '.join(argv)}: {run} scored {scored[run]}"


def test_readme_names_each_config_it_adds_to_a_dataset_folder_after_its_suite():
    """`transform quiz_design ... --out suites/qd-typos` put into `build --all`'s dataset folder
    a suite named quiz_design.typos-rate0.02-seed1: the card left it out, and `export` of that
    folder refused it (exit 5). A README command writing DATASET/NAME names its suite NAME:
    with --name NAME, or, for `build`, as its adapter (the default name)."""
    commands = _readme_commands()
    datasets = {
        out for argv in commands if "--all" in argv for out in _option_values(argv, "--out")
    }
    assert datasets, "the README builds a dataset folder with build --all"
    writers = [argv for argv in commands if argv[0] != "build" or "--all" not in argv]
    for argv in writers:
        for out in _option_values(argv, "--out"):
            parent, _, config = out.rstrip("/").rpartition("/")
            if parent in datasets and argv[0] in ("build", "transform", "chat-prompts"):
                default = [argv[1]] if argv[0] == "build" else []
                named = _option_values(argv, "--name") or default
                assert named == [config], f"{' '.join(argv)}: config {config!r}, suite {named}"


def test_contributing_names_each_shipped_map_that_pools_identical_texts():
    """CONTRIBUTING said "no built-in suite uses a numeric rule, so no published figure changes"
    while six shipped numeric maps pool identical texts rated differently (sfhot, sfres, ...)."""
    from nnd_suites.quality_map import NumericRule, QualityMap, builtin_quality_maps

    pooling = sorted(
        name
        for name in builtin_quality_maps()
        if isinstance(rule := QualityMap.load(name).rule, NumericRule)
        and rule.pools_identical_texts()
    )
    text = (ROOT / "CONTRIBUTING.md").read_text("utf-8")
    section = text[text.index("**Identical texts rated differently: pooled") :]
    section = " ".join(section[: section.index("\n\n")].split())
    assert "sfhot" in pooling and "mt_metrics_eval" not in pooling
    assert [name for name in pooling if f"`{name}`" not in section] == []
    assert "no built-in suite uses a numeric rule" not in section


def test_every_nnd_suites_call_in_the_readme_works_after_import_nnd_suites() -> None:
    """The README named `nnd_suites.human.scores.human_scores(suite)` and two more such paths:
    after `import nnd_suites` (its Python examples' only import) each was an AttributeError
    ('No nnd_suites attribute human'). Each name called as ``nnd_suites.X(`` must resolve from
    that import alone, in a fresh process (another test may have imported the submodule)."""
    import sys

    readme = (ROOT / "README.md").read_text("utf-8")
    names = sorted(set(re.findall(r"(?<![\w.])(nnd_suites(?:\.\w+)+)\(", readme)))
    assert "nnd_suites.verify_suite" in names  # the pattern finds the README's calls
    code = f"import nnd_suites\nfor name in {names!r}:\n    eval(name)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_readme_gives_each_exit_status_as_the_cli_exits(tmp_path, capsys) -> None:
    """The README's list of exit statuses named 3 'malformed source' and 2 'bad input', while a
    source file not found exits 3: a missing file is a fault of that input (a map's is 4), and
    the README says so; each class it names has the status it gives."""
    from nnd_suites import errors
    from nnd_suites.cli import main

    readme = " ".join((ROOT / "README.md").read_text("utf-8").split())
    listed = readme[readme.index("with its own exit status:") :]
    listed = listed[: listed.index("from `nnd_suites.errors`")]
    for status, name in re.findall(r"(\d+) [^,`]*?\(`(\w+)`", listed):
        assert getattr(errors, name).exit_status == int(status), name
    assert "a file not found included: a source file 3, a quality map file 4" in listed
    nope = str(tmp_path / "nope")
    assert main(["build", "challenge300", "--source", f"{nope}.tsv"]) == 3
    assert main(["build", "challenge300", "--quality-map", f"{nope}.yaml"]) == 4
    err = capsys.readouterr().err
    assert "nope.tsv: source file not found" in err and "nope.yaml: file not found" in err
