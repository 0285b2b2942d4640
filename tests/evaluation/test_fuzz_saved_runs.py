"""Property-based fuzzing of the readers of saved runs (``load_report``: report.json and the
outcomes parquet files, as compare, place, slices --run and robustness read a run folder;
``load_verify``: verify.json, as place reads it) on damaged copies of a verify folder and a run
folder that tiny models wrote (``--limit 4``).

Each example damages one file (tests/support: truncation, bad bytes, a changed byte, a JSON
value of another type, a repeated key, deep nesting, a parquet column dropped, nulled or of
another type, rows dropped or repeated) and places the run among the verify run's systems
(``place_saved``: both files read). It must end in a :class:`NNDError` naming the damaged file
or its folder, or in a placement; a run that loads holds as many outcomes per suite as its
report counts. Any other exception fails. CI runs the ``ci`` profile with 100 examples per
file; ``HYPOTHESIS_PROFILE=thorough`` runs 2,500.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from data_damage import change_json, change_table, flip_byte
from hypothesis import event, given, settings
from hypothesis import strategies as st
from yaml_damage import PROFILE, bad_bytes, truncate

from nnd_suites.cli import main
from nnd_suites.errors import NNDError
from nnd_suites.evaluation.saved import load_report
from nnd_suites.evaluation.verify.place import place_saved
from nnd_suites.infra.builtin_models import EMBEDDED

FAST = ["--limit", "4", "--quiet", "--device", "cpu"]
OUTCOMES = "outcomes/quiz_design.parquet"
MUTATIONS = {
    "run/report.json": [truncate, bad_bytes, flip_byte, change_json],
    f"run/{OUTCOMES}": [truncate, flip_byte, change_table],
    "verify/verify.json": [truncate, bad_bytes, flip_byte, change_json],
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory, quiz_design_suite) -> Path:
    """A folder holding verify/ (two systems: the embedded model, a tiny one) and run/
    (a third tiny model's run of the same tests)."""
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    folder = tmp_path_factory.mktemp("saved")
    texts = suite_texts([quiz_design_suite])
    model, other = (
        tiny_causal_lm(folder / f"m{seed}", texts, vocab_size=512, n_layer=1, n_embd=32, seed=seed)
        for seed in (1, 2)
    )
    systems = ["--system", f"mixqg={EMBEDDED}", "--system", f"dgpt2_sup={other}"]
    verify = ["verify", "quiz_design", *systems, "--resamples", "50", "--out"]
    assert main([*verify, str(folder / "verify"), *FAST]) == 0
    run = ["evaluate", "--suite", "quiz_design", "--model", str(model), "--out"]
    assert main([*run, str(folder / "run"), *FAST]) == 0
    outcomes = json.loads((folder / "run" / "report.json").read_text("utf-8"))
    assert outcomes["suites"]["quiz_design"]["outcomes_file"] == OUTCOMES
    return folder


@pytest.mark.parametrize("file", sorted(MUTATIONS))
@settings(PROFILE, max_examples=PROFILE.max_examples // 2)
@given(data=st.data())
def test_damaged_run_or_verify_file_places_or_gives_a_named_error(saved, file, data):
    folder = Path(tempfile.mkdtemp()) / "saved"
    try:
        shutil.copytree(saved, folder)
        path = folder / file
        mutation = data.draw(st.sampled_from(MUTATIONS[file]))
        path.write_bytes(mutation(data, path.read_bytes()))
        damaged = folder / Path(file).parts[0]
        try:
            report = load_report(folder / "run")
            place_saved(folder / "verify", folder / "run")
        except NNDError as error:
            assert str(damaged) in str(error), str(error)
            event(f"refused with a named error ({mutation.__name__})")
            return
        assert {n: len(o) for n, o in report.outcomes.items()} == {
            n: r.pairs for n, r in report.suites.items()
        }
        event(f"placed ({mutation.__name__})")
    finally:
        shutil.rmtree(folder.parent)


def test_a_run_and_verify_file_that_disagree_are_both_named(saved, tmp_path):
    """A verify.json whose content hash was damaged read, and place said only that the model was
    "scored on other tests than the verify run", naming neither file."""
    folder = tmp_path / "saved"
    shutil.copytree(saved, folder)
    path = folder / "verify" / "verify.json"
    verify = json.loads(path.read_text("utf-8"))
    verify["content_hash"] = "0" * 64
    path.write_text(json.dumps(verify), "utf-8")
    where = f"placing {folder / 'run'} in {folder / 'verify'}: "
    with pytest.raises(NNDError, match=f"^{where}.* scored on other tests of quiz_design"):
        place_saved(folder / "verify", folder / "run")
