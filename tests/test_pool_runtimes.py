"""The pool next to other runtimes: the Transformer feed-forward
pattern -- a matmul, then fast_gelu on its output -- keeps its calls
threaded.

Right after a BLAS call OpenBLAS's worker spins on the other core for
~0.1 s (libgomp's, after a PyTorch op, for a few ms).  The kernel may then
put our woken worker on the caller's core, where it computes the whole call
while the caller waits, or the pool may judge the call a stall and run the
next calls serially.  These tests assert
how the calls ran, from the pool's own counters: every call threaded (no
back-off), and the caller and the workers each computing a real share of
the items.  No timings: the speed-up is measured by
``bench/busy_cores.py --only runtimes``.

Marked ``idle``: they assert how the pool shared the cores, so they need the
machine to themselves (CI runs them after its background jobs; its quick
tiers, which run beside other jobs, deselect them).  Each makes up to three
attempts, each after the pool's longest back-off (1 s) has run out, so one
preemption by another process on a shared host does not fail it.
"""
import os
import time

import numpy as np
import pytest

import gelu_ext
from gelu_ext import _ufuncs

def _cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


pytestmark = [
    pytest.mark.idle,
    pytest.mark.usefixtures("restore_threads"),
    pytest.mark.skipif(not _ufuncs._pool_threaded(), reason="built without threads"),
    pytest.mark.skipif(_cpus() < 2, reason="needs 2 CPUs: the caller's and a worker's"),
]

CALLS = 20
ATTEMPTS = 3
BACKOFF_MAX_S = 1.0         # GX_BACKOFF_MAX_NS in src/runtime/gx_pool.c


@pytest.fixture(scope="module")
def ffn():
    """The feed-forward block's shapes: x (512, 1024) @ w (1024, 4096) -> h,
    then GELU into o (2^21 elements: 32 chunks, threaded)."""
    rng = np.random.default_rng(29)
    x = rng.standard_normal((512, 1024), dtype=np.float32)
    w = rng.standard_normal((1024, 4096), dtype=np.float32) * np.float32(0.03)
    return x, w, np.empty((512, 4096), np.float32), np.empty((512, 4096), np.float32)


def _threaded_after(before, h, o, min_share):
    """Run `before(); fast_gelu(h, out=o)` CALLS times on 2 threads, up to
    ATTEMPTS times; return the counters of the first attempt that ran every
    call threaded with the caller and the workers each computing at least
    min_share of the items (or of the last attempt)."""
    gelu_ext.set_num_threads(2)
    for _ in range(ATTEMPTS):
        time.sleep(BACKOFF_MAX_S + 0.05)        # any back-off from before has run out
        _ufuncs._pool_stats(reset=True)
        for _ in range(CALLS):
            before()
            gelu_ext.fast_gelu(h, out=o)
        st = _ufuncs._pool_stats()
        total = st["owner_items"] + st["worker_items"]
        if (st["jobs"] == CALLS and st["backoff"] == 0 and total == CALLS * h.size
                and min(st["owner_items"], st["worker_items"]) >= min_share * total):
            break
    np.testing.assert_array_equal(o, gelu_ext.fast_gelu(h))
    return st


def _assert_threaded(st, h, min_share=None):
    """Every call ran as a threaded job, none sent serial; with
    ``min_share``, the caller and the workers each computed at least that
    share of the items."""
    total = CALLS * h.size
    assert st["jobs"] == CALLS and st["backoff"] == 0, st           # no call sent serial
    assert st["owner_items"] + st["worker_items"] == total, st
    if min_share is not None:
        assert st["owner_items"] >= min_share * total, st           # the caller was not displaced
        assert st["worker_items"] >= min_share * total, st          # a worker helped


def test_calls_after_a_numpy_matmul_run_threaded(ffn):
    x, w, h, o = ffn
    st = _threaded_after(lambda: np.matmul(x, w, out=h), h, o, 0.2)
    _assert_threaded(st, h, 0.2)


def test_calls_after_a_torch_matmul_run_threaded(ffn):
    torch = pytest.importorskip("torch")
    x, w, h, o = ffn
    tx, tw, th = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(h)
    st = _threaded_after(lambda: torch.matmul(tx, tw, out=th), h, o, 0.2)
    _assert_threaded(st, h, 0.2)


def test_calls_after_a_torch_op_are_not_sent_serial(ffn):
    """After torch's own GELU, libgomp's worker spins on the other core
    without yielding for a few ms: our worker often cannot get that core
    within a 2^21-element call, and the caller computes it alone -- which is
    no slower than one thread, so it must not send later calls serial."""
    torch = pytest.importorskip("torch")
    _, _, h, o = ffn
    th, to = torch.from_numpy(h), torch.empty(h.shape)
    h[...] = np.random.default_rng(1).standard_normal(h.shape, dtype=np.float32)
    st = _threaded_after(lambda: torch.ops.aten.gelu.out(th, out=to), h, o, 0.0)
    _assert_threaded(st, h)         # who computed the items is libgomp's spinner's call
