"""The ISA units (src/isa/<name>.c): each is compiled with its own
instruction set's flags, so nothing of the AVX2 or AVX-512 unit may run on a
CPU without that instruction set -- not at import (the dispatch tables are
filled by gx_dispatch.c, built with the portable flags, from data the units
export), not through a shared inline function the linker could have taken
from the wrong unit (every function of a unit is static or ISA-suffixed).

The proof is a run on a CPU without AVX: qemu-user emulating a Westmere
(SSE4.2, no AVX) runs this build's Python, imports gelu_ext, and calls every
op on every float dtype, threaded and not; an AVX instruction there is an
illegal instruction and kills the process.  Its outputs must be the
baseline path's bits computed here.  Skipped where qemu-x86_64 is absent
(Debian: qemu-user-static) or off x86-64.
"""
import json
import platform
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

from gelu_ext import _ufuncs
from helpers import UFUNCS, python_child

QEMU = shutil.which("qemu-x86_64-static") or shutil.which("qemu-x86_64")
pytestmark = [
    pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 only"),
    pytest.mark.skipif(QEMU is None, reason="no qemu-x86_64 (Debian: qemu-user-static)"),
]

# Every op on every float dtype, on inputs that reach the tables, the
# general formulas and the special values; n large enough that the pool
# threads a call (the parallel threshold is lowered) and that the split
# kernels see whole blocks.  Prints one digest per (op, dtype).
_SCRIPT = textwrap.dedent("""
    import hashlib, json, sys
    import numpy as np
    import gelu_ext
    from gelu_ext import _test_hooks, _ufuncs
    try:
        import ml_dtypes
        dtypes = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16]
    except ImportError:
        dtypes = [np.float32, np.float64, np.float16]
    _test_hooks.set_parallel_threshold(1024)
    gelu_ext.set_num_threads(2)
    n = 1 << 14
    rng = np.random.default_rng(41)
    base = np.concatenate([rng.normal(0, 3, n - 8), [0.0, -0.0, np.inf, -np.inf, np.nan, -30.0, 30.0, 5e-39]])
    out = {"isa": _ufuncs._get_isa()}
    for op in _ufuncs.OPS.values():
        for dt in dtypes:
            args = [np.roll(base, 7 * k).astype(dt) for k in range(op.nin)]
            r = np.ascontiguousarray(op.ufunc(*args))
            out[op.name + ":" + np.dtype(dt).name] = hashlib.sha256(r.tobytes()).hexdigest()
    json.dump(out, sys.stdout)
""")


def _digests(cwd, env=None, qemu=False):
    """The script's digests in a child (under qemu: a CPU without AVX)."""
    p = python_child(["-c", _SCRIPT], prefix=[QEMU, "-cpu", "Westmere"] if qemu else [],
                     capture_output=True, text=True, timeout=600, env=env, cwd=cwd)
    assert p.returncode == 0, f"{'under qemu -cpu Westmere: ' if qemu else ''}exit {p.returncode}\n{p.stderr[-3000:]}"
    return json.loads(p.stdout)


@pytest.mark.slow      # Python and NumPy under emulation: a CPU-minute, so in the whole suite only
def test_no_avx_instruction_runs_on_a_cpu_without_avx(tmp_path):
    import os
    env = dict(os.environ)
    env.pop("GELU_EXT_ISA", None)
    emulated = _digests(tmp_path, env, qemu=True)
    assert emulated.pop("isa") == "baseline", "a CPU without AVX must get the baseline path"
    env["GELU_EXT_ISA"] = "baseline"
    here = _digests(tmp_path, env)
    assert here.pop("isa") == "baseline"
    assert emulated.keys() == here.keys()
    differ = [k for k in here if emulated[k] != here[k]]
    assert not differ, f"the emulated CPU's bits differ from the baseline path's: {differ}"
    assert len(here) >= len(UFUNCS) * 3


def test_units_export_one_name_each():
    """The only global symbols of the kernels are gx_k_unit_<isa>, one per
    row of src/gx_isas.h, and the public functions of gx_dispatch.c (gx_*):
    nothing else a unit defines can bind a caller to the wrong ISA's copy."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    so = _ufuncs.__file__
    p = subprocess.run([nm, "-D", "--defined-only", so], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"nm cannot read {so}")
    names = {line.split()[-1] for line in p.stdout.splitlines() if line.strip()}
    kernel_names = {n for n in names if n.startswith("gx_k_")}
    assert kernel_names == {f"gx_k_unit_{isa}" for isa in _ufuncs.ISA_NAMES}, kernel_names
