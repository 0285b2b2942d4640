"""Transformation plugins: the per-plugin examples harness, registration, parameters, randomness."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys

import pytest

from nnd_suites.errors import NNDError, PluginError, UnknownItemError
from nnd_suites.plugins.harness import plugin_problems
from nnd_suites.plugins.registry import Registry
from nnd_suites.transformations import (
    TRANSFORMATIONS,
    SeededParams,
    Transformation,
    TransformationMetadata,
    make_transformation,
    parse_spec,
)
from nnd_suites.transformations.base import validate_transformation
from nnd_suites.transformations.typos.typos import NEIGHBOURS

ISSUE_NAMES = {
    "lowercase", "uppercase", "titlecase", "first_letter_case", "no_final_punctuation",
    "no_punctuation", "whitespace", "nfkc", "typos", "detokenize", "numbers",
}  # fmt: skip


# ------------------------------------------------------------------ the examples harness
@pytest.mark.parametrize("name", TRANSFORMATIONS.names())
def test_plugin_examples(name):
    """One test case per registered plugin: its examples.json, run twice, global state untouched."""
    cls = TRANSFORMATIONS.get(name)
    examples = cls.examples()
    assert len(examples) >= 2, f"{name}: add at least two examples to {cls.folder()}/examples.json"
    state = random.getstate()
    for example in examples:
        plugin = cls(**example.get("params", {}))  # a plugin without parameters may omit them
        first = plugin.apply(example["input"])
        assert first == example["output"], example
        random.seed(12345)  # the global generator must not matter
        again = plugin.apply(example["input"])
        assert again == first, (
            f"{name}: {example['input']!r} gave {first!r}, then {again!r} once Python's global "
            "random generator was reseeded: the plugin draws from global state; draw every "
            "random choice from transform_text's rng (seeded: true in its metadata)"
        )
    random.setstate(state)
    assert any(ex["input"] != ex["output"] for ex in examples), f"{name}: no example changes text"
    if cls.metadata.seeded:
        seeds = {
            ex.get("params", {}).get("seed", 0) for ex in examples if ex["input"] != ex["output"]
        }
        assert len(seeds) >= 2, f"{name}: seeded plugins need changing examples with two seeds"


def test_issue_names_are_registered():
    assert set(TRANSFORMATIONS.names()) >= ISSUE_NAMES
    assert {n for n, c in TRANSFORMATIONS.items() if c.metadata.seeded} >= {"typos", "numbers"}


def test_every_folder_holds_a_registered_documented_plugin():
    assert plugin_problems(TRANSFORMATIONS) == []


def test_seeded_output_is_the_same_in_another_process():
    """No salted hash(), no global state: a fresh interpreter with another hash seed agrees."""
    text = "What is the capital of France, and why did 1,000 people move there in 1990?"
    code = (
        "import json, sys; from nnd_suites.transformations import make_transformation as m; "
        "print(json.dumps([m(s).apply(sys.argv[1]) for s in sys.argv[2:]]))"
    )
    specs = ["typos:rate=0.2,seed=4", "numbers:seed=9"]
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    done = subprocess.run(
        [sys.executable, "-c", code, text, *specs], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    here = [make_transformation(spec).apply(text) for spec in specs]
    assert json.loads(done.stdout) == here
    assert all(out != text for out in here)


# ------------------------------------------------------------------ plugin behaviour
def test_typos_rate_and_neighbours():
    text = "the quick brown fox jumps over the lazy dog " * 40
    letters = sum(c.isalpha() for c in text)
    for rate in (0.02, 0.05, 0.2):
        out = make_transformation(f"typos:rate={rate},seed=1").apply(text)
        assert len(out) == len(text)
        slips = [(a, b) for a, b in zip(text, out, strict=True) if a != b]
        assert all(b in NEIGHBOURS[a] for a, b in slips), "every typo is a neighbouring key"
        assert abs(len(slips) / letters - rate) < 3 * (rate * (1 - rate) / letters) ** 0.5 + 0.005
    assert make_transformation("typos:rate=0").apply(text) == text
    assert make_transformation("typos:seed=1").apply(text) != make_transformation(
        "typos:seed=2"
    ).apply(text)


def test_numbers_follow_gem_bounds_and_formats():
    plugin = make_transformation("numbers:seed=5")
    for seed in range(30):
        out = make_transformation(f"numbers:seed={seed}").apply("54 and 3.14 and 1,000 and 007")
        first, _, second, _, third, _, fourth = out.split()
        assert 0 <= int(first) < 100 and first != "54"
        assert len(second.split(".")[1]) == 2 and 0 <= float(second) < 10 and second != "3.14"
        value = int(third.replace(",", ""))
        assert value < 10_000 and ("," in third) == (value >= 1000) and third != "1,000"
        assert len(fourth) == 3 and fourth != "007"
    # One number, one replacement: the same in every text it appears in.
    a = plugin.apply("In 1990 the wall fell.")
    b = plugin.apply("What happened in 1990?")
    assert a.split()[1] == b.split()[-1].rstrip("?")
    assert plugin.apply("the 22nd of May, CO2, the 1990s, v1.2.3") == (
        "the 22nd of May, CO2, the 1990s, v1.2.3"
    )


def test_numbers_in_other_digits_keep_their_digits_and_their_value():
    """A number in full-width (２０２３, Japanese) or Arabic-Indic digits (٣٤٥) is the same number
    as in ASCII digits (2023 in the English translation): the same new value, written in the
    digits it was written in."""
    plugin = make_transformation("numbers:seed=4")
    fullwidth = str.maketrans("0123456789", "０１２３４５６７８９")
    arabic = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
    for number in ("2023", "345", "1,000", "3.14", "007"):
        new = plugin.apply(number)
        assert plugin.apply(f"{number.translate(fullwidth)}年") == f"{new.translate(fullwidth)}年"
        assert plugin.apply(f"عام {number.translate(arabic)}") == f"عام {new.translate(arabic)}"


def test_final_punctuation_of_other_scripts_is_removed_too():
    """The final marks of Arabic (؟ ، ؛), Urdu (۔), Hindi (।) and full-width Chinese (， ； ：)
    are removed as . ? , ; : are: the plugin declares every language."""
    plugin = make_transformation("no_final_punctuation")
    for text in ("هل أنت بخير؟", "نعم،", "آپ کیسے ہیں۔", "नमस्ते।", "你好，", "如下：", "首先；"):
        assert plugin.apply(text) == text[:-1], text
    assert plugin.apply("«نعم»؟") == "«نعم»" and plugin.apply("他说：“好。”") == "他说：“好。”"


@pytest.mark.parametrize("spec", ["titlecase", "first_letter_case"])
def test_a_first_letter_gets_its_title_case_not_its_upper_case(spec):
    """A ligature or digraph starting a word is title-cased as one letter: the ﬁ of text taken
    from a PDF becomes Fi (not FI), the Croatian digraph ǆ becomes ǅ (not Ǆ)."""
    plugin = make_transformation(spec)
    assert plugin.apply("ﬁnally done") in ("Finally done", "Finally Done")
    assert plugin.apply("ǆungla") == "ǅungla"


def test_titlecase_keeps_a_combining_mark_inside_its_word():
    """A letter after a combining accent (e + U+0301, as decomposed text writes é) is inside
    its word: titlecase gives the same text whether the accents are composed or not."""
    import unicodedata

    plugin = make_transformation("titlecase")
    for text, title in [("cafés are nice", "Cafés Are Nice"), ("UN RÉSUMÉ", "Un Résumé"),
                        ("İSTANBUL", "İstanbul"), ("señor ñandú", "Señor Ñandú")]:  # fmt: skip
        for spelt in (text, unicodedata.normalize("NFD", text)):
            assert unicodedata.normalize("NFC", plugin.apply(spelt)) == title
    assert plugin.apply("Cafe\u0301s") == "Cafe\u0301s"


# ------------------------------------------------------------------ parameters and specs
def test_spec_parsing_and_canonical_form():
    assert parse_spec("typos:rate=0.05,seed=1") == ("typos", {"rate": "0.05", "seed": "1"})
    assert parse_spec(" lowercase ") == ("lowercase", {})
    plugin = make_transformation("typos: seed=3 , rate=0.02")
    assert plugin.params.rate == 0.02 and plugin.seed == 3
    assert plugin.spec == "typos:rate=0.02,seed=3"
    assert make_transformation(plugin.spec).params == plugin.params
    assert make_transformation("typos").spec == "typos"
    assert make_transformation("typos:rate=0.05").spec == "typos:rate=0.05"  # as given
    assert make_transformation("lowercase").params_dict() == {"on": "both"}
    assert make_transformation("lowercase:on=candidates").touches == "candidates"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("typos:rat=0.1", r"transformation typos: unknown parameter 'rat' \(known: on, seed, rate"),
        ("typos:rate=2", r"transformation typos: parameter 'rate': .*less than or equal to 1"),
        ("typos:seed=-1", r"parameter 'seed': .*greater than or equal to 0"),
        ("lowercase:on=paragraph", r"transformation lowercase: parameter 'on'"),
        ("first_letter_case:to=middle", r"parameter 'to': .*'upper' or 'lower'"),
        ("lowercase:x", r"'x' is not KEY=VALUE \(write NAME\[:param=value"),
        ("typos:seed=1,seed=2", r"'seed' given twice \('1' and '2'\)"),
        (":seed=1", r"missing name"),
    ],
)
def test_bad_parameters_name_the_plugin_and_parameter(spec, message):
    with pytest.raises(NNDError, match=message):
        make_transformation(spec)


def test_unknown_transformation_lists_the_known_ones():
    with pytest.raises(UnknownItemError, match=r"unknown transformation 'lowercas'.*lowercase"):
        make_transformation("lowercas")


# ------------------------------------------------------------------ registration
class _Meta:
    ok = TransformationMetadata(
        touches="candidates", kind="perturbation", seeded=False, languages=["en"],
        summary="reverse", description="Reverse the text.",
    )  # fmt: skip


class Reverse(Transformation):  # registered by each test in a registry of its own
    metadata = _Meta.ok

    def transform_text(self, text: str, rng: random.Random) -> str:
        return text[::-1]


def test_a_third_party_plugin_registers_through_a_registry():
    registry: Registry[Transformation] = Registry(
        "transformation", "nnd_suites.no_such_group", base=lambda: Transformation,
        builtin_package="nnd_suites.transformations", validate=validate_transformation,
    )  # fmt: skip
    registry.register("reverse", aliases=["backwards"])(Reverse)
    assert registry.get("reverse")().apply("abc") == "cba"
    assert registry.get("backwards") is Reverse and registry.aliases("reverse") == ["backwards"]
    assert TRANSFORMATIONS.origin("lowercase") == "builtin"
    with pytest.raises(PluginError, match="'backwards' is registered twice"):
        registry.register("other", aliases=["backwards"])(type("Other", (Reverse,), {}))


def test_declaration_errors_are_caught_at_registration():
    class NoMetadata(Reverse):
        name = "no_metadata"
        metadata = None  # type: ignore[assignment]

    class SeededWithoutSeed(Reverse):
        name = "seeded_without_seed"
        metadata = _Meta.ok.model_copy(update={"seeded": True})

    class SeedNotDeclared(Reverse):
        name = "seed_not_declared"
        Params = SeededParams

    with pytest.raises(PluginError, match="'metadata' must be a TransformationMetadata"):
        validate_transformation(NoMetadata)
    with pytest.raises(PluginError, match="seeded=True but its Params has no 'seed'"):
        validate_transformation(SeededWithoutSeed)
    with pytest.raises(PluginError, match="seeded=False but its Params has 'seed'"):
        validate_transformation(SeedNotDeclared)
    with pytest.raises(PluginError, match="'lowercase' is registered twice: by builtin"):
        TRANSFORMATIONS.register("lowercase")(type("Lowercase2", (Reverse,), {}))
    with pytest.raises(PluginError, match="lower-case identifier"):
        TRANSFORMATIONS.register("Bad-Name")(type("Bad", (Reverse,), {}))


def test_a_name_two_builtin_folders_register_names_both_folders():
    """A new plugin folder reusing a built-in's name was refused as "'lowercase' is registered
    twice: by builtin (lowercase) and by builtin", naming neither folder (every built-in's origin
    is builtin; an adapter's source.yaml declaring `name: quiz_design` was blamed on
    adapters/quiz_design). The refusal now names the file registering each."""
    module = "nnd_suites.transformations.punctuation.punctuation"
    twin = type("Lowercase2", (Reverse,), {"__module__": module})
    with pytest.raises(PluginError) as raised:
        TRANSFORMATIONS.register("lowercase")(twin)
    casing = TRANSFORMATIONS.get("lowercase").folder() / "casing.py"
    punctuation = TRANSFORMATIONS.get("no_final_punctuation").folder() / "punctuation.py"
    assert str(raised.value) == (
        f"transformation 'lowercase' is registered twice: by builtin (lowercase, in {casing}) "
        f"and by builtin (in {punctuation}); rename one of them"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"examples": [{"transformation": "reverse",', "not JSON (Expecting"),
        ('[{"transformation": "reverse"}]', 'write {"examples": [{"transformation": NAME'),
        ('{"examples": [{"input": "ab"}]}', "each case an object naming its transformation"),
        ('{"examples": ["reverse"]}', "each case an object naming its transformation"),
    ],
)
def test_a_malformed_examples_file_is_named(text, message, tmp_path):
    """A contributed folder's damaged examples.json failed the harness with a bare
    JSONDecodeError, TypeError or KeyError naming no file."""
    (tmp_path / "examples.json").write_text(text)
    with pytest.raises(PluginError, match=re.escape(message)) as raised:
        Transformation.examples_in(tmp_path)
    assert str(tmp_path / "examples.json") in str(raised.value)


def test_list_shows_transformations(capsys):
    from nnd_suites.cli import main

    assert main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["transformations"]
    assert set(listed) >= ISSUE_NAMES
    assert listed["typos"].startswith("perturbation, candidates, seeded (rate=0.05, seed=0)")
