"""Rating rules own their human-score meaning: what a system's human score is under each rule
kind, checked against figures counted here from the raw candidates; and CONTRIBUTING's worked
examples of a rating rule and a scorer run as written."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import typing
from pathlib import Path
from typing import Literal

import pytest

from nnd_suites import build_suite
from nnd_suites.errors import PluginError
from nnd_suites.human.scores import human_scores
from nnd_suites.quality_map import (
    Assessment,
    GradedRule,
    MajorityTopRule,
    NumericRule,
    QualityMap,
    RatingRule,
)
from nnd_suites.quality_map.model import ALLOWED_KEYS
from nnd_suites.quality_map.rule_base import BaseRule, rule_kind
from nnd_suites.quality_map.rules import RULE_KINDS
from nnd_suites.records.texts import equivalence_key

FRANK_SOURCE = "adapters/frank/fixtures/human_annotations_sentence.json"
NUMERIC_CREDIT = """\
name: credit_numeric
description: Credit as a number, better by at least 0.5.
labels: [worse]
rating_rule: {kind: numeric, rating: credit, aggregate: mean, minimum_gap: 0.5, low_label: worse}
"""


def test_each_rule_kind_says_what_its_human_score_is():
    measures = {name: QualityMap.load(name) for name in ("quiz_design", "challenge300", "summeval")}
    assert measures["quiz_design"].human_measure() == "share of candidates labelled No error"
    assert measures["challenge300"].human_measure().startswith("share of candidates labelled")
    assert measures["summeval"].human_measure() == "mean rating over the aspects"
    assert [m.rated for m in measures.values()] == [False, False, True]
    assert not any(m.numeric for m in measures.values())


def test_a_likert_rule_scores_the_mean_rating_not_its_majority_label():
    rule = QualityMap.load("summeval").rule
    ratings = {"coherence": [5.0, 5.0, 2.0], "fluency": [1.0]}
    high = rule.rate(ratings["coherence"], "coherence")
    assert high.label == rule.high_label  # two of three gave the top score
    assert rule.human_value(ratings, high, "coherence", set()) == pytest.approx(4.0)
    assert rule.human_value(ratings, high, "relevance", set()) is None  # unrated there


def test_a_numeric_rule_scores_its_aggregate_per_system(tmp_path):
    """Credit read as a number: partial credit counts half, where the graded map's share of
    credit 1 leaves it out; the same candidates, a different measure. Identical answers of one
    question are one text (the map pools them), scored as their tests score them: the mean of
    their credits."""
    (tmp_path / "credit.yaml").write_text(NUMERIC_CREDIT)
    suite = build_suite("challenge300", quality_map=tmp_path / "credit.yaml")
    scores = human_scores(suite)
    assert scores.measure == "mean 'credit' over raters, averaged over candidates"
    assert scores.score_range == (0.0, 1.0)
    graded = human_scores(build_suite("challenge300"))
    same_text: dict[tuple[str, str], list[float]] = {}
    for c in suite.candidates:
        key = (c.group_id, equivalence_key(c.text))
        same_text.setdefault(key, []).append(statistics.fmean(c.ratings["credit"]))
    assert any(len(credits) > 1 and len(set(credits)) > 1 for credits in same_text.values())
    for system in ("Macaw-11B", "GPT3-davinci", "T5-XXL-SSM-NQ"):
        mine = [c for c in suite.candidates if system in c.systems]
        pooled = [statistics.fmean(same_text[c.group_id, equivalence_key(c.text)]) for c in mine]
        assert scores.systems[system].human_score == pytest.approx(statistics.fmean(pooled))
        credits = [statistics.fmean(c.ratings["credit"]) for c in mine]
        full = sum(credit == 1.0 for credit in credits) / len(credits)
        assert graded.systems[system].human_score == pytest.approx(full)
        assert 0.5 in credits  # so the two measures differ for this system
        assert scores.systems[system].human_score > graded.systems[system].human_score


def test_a_numeric_rule_compares_scores_by_its_gap(tmp_path):
    (tmp_path / "credit.yaml").write_text(NUMERIC_CREDIT)
    quality_map = QualityMap.load(tmp_path / "credit.yaml")
    assert quality_map.numeric and quality_map.rated
    full, half, none = (Assessment(label="worse", score=s) for s in (1.0, 0.5, 0.0))
    assert quality_map.better(full, half) and quality_map.better(half, none)
    assert not quality_map.better(half, full)
    assert quality_map.better(full, Assessment(label="worse", score=0.5 + 1e-13))  # tolerance
    # its pairs' high side reads high_label; identical texts pool their ratings by default
    assert quality_map.rule.pair_high_label() == "better"
    assert quality_map.rule.pools_identical_texts()
    likert = QualityMap.load("summeval").rule
    assert likert.pair_high_label() is None and not likert.pools_identical_texts()


def test_frank_scores_with_its_strict_hierarchy():
    """Top (NoE) and excluded (OtherE) candidates carry no error category: FRANK's strict
    hierarchy does not list them, and the human scores must not stop on them."""
    suite = build_suite("frank", FRANK_SOURCE)
    scores = human_scores(suite)
    quality_map = QualityMap.load("frank")
    assert scores.measure == "share of candidates labelled NoE"
    assert set(scores.categories) == {"Semantic Frame", "Discourse", "Verifiability"}
    assert set(scores.categories.values()) == {"error"}
    for system, result in scores.systems.items():
        mine = [c for c in suite.candidates if system in c.systems]
        assert result.candidates == len(mine)
        assert result.human_score == pytest.approx(sum(c.label == "NoE" for c in mine) / len(mine))
        errors = [
            quality_map.category_path(c.label)[0]
            for c in mine
            if c.label not in ("NoE", "OtherE", "Other")
        ]
        for category in scores.categories:
            without = 1 - errors.count(category) / len(mine)
            assert result.by_category[category] == pytest.approx(without), (system, category)
    assert any(c.label == "NoE" for c in suite.candidates)


def test_the_union_the_loader_reads_is_built_from_the_decorated_kinds():
    union = typing.get_args(typing.get_args(RatingRule)[0])
    assert union == RULE_KINDS == (MajorityTopRule, GradedRule, NumericRule)
    assert ALLOWED_KEYS["graded"] == list(GradedRule.model_fields)


def test_a_rule_kind_declared_twice_late_or_untagged_is_refused():
    class Again(BaseRule):
        kind: Literal["numeric"]

    class Late(BaseRule):
        kind: Literal["late"]

    class Untagged(BaseRule):
        pass

    with pytest.raises(PluginError, match="kind 'numeric' is declared twice: by NumericRule and"):
        rule_kind(Again)
    with pytest.raises(
        PluginError,
        match=r"rating rule Late \(.*\): the kinds were fixed when nnd_suites.quality_map.rules "
        "built the union; define the class there, above RULE_KINDS",
    ):
        rule_kind(Late)
    with pytest.raises(PluginError, match="rating rule Untagged: declare its tag as one field"):
        rule_kind(Untagged)


def _contributing_section() -> str:
    text = (Path(__file__).resolve().parents[2] / "CONTRIBUTING.md").read_text(encoding="utf-8")
    return text[text.index("## 9. Worked examples") :]


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", _contributing_section(), re.S)


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


#: Imports rules.py with the worked example's class pasted where CONTRIBUTING says (above
#: RULE_KINDS), as a contributor would: nothing else is edited.
WITH_PASTED_RULE = """
import importlib.abc, importlib.util, sys
RULES = {rules!r}
source = open(RULES, encoding="utf-8").read()
at = source.index("\\n#: Every rule kind:")
pasted = source[:at] + "\\n\\n" + {rule!r} + source[at:]

class Pasted(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "nnd_suites.quality_map.rules":
            return importlib.util.spec_from_loader(name, self, origin=RULES)

    def exec_module(self, module):
        module.__file__ = RULES
        exec(compile(pasted, RULES, "exec"), module.__dict__)

sys.meta_path.insert(0, Pasted())
from nnd_suites.quality_map.rules import PassMarkRule
"""


def test_contributing_rule_example_is_one_class_maps_can_name(tmp_path):
    _, rule = _blocks("python")
    rules = Path(__file__).resolve().parents[2] / "nnd_suites" / "quality_map" / "rules.py"
    (tmp_path / "pass_mark.yaml").write_text(
        "name: pass_mark\ndescription: Passes at a mean overall rating of 4.\n"
        "labels: [pass, fail]\ntiers: [[pass], [fail]]\n"
        "rating_rule: {kind: pass_mark, rating: overall, mark: 4}\n"
    )
    check = f"""
rule = PassMarkRule(kind="pass_mark", rating="overall", mark=4)
ratings = {{"overall": [5.0, 4.0, 2.0]}}
assessment = rule.rate(ratings["overall"], "overall")
print(assessment.label, round(rule.human_value(ratings, assessment, None, {{"pass"}}), 4))
print(rule.rate([4.0, 4.0], "overall").label, rule.measure_description(["pass"]))
from nnd_suites.quality_map import QualityMap, generate_schema
loaded = QualityMap.load({str(tmp_path / "pass_mark.yaml")!r})
print(type(loaded.rule).__name__, loaded.rule.mark, loaded.rated, loaded.human_measure())
print(generate_schema()["properties"]["rating_rule"]["properties"]["kind"]["enum"])
"""
    assert _run(WITH_PASTED_RULE.format(rules=str(rules), rule=rule) + check).splitlines() == [
        "fail 3.6667",
        "pass mean 'overall' over raters, averaged over candidates",
        "PassMarkRule 4.0 True mean 'overall' over raters, averaged over candidates",
        "['majority_top', 'graded', 'numeric', 'pass_mark']",
    ]


def test_contributing_scorer_example_gives_its_harness_case():
    scorer, _ = _blocks("python")
    (case,) = [json.loads(block) for block in _blocks("json")]
    check = f"""
from nnd_suites.evaluation import Score, verdict
from nnd_suites.evaluation.scorers import SCORERS, CandidateScores, make_scorer
case = {case!r}
scorer = make_scorer(case["scorer"])
values = [
    scorer.value(CandidateScores(Score(*case[side]["model"])), case[side]["text"])
    for side in ("high", "low")
]
print(values == case["values"], verdict(*values) == case["verdict"], SCORERS.origin("per_word"))
"""
    assert _run(scorer + check).split() == ["True", "True", "__main__"]
