"""No leaks: 10^5 calls of every public function, successful ones on
small arrays and ones that raise, grow neither tracemalloc's traced memory nor
the process's resident memory beyond a small fixed bound.

How the bounds catch a leak: after a warm-up (NumPy fills its dispatch and
promotion caches) the calls are repeated ~10^5 times;
anything kept per call -- a result array, a reference to an argument, an
exception or traceback, a malloc in the C kernels -- grows by a multiple of
10^5.  The bounds are a few bytes per call: a leak of even one small object
per call exceeds them, while allocator noise stays far below.

The arrays are small, so every call stays on the calling thread: on a shared
2-core machine a threaded region per call costs up to a millisecond, and the
threaded path is exercised by test_concurrency.py and the fuzz tests.
"""
import gc
import os
import tracemalloc

import numpy as np
import pytest

import gelu_ext
from gelu_ext import _spec


TOTAL_CALLS = 100_000
WARMUP_CALLS = 5_000
TRACED_BOUND = 256 * 1024          # bytes over 95k calls: < 3 bytes per call
RSS_BOUND = 1024 * 1024            # bytes over 95k calls: < 11 bytes per call (noise: ~100 KiB once)


def _call_table(n):
    """(name, callable, expected exception or None) for every public
    function and ufunc, on float32/float64/float16 arrays of n elements."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=n).astype(np.float32)
    g = rng.normal(size=n).astype(np.float32)
    b = rng.normal(size=n).astype(np.float32)
    x64, x16 = x.astype(np.float64), x.astype(np.float16)
    xs = x[::2]                                          # strided: the gather path
    out = np.empty_like(x)
    out64 = np.empty_like(x64)
    ro = np.empty_like(x)
    ro.flags.writeable = False
    u = gelu_ext
    ok = [
        ("fast_gelu", lambda: u.fast_gelu(x)),
        ("fast_gelu tanh out", lambda: u.fast_gelu(x, "tanh", out=out)),
        ("fast_gelu bias", lambda: u.fast_gelu(x, bias=b)),
        ("fast_gelu tanh bias out", lambda: u.fast_gelu(x, "tanh", bias=b, out=out)),
        ("fast_gelu float64", lambda: u.fast_gelu(x64)),
        ("fast_gelu float16", lambda: u.fast_gelu(x16)),
        ("fast_gelu strided", lambda: u.fast_gelu(xs)),
        ("fast_gelu list", lambda: u.fast_gelu([0.5, -1.0])),
        ("fast_gelu scalar", lambda: u.fast_gelu(np.float32(0.5))),
        ("fast_gelu_grad", lambda: u.fast_gelu_grad(x)),
        ("fast_gelu_grad grad tanh", lambda: u.fast_gelu_grad(x, g, "tanh")),
        ("fast_gelu_grad bias", lambda: u.fast_gelu_grad(x, g, bias=b, out=out)),
        ("fast_gelu_grad tanh bias", lambda: u.fast_gelu_grad(x, None, "tanh", bias=b)),
        ("relu_grad", lambda: u.relu_grad(x)),
        ("ufunc where", lambda: u.gelu_erf(x, out=out, where=x > 0)),
        ("swiglu_grad", lambda: u.swiglu_grad(x, g, b, out=(out, None))),
        ("geglu", lambda: u.geglu(x, g, "tanh")),
        ("geglu_grad", lambda: u.geglu_grad(x, g, b, "tanh")),
        ("activation", lambda: u.activation("gelu_new")(x, out=out)),
        ("get/set_num_threads", lambda: u.set_num_threads(u.get_num_threads())),
        ("show_config", lambda: u.show_config(print_=False)),
    ]
    # every op of the spec through its public function, on its inputs in one
    # of these forms in turn (a derivative's thin function takes g)
    forms = [("", (x, g, b), {}), ("float16", (x16, x16, x16), {}),
             ("float64 out", (x64, x64, x64), {"out": out64}), ("strided", (xs, g[::2], b[::2]), {})]
    for i, op in enumerate(_spec.OPS):
        tag, args, kw = forms[i % len(forms)]
        ok.append((f"{op.name} {tag}".strip(), (lambda f, a, kw: lambda: f(*a, **kw))(
            getattr(u, op.name), args[:len(op.inputs)], kw)))
    bad = [
        ("bad approximate", lambda: u.fast_gelu(x, "fast"), ValueError),
        ("bad approximate grad", lambda: u.fast_gelu_grad(x, g, None), ValueError),
        ("bad approximate geglu", lambda: u.geglu(x, g, "exact"), ValueError),
        ("bad activation name", lambda: u.activation("leaky_relu"), ValueError),
        ("bad out pair", lambda: u.swiglu_grad(x, g, b, out=out), TypeError),
        ("complex input", lambda: u.fast_gelu(x.astype(np.complex64)), TypeError),
        ("object input", lambda: u.relu(np.array([1.0], dtype=object)), TypeError),
        ("bias does not broadcast", lambda: u.fast_gelu(x, bias=b[:3]), ValueError),
        ("grad does not broadcast", lambda: u.relu_grad(x, g[:3]), ValueError),
        ("out wrong dtype", lambda: u.fast_gelu(x, out=np.empty(n, np.int32)), TypeError),
        ("out wrong shape", lambda: u.gelu_erf_bias_grad(x, g, b, out=out[:3]), ValueError),
        ("out read-only", lambda: u.fast_gelu_grad(x, out=ro), ValueError),
        ("bad thread count", lambda: u.set_num_threads(-1), ValueError),
    ]
    return ok, bad


def _run(ok, bad, calls):
    """Cycle through every entry until ``calls`` calls have been made."""
    table = [(f, None) for _, f in ok] + [(f, e) for _, f, e in bad]
    done = 0
    while done < calls:
        for f, exc in table:
            if exc is None:
                f()
            else:
                try:
                    f()
                except exc:
                    pass
                else:
                    raise AssertionError(f"{f} did not raise {exc.__name__}")
        done += len(table)
    return done


def test_every_entry_point_is_exercised():
    ok, bad = _call_table(8)
    names = {n.split()[0] for n, *_ in ok + bad}
    for public in gelu_ext.__all__:
        name = getattr(gelu_ext, public).__name__     # an alias (*_backward) counts as its ufunc
        assert any(name in n for n in names) or public in {"get_num_threads", "set_num_threads"}
    _run(ok, bad, 1)        # each raising entry really raises what it says


def test_traced_memory_does_not_grow():
    ok, bad = _call_table(16)
    _run(ok, bad, WARMUP_CALLS)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        n = _run(ok, bad, TOTAL_CALLS - WARMUP_CALLS)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert n + WARMUP_CALLS >= TOTAL_CALLS
    assert after - before < TRACED_BOUND, (
        f"traced memory grew by {after - before} bytes over {n} calls")


def _under_asan():
    return "libasan" in os.environ.get("LD_PRELOAD", "")


@pytest.mark.skipif(_under_asan(), reason="ASan's quarantine and shadow memory make RSS meaningless")
def test_resident_memory_does_not_grow():
    psutil = pytest.importorskip("psutil")
    proc = psutil.Process()
    ok, bad = _call_table(128)       # a leaked result would be >= 512 bytes per call
    _run(ok, bad, WARMUP_CALLS)
    gc.collect()
    before = proc.memory_info().rss
    n = _run(ok, bad, TOTAL_CALLS - WARMUP_CALLS)
    gc.collect()
    after = proc.memory_info().rss
    assert after - before < RSS_BOUND, f"RSS grew by {after - before} bytes over {n} calls"
