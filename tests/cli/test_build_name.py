"""`build --name` and `build_suite(name=...)`: a name the manifest refuses (a path, a space, a
control character, nothing at all) stops the build before any source is read, with the allowed
characters named; the CLI says so while parsing its arguments (a usage error, exit status 2)."""

from __future__ import annotations

import pytest

from nnd_suites import build_suite, load_suite
from nnd_suites.cli import main
from nnd_suites.errors import NNDError

REFUSED = ["../escaped", "a b", "bad\x1bname", "", ".hidden", "name/inner", "trailing\n"]
ALLOWED = "use letters, digits, '_', '.' and '-' only"


@pytest.mark.parametrize("name", REFUSED)
def test_the_cli_refuses_the_name_while_parsing(name, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as refused:
        main(["build", "challenge300", "--name", name])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "argument --name: suite name" in err and ALLOWED in err
    assert "Traceback" not in err and "\x1b" not in err  # the control character is escaped
    assert list(tmp_path.iterdir()) == []  # nothing built, nothing written


@pytest.mark.parametrize("name", REFUSED)
def test_the_library_refuses_the_name_before_reading_the_source(name, tmp_path):
    missing = tmp_path / "no_such_source.tsv"  # read first, it would be the error
    with pytest.raises(NNDError, match="suite name .* refused: use letters, digits"):
        build_suite("challenge300", missing, tmp_path / "out", name=name)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["README.md", "default", "x" * 97, "name."])
def test_a_name_no_export_could_hold_is_refused_at_the_build(name, tmp_path):
    # it was built, then refused by the export ("cannot be a Hub config name")
    with pytest.raises(NNDError, match="suite name .* refused: .*folder and its Hub config"):
        build_suite("challenge300", tmp_path / "no_such_source.tsv", tmp_path / "out", name=name)


def test_an_allowed_name_names_the_suite_and_its_default_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["build", "challenge300", "--name", "c300.v2-x_1"]) == 0
    assert load_suite(tmp_path / "suites" / "c300.v2-x_1").name == "c300.v2-x_1"
