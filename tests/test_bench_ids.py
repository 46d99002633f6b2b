"""The benchmark ids accept the selections bench/README.md documents:
sizes as ``n1048576``, threads as ``t1``, one table as ``-k "<group>-"``.
Collection only (no benchmark runs), about a second."""
import os
from pathlib import Path

import pytest

from helpers import python_child

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _collect(tmp_path, *args):
    if not BENCH.is_dir():
        pytest.skip("bench/ is not beside tests/ (installed tests without the repository)")
    pytest.importorskip("pytest_benchmark")
    # run from elsewhere: `python -m` puts the working directory first on
    # sys.path, and the repository's gelu_ext/ is not the installed package.
    # Without Hypothesis's plugin (bench/ has no property tests): loading it
    # is most of the child's time, ~1 s of CPU.  Not an xdist worker's
    # environment either (`pytest -n 2`): pytest-benchmark reads it as xdist
    # being active in the child and warns, which the warning filters make
    # an error.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    r = python_child(["-m", "pytest", str(BENCH), "--collect-only", "-q",
                      "-p", "no:cacheprovider", "-p", "no:hypothesispytest", *args],
                     capture_output=True, text=True, cwd=tmp_path, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return [line.split("::", 1)[1] for line in r.stdout.splitlines() if "::test_op[" in line]


def test_one_group_one_size_one_peer(tmp_path):
    ids = _collect(tmp_path, "-k", "n1048576-gelu_erf-float32-t1- and torch")
    assert ids == ["test_op[n1048576-gelu_erf-float32-t1-torch]"]


def test_size_prefix_with_hyphen_selects_one_size(tmp_path):
    ids = _collect(tmp_path, "--bench-huge", "-k", "n16- and -relu- and float32 and -t1-")
    assert ids and all(i.startswith("test_op[n16-relu-float32-t1-") for i in ids), ids
