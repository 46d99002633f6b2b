"""The pool's workers end at process exit (src/runtime/gx_pool.c, gx_pool_shutdown).

gelu_ext registers ``_ufuncs._pool_shutdown`` with ``atexit``: it wakes the
workers, tells them to end and waits until they have.  These tests check, in a fresh process
each, that

- a process that made threaded calls exits with code 0, without hanging,
  and with no worker thread left when gelu_ext's hook has run;
- after the shutdown a call still computes (on its caller), the same bits;
- a second shutdown, and one with no worker ever started, do nothing;
- a fork()ed child shuts down its own workers and exits cleanly.
"""
import os
import textwrap

import pytest

import gelu_ext
from gelu_ext import _ufuncs
from helpers import WITHOUT_ML_DTYPES, python_child

pytestmark = pytest.mark.skipif(not _ufuncs._pool_threaded(), reason="built without threads")

HAS_TASKS = os.path.isdir("/proc/self/task")

PRELUDE = textwrap.dedent(r'''
    import atexit, os, sys, time
    import numpy as np

    def threads():
        """This process's threads (Linux); None elsewhere."""
        return set(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None

    def only(want):
        """This process's threads are `want` (None: cannot tell).  A worker
        that has ended its loop (what the shutdown waits for) is a detached
        thread the system may take a moment to remove: up to 2 s."""
        for _ in range(400):
            if want is None or threads() == want:
                return True
            time.sleep(0.005)
        return False

    def fail(msg):
        print(msg, flush=True)
        os._exit(3)

    import gelu_ext
    from gelu_ext import _test_hooks, _ufuncs
    x = np.random.default_rng(48).normal(size=1 << 20).astype(np.float32)
    gelu_ext.set_num_threads(1)
    want = gelu_ext.fast_gelu(x).tobytes()
    before = threads()              # NumPy's and BLAS's threads, no worker yet
    gelu_ext.set_num_threads(2)
''')

SCENARIOS = {
    # atexit runs its hooks last registered first: `late`'s, registered
    # before gelu_ext's import (_run), runs after gelu_ext's shutdown
    "exits after threaded calls": r'''
        for _ in range(20):
            if gelu_ext.fast_gelu(x).tobytes() != want:
                fail("a threaded call differs from one thread's result")
        if _test_hooks.pool_workers() < 1:
            fail("no worker started")
        def after_gelu_ext():
            if not only(before) or _test_hooks.pool_workers() != 0:
                fail(f"threads left after the pool's shutdown: {sorted(threads() - before)}")
            print("CLEAN", flush=True)
        late.append(after_gelu_ext)
    ''',
    "calls after a shutdown": r'''
        gelu_ext.fast_gelu(x)
        _ufuncs._pool_shutdown()
        _ufuncs._pool_shutdown()        # a second time: nothing
        if _test_hooks.pool_workers() != 0 or not only(before):
            fail(f"workers left: {_test_hooks.pool_workers()}, threads {threads()} vs {before}")
        jobs = _ufuncs._pool_stats()["jobs"]
        if gelu_ext.fast_gelu(x).tobytes() != want:
            fail("a call after the shutdown differs from one thread's result")
        if _ufuncs._pool_stats()["jobs"] != jobs or _test_hooks.pool_workers() != 0:
            fail("a call after the shutdown was threaded")
        print("CLEAN", flush=True)
    ''',
    "no worker ever started": r'''
        _ufuncs._pool_shutdown()
        if gelu_ext.fast_gelu(x).tobytes() != want:
            fail("a call after the shutdown differs from one thread's result")
        print("CLEAN", flush=True)
    ''',
    "a fork()ed child": r'''
        gelu_ext.fast_gelu(x)               # the parent's workers
        pid = os.fork()
        if pid == 0:
            mine = threads()
            for _ in range(20):
                if gelu_ext.fast_gelu(x).tobytes() != want:
                    fail("a threaded call in the child differs")
            if _test_hooks.pool_workers() < 1:
                fail("the child started no worker")
            _ufuncs._pool_shutdown()
            if _test_hooks.pool_workers() != 0 or not only(mine):
                fail(f"the child's workers are left: {threads()} vs {mine}")
            sys.exit(0)                     # atexit: the hook again, nothing to do
        _, status = os.waitpid(pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            fail(f"the child ended with status {status}")
        print("CLEAN", flush=True)
    ''',
}


def _run(body):
    setup = "import atexit\nlate = []\natexit.register(lambda: [f() for f in late])\n"
    code = WITHOUT_ML_DTYPES + setup + PRELUDE + textwrap.dedent(body)
    root = os.path.dirname(os.path.dirname(os.path.abspath(gelu_ext.__file__)))
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = python_child(["-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("CLEAN"), \
        f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"


def test_a_process_exits_cleanly_with_its_workers_joined():
    _run(SCENARIOS["exits after threaded calls"])


def test_a_call_after_the_shutdown_computes_on_its_caller():
    _run(SCENARIOS["calls after a shutdown"])


def test_a_shutdown_with_no_worker_started_does_nothing():
    _run(SCENARIOS["no worker ever started"])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_shuts_down_its_own_workers():
    _run(SCENARIOS["a fork()ed child"])
