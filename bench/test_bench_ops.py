"""pytest-benchmark suite: every op x dtype x size x threads, ours against the
NumPy/SciPy baseline and each installed peer on the same input and
preallocated output.

Run ``pytest bench/`` (see bench/README.md).  Each table groups one
size-op-dtype-threads cell, so it compares like with like.  Every benchmark
first checks that the call computes the op (against the float64 twin, loose
tolerance: peers differ in accuracy, not in what they compute), so a
benchmark that silently measures the wrong thing fails.
"""
import numpy as np
import pytest

import gelu_ext
from gelu_ext import testing
from gelu_ext.jobs import bench

OPS = list(bench.OPS)
DTYPES = ["float32", "float64"]
THREADS = ["1", "all"]
# ours_alloc: ours without out=, the fair partner of JAX (which allocates).
IMPLS = ["ours", "ours_alloc", "numpy", "torch", "jax", "onnxruntime", "mkl"]
_MODULE = {"torch": "torch", "jax": "jax", "onnxruntime": "onnxruntime"}


def _expected(op, d):
    """What op computes on d, in float64 (the slow twin)."""
    x = d["x"].astype(np.float64)
    if "b" in d:
        x = (d["x"] + d["b"]).astype(np.float64)      # the sum rounded in dtype, as the op defines it
    with np.errstate(all="ignore"):
        want = testing.REFERENCE[op.func](x)
    return want * d["g"] if "g" in d else want


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("threads", THREADS, ids=lambda t: f"t{t}")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_op(benchmark, machine, op, dtype, size, threads, impl):
    if impl in _MODULE:
        pytest.importorskip(_MODULE[impl])
    if impl == "jax" and threads != "1" and machine.get("jax_threads", "").startswith("1"):
        pytest.skip("JAX is pinned to 1 thread in this run (its thread pool is fixed when jax is imported)")
    if impl == "mkl" and threads != "1":
        pytest.skip("oneMKL VM runs on its sequential layer: 1 thread only")
    op_ = bench.OPS[op]
    n_threads = 1 if threads == "1" else None          # None: each library's default (all cores)
    bench.set_threads(n_threads)
    d = bench.make_inputs(op_, dtype, size)
    try:
        f = bench.prepare(impl, op_, d, n_threads)
    except bench.Unavailable as e:
        pytest.skip(f"{impl}: {e}")

    got = bench.as_numpy(f())                          # also the warm-up: JIT, page faults, thread start
    np.testing.assert_allclose(got.astype(np.float64), _expected(op_, d), rtol=1e-3, atol=1e-5,
                               err_msg=f"{impl} does not compute {op_.title}")

    # the test id's prefix, so `-k "<group>-"` selects exactly this table
    benchmark.group = f"{bench._size_id(size)}-{op}-{dtype}-t{threads}"
    benchmark.extra_info.update({
        "impl": impl, "op": op, "dtype": dtype, "n": d["n"], "shape": list(d["x"].shape),
        "threads": gelu_ext.get_num_threads() if impl.startswith("ours") else
        (machine.get("jax_threads") if impl == "jax" else 1 if impl == "mkl" else n_threads or "default"),
        "isa": machine["isa"], "cpu": machine["cpu"], "numpy": machine["versions"]["numpy"],
        "peer_version": machine["versions"].get(impl), "gelu_ext": machine["gelu_ext"],
    })
    benchmark(f)
    bench.set_threads(None)
