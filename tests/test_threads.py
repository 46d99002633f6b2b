"""Threading: the result never depends on the thread count.

gx_dispatch.c cuts a large contiguous call into chunks that the threads of
gx_pool.c take in whatever order they come, and every element is computed by
the same code whichever thread takes it; these
tests hold it to that bit for bit, including with the parallel threshold
lowered so that small calls (and the chunked float16/strided paths) are split.
They also check that the ufuncs are safe to call from several Python threads
at once (NumPy releases the GIL around the loops).

The quick tier runs test_thread_count_does_not_change_bits on the pairwise
subset of op x dtype x thread count (helpers.quick_tier: every op on both
dtypes and both counts); the full run runs all of it.
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import gelu_ext
from gelu_ext import _test_hooks, _ufuncs
from gelu_ext.testing import assert_same_bits
from helpers import FLOAT_DTYPES, UFUNC_IDS, UFUNCS, dtype_id, quick_tier

N = 1 << 20

pytestmark = pytest.mark.usefixtures("restore_threads")


def operands(spec, dt, n=N, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-8, 8, n).astype(dt)
    x[::1001] = np.nan
    rest = [rng.uniform(-2, 2, n).astype(dt) for _ in range(spec.nin - 1)]
    return [x] + rest


@pytest.fixture(scope="module")
def serial_results():
    """(operands, one-thread result) per ufunc and dtype, computed once."""
    cache = {}

    def get(spec, dt):
        key = (spec.name, np.dtype(dt).name)
        if key not in cache:
            args = operands(spec, dt)
            gelu_ext.set_num_threads(1)
            try:
                cache[key] = (args, spec.ufunc(*args))
            finally:
                gelu_ext.set_num_threads(None)
        return cache[key]
    return get


def thread_count_cases():
    for spec in UFUNCS:
        for dt in [np.float32, np.float64]:
            for threads, tid in [(2, "2"), (None, "default")]:
                yield ((spec.name, dtype_id(dt), tid),
                       pytest.param(spec, dt, threads, id=f"{spec.name}-{dtype_id(dt)}-{tid}"))


@pytest.mark.parametrize("spec, dt, threads", quick_tier(thread_count_cases()))
def test_thread_count_does_not_change_bits(spec, dt, threads, serial_results):
    args, want = serial_results(spec, dt)
    gelu_ext.set_num_threads(threads)
    assert_same_bits(spec.ufunc(*args), want, spec.name)


@pytest.mark.parametrize("threshold", [1, 7, 1000], ids=lambda t: f"threshold{t}")
@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_small_parallel_threshold_does_not_change_bits(spec, dt, threshold):
    # odd length: blocks do not divide evenly; float16 runs in 512-element
    # chunks, which a low threshold splits across threads as well
    args = operands(spec, dt, n=4099, seed=1)
    gelu_ext.set_num_threads(1)
    want = spec.ufunc(*args)
    gelu_ext.set_num_threads(2)
    _test_hooks.set_parallel_threshold(threshold)
    assert_same_bits(spec.ufunc(*args), want, spec.name)


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_small_threshold_strided_input_does_not_change_bits(spec):
    args = operands(spec, np.float64, n=3 * 4099, seed=2)
    strided = [a[::3] for a in args]
    gelu_ext.set_num_threads(1)
    want = spec.ufunc(*[s.copy() for s in strided])
    gelu_ext.set_num_threads(2)
    _test_hooks.set_parallel_threshold(1)
    assert_same_bits(spec.ufunc(*strided), want, spec.name)


def test_set_num_threads_none_restores_default():
    default = gelu_ext.get_num_threads()
    gelu_ext.set_num_threads(1)
    assert gelu_ext.get_num_threads() == 1
    gelu_ext.set_num_threads(None)
    assert gelu_ext.get_num_threads() == default


def test_set_num_threads_zero_restores_default():
    default = gelu_ext.get_num_threads()
    gelu_ext.set_num_threads(1)
    gelu_ext.set_num_threads(0)
    assert gelu_ext.get_num_threads() == default


def test_parallel_threshold_round_trips():
    _test_hooks.set_parallel_threshold(12345)
    assert _ufuncs._get_parallel_threshold() == 12345


def test_show_config_reports_thread_settings():
    gelu_ext.set_num_threads(1)
    _test_hooks.set_parallel_threshold(4321)
    cfg = gelu_ext.show_config(print_=False)
    assert (cfg["num_threads"], cfg["parallel_threshold"]) == (1, 4321)


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_concurrent_python_threads_get_the_serial_result(spec):
    arrays = [operands(spec, np.float32, n=200_003, seed=s) for s in range(4)]
    gelu_ext.set_num_threads(1)
    want = [spec.ufunc(*a) for a in arrays]
    gelu_ext.set_num_threads(None)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda a: spec.ufunc(*a), arrays * 2))
    for g, w in zip(got, want * 2):
        assert_same_bits(g, w, spec.name)


@pytest.mark.parametrize("chunk", [64, 192, 8192 + 64], ids=lambda c: f"chunk{c}")
@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_chunk_size_does_not_change_bits(spec, chunk):
    args = operands(spec, np.float32, n=3 * 4099, seed=3)
    gelu_ext.set_num_threads(1)
    want = spec.ufunc(*args)
    gelu_ext.set_num_threads(3)
    _test_hooks.set_parallel_threshold(1)
    old = _ufuncs._get_chunk()
    _test_hooks.set_chunk(chunk)
    try:
        assert_same_bits(spec.ufunc(*args), want, spec.name)
    finally:
        _test_hooks.set_chunk(old)


@pytest.mark.parametrize("chunk", [64, 8192 + 64], ids=lambda c: f"chunk{c}")
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_bias_row_driver_chunks_do_not_change_bits(approximate, chunk):
    rng = np.random.default_rng(4)
    x = rng.normal(scale=4, size=(333, 100)).astype(np.float32)   # rows x cols, C order
    g = rng.normal(size=x.shape).astype(np.float32)
    b = rng.normal(size=100).astype(np.float32)
    gelu_ext.set_num_threads(1)
    want = (gelu_ext.fast_gelu(x, approximate, bias=b), gelu_ext.fast_gelu_grad(x, g, approximate, bias=b))
    gelu_ext.set_num_threads(3)
    _test_hooks.set_parallel_threshold(1)
    old = _ufuncs._get_chunk()
    _test_hooks.set_chunk(chunk)
    try:
        got = (gelu_ext.fast_gelu(x, approximate, bias=b), gelu_ext.fast_gelu_grad(x, g, approximate, bias=b))
    finally:
        _test_hooks.set_chunk(old)
    for a, w in zip(got, want):
        assert_same_bits(a, w, f"bias rows {approximate}")
