"""--option language_pair may not contradict the pair in the file's name."""

from __future__ import annotations

import shutil

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main
from nnd_suites.errors import ParameterError
from nnd_suites.sources import ReadLog

FIXTURE = get_adapter("wmt_mqm").default_source_path().parent.parent / "fixtures"
SAMPLE = FIXTURE / "mqm_ted_ende_sample.tsv"


def languages(adapter_options: dict, path) -> set[tuple[str, str]]:
    adapter = get_adapter("wmt_mqm")(**adapter_options)
    return {
        (group.context["source_language"], group.context["target_language"])
        for group in adapter.read(path, ReadLog())
    }


def test_a_pair_contradicting_the_shipped_file_name_is_refused(tmp_path, capsys):
    """The shipped file is English to German: zh-en would label every context zh->en."""
    with pytest.raises(ParameterError) as caught:
        build_suite("wmt_mqm", language_pair="zh-en")
    message = str(caught.value)
    assert "language_pair=zh-en" in message
    assert "en-de" in message and "mqm_ted_ende.tsv" in message
    out = tmp_path / "s_zh"
    assert main(["build", "wmt_mqm", "--option", "language_pair=zh-en", "--out", str(out)]) == 2
    assert "contradicts the pair en-de in the file name 'mqm_ted_ende.tsv'" in (
        capsys.readouterr().err
    )
    assert not out.exists()


def test_an_agreeing_pair_or_a_name_without_pair_takes_the_option(tmp_path):
    # the option that agrees with the name is accepted (the README passes it for a zh-en file)
    zhen = shutil.copy(SAMPLE, tmp_path / "mqm_newstest2020_zhen.tsv")
    assert languages({"language_pair": "zh-en"}, zhen) == {("zh", "en")}
    assert languages({"language_pair": "en-de"}, SAMPLE) == {("en", "de")}
    # a name with no pair: the option is the way in, whatever it says
    plain = shutil.copy(SAMPLE, tmp_path / "ratings.tsv")
    assert languages({"language_pair": "en-ru"}, plain) == {("en", "ru")}
    # and without the option the name decides
    assert languages({}, zhen) == {("zh", "en")}
