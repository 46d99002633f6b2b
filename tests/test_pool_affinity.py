"""The thread pool's affinity moves stay inside what each thread may use
(src/runtime/gx_pool.c).

On Linux the pool moves a worker woken onto its owner's core off it, and
pulls a straggler onto the owner's core; both change a thread's CPU mask
for a moment.  These tests check, in a fresh process each, that

- a process started under ``taskset -c 0`` keeps every thread on CPU 0;
- a process narrowed to CPU 0 after its workers started (what
  ``taskset -a -p -c 0 PID`` does) stays there too: a mask is never widened
  beyond what the thread has;
- the caller's own mask is the same after each call, and the workers' masks
  come back to exactly what they were;
- the results are the one-thread results, calls after a NumPy matmul
  included;
- a worker pulled onto its owner's core gets its own mask back when it
  leaves the job, unless its mask was set meanwhile: then it keeps that one
  (a probe job, src/testing/gx_pool_probe.h, holds the worker in the window);
- a process whose CPUs a cgroup cpuset narrows keeps every thread inside it.
"""
import os
import shutil
import textwrap

import pytest

import gelu_ext
from gelu_ext import _ufuncs
from helpers import WITHOUT_ML_DTYPES, python_child

CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []

pytestmark = [
    pytest.mark.skipif(not _ufuncs._pool_threaded(), reason="built without threads"),
    pytest.mark.skipif(not os.path.isdir("/proc/self/task") or len(CPUS) < 2,
                       reason="needs os.sched_getaffinity, /proc/self/task and >= 2 CPUs"),
]

PRELUDE = textwrap.dedent(r'''
    import os, sys, threading, time
    import numpy as np
    import gelu_ext
    from gelu_ext import _test_hooks, _ufuncs

    N = 1 << 20                 # 4 x ReLU's threshold (8 x 2^15): every call is threaded
    rng = np.random.default_rng(41)
    x = rng.normal(scale=4, size=N).astype(np.float32)
    g = rng.normal(size=N).astype(np.float32)
    m, row = x.reshape(-1, 2048), g[:2048].copy()
    a = rng.normal(size=(256, 256)).astype(np.float32)
    CALLS = [lambda: gelu_ext.fast_gelu(x), lambda: gelu_ext.fast_gelu(x, "tanh"),
             lambda: gelu_ext.fast_gelu_grad(x, g), lambda: gelu_ext.relu(x),
             lambda: gelu_ext.fast_gelu(m, bias=row)]

    def fail(msg):
        print(msg)
        sys.exit(3)

    def masks():
        """Every thread of this process: its id -> its CPU mask."""
        out = {}
        for tid in os.listdir("/proc/self/task"):
            try:
                out[int(tid)] = os.sched_getaffinity(int(tid))
            except OSError:             # the thread ended meanwhile
                pass
        return out

    def settled(want, where):
        """Every thread's mask is want[tid] (a worker restores its own mask
        just after it leaves a job, which may be after the call returned)."""
        for _ in range(200):
            got = masks()
            if all(got.get(t, m) == m for t, m in want.items()):
                return
            time.sleep(0.005)
        fail(f"{where}: masks {got}, want {want}")

    def rounds(allowed, where):
        """Threaded calls, each after a matmul: one-thread bits, the caller's
        mask unchanged by each call, no thread's mask outside `allowed`."""
        gelu_ext.set_num_threads(1)
        want = [f().tobytes() for f in CALLS]
        gelu_ext.set_num_threads(2)
        mine = os.sched_getaffinity(0)
        _ufuncs._pool_stats(reset=True)
        for r in range(30):
            np.matmul(a, a)
            for i, f in enumerate(CALLS):
                if f().tobytes() != want[i]:
                    fail(f"{where}: call {i} in round {r} differs from one thread's result")
                if os.sched_getaffinity(0) != mine:
                    fail(f"{where}: the caller's mask {os.sched_getaffinity(0)} after a call, was {mine}")
            wide = {t: m for t, m in masks().items() if not m <= allowed}
            if wide:
                fail(f"{where}: threads outside CPUs {allowed}: {wide}")
        st = _ufuncs._pool_stats()
        if st["jobs"] < 1 or _test_hooks.pool_workers() < 1:
            fail(f"{where}: no call was threaded: {st}")
''')

PULL = textwrap.dedent(r'''
    every = os.sched_getaffinity(0)
    gelu_ext.set_num_threads(2)

    def pull_then(act):
        """Run the probe job; once its worker is pulled, act(tid, core) on
        it, release it, and return its tid after it has left the job (it
        restores its mask before it joins another: `helped` grows)."""
        h0 = _ufuncs._pool_stats()["pulled"]
        t = threading.Thread(target=_test_hooks.pool_probe_run)
        t.start()
        end = time.monotonic() + 10
        while _ufuncs._pool_stats()["pulled"] == h0 and time.monotonic() < end:
            time.sleep(0.001)
        tid = _test_hooks.pool_probe_held()
        try:
            if _ufuncs._pool_stats()["pulled"] == h0 or tid <= 0:
                fail(f"no worker was pulled: {_ufuncs._pool_stats()}, held by {tid}")
            core = os.sched_getaffinity(tid)
            if len(core) != 1:
                fail(f"the pulled worker's mask is {core}, not one core")
            act(tid, min(core))
        finally:
            _test_hooks.pool_probe_release()
            t.join()
        helped = _ufuncs._pool_stats()["helped"]
        end = time.monotonic() + 10     # past the back-off the probe's wait causes
        while _ufuncs._pool_stats()["helped"] == helped and time.monotonic() < end:
            gelu_ext.fast_gelu(x)
        if _ufuncs._pool_stats()["helped"] == helped:
            fail("the worker joined no job after the probe")
        return tid
''')

SCENARIOS = {
    "started under taskset -c 0": r'''
        if os.sched_getaffinity(0) != {0}:
            fail(f"taskset did not apply: {os.sched_getaffinity(0)}")
        rounds({0}, "under taskset")
        settled({t: {0} for t in masks()}, "under taskset, after the calls")
    ''',
    "narrowed to CPU 0 after the workers started": r'''
        rounds(os.sched_getaffinity(0), "before narrowing")
        # what `taskset -a -p -c 0 PID` does: every thread, one by one
        for tid in masks():
            os.sched_setaffinity(tid, {0})
        rounds({0}, "after narrowing")
        settled({t: {0} for t in masks()}, "after narrowing, after the calls")
    ''',
    "pulled, left alone": PULL + textwrap.dedent(r'''
        tid = pull_then(lambda tid, core: None)
        # the calls after the probe may pull it again (a loaded machine
        # descheduled it mid-chunk); with no call running, any pull is undone
        end = time.monotonic() + 10
        while os.sched_getaffinity(tid) != every and time.monotonic() < end:
            time.sleep(0.01)
        if os.sched_getaffinity(tid) != every:
            fail(f"the pulled worker's mask {os.sched_getaffinity(tid)}, was {every}")
    '''),
    "pulled, then its mask set": PULL + textwrap.dedent(r'''
        def narrow(tid, core):
            global theirs
            theirs = {min(every - {core})}      # a core the pull did not set
            os.sched_setaffinity(tid, theirs)
        tid = pull_then(narrow)
        if os.sched_getaffinity(tid) != theirs:
            fail(f"the mask set while the worker was pulled, {theirs}, became {os.sched_getaffinity(tid)}")
    '''),
    "in a cgroup cpuset of CPU 0": r'''
        rounds(os.sched_getaffinity(0), "before the cgroup")
        with open(os.environ["GX_CGROUP_PROCS"], "w") as f:    # every thread moves
            f.write(str(os.getpid()))
        if os.sched_getaffinity(0) != {0}:
            fail(f"the cgroup did not apply: {os.sched_getaffinity(0)}")
        rounds({0}, "in the cgroup")
        settled({t: {0} for t in masks()}, "in the cgroup, after the calls")
    ''',
    "caller on a CPU of its own": r'''
        every = os.sched_getaffinity(0)
        gelu_ext.set_num_threads(2)
        gelu_ext.fast_gelu(x)               # the workers start with every CPU
        os.sched_setaffinity(0, {max(every)})   # this thread only
        rounds(every, "caller narrowed")
        want = {t: every for t in masks()}
        want[threading.get_native_id()] = {max(every)}
        settled(want, "caller narrowed, after the calls")
    ''',
}


def _run(body, prefix=(), setup=""):
    code = WITHOUT_ML_DTYPES + setup + PRELUDE + textwrap.dedent(body) + '\nprint("OK")\n'
    root = os.path.dirname(os.path.dirname(os.path.abspath(gelu_ext.__file__)))
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = python_child(["-c", code], prefix=prefix, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("OK"), \
        f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"


@pytest.mark.skipif(shutil.which("taskset") is None or 0 not in CPUS, reason="needs taskset and CPU 0")
def test_a_process_started_under_taskset_stays_inside_its_cpu():
    _run(SCENARIOS["started under taskset -c 0"], prefix=("taskset", "-c", "0"))


@pytest.mark.skipif(0 not in CPUS, reason="needs CPU 0")
def test_a_process_narrowed_after_its_workers_started_stays_inside_its_cpu():
    _run(SCENARIOS["narrowed to CPU 0 after the workers started"])


def test_the_callers_and_the_workers_masks_come_back_exactly():
    _run(SCENARIOS["caller on a CPU of its own"])


def test_a_pulled_worker_gets_its_own_mask_back():
    _run(SCENARIOS["pulled, left alone"])


def test_a_mask_set_while_a_worker_is_pulled_is_kept():
    _run(SCENARIOS["pulled, then its mask set"])


def _cpuset_cgroup():
    """A new child cgroup confined to CPU 0 -> (its directory, the file that
    moves a process into it), or the reason there is none.  cgroup v2 where
    its hierarchy has the cpuset controller, else v1's cpuset hierarchy."""
    if os.geteuid() != 0:
        return None, "needs root to create a cgroup"
    name = f"gelu_ext_test_{os.getpid()}"
    v2 = "/sys/fs/cgroup" if os.path.exists("/sys/fs/cgroup/cgroup.controllers") else "/sys/fs/cgroup/unified"
    seen = []
    try:
        with open(os.path.join(v2, "cgroup.controllers")) as f:
            has_cpuset = "cpuset" in f.read().split()
        seen.append(f"{v2} (cgroup v2) {'has' if has_cpuset else 'lacks'} the cpuset controller")
        if has_cpuset:
            with open(os.path.join(v2, "cgroup.subtree_control"), "w") as f:
                f.write("+cpuset")
            d = os.path.join(v2, name)
            os.mkdir(d)
            with open(os.path.join(d, "cpuset.cpus"), "w") as f:
                f.write("0")
            return (d, os.path.join(d, "cgroup.procs")), None
    except OSError as e:
        seen.append(f"{v2}: {e}")
    v1 = "/sys/fs/cgroup/cpuset"
    if not os.path.exists(os.path.join(v1, "cpuset.cpus")):
        return None, "; ".join(seen + [f"no cgroup v1 cpuset hierarchy at {v1}"])
    try:
        d = os.path.join(v1, name)
        os.mkdir(d)
        with open(os.path.join(v1, "cpuset.mems")) as f:
            mems = f.read()
        for key, value in (("cpuset.cpus", "0"), ("cpuset.mems", mems)):
            with open(os.path.join(d, key), "w") as f:
                f.write(value)
        return (d, os.path.join(d, "cgroup.procs")), None
    except OSError as e:
        return None, "; ".join(seen + [f"cannot make a cgroup v1 cpuset in {v1}: {e}"])


@pytest.mark.skipif(0 not in CPUS, reason="needs CPU 0")
def test_a_process_in_a_cgroup_cpuset_stays_inside_it():
    made, why = _cpuset_cgroup()
    if made is None:
        pytest.skip(f"cannot confine a process with a cgroup cpuset here: {why}")
    d, procs = made
    try:
        _run(SCENARIOS["in a cgroup cpuset of CPU 0"],
             setup=f"import os\nos.environ['GX_CGROUP_PROCS'] = {procs!r}\n")
    finally:
        os.rmdir(d)         # its process has exited
