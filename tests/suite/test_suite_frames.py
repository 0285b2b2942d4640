"""Suite.to_pandas() and Suite.to_dataset(): the same rows, columns and Features as
datasets.load_dataset gives for the exported suite."""

from __future__ import annotations

import subprocess
import sys

import datasets
import pandas.testing
import pytest

from nnd_suites.hub.export import export_suites
from nnd_suites.suite import suite_features


@pytest.fixture(scope="module")
def exported(tmp_path_factory, quiz_design_suite, challenge300_suite):
    folder = tmp_path_factory.mktemp("export") / "nnd"
    suites = {s.name: s for s in (quiz_design_suite, challenge300_suite)}
    export_suites(suites.values(), folder)
    return folder, suites


@pytest.mark.parametrize("name", ["quiz_design", "challenge300"])
def test_to_dataset_and_to_pandas_agree_with_load_dataset(exported, name, tmp_path):
    folder, suites = exported
    suite = suites[name]
    loaded = datasets.load_dataset(str(folder), name, split="test", cache_dir=str(tmp_path))
    ours = suite.to_dataset()
    assert ours.features == loaded.features == suite_features(suite.manifest)
    assert ours.column_names == loaded.column_names
    assert str(ours.split) == "test"
    assert ours.num_rows == loaded.num_rows == len(suite.pairs)
    assert ours.to_list() == loaded.to_list()
    pandas.testing.assert_frame_equal(suite.to_pandas(), loaded.to_pandas())
    pandas.testing.assert_frame_equal(suite.to_pandas(), ours.to_pandas())


def test_the_frame_holds_the_pairs_as_the_parquet_file_does(challenge300_suite):
    frame = challenge300_suite.to_pandas()
    pairs = challenge300_suite.pairs
    assert len(frame) == 807 == len(pairs)
    assert frame["id"].tolist() == [p.id for p in pairs]
    first = frame.iloc[0]
    assert first["context"] == pairs[0].context  # nested, as the parquet struct
    assert first["high"]["text"] == pairs[0].high.text
    assert first["low"]["label"] == pairs[0].low.label
    assert first["breakdown"] == pairs[0].breakdown
    assert frame["category"].value_counts().to_dict() == {
        "Common Sense": 518,
        "Science": 193,
        "Entity": 47,
        "Creativity": 34,
        "Comparison": 15,
    }


def test_nothing_imports_pandas_or_datasets_until_asked():
    code = (
        "import sys, nnd_suites, nnd_suites.suite; from nnd_suites.cli import main; "
        "print(sorted(m for m in ('pandas', 'datasets') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
