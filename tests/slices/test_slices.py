"""Slice plugins: the per-plugin examples harness, registration, and slices of real suites."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from nnd_suites.errors import ParameterError, PluginError
from nnd_suites.evaluation.slicing import gem_contrast_sets, slice_input
from nnd_suites.plugins.harness import plugin_problems
from nnd_suites.plugins.registry import Registry
from nnd_suites.slices import SLICES, Slice, SliceInput, SliceMetadata, SliceTest, suite_slices
from nnd_suites.slices.base import validate_slice

FOLDER = Path(SLICES.get("length_chars").folder()).parent
BUILT_IN = {"length_chars", "length_tokens", "context_length", "worse_system", "breakdown"}
# the built-in names given to `slices` are the session's builds (a build each cost a second)
pytestmark = pytest.mark.usefixtures("builtin_names_give_session_builds")


@pytest.mark.parametrize("name", SLICES.names())
def test_slice_examples(name):
    """One test case per registered slice: every example of its examples.json gives its output."""
    cls = SLICES.get(name)
    examples = cls.examples()
    assert len(examples) >= 2, f"{name}: add at least two examples to {cls.folder()}/examples.json"
    for example in examples:
        data = SliceInput(
            [SliceTest.from_dict(t) for t in example["tests"]],
            tuple(example.get("breakdown_fields", ())),
        )
        assert cls(**example.get("params", {})).sets(data) == example["output"], example
    assert any(example["output"] for example in examples), f"{name}: no example makes a set"


def test_slices_take_typed_parameters():
    tests = [SliceTest(id=str(i), context={"q": "x" * i}, high="a", low="b") for i in range(1, 11)]
    sets = suite_slices(SliceInput(tests), ["context_length:bins=5"])
    assert list(sets["context_length"]) == [
        f"{i}/5: {2 * i - 1}-{2 * i} chars" for i in range(1, 6)
    ]
    with pytest.raises(ParameterError, match=r"^slice context_length: parameter 'bins': .*"):
        suite_slices(SliceInput(tests), ["context_length:bins=1"])
    with pytest.raises(
        ParameterError, match=r"slice length_chars: unknown parameter 'x' \(known: "
    ):
        suite_slices(SliceInput(tests), ["length_chars:x=1"])


def test_every_folder_holds_a_registered_documented_slice():
    assert set(SLICES.names()) >= BUILT_IN
    assert plugin_problems(SLICES) == []


class Halves(Slice):  # registered by the test in a registry of its own
    metadata = SliceMetadata(summary="halves", description="First and second half.")

    def sets(self, data):
        half = len(data.tests) // 2
        ids = [t.id for t in data.tests]
        return {"halves": {"first": ids[:half], "second": ids[half:]}}


def test_a_third_party_slice_registers_and_bad_ones_are_refused():
    registry: Registry[Slice] = Registry(
        "slice", "nnd_suites.no_such_group", base=lambda: Slice, validate=validate_slice
    )
    registry.register("halves")(Halves)
    tests = [SliceTest(id=str(i), context={"q": "x"}, high="a", low="b") for i in range(4)]
    assert registry.get("halves")().sets(SliceInput(tests)) == {
        "halves": {"first": ["0", "1"], "second": ["2", "3"]}
    }
    with pytest.raises(PluginError, match="'metadata' must be a SliceMetadata"):
        registry.register("no_metadata")(type("NoMetadata", (Halves,), {"metadata": None}))
    with pytest.raises(PluginError, match="'worse_system' is registered twice: by builtin"):
        SLICES.register("worse_system")(type("Other", (Halves,), {}))


def test_slices_of_challenge300(challenge300_suite):
    pairs = challenge300_suite.pairs
    sets = gem_contrast_sets(challenge300_suite)
    assert "length_tokens" not in sets  # no model, no token counts
    assert set(sets) == {
        "length_chars", "context_length", "worse_system", "breakdown.group",
        "breakdown.question_category",
    }  # fmt: skip
    every = sorted(p.id for p in pairs)
    for name in ("length_chars", "context_length", "breakdown.question_category"):
        assert sorted(i for ids in sets[name].values() for i in ids) == every, name
    shorter = sum(len(p.high.text) < len(p.low.text) for p in pairs)
    assert len(sets["length_chars"]["better shorter"]) == shorter
    quartiles = [len(ids) for ids in sets["context_length"].values()]
    assert len(quartiles) == 4 and max(quartiles) - min(quartiles) < 0.05 * len(pairs)
    # a test is in the subset of every system that produced its worse candidate
    systems = Counter(s for p in pairs for s in p.low.systems)
    assert {s: len(ids) for s, ids in sets["worse_system"].items()} == dict(systems)


def test_hh_rlhf_has_no_worse_system_set(hh_suite):
    """HH-RLHF records no generating system: no 'unknown' subset pooling every test."""
    sets = gem_contrast_sets(hh_suite)
    assert "worse_system" not in sets
    assert sum(len(ids) for ids in sets["length_chars"].values()) == 2303


def test_a_conversations_length_is_its_turns_not_its_stored_json(hh_suite):
    """hh_rlhf stores each dialogue as JSON turns: context_length measures the conversation as
    the baselines read it (its speakers and words), not the JSON's brackets, keys and escapes."""
    from nnd_suites.evaluation.baselines import context_text
    from nnd_suites.records.templates import conversation_fields

    conversations = conversation_fields(hh_suite.manifest.default_template)
    assert conversations == {"dialogue"}
    length = {p.id: len(context_text(p, conversations)) for p in hh_suite.pairs}
    subsets = gem_contrast_sets(hh_suite, names=["context_length"])["context_length"]
    assert sum(map(len, subsets.values())) == len(hh_suite.pairs)
    for label, ids in subsets.items():
        low, high = map(int, re.fullmatch(r"Q\d: (\d+)-(\d+) chars", label).groups())
        assert (low, high) == (min(length[i] for i in ids), max(length[i] for i in ids)), label


def test_token_slice_needs_the_runs_outcomes(challenge300_suite):
    from nnd_suites.errors import NNDError
    from nnd_suites.statistics.outcomes import TestOutcome

    outcomes = [
        TestOutcome(
            pair_id=p.id, group_id=p.group_id, category=p.category, label=p.label,
            ll_high=-1.0, ll_low=-2.0, n_high=len(p.high.text.split()) + 1,
            n_low=len(p.low.text.split()) + 1, truncated=False, outcome="pass",
        )
        for p in challenge300_suite.pairs
    ]  # fmt: skip
    sets = suite_slices(slice_input(challenge300_suite, outcomes), ["length_tokens"])
    same = sum(o.n_high == o.n_low for o in outcomes)
    assert len(sets["length_tokens"]["same length"]) == same
    with pytest.raises(NNDError, match=r"challenge300: 1 test has no outcome"):
        slice_input(challenge300_suite, outcomes[1:])


def test_cli_exports_gem_contrast_sets(tmp_path, capsys):
    from nnd_suites.cli import main

    out = tmp_path / "gem" / "quiz_design.json"
    assert main(["slices", "quiz_design", "--gem-out", str(out)]) == 0
    assert "length_chars" in capsys.readouterr().out
    exported = json.loads(out.read_text())
    assert set(exported) == {"length_chars", "context_length", "worse_system"}
    assert sum(len(ids) for ids in exported["length_chars"].values()) == 2686
    assert main(["slices", "quiz_design", "--slice", "length_chars", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"length_chars": exported["length_chars"]}
    assert main(["slices", "quiz_design", "--slice", "lenght_chars"]) == 6
    assert "did you mean" in capsys.readouterr().err


def test_a_slice_named_that_gives_no_set_is_an_error_saying_why(capsys):
    # `slices quiz_design --slice length_tokens` (no --run) and `--slice breakdown` (quiz_design
    # declares no breakdown field) printed the header alone, or {} with --json, exit status 0
    from nnd_suites.cli import main

    for spec, why in (("length_tokens", "--run RUN"), ("breakdown", "nothing to cut them by")):
        for json_flag in ([], ["--json"]):
            assert main(["slices", "quiz_design", "--slice", spec, *json_flag]) == 2
            said = capsys.readouterr()
            assert f"slice {spec} gives no set for these 2,686 tests" in said.err
            assert why in said.err and said.out == ""
    # unnamed, a slice that does not apply is left out, as before
    assert main(["slices", "quiz_design", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {
        "length_chars",
        "context_length",
        "worse_system",
    }


def test_a_slice_named_twice_is_a_usage_error(capsys):
    """`--slice context_length --slice context_length:bins=10` blamed the plugin (exit status 7,
    "slice context_length: set 'context_length' is produced twice") for the user's repeat."""
    from nnd_suites.cli import main

    for second in ("context_length", "context_length:bins=10"):
        argv = ["slices", "quiz_design", "--slice", "context_length", "--slice", second]
        assert main(argv) == 2
        assert "slice 'context_length' is given twice (--slice)" in capsys.readouterr().err


def test_the_readme_example_plugin_gives_its_examples_output(tmp_path):
    """slices/README.md's plugin and examples.json, run as a contributor would (own process:
    the decorator registers into the global registry)."""
    readme = (FOLDER / "README.md").read_text("utf-8")
    code = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    examples = re.search(r"```json\n(.*?)```", readme, re.S).group(1)
    (tmp_path / "examples.json").write_text(examples)
    script = code + textwrap.dedent(
        """
        import json, sys
        from nnd_suites.slices import SliceInput, SliceTest
        for example in json.load(open(sys.argv[1]))["examples"]:
            tests = [SliceTest.from_dict(t) for t in example["tests"]]
            assert SharedFirstWord().sets(SliceInput(tests)) == example["output"], example
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "examples.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_report_says_when_subsets_overlap(quiz_design_suite, heuristic_report):
    """Quiz Design merges word-for-word identical questions of several systems into one
    candidate, so a test can sit in several worse_system subsets; the report says so under that
    table only (the length subsets partition the tests)."""
    from nnd_suites.evaluation.report_markdown import markdown

    report = heuristic_report([quiz_design_suite], "length", lambda text: float(len(text)))
    result = report.suites["quiz_design"]
    text = markdown(report)
    worse = sum(r.n + r.degenerate for r in result.by_slice["worse_system"].values())
    assert worse > result.pairs == 2686
    note = f"The subsets overlap: their sizes add up to {worse:,} for 2,686 tests"
    worse_table = text.split("| slice worse_system |")[1].split("\n\n|")[0]
    assert note in worse_table and text.count("The subsets overlap") == 1
    assert "The subsets hold" not in text


def test_gem_out_replaces_only_its_own_file(tmp_path, capsys):
    """``--gem-out`` overwrote any file; now anyone else's file is refused, left byte-identical,
    before the suite is even loaded, and an earlier export is replaced."""
    from nnd_suites.cli import main
    from nnd_suites.errors import OutputFolderError

    mine = tmp_path / "notes.json"
    mine.write_bytes(b'{"todo": ["write the paper"]}')  # JSON, but no contrast sets
    assert main(["slices", "no_such_suite", "--gem-out", str(mine)]) == (
        OutputFolderError.exit_status
    )
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "notes.json: exists and is not GEM contrast sets" in err
    assert mine.read_bytes() == b'{"todo": ["write the paper"]}'
    ours = tmp_path / "gem.json"
    ours.write_text(json.dumps({"length_chars": {"old": ["x"]}}))  # an earlier export
    assert main(["slices", "quiz_design", "--slice", "length_chars", "--gem-out", str(ours)]) == 0
    assert "old" not in json.loads(ours.read_text())["length_chars"]


def test_a_test_the_model_skipped_is_in_no_token_subset(
    challenge300_suite, heuristic_report, tmp_path, capsys
):
    """A candidate too long for the model's window is skipped: it has no token count (its
    outcome records 0). It was filed under 'better shorter' or 'same length' in the GEM contrast
    sets though every pass rate leaves it out; it is now in no subset, and counted as such."""
    from nnd_suites.cli import main
    from nnd_suites.evaluation.outputs import write_report

    # a candidate over 40 characters does not fit this 'model': its test is skipped
    report = heuristic_report(
        [challenge300_suite], "short-window", lambda t: None if len(t) > 40 else -len(t)
    )
    outcomes = report.outcomes["challenge300"]
    skipped = {o.pair_id for o in outcomes if o.outcome == "skipped"}
    assert len(skipped) > 100
    subsets = gem_contrast_sets(challenge300_suite, outcomes, ["length_tokens"])["length_tokens"]
    filed = {test for ids in subsets.values() for test in ids}
    assert not filed & skipped and filed == {o.pair_id for o in outcomes} - skipped
    write_report(report, tmp_path / "run")
    gem = tmp_path / "gem.json"
    argv = ["slices", "challenge300", "--run", str(tmp_path / "run"), "--slice", "length_tokens"]
    assert main([*argv, "--gem-out", str(gem)]) == 0
    assert f"in no subset                     n={len(skipped):,}" in capsys.readouterr().out
    assert json.loads(gem.read_text())["length_tokens"] == subsets


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("repeat", r"subset 'long': test '[0-9a-f]+' is listed 2 times \([\d,]+ repeats in all\)"),
        ("unknown", r"subset 'ghost': 1 test id not in the 2,686 tests it was given"),
    ],
)
def test_a_slice_listing_a_test_twice_or_one_the_suite_lacks_is_refused(
    fault, said, monkeypatch, capsys, tmp_path
):
    """A slice listing each test once per word put 23,503 tests of a 2,686-test suite into its
    subsets (report.md: 'long | 17,699', read as subsets that overlap), exit 0; one listing an
    id the suite lacks was written to the GEM file with exit 0, and evaluate scored the whole
    model before a KeyError. Both are now a named plugin error before any model is loaded."""
    from nnd_suites.cli import main
    from nnd_suites.slices import base

    class Faulty(SLICES.get("length_chars")):
        def sets(self, data):
            ids = [t.id for t in data.tests]
            if fault == "repeat":
                return {"faulty": {"long": ids + ids[:3], "short": []}}
            return {"faulty": {"all": ids, "ghost": ["no-such-test"]}}

    monkeypatch.setattr(base, "make_slice", lambda spec: Faulty())
    gem = tmp_path / "gem.json"
    argv = ["slices", "builtin:quiz_design", "--slice", "faulty", "--gem-out", str(gem)]
    assert main(argv) == PluginError.exit_status
    assert re.search(f"slice faulty: set 'faulty', {said}", capsys.readouterr().err)
    assert not gem.exists()
