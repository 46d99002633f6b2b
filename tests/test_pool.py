"""The thread pool (src/runtime/gx_pool.c): callers that are threads
themselves, the default thread count, the counters show_config relies on.

No timings: the pool's own counters say how many threads computed at once,
which is a property of its logic, not of the machine's speed.
"""
import os
import threading

import numpy as np
import pytest

import gelu_ext
from gelu_ext import _test_hooks, _ufuncs
from helpers import WITHOUT_ML_DTYPES, python_child

pytestmark = [
    pytest.mark.usefixtures("restore_threads"),
    pytest.mark.skipif(not _ufuncs._pool_threaded(), reason="built without threads"),
]

N = 1 << 20


def _inputs(k):
    rng = np.random.default_rng(k)
    return rng.normal(scale=4, size=N).astype(np.float32), rng.normal(size=N).astype(np.float32)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("callers", [2, 4])
def test_concurrent_callers_never_compute_on_more_threads_than_the_count(callers, threads):
    arrays = [_inputs(k) for k in range(callers)]
    gelu_ext.set_num_threads(1)
    want = [(gelu_ext.fast_gelu(x), gelu_ext.fast_gelu_grad(x, g, "tanh")) for x, g in arrays]
    gelu_ext.set_num_threads(threads)
    _ufuncs._pool_stats(reset=True)
    got, errors = [None] * callers, []
    barrier = threading.Barrier(callers)

    def caller(i):
        try:
            x, g = arrays[i]
            barrier.wait()
            for _ in range(4):
                got[i] = (gelu_ext.fast_gelu(x), gelu_ext.fast_gelu_grad(x, g, "tanh"))
        except BaseException as e:      # reported by the main thread
            errors.append(repr(e))

    ts = [threading.Thread(target=caller, args=(i,)) for i in range(callers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    stats = _ufuncs._pool_stats()
    assert not errors, errors
    for (a, b), (wa, wb) in zip(got, want):
        np.testing.assert_array_equal(a.view(np.uint32), wa.view(np.uint32))
        np.testing.assert_array_equal(b.view(np.uint32), wb.view(np.uint32))
    assert 1 <= stats["max_running"] <= threads, stats


def test_one_thread_never_uses_the_pool():
    gelu_ext.set_num_threads(1)
    _ufuncs._pool_stats(reset=True)
    x, g = _inputs(0)
    gelu_ext.fast_gelu(x)
    gelu_ext.fast_gelu(x.reshape(-1, 1024), bias=g[:1024])
    stats = _ufuncs._pool_stats()
    assert stats["jobs"] == 0 and stats["max_running"] == 0, stats


def test_threaded_call_starts_workers():
    gelu_ext.set_num_threads(2)
    gelu_ext.fast_gelu(_inputs(0)[0])
    assert _test_hooks.pool_workers() >= 1


def _threads_in_fresh_process(omp):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    root = os.path.dirname(os.path.dirname(os.path.abspath(gelu_ext.__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    code = WITHOUT_ML_DTYPES + "import gelu_ext; print(gelu_ext.get_num_threads())"
    r = python_child(["-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return int(r.stdout)


def _cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@pytest.mark.parametrize("omp, want", [("3", 3), ("1,2", 1), (" 5 ", 5), (None, None),
                                       ("abc", None), ("0", None), ("-2", None)],
                         ids=["3", "nested-list", "spaces", "unset", "garbage", "zero", "negative"])
def test_default_thread_count_follows_omp_num_threads(omp, want):
    assert _threads_in_fresh_process(omp) == (want if want is not None else _cpus())


def test_show_config_reports_what_governs_threads():
    cfg = gelu_ext.show_config(print_=False)
    for key in ("pool", "wait_policy", "num_threads", "default_threads", "parallel_threshold",
                "relu_parallel_threshold", "chunk", "cpu_loops", "after_fork"):
        assert key in cfg, key
    assert cfg["relu_parallel_threshold"] == 8 * cfg["parallel_threshold"]
    assert cfg["chunk"] % 64 == 0
