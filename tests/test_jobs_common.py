"""The plumbing the jobs share (gelu_ext.jobs._common)."""
import argparse
import sys
import json

import numpy as np
import pytest

from gelu_ext.jobs import _common
from helpers import python_child


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


def _stats(**k):
    base = dict.fromkeys(("jobs", "stalls", "backoff", "owner_items", "worker_items"), 0)
    return {**base, **k}


def test_pool_watch_says_nothing_when_the_pool_did_not_back_off(monkeypatch):
    seq = iter([_stats(jobs=3), _stats(jobs=10)])
    monkeypatch.setattr(_common._ufuncs, "_pool_stats", lambda reset=False: next(seq))
    with _common.PoolWatch() as w:
        pass
    assert w.note == "" and w.delta("jobs") == 7


def test_pool_watch_names_the_calls_sent_serial(monkeypatch):
    seq = iter([_stats(jobs=3, stalls=1, backoff=2), _stats(jobs=10, stalls=2, backoff=10)])
    monkeypatch.setattr(_common._ufuncs, "_pool_stats", lambda reset=False: next(seq))
    with _common.PoolWatch() as w:
        pass
    assert w.note == "pool backed off: 8 of 15 large calls of ours ran on one thread after 1 stall(s)"


def test_machine_info_names_the_configuration():
    info = _common.machine_info(("no_such_module",))
    assert info["versions"]["numpy"] == np.__version__
    assert info["versions"]["no_such_module"] is None
    lines = _common.header_lines(info)
    assert lines[0].startswith("machine : ") and lines[-1].startswith("missing : no_such_module")


_PARTIAL_LINE_CHILD = r'''
import os, signal, sys
from gelu_ext.jobs import _common

class Stderr:               # stderr whose write of the text (before print's newline) gets SIGINT
    def __init__(self, real):
        self.real = real
    def write(self, s):
        self.real.write(s)
        self.real.flush()
        if s.startswith("job: step"):
            os.kill(os.getpid(), signal.SIGINT)     # the handler runs before the newline
            for _ in range(10 ** 6):
                pass
        return len(s)
    def flush(self):
        self.real.flush()

sys.stderr = Stderr(sys.stderr)
with _common.ctrl_c_exits("job: interrupted"):
    _common.progress("job: step 1")
'''


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_inside_a_progress_line_still_prints_its_own_line(tmp_path):
    """An interrupt between a progress line's text and its newline (seen under
    load in CI: 'bench: importing torch ...  (1.0 s)gelu_ext: interrupted')
    still leaves the guard's line alone on the last line."""
    r = python_child(["-c", _PARTIAL_LINE_CHILD], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 130, r.stderr
    assert r.stderr.splitlines()[-2:] == ["job: step 1", "job: interrupted"], r.stderr


def test_other_load_is_a_count_of_cpus_or_none():
    with _common.OtherLoad() as w:
        sum(range(10000))
    assert w.cpus is None or 0.0 <= w.cpus
    assert _common.OtherLoad.wait(0) in (True, False)
