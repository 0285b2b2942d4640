"""A catalogue suite's name (README's catalogue table: gpt3_summ_bbc) given to `build` or
`--suite`, where an adapter or a suite is asked for: the error says how to build it, and the
command it gives builds the suite with the catalogue's figures."""

from __future__ import annotations

import re
import shlex

from nnd_suites.cli import main
from nnd_suites.suite import Suite


def test_build_of_a_catalogue_name_says_the_command_that_builds_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["build", "gpt3_summ_bbc", "--out", "x"]) == 6
    err = capsys.readouterr().err
    assert "'gpt3_summ_bbc' is a suite of the catalogue, built by adapter 'gpt3_summ'" in err
    (command,) = re.findall(r"`(nnd-suites build gpt3_summ [^`]*)`", err)
    assert main(shlex.split(command)[1:]) == 0
    suite = Suite.load(tmp_path / "suites" / "gpt3_summ_bbc")
    assert (suite.name, len(suite), suite.manifest.counts.groups) == ("gpt3_summ_bbc", 208, 100)


def test_a_catalogue_suite_with_a_source_to_download_asks_for_it(capsys):
    assert main(["stats", "wmt23_mqm_ende"]) == 6
    err = capsys.readouterr().err
    assert "--option language_pair=en-de --source FILE --name wmt23_mqm_ende" in err
    assert main(["build", "no_such_suite"]) == 6
    assert "catalogue" not in capsys.readouterr().err
