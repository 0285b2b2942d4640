"""Applying transformations to the real suites: child suites, parent ids, degenerate tests."""

from __future__ import annotations

import json
import random
import re

import pytest
from collections_watch import collections_during
from folder_snapshot import snapshot

from nnd_suites import Suite, build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main
from nnd_suites.errors import NNDError, ParameterError
from nnd_suites.suite import manifest as suite_manifest
from nnd_suites.transformations import (
    is_degenerate,
    make_transformation,
    normalize_suite,
    transform_suite,
)

# the built-in names given to `transform` are the session's builds (a build each cost a second)
pytestmark = pytest.mark.usefixtures("builtin_names_give_session_builds")


def with_pairs(suite: Suite, pairs) -> Suite:
    """A valid copy of ``suite`` holding ``pairs`` (counts and hash recomputed)."""
    return suite.derive(list(pairs))


@pytest.fixture(scope="module")
def quiz_lowercase(quiz_design_suite):
    return transform_suite(quiz_design_suite, "lowercase")


def test_lowercase_quiz_design_has_exactly_26_degenerate_tests(quiz_design_suite, quiz_lowercase):
    info = quiz_lowercase.manifest.transformation
    assert info.degenerate == 26
    assert sum(is_degenerate(p) for p in quiz_lowercase.pairs) == 26
    # They are exactly the parent tests whose two questions differ only in case.
    only_case = {
        p.id
        for p in quiz_design_suite.pairs
        if p.high.text != p.low.text and p.high.text.lower() == p.low.text.lower()
    }
    assert {p.parent_id for p in quiz_lowercase.pairs if is_degenerate(p)} == only_case
    assert info.changed == 2686 and info.identical == 0  # every paragraph has capitals


def test_child_tests_keep_parent_ids_and_everything_but_text(quiz_design_suite, quiz_lowercase):
    assert len(quiz_lowercase) == len(quiz_design_suite) == 2686
    for parent, child in zip(quiz_design_suite.pairs, quiz_lowercase.pairs, strict=True):
        assert child.id == parent.id and child.parent_id == parent.id
        assert child.high.text == parent.high.text.lower()
        assert child.context == {k: v.lower() for k, v in parent.context.items()}
        same = ("group_id", "label", "category", "category_path", "breakdown", "aspect")
        assert all(getattr(child, f) == getattr(parent, f) for f in same)
        assert child.high.systems == parent.high.systems and child.low.label == parent.low.label


def test_manifest_records_the_transformation(quiz_design_suite, quiz_lowercase, tmp_path):
    manifest = quiz_lowercase.manifest
    assert manifest.name == "quiz_design.lowercase"
    info = manifest.transformation
    assert (info.name, info.version, info.seed) == ("lowercase", "1.0.0", None)
    assert info.params == {"on": "both"}
    assert info.parent_suite == "quiz_design"
    assert info.parent_content_hash == quiz_design_suite.manifest.content_hash
    assert manifest.edited_sections(quiz_lowercase.pairs, quiz_lowercase.candidates) == []
    assert manifest.content_hash != quiz_design_suite.manifest.content_hash
    assert manifest.counts.breakdowns == quiz_design_suite.manifest.counts.breakdowns
    assert Suite.load(quiz_lowercase.save(tmp_path / "child")) == quiz_lowercase


def test_seeded_child_records_seed_and_is_order_independent(challenge300_suite):
    child = transform_suite(challenge300_suite, "typos:rate=0.1,seed=7")
    info = child.manifest.transformation
    assert info.seed == 7 and info.params == {"on": "candidates", "seed": 7, "rate": 0.1}
    assert child.name == "challenge300.typos-rate0.1-seed7"
    assert info.changed + info.identical == 807 and info.changed > 400
    # Contexts untouched (candidates only); the judged empty answer stays empty.
    assert all(
        c.context == p.context for c, p in zip(child.pairs, challenge300_suite.pairs, strict=True)
    )
    assert any(p.low.text == "" for p in child.pairs)
    shuffled = list(challenge300_suite.pairs)
    random.Random(0).shuffle(shuffled)
    again = transform_suite(with_pairs(challenge300_suite, shuffled), "typos:rate=0.1,seed=7")
    assert {p.id: p for p in again.pairs} == {p.id: p for p in child.pairs}
    other_seed = transform_suite(challenge300_suite, "typos:rate=0.1,seed=8")
    assert other_seed.manifest.content_hash != child.manifest.content_hash


def test_a_group_keeps_one_context_and_numbers_stay_consistent(quiz_design_suite):
    child = transform_suite(quiz_design_suite, "numbers:seed=1")
    contexts: dict[str, set[str]] = {}
    for pair in child.pairs:
        contexts.setdefault(pair.group_id, set()).add(json.dumps(pair.context, sort_keys=True))
    assert all(len(v) == 1 for v in contexts.values())
    assert child.manifest.transformation.changed > 1000
    # A year asked about in a question is changed to the same year in its paragraph.
    checked = 0
    for parent, pair in zip(quiz_design_suite.pairs, child.pairs, strict=True):
        for year in re.findall(r"(?<![\w.,])(1[5-9]\d\d)(?![\w])", parent.high.text):
            if year in parent.context["paragraph"]:
                new = make_transformation("numbers:seed=1").apply(year)
                assert new in pair.high.text and new in pair.context["paragraph"]
                checked += 1
    assert checked >= 10


def test_detokenize_degenerates_only_tokenisation_variants(quiz_design_suite):
    child = transform_suite(quiz_design_suite, "detokenize")
    parents = quiz_design_suite.by_id
    degenerate = [parents[p.parent_id] for p in child.pairs if is_degenerate(p)]
    assert len(degenerate) == child.manifest.transformation.degenerate == 2
    for parent in degenerate:
        assert parent.high.text.replace(" ", "") == parent.low.text.replace(" ", "")


def test_text_that_would_become_empty_is_kept_and_counted(challenge300_suite):
    first = challenge300_suite.pairs[0]
    odd = first.model_copy(
        update={"id": "0" * 16, "high": first.high.model_copy(update={"text": "?!"})}
    )
    suite = with_pairs(challenge300_suite, [*challenge300_suite.pairs, odd])
    child = transform_suite(suite, "no_punctuation")
    assert child.by_id["0" * 16].high.text == "?!"
    skipped = {s.reason: s for s in child.manifest.skipped}
    record = skipped[f"no_punctuation on {suite.name} would leave an empty text; kept unchanged"]
    assert record.count == 1 and record.examples == [f"pair {'0' * 16} high"]
    # What the parent skipped while building is still listed.
    assert set(skipped) > {s.reason for s in challenge300_suite.manifest.skipped}


def test_chained_transformations_point_to_the_root(quiz_design_suite, quiz_lowercase):
    chained = transform_suite(quiz_lowercase, "no_final_punctuation")
    assert chained.name == "quiz_design.lowercase.no_final_punctuation"
    assert chained.manifest.transformation.parent_suite == "quiz_design.lowercase"
    assert [p.parent_id for p in chained.pairs] == [p.id for p in quiz_design_suite.pairs]
    assert chained.manifest.transformation.degenerate >= 26


def test_normalize_accepts_only_normalizations(challenge300_suite):
    assert normalize_suite(challenge300_suite, "whitespace").manifest.transformation.changed == 6
    with pytest.raises(NNDError, match=r"typos is a perturbation, not a normalization"):
        normalize_suite(challenge300_suite, "typos:rate=0.02")


def test_language_mismatch_warns(challenge300_suite):
    german = Suite(
        challenge300_suite.manifest.model_copy(update={"languages": ["de"]}),
        challenge300_suite.pairs,
        challenge300_suite.candidates,
    )
    with pytest.warns(UserWarning, match=r"typos is written for \['en'\]"):
        transform_suite(german, "typos")


def test_transform_command(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default output folder is suites/NAME
    out = tmp_path / "qd_lower"
    assert main(["transform", "quiz_design", "--transform", "lowercase", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "changed 2,686, identical 0, degenerate 26" in printed
    child = Suite.load(out)
    assert child.manifest.transformation.degenerate == 26
    assert main(["transform", str(out), "--transform", "typos:seed=2", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["parent_suite"] == "quiz_design.lowercase" and record["seed"] == 2
    assert record["out"] == "suites/quiz_design.lowercase.typos-seed2"
    assert Suite.load(record["out"]).manifest.transformation.changed == record["changed"]


def test_transform_hashes_the_child_once_and_sets_off_no_garbage_collection(
    quiz_design_suite, tmp_path, monkeypatch
):
    """`transform --out` validated the child transform_suite had just made and sealed again to
    save it (its pairs and candidates hashed twice), and made its pairs with Python's cyclic
    collector walking every object the process held (40 collections on quiz_design)."""
    assert len(collections_during(lambda: transform_suite(quiz_design_suite, "lowercase"))) <= 1
    hashed, rows_hash = [], suite_manifest.rows_hash
    monkeypatch.setattr(
        suite_manifest, "rows_hash", lambda rows: hashed.append(1) or rows_hash(rows)
    )
    out = str(tmp_path / "qd_lower")
    assert main(["transform", "quiz_design", "--transform", "lowercase", "--out", out]) == 0
    assert len(hashed) == 4  # the parent as it is (resealed), then the child: pairs, candidates


def test_transform_command_bad_spec(tmp_path, capsys):
    argv = ["transform", "challenge300", "--transform", "typos:rate=high", "--out", str(tmp_path)]
    assert main(argv) == ParameterError.exit_status == 2  # a usage error, not a plugin's fault
    assert "transformation typos: parameter 'rate'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_child_name_no_export_takes_is_refused_before_the_work(
    challenge300_suite, tmp_path, capsys
):
    # a chain of transforms named its child past 96 characters: written with exit status 0,
    # then export refused it and said to rebuild it with `build --name`, which no child has
    parent = challenge300_suite.derive(challenge300_suite.pairs[:20], name="c" * 90)
    parent.save(tmp_path / "long")
    argv = ["transform", str(tmp_path / "long"), "--transform", "typos:seed=1"]
    assert main([*argv, "--out", str(tmp_path / "child")]) == 2
    said = capsys.readouterr().err
    assert f"the child suite's name '{'c' * 90}.typos-seed1' cannot name" in said
    assert "at most 96 characters" in said and "--name NEW_NAME" in said
    assert not (tmp_path / "child").exists()
    assert main([*argv, "--name", "c90.typos", "--out", str(tmp_path / "child")]) == 0
    child = Suite.load(tmp_path / "child")
    assert child.name == "c90.typos" and child.manifest.transformation.parent_suite == parent.name
    with pytest.raises(SystemExit) as refused:  # --name is build's --name
        main([*argv, "--name", "a b"])
    assert refused.value.code == 2
    assert "suite name 'a b' refused" in capsys.readouterr().err


def test_transform_given_twice_is_refused_not_cut_to_the_last(tmp_path, capsys):
    # `transform quiz_design --transform lowercase --transform no_final_punctuation` wrote
    # quiz_design.no_final_punctuation with exit status 0: lowercase was dropped without a word
    out = tmp_path / "child"
    argv = ["transform", "quiz_design", "--transform", "lowercase", "--out", str(out)]
    assert main([*argv, "--transform", "no_final_punctuation"]) == 2
    said = capsys.readouterr().err
    assert "--transform was given 2 times (lowercase, no_final_punctuation)" in said
    assert "transform the child again" in said and not out.exists()
    assert main(argv) == 0
    assert Suite.load(out).name == "quiz_design.lowercase"


def test_the_child_never_replaces_its_parents_folder(challenge300_suite, tmp_path, capsys):
    # `transform suites/x --transform lowercase --out suites/x` replaced the parent with its
    # child (exit status 0): the parent the child's manifest names was gone
    folder = tmp_path / "parent"
    challenge300_suite.save(folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for given, out in ((folder, folder), (f"{folder}/", tmp_path / "." / "parent")):
        argv = ["transform", str(given), "--transform", "lowercase", "--out", str(out)]
        assert main(argv) == 2
        assert "the folder of the parent suite 'challenge300'" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_the_parents_folder_under_another_name_or_a_folder_holding_it_is_refused(
    challenge300_suite, tmp_path, capsys
):
    """The parent's folder through a link, or through a linked parent folder, is the parent's
    folder; a folder holding it (`--out suites` for suites/x) would be replaced with it."""
    folder = challenge300_suite.save(tmp_path / "suites" / "parent")
    (tmp_path / "link").symlink_to(folder)
    (tmp_path / "alias").symlink_to(tmp_path / "suites")
    before = snapshot(tmp_path / "suites")
    for given, out, relation in (
        (tmp_path / "link", folder, "the folder"),
        (folder, tmp_path / "alias" / "parent", "the folder"),
        (folder, tmp_path / "suites", "a parent folder"),
    ):
        argv = ["transform", str(given), "--transform", "lowercase", "--out", str(out)]
        assert main(argv) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"{out}: {relation} of the parent suite 'challenge300' ({given})" in err
    assert snapshot(tmp_path / "suites") == before


def test_a_foreign_out_is_refused_before_the_transformation_runs(
    challenge300_suite, tmp_path, capsys, monkeypatch
):
    """transform checked --out only when saving the child, after transforming every test (a
    typos pass over a large suite), where build checks its --out first."""
    import nnd_suites.transformations.apply as apply

    folder = challenge300_suite.save(tmp_path / "parent")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("a user's file")
    monkeypatch.setattr(apply, "transform_suite", lambda *a, **k: pytest.fail("transformed"))
    argv = ["transform", str(folder), "--transform", "lowercase", "--out", str(mine)]
    assert main(argv) == 2
    assert f"{mine}: holds 1 entry" in capsys.readouterr().err
    assert (mine / "notes.txt").read_text() == "a user's file"


def test_a_default_spelt_out_names_the_same_child(quiz_design_suite, tmp_path, capsys):
    """`whitespace` and `whitespace:on=both` are one transformation (on=both is its default),
    and robustness counts them once; transform named their children quiz_design.whitespace and
    quiz_design.whitespace-onboth, one child written twice under two names."""
    names = {
        spec: transform_suite(quiz_design_suite, spec).name
        for spec in ("whitespace", "whitespace:on=both", "typos", "typos:rate=0.05,seed=0")
    }
    assert names == {
        "whitespace": "quiz_design.whitespace",
        "whitespace:on=both": "quiz_design.whitespace",
        "typos": "quiz_design.typos",
        "typos:rate=0.05,seed=0": "quiz_design.typos",
    }
    assert transform_suite(quiz_design_suite, "whitespace:on=context").name == (
        "quiz_design.whitespace-oncontext"
    )
    out = tmp_path / "suites"
    argv = ["transform", "quiz_design", "--transform", "whitespace:on=both"]
    assert main([*argv, "--out", str(out / "spelt")]) == 0
    assert "quiz_design.whitespace" in capsys.readouterr().out
    assert Suite.load(out / "spelt").name == "quiz_design.whitespace"


def test_only_the_degenerate_tests_a_transformation_made_are_counted():
    """MQM keeps conflicting labels: 43 tests of the fixture are degenerate before any
    transformation; lowercase makes 6 more (their texts differ only in case). Counting all 49
    passed every test before this one."""
    sample = get_adapter("wmt_mqm").folder() / "fixtures" / "mqm_ted_ende_sample.tsv"
    parent = build_suite("wmt_mqm", sample)
    child = transform_suite(parent, "lowercase")
    made = [
        p
        for p in parent.pairs
        if p.high.text != p.low.text and p.high.text.lower() == p.low.text.lower()
    ]
    assert parent.manifest.counts.degenerate_pairs == 43 and len(made) == 6
    assert child.manifest.transformation.degenerate == 6
    assert sum(map(is_degenerate, child.pairs)) == child.manifest.counts.degenerate_pairs == 49


def test_degenerate_tests_are_counted_test_by_test_not_by_subtraction():
    """The count was the child's degenerate tests less the parent's untransformed ones, as if
    every degenerate test stayed so and every parent test were there. A test degenerate from the
    start whose texts differ invisibly ("x" and "x ") parts under typos: lowercase then typos
    recorded 5 made degenerate, not lowercase's 6. A parent cut to some of its groups (as
    robustness --limit cuts) keeps the whole suite's count (43): lowercase recorded 0 of the 6
    tests it made degenerate there."""
    sample = get_adapter("wmt_mqm").folder() / "fixtures" / "mqm_ted_ende_sample.tsv"
    parent = build_suite("wmt_mqm", sample)
    first = next(p for p in parent.pairs if is_degenerate(p))
    spaced = first.model_copy(
        update={"low": first.low.model_copy(update={"text": first.low.text + " "})}
    )
    parent = parent.derive([spaced if p.id == first.id else p for p in parent.pairs])
    lowercased = transform_suite(parent, "lowercase")
    assert lowercased.manifest.transformation.degenerate == 6
    child = transform_suite(lowercased, "typos:rate=0.3")
    assert not is_degenerate(child.by_id[first.id])  # degenerate from the start, no longer
    made = {p.id for p in lowercased.pairs if is_degenerate(p)} - {
        p.id for p in parent.pairs if is_degenerate(p)
    }
    assert all(is_degenerate(child.by_id[i]) for i in made) and len(made) == 6
    assert child.manifest.transformation.degenerate == 6
    groups = {parent.by_id[i].group_id for i in sorted(made)[:2]}  # tests lowercase made so
    cut = Suite(
        parent.manifest, [p for p in parent.pairs if p.group_id in groups], parent.candidates
    )
    cut_made = [p for p in transform_suite(cut, "lowercase").pairs if p.id in made]
    assert cut_made and all(map(is_degenerate, cut_made))
    assert transform_suite(cut, "lowercase").manifest.transformation.degenerate == len(cut_made)


def test_a_test_whose_low_text_alone_changed_counts_as_changed(challenge300_suite):
    """Many wrong answers have capitals where the right one has none ('the suspect' beats
    'John Doe'): lowercasing the candidates changes those tests through their low side only."""
    child = transform_suite(challenge300_suite, "lowercase:on=candidates")
    pairs = challenge300_suite.pairs
    low_only = [
        p for p in pairs if p.high.text == p.high.text.lower() and p.low.text != p.low.text.lower()
    ]
    changed = [
        p for p in pairs if p.high.text.lower() != p.high.text or p.low.text.lower() != p.low.text
    ]
    assert len(low_only) == 336 and len(changed) == 651
    info = child.manifest.transformation
    assert (info.changed, info.identical) == (651, 807 - 651)


def test_numbers_in_chinese_text_change_as_their_translations_do():
    """Chinese writes no space between a number and its word (11项, 2019年): such a number is
    changed in the source as in the English translations, to the same new value."""
    zhen = build_suite("wmt23_sxs_zhen")
    child = transform_suite(zhen, "numbers:seed=3")
    plugin = make_transformation("numbers:seed=3")
    checked = 0
    for parent, pair in zip(zhen.pairs, child.pairs, strict=True):
        source = parent.context["source"]
        for number in set(re.findall(r"(?<![\d.,])\d{2,4}(?![\d.,])", source)):
            if re.search(rf"(?<![\w.,]){number}(?![\w]|[.,]\d)", parent.high.text):
                new = plugin.apply(number)
                assert new in pair.context["source"], (parent.id, source, pair.context["source"])
                assert new in pair.high.text
                checked += 1
    assert checked >= 100
    assert plugin.apply("11项主要出口货类") == plugin.apply("11") + "项主要出口货类"
    assert plugin.apply("２０２３年の1990s") == plugin.apply("２０２３") + "年の1990s"


@pytest.mark.parametrize("returned", [None, 11, ["a", "list"]])
def test_a_transformation_returning_no_text_is_a_named_plugin_error(returned, quiz_design_suite):
    """A plugin whose transform_text returned None, an int or a list passed its examples and
    made `transform` die in the suite's checks with a TypeError traceback (exit 1)."""
    from nnd_suites.errors import PluginError
    from nnd_suites.transformations import TRANSFORMATIONS

    class NoText(TRANSFORMATIONS.get("lowercase")):
        def transform_text(self, text, rng):
            return returned if "a" in text else text.lower()

    with pytest.raises(
        PluginError, match=f"transformation lowercase returned {type(returned).__name__} "
    ):
        transform_suite(quiz_design_suite, NoText())
