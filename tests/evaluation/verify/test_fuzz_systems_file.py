"""Property-based fuzzing of the systems file (``verify --systems-file``: ``NAME: MODEL`` lines)
on damaged copies of one (tests/support/yaml_damage.py). Reading it must end in an
:class:`NNDError` naming the file, or in a mapping of system names to model names, each a
string; any other exception fails. CI runs the ``ci`` profile (200 examples)."""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st
from yaml_damage import PROFILE, damaged

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.verify.run import read_systems_file

SYSTEMS = b"""# annotated system: the model standing for it
systems:
  mixqg: ./models/mixqg
  gpt2b_sup: gpt2
  dgpt2_sup: "nnd-suites:tiny-random"
"""


@PROFILE
@given(data=st.data())
def test_damaged_systems_file_reads_or_gives_a_named_error(tmp_path, data):
    path = tmp_path / "systems.yaml"
    path.write_bytes(damaged(data, SYSTEMS))
    try:
        systems = read_systems_file(path)
    except NNDError as error:
        assert str(path) in str(error), str(error)
        event("refused with a named error")
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in systems.items())
    event("read")
