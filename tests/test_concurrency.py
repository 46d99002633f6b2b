"""Concurrency.

1. Eight Python threads call every function on shared read-only inputs, each
   with its own outputs, while they keep changing the thread count
   (1, 2, None); every result must be bit-identical to a serial run.  The
   large operands take the thread pool, the small and strided ones the
   calling thread, float16 the widening loop.
2. The kernels release the GIL: while one thread runs a long call, a second
   Python thread keeps running.  No timing thresholds: the second thread
   timestamps its iterations and the test asks whether any of them fall in
   the middle half of the call's interval, which is impossible if the call
   holds the GIL (a thread switch can happen just before or just after the
   call, within a switch interval, never in its middle).  A control run with
   a C call that does hold the GIL shows the detector can tell the two apart.
"""
import sys
import threading
import time

import numpy as np
import pytest

import gelu_ext
from gelu_ext import _spec, testing


N_THREADS = 8
ROUNDS = 3
THREAD_COUNTS = (1, 2, None)


def _shared_inputs():
    rng = np.random.default_rng(2024)
    big = (1 << 16) + 5          # > 2 x the default parallel threshold: threaded
    arrs = {
        "x": rng.normal(scale=4, size=big).astype(np.float32),
        "g": rng.normal(size=big).astype(np.float32),
        "b": rng.normal(size=big).astype(np.float32),
        "x64": rng.normal(scale=4, size=big),
        "g64": rng.normal(size=big),
        "x16": rng.normal(scale=3, size=999).astype(np.float16),
        "m": rng.normal(scale=4, size=(300, 7)),                 # strided via .T / [::2]
        "bias_row": rng.normal(size=7),
    }
    arrs["x"][::97] = np.nan
    arrs["x64"][::89] = -np.inf
    for a in arrs.values():
        a.flags.writeable = False
    return arrs


def _calls(a):
    """(name, function(out) -> result) for every public function and ufunc;
    ``out`` is the calling thread's own array (shape/dtype from ``_out_like``)."""
    u = gelu_ext
    x, g, b, x64, g64, x16, m, br = (a[k] for k in ("x", "g", "b", "x64", "g64", "x16", "m",
                                                     "bias_row"))
    return [
        ("fast_gelu", x, lambda o: u.fast_gelu(x, out=o)),
        ("fast_gelu tanh", x64, lambda o: u.fast_gelu(x64, "tanh", out=o)),
        ("fast_gelu bias", x, lambda o: u.fast_gelu(x, bias=b, out=o)),
        ("fast_gelu tanh bias rows", m, lambda o: u.fast_gelu(m, "tanh", bias=br, out=o)),
        ("fast_gelu strided", m.T, lambda o: u.fast_gelu(m.T, out=o)),
        ("fast_gelu float16", x16, lambda o: u.fast_gelu(x16, out=o)),
        ("fast_gelu_grad", x, lambda o: u.fast_gelu_grad(x, out=o)),
        ("fast_gelu_grad tanh grad", x64, lambda o: u.fast_gelu_grad(x64, g64, "tanh", out=o)),
        ("fast_gelu_grad bias", x, lambda o: u.fast_gelu_grad(x, g, bias=b, out=o)),
        ("fast_gelu_grad tanh bias", x, lambda o: u.fast_gelu_grad(x, g, "tanh", bias=b, out=o)),
        ("relu_grad no grad", x16, lambda o: u.relu_grad(x16, out=o)),
    ] + [
        # every op of the spec through its public function, float32 and
        # float64 in turn, and one strided
        (op.name, like, (lambda f, a: lambda o: f(*a, out=o))(getattr(u, op.name), args[:len(op.inputs)]))
        for i, op in enumerate(_spec.OPS)
        for like, args in [[(x, (x, g, b)), (x64, (x64, g64, g64)), (m[::2], (m[::2],) * 3)][i % 3]]
    ]


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).tobytes()


@pytest.fixture
def restore_threads():
    yield
    gelu_ext.set_num_threads(None)


def test_eight_threads_bit_identical_to_serial(restore_threads):
    a = _shared_inputs()
    calls = _calls(a)
    gelu_ext.set_num_threads(None)
    serial = {name: _bits(f(np.empty(like.shape, like.dtype))) for name, like, f in calls}

    errors, mismatches = [], []
    barrier = threading.Barrier(N_THREADS)

    def worker(tid):
        try:
            rng = np.random.default_rng(tid)
            outs = {name: np.empty(like.shape, like.dtype) for name, like, _ in calls}
            barrier.wait()
            for r in range(ROUNDS):
                order = rng.permutation(len(calls))
                for j, i in enumerate(order):
                    name, _, f = calls[i]
                    if (j + tid) % 3 == 0:      # change the count under the others' feet
                        gelu_ext.set_num_threads(THREAD_COUNTS[(tid + r + j) % 3])
                    outs[name].fill(np.nan)
                    res = f(outs[name])
                    if res is not outs[name] or _bits(res) != serial[name]:
                        mismatches.append((tid, r, name))
        except BaseException as e:   # reported by the main thread
            errors.append((tid, repr(e)))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert not mismatches, f"{len(mismatches)} results differ from the serial run: {mismatches[:10]}"
    for name, like, _ in calls:             # the shared inputs were only read
        assert not like.flags.writeable


# ------------------------------------------------------------ GIL release --

def _progress_during(call, attempts=5):
    """Run ``call`` in this thread while a second Python thread ticks; return
    the number of ticks that fell in the middle half of the call, for the
    first attempt that saw any (0 if none did)."""
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            time.sleep(0.0002)          # numpy-free work; the GIL is needed to record
            ticks.append(time.perf_counter_ns())

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)        # narrows the hand-over windows at the edges
    t = threading.Thread(target=ticker)
    t.start()
    try:
        time.sleep(0.01)
        for _ in range(attempts):
            del ticks[:]
            t0 = time.perf_counter_ns()
            call()
            t1 = time.perf_counter_ns()
            quarter = (t1 - t0) // 4
            inside = sum(t0 + quarter < s < t1 - quarter for s in list(ticks))
            if inside:
                return inside
        return 0
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)


def test_gil_is_released_during_a_large_call(restore_threads):
    gelu_ext.set_num_threads(1)          # the call occupies one core, the ticker the other
    x = np.linspace(-6.0, 6.0, 1 << 24)
    out = np.empty_like(x)
    assert _progress_during(lambda: gelu_ext.gelu_erf(x, out=out)) > 0, \
        "no Python thread ran in the middle of a 2^24-element call: the GIL was held"
    idx = np.array([0, 1, len(x) // 2, len(x) - 1])
    np.testing.assert_allclose(out[idx], testing.ref_gelu_erf(x[idx]), rtol=1e-13)


@pytest.mark.skipif(not getattr(sys, "_is_gil_enabled", lambda: True)(),
                    reason="free-threaded Python: nothing holds a GIL")
def test_gil_detector_sees_a_call_that_holds_the_gil():
    # sum over a range runs in C without ever releasing the GIL: the detector
    # must report no progress in the middle of it, or test above proves nothing
    assert _progress_during(lambda: sum(range(3_000_000)), attempts=2) == 0
