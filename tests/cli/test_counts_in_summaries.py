"""The summaries the commands print count in words that agree with the number: one config, one
test, one pair (they once said "1 configs")."""

from __future__ import annotations

from nnd_suites.cli import main


def test_a_one_test_suite_exported_and_validated_is_counted_in_the_singular(
    tmp_path, challenge300_suite, capsys
):
    one = challenge300_suite.derive(challenge300_suite.pairs[:1]).save(tmp_path / "one")
    export = tmp_path / "export"
    assert main(["export", str(one), "--to", str(export)]) == 0
    out = capsys.readouterr().out
    assert "  challenge300: 1 test (written)" in out
    assert f"wrote {export} (1 config; card" in out
    card = (export / "README.md").read_text("utf-8")
    assert "1 test from" in card and "1 tests" not in card
    assert main(["validate", str(export)]) == 0
    out = capsys.readouterr().out
    assert "  challenge300: valid suite, 1 pair, content hash" in out
    assert f"{export}: valid export folder, 1 config; its card" in out
    assert main(["validate", str(one)]) == 0
    assert "valid suite 'challenge300', 1 pair, content hash" in capsys.readouterr().out
