"""Third-party entry points that clash with a plugin already registered, as a user's installed
package would: a package in tmp_path with a ``*.dist-info/entry_points.txt``, its entry points
read by the registry (only those of tmp_path, not the venv's), and the real registry of the kind
discovered again with them, its tables restored after the test."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Callable, Iterator
from importlib.metadata import distributions
from pathlib import Path

import pytest

from nnd_suites.cli import main
from nnd_suites.errors import PluginError
from nnd_suites.evaluation.scorers import SCORERS
from nnd_suites.plugins import registry
from nnd_suites.plugins.registry import Registry

SCORER_MODULE = """
    from nnd_suites.evaluation.scorers import CandidateScores, Scorer, ScorerMetadata

    class Squared(Scorer):
        metadata = ScorerMetadata(summary="sum over targets squared", description="A scorer.")

        def value(self, scores: CandidateScores, text: str) -> float:
            return scores.model.logprob_sum / scores.model.n_targets**2
"""

TRANSFORMATION_MODULE = """
    import random

    from nnd_suites.transformations import (
        Transformation, TransformationMetadata, register_transformation,
    )

    @register_transformation("lowercase")
    class Shout(Transformation):
        metadata = TransformationMetadata(
            touches="both", kind="normalization", seeded=False, languages=["en"],
            summary="a third-party lowercase that upper-cases", description="A transformation.",
        )

        def transform_text(self, text: str, rng: random.Random) -> str:
            return text.upper()
"""

Install = Callable[[str, str, dict[str, str]], None]


@pytest.fixture
def install(tmp_path, monkeypatch) -> Iterator[Install]:
    """``install(distribution, entry_points_txt, files)``: a package installed the way pip leaves
    one (its modules and a dist-info folder), found through sys.path; its modules are forgotten
    afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    here = [str(tmp_path)]

    def entry_points(group: str):
        return [
            p for dist in distributions(path=here) for p in dist.entry_points if p.group == group
        ]

    monkeypatch.setattr(registry, "entry_points", entry_points)
    packages: set[str] = set()

    def install_package(distribution: str, points: str, files: dict[str, str]) -> None:
        info = tmp_path / f"{distribution}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n"
        )
        (info / "entry_points.txt").write_text(textwrap.dedent(points))
        for relative, text in files.items():
            path = tmp_path / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text), encoding="utf-8")
            packages.add(Path(relative).parts[0])
        importlib.invalidate_caches()

    yield install_package
    for name in [m for m in sys.modules if m.split(".")[0] in packages]:
        del sys.modules[name]


def rediscover(plugins: Registry, monkeypatch) -> Registry:
    """The real registry, to be discovered again (with the entry points installed after this
    call) on its next query; every table it holds is a copy for the test's time."""
    plugins.names()
    for attribute, value in vars(plugins).items():
        if isinstance(value, dict):
            monkeypatch.setattr(plugins, attribute, dict(value))
    monkeypatch.setattr(plugins, "_discovered", False)
    return plugins


def listed(output: str) -> dict[str, str]:
    """`nnd-suites list`'s plugin lines: name -> the rest of the line."""
    lines = [line.split(maxsplit=1) for line in output.splitlines() if line[:2] == "  "]
    return {words[0]: words[1] for words in lines if len(words) == 2}


def test_a_class_entry_point_taking_a_builtin_name_is_listed_as_broken(
    install, monkeypatch, capsys
):
    """`mean = pkg:Class` in nnd_suites.scorers stopped `nnd-suites list` whole: one line,
    "nnd-suites list: error: scorer 'mean' is registered twice ...", no listing. The entry point
    is now listed as BROKEN beside the others (exit 7), and queries of scorers stop on it; so is
    a module entry point that registers nothing (it stopped `list` the same way)."""
    scorers = rediscover(SCORERS, monkeypatch)
    install(
        "collide",
        "[nnd_suites.scorers]\nmean = my_ext.scorers:Squared\nempty = my_ext.empty\n",
        {"my_ext/__init__.py": "", "my_ext/scorers.py": SCORER_MODULE, "my_ext/empty.py": ""},
    )
    assert main(["list"]) == PluginError.exit_status
    captured = capsys.readouterr()
    lines = listed(captured.out)
    assert {"sum", "per_char", "quiz_design", "lowercase"} <= set(lines)
    clash = (
        "scorer entry point 'mean' (my_ext.scorers:Squared) of package 'collide' in group "
        "'nnd_suites.scorers' failed to load: scorer 'mean' is registered twice: by builtin (mean, "
        "in "
    )
    assert lines["mean"].startswith(f"BROKEN: {clash}")
    assert lines["mean"].endswith(
        "and by my_ext.scorers (in my_ext.scorers:Squared); rename the one of my_ext.scorers: a "
        "built-in scorer keeps its name; fix it or remove it"
    )
    assert clash in captured.err
    assert lines["empty"] == (
        "BROKEN: scorer entry point 'empty' (my_ext.empty) of package 'collide' in group "
        "'nnd_suites.scorers' registers nothing: decorate its classes with "
        "@register_scorer(NAME), or name one class as module:Class"
    )
    with pytest.raises(PluginError, match="'mean' is registered twice"):
        scorers.get("sum")


BACKEND_MODULE = """
    from nnd_suites.evaluation import Backend, BackendMetadata, Score

    class MyCausal(Backend):
        metadata = BackendMetadata(summary="my causal backend", description="A backend.")

        @classmethod
        def load(cls, model, *, mode="default", **options):
            return cls()

        @property
        def identity(self):
            return {"backend": self.name, "model": "mine", "mode": self.mode}

        def score(self, requests, *, sink=None, progress=None):
            return [Score(logprob_sum=-1.0, n_targets=1) for _ in requests]
"""


def test_a_class_entry_point_taking_a_lazy_name_is_refused_not_skipped(
    install, monkeypatch, capsys
):
    """`hf_causal = my_ext.backend:MyCausal` in nnd_suites.backends was skipped without a word
    (the name was a lazy entry already): `list` showed the built-in, `--backend hf_causal` ran
    it, exit 0. Two packages giving `per_token_sq` each: the first on sys.path won, silently.
    Each is now the decorator form's "registered twice ...; rename one of them", listed as
    BROKEN, and the kind's queries stop on it."""
    from nnd_suites.evaluation.backend import BACKENDS

    backends, scorers = rediscover(BACKENDS, monkeypatch), rediscover(SCORERS, monkeypatch)
    files = {"my_ext/__init__.py": "", "my_ext/backend.py": BACKEND_MODULE}
    points = "[nnd_suites.backends]\nhf_causal = my_ext.backend:MyCausal\n"
    scorer = "[nnd_suites.scorers]\nper_token_sq = {}.scorers:Squared\n"
    install(
        "my_causal", points + scorer.format("my_ext"), files | {"my_ext/scorers.py": SCORER_MODULE}
    )
    install(
        "other",
        scorer.format("other_ext"),
        {"other_ext/__init__.py": "", "other_ext/scorers.py": SCORER_MODULE},
    )
    assert main(["list"]) == PluginError.exit_status
    lines = listed(capsys.readouterr().out)
    assert lines["hf_causal"] == (
        "BROKEN: backend entry point 'hf_causal' (my_ext.backend:MyCausal) of package 'my_causal' "
        "in group 'nnd_suites.backends' failed to load: backend 'hf_causal' is registered twice: "
        "by builtin (hf_causal, in nnd_suites.evaluation.backends.hf_causal:HFCausalBackend) and "
        "by my_ext.backend (in my_ext.backend:MyCausal); rename the one of my_ext.backend: a "
        "built-in backend keeps its name; fix it or remove it"
    )
    assert lines["hf"].endswith("(builtin)")  # the other backends are listed
    assert "'per_token_sq' is registered twice: by " in lines["per_token_sq"]
    assert lines["per_token_sq"].endswith("rename one of them; fix it or remove it")
    for target in ("my_ext.scorers:Squared", "other_ext.scorers:Squared"):  # either order
        assert target in lines["per_token_sq"]
    with pytest.raises(PluginError, match="'hf_causal' is registered twice"):
        backends.get("hf_causal")
    with pytest.raises(PluginError, match="'per_token_sq' is registered twice"):
        scorers.get("mean")


def test_a_third_party_folder_named_like_a_builtin_plugin_never_evicts_it(
    install, monkeypatch, capsys, tmp_path
):
    """An entry point `my_lower = lowercase.p` whose module, in a folder named `lowercase`,
    registers 'lowercase' evicted the built-in: `list` showed the package's class as
    lowercase and "casing BROKEN: ... casing.py registers 'lowercase', the name of the
    transformation in .../lowercase/p.py; rename it there", blaming nnd-suites' own folder. The
    folder-name rule now holds only among the built-in folders: the built-in keeps its name, and
    the entry point is the one broken, told to rename its plugin."""
    from nnd_suites.transformations import TRANSFORMATIONS

    builtin = TRANSFORMATIONS.get("lowercase")
    transformations = rediscover(TRANSFORMATIONS, monkeypatch)
    install(
        "collide",
        "[nnd_suites.transformations]\nmy_lower = lowercase.p\n",
        {"lowercase/__init__.py": "", "lowercase/p.py": TRANSFORMATION_MODULE},
    )
    assert main(["list"]) == PluginError.exit_status
    lines = listed(capsys.readouterr().out)
    assert "casing" not in lines and lines["lowercase"].endswith("(builtin)")
    module = tmp_path / "lowercase" / "p.py"
    assert lines["my_lower"] == (
        "BROKEN: transformation entry point 'my_lower' (lowercase.p) of package 'collide' in "
        "group 'nnd_suites.transformations' failed to load: transformation 'lowercase' is "
        f"registered twice: by builtin (lowercase, in {builtin.folder() / 'casing.py'}) and by "
        f"lowercase.p (in {module}); rename the one of lowercase.p: a built-in transformation "
        "keeps its name; fix it or remove it"
    )
    with pytest.raises(PluginError, match="'my_lower'"):
        transformations.get("lowercase")
