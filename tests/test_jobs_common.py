"""The plumbing the jobs share (gelu_ext.jobs._common)."""
import argparse
import json

import numpy as np
import pytest

from gelu_ext.jobs import _common


@pytest.mark.parametrize("text", ["0", "-3", "2.5", "two", ""])
def test_int_at_least_rejects_with_the_rule(text):
    with pytest.raises(argparse.ArgumentTypeError, match=rf"must be an integer >= 1, got {text!r}"):
        _common.int_at_least(1)(text)


def test_int_at_least_accepts():
    assert _common.int_at_least(0)("0") == 0 and _common.int_at_least(1)("12") == 12


def test_write_json_is_strict_json(tmp_path):
    path = tmp_path / "out.json"
    _common.write_json(path, {"a": np.float32(1.5), "b": [np.inf, float("nan"), np.int64(3)],
                              "c": np.arange(2), (1, 2): "tuple key"})
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"a": 1.5, "b": [None, None, 3], "c": [0, 1], "(1, 2)": "tuple key"}


def test_medians_times_every_call_the_given_number_of_times():
    calls = {"a": 0, "b": 0}

    def bump(k):
        calls[k] += 1
    med = _common.medians({"a": lambda: bump("a"), "b": lambda: bump("b")}, 4)
    assert set(med) == {"a", "b"} and all(v >= 0 for v in med.values())
    assert calls == {"a": 2 + 4, "b": 2 + 4}       # warm-up, calibration, 4 timed


def test_machine_info_names_the_configuration():
    info = _common.machine_info(("no_such_module",))
    assert info["versions"]["numpy"] == np.__version__
    assert info["versions"]["no_such_module"] is None
    lines = _common.header_lines(info)
    assert lines[0].startswith("machine : ") and lines[-1].startswith("missing : no_such_module")
