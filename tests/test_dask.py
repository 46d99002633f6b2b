"""Dask arrays: every public array function of gelu_ext on a
chunked ``dask.array`` stays lazy, keeps the chunks and computes the same bits
as the NumPy call -- through ``__array_ufunc__``, so an ``np.asarray`` or a
shape check in the API layer would break this.

The functions come from ``gelu_ext.__all__`` through tests/public_calls.py
(a new public function without a row there fails test_public_calls.py).
Chunks hold 2^16 elements, the pool's threshold, and Dask's threaded
scheduler runs several at once: the concurrent-caller path of src/runtime/gx_pool.c.
"""
import numpy as np
import pytest

import gelu_ext
from gelu_ext import _ufuncs
from public_calls import bits, make_inputs, public_calls, results

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

SHAPE = (256, 1024)
CHUNKS = (64, 1024)             # 2^16 elements a chunk: a threaded call each
DTYPES = [np.float32, np.float64]


@pytest.fixture(scope="module", params=DTYPES, ids=lambda d: np.dtype(d).name)
def inputs(request):
    x, g, b = make_inputs(request.param, SHAPE)
    lazy = (da.from_array(x, chunks=CHUNKS), da.from_array(g, chunks=CHUNKS),
            da.from_array(b, chunks=CHUNKS[-1:]))
    return (x, g, b), lazy


@pytest.mark.parametrize("case", public_calls(), ids=lambda c: c[0])
def test_dask_lazy_chunked_bit_identical(case, inputs):
    _, f, call = case
    (x, g, b), (dx, dg, db) = inputs
    lazy = results(call(f, dx, dg, db))
    want = results(call(f, x, g, b))
    assert len(lazy) == len(want)
    for lz, w in zip(lazy, want):
        assert isinstance(lz, da.Array), f"{case[0]} computed a {type(lz).__name__}, not a lazy dask array"
        assert lz.chunks == dx.chunks
        assert lz.dtype == w.dtype
    with dask.config.set(scheduler="threads", num_workers=4):
        got = dask.compute(*lazy)
    for gt, w in zip(got, want):
        assert type(gt) is np.ndarray and gt.dtype == w.dtype
        np.testing.assert_array_equal(bits(gt), bits(w))


def test_dask_rechunked_bias_broadcasts():
    """A bias chunked differently from x's last axis: Dask rechunks, the bits
    are those of the NumPy call."""
    x, g, b = make_inputs(np.float32, SHAPE)
    dx = da.from_array(x, chunks=(100, 300))
    db = da.from_array(b, chunks=256)
    lazy = gelu_ext.fast_gelu(dx, bias=db)
    assert isinstance(lazy, da.Array) and lazy.shape == SHAPE
    with dask.config.set(scheduler="threads"):
        got = lazy.compute()
    np.testing.assert_array_equal(bits(got), bits(gelu_ext.fast_gelu(x, bias=b)))


def test_dask_gated_grad_of_a_broadcast_up():
    """geglu_grad with ``up`` broadcast along the rows: d_up is summed over
    them (as autograd does) lazily, chunk by chunk; d_gate keeps its bits, the
    sum its value to rounding (Dask adds the chunks' partial sums in its own
    order)."""
    x, g, b = make_inputs(np.float64, SHAPE)
    x[~np.isfinite(x)] = 0.0                   # a finite sum, to compare with a tolerance
    dx, dg, db = (da.from_array(x, chunks=CHUNKS), da.from_array(g, chunks=CHUNKS),
                  da.from_array(b, chunks=CHUNKS[-1:]))
    d_gate, d_up = gelu_ext.geglu_grad(dx, db, dg, "tanh")
    assert isinstance(d_gate, da.Array) and isinstance(d_up, da.Array)
    assert d_gate.chunks == dx.chunks and d_up.shape == b.shape
    want_gate, want_up = gelu_ext.geglu_grad(x, b, g, "tanh")
    with dask.config.set(scheduler="threads"):
        got_gate, got_up = dask.compute(d_gate, d_up)
    np.testing.assert_array_equal(bits(got_gate), bits(want_gate))
    np.testing.assert_allclose(got_up, want_up, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(not _ufuncs._pool_threaded(), reason="built without the thread pool")
def test_dask_threads_share_the_pool(restore_threads):
    """Four Dask worker threads calling at once: at most get_num_threads()
    threads compute (callers included), never one pool team per caller."""
    gelu_ext.set_num_threads(2)
    x = make_inputs(np.float32, (32, 1 << 17))[0]          # 32 chunks of 2^17 elements
    lazy = gelu_ext.fast_gelu(da.from_array(x, chunks=(1, 1 << 17)))
    _ufuncs._pool_stats(reset=True)
    with dask.config.set(scheduler="threads", num_workers=4):
        got = lazy.compute()
    stats = _ufuncs._pool_stats()
    assert 1 <= stats["max_running"] <= 2, stats
    np.testing.assert_array_equal(bits(got), bits(gelu_ext.fast_gelu(x)))
