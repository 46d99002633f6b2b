"""fork() after threaded calls.

A child made by ``os.fork()`` after a threaded call inherits none of the
parent's worker threads (an OpenMP runtime such as libgomp hangs there on
the child's first threaded call).  The pool in src/runtime/gx_pool.c
forgets its workers in the child and starts new ones there, so a child
computes the parent's bits and the parent carries on.

Each scenario runs in a fresh interpreter with a timeout, so a regression
fails the test instead of hanging the suite.  Every call in the scenarios is
large enough to take the threaded path (ReLU's threshold is 8x the others'),
the thread count is set to 2 so the pool is used even on a 1-CPU runner, and
the scenarios check that the pool really had workers before the fork.
"""
import os
import signal
import subprocess
import textwrap

import pytest

import gelu_ext
from helpers import WITHOUT_ML_DTYPES, python_child

TIMEOUT = 120

PRELUDE = textwrap.dedent(r'''
    import hashlib, os, sys, threading, warnings
    import numpy as np
    import gelu_ext
    from gelu_ext import _spec, _test_hooks, _ufuncs
    # Python >= 3.12 warns when a multi-threaded process forks; that is the point here
    warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)

    N = (1 << 19) + 5           # >= 2 x ReLU's threshold (8 x 2^15): threaded for every op
    ROWS, COLS = 257, 2048      # fused bias, row driver: 526336 elements
    rng = np.random.default_rng(12)
    x = rng.normal(scale=4, size=N).astype(np.float32)
    x[::997] = np.nan
    g = rng.normal(size=N).astype(np.float32)
    b = rng.normal(size=N).astype(np.float32)
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    m = rng.normal(scale=3, size=(ROWS, COLS)).astype(np.float32)
    gm = rng.normal(size=(ROWS, COLS)).astype(np.float32)
    row = rng.normal(size=COLS).astype(np.float32)
    m64, row64 = m.astype(np.float64), row.astype(np.float64)
    u = gelu_ext

    CALLS = {
        "fast_gelu": lambda: u.fast_gelu(x),
        "fast_gelu tanh f64": lambda: u.fast_gelu(x64, "tanh"),
        "fast_gelu bias": lambda: u.fast_gelu(x, bias=b),
        "fast_gelu bias rows": lambda: u.fast_gelu(m, bias=row),
        "fast_gelu tanh bias rows f64": lambda: u.fast_gelu(m64, "tanh", bias=row64),
        "fast_gelu_grad": lambda: u.fast_gelu_grad(x, g),
        "fast_gelu_grad no g": lambda: u.fast_gelu_grad(x64),
        "fast_gelu_grad tanh": lambda: u.fast_gelu_grad(x, g, "tanh"),
        "fast_gelu_grad bias rows": lambda: u.fast_gelu_grad(m, gm, bias=row),
        "fast_gelu_grad tanh bias": lambda: u.fast_gelu_grad(x, g, "tanh", bias=b),
    }
    # every op of the spec through its public function, float32 and float64 in turn
    for i, op in enumerate(_spec.OPS):
        args = ((x, g, b), (x64, g64, g64))[i % 2][:len(op.inputs)]
        CALLS[op.name] = (lambda f, a: lambda: f(*a))(getattr(u, op.name), args)

    def digests(_=None):
        return {k: hashlib.sha256(np.ascontiguousarray(f()).view(np.uint8)).hexdigest()
                for k, f in CALLS.items()}

    def check(got, where):
        bad = [k for k in WANT if got[k] != WANT[k]]
        if bad:
            print(f"{where}: results differ from the serial run: {bad}")
            sys.exit(3)

    def fork_and_check(where):
        """Raw os.fork: the child recomputes everything on threads."""
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                if _test_hooks.pool_workers() != 0:
                    print(f"{where}: child inherited {_test_hooks.pool_workers()} workers"); code = 4
                elif digests() != WANT:
                    print(f"{where}: child results differ from the parent's"); code = 3
                elif THREADED and _test_hooks.pool_workers() < 1:
                    print(f"{where}: child never used threads"); code = 5
            except BaseException as e:
                print(f"{where}: child raised {e!r}"); code = 6
            sys.stdout.flush()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            print(f"{where}: child exit status {code}")
            sys.exit(3)

    gelu_ext.set_num_threads(1)
    WANT = digests()
    gelu_ext.set_num_threads(2)
    check(digests(), "parent, 2 threads")
    THREADED = _ufuncs._pool_threaded()      # False: a build without threads, all serial
    assert _test_hooks.pool_workers() >= 1 or not THREADED, "the parent never started a worker"
''')

SCENARIOS = {
    "os.fork": r'''
        fork_and_check("os.fork")
        check(digests(), "parent after the fork")
    ''',
    "multiprocessing fork pool": r'''
        import multiprocessing as mp
        with mp.get_context("fork").Pool(2) as pool:
            for i, got in enumerate(pool.map(digests, range(4))):
                check(got, f"pool task {i}")
        check(digests(), "parent after the pool")
    ''',
    "fork in a forked child": r'''
        pid = os.fork()
        if pid == 0:
            try:
                check(digests(), "child")
                fork_and_check("grandchild")
            finally:
                os._exit(0 if digests() == WANT else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "child or grandchild failed"
        check(digests(), "parent")
    ''',
    "fork while another thread computes": r'''
        # the atfork handlers must leave the pool usable whatever the other
        # thread was doing when fork() was called
        stop = threading.Event()
        errors = []
        def busy():
            want = WANT["fast_gelu"]
            while not stop.is_set():
                got = hashlib.sha256(u.fast_gelu(x).view(np.uint8)).hexdigest()
                if got != want:
                    errors.append("busy thread got other bits")
        t = threading.Thread(target=busy)
        t.start()
        try:
            for i in range(6):
                fork_and_check(f"fork {i} during calls")
        finally:
            stop.set()
            t.join()
        assert not errors, errors
        check(digests(), "parent after the forks")
    ''',
}


def _run(body):
    code = WITHOUT_ML_DTYPES + PRELUDE + textwrap.dedent(body) + '\nprint("OK")\n'
    root = os.path.dirname(os.path.dirname(os.path.abspath(gelu_ext.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    # own process group: on a hang the test kills the scenario and every
    # child it forked (they would otherwise outlive the test, hung)
    p = python_child(["-c", code], popen=True, env=env, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(f"hung: no result after {TIMEOUT} s (a forked child or the parent deadlocked)")
    finally:
        try:                                # nothing of the scenario may outlive the test
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return p.returncode, out, err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_forked_child_computes_the_parents_bits(scenario):
    code, out, err = _run(SCENARIOS[scenario])
    assert code == 0 and out.rstrip().endswith("OK"), f"exit {code}\nstdout:\n{out}\nstderr:\n{err}"
