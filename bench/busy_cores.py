"""Threads on a machine that is not ours alone.

Usage::

    python bench/busy_cores.py [--spinners K] [--repeats R] [--n N] [--only busy,runtimes,callers]

1. Busy cores: starts K spinner processes (default: one per CPU, so every
   core is busy with another process), then times each op at N float32
   elements with the default thread count and with one thread, interleaved
   in this process (samples of >= 20 ms of back-to-back calls, the mode
   that goes first drawn at random), and prints speed(default) /
   speed(1 thread); the goal is >= 0.8 for every op (more threads never
   much slower than one).  The spinners are ended by PID and waited
   for in a ``finally`` block, whatever happens.
2. Beside other runtimes (no spinners): the Transformer
   feed-forward pattern -- a matmul, then ``fast_gelu(h, out=o)`` on its
   output -- with NumPy's ``np.matmul`` (OpenBLAS, its default threads), a
   PyTorch op and ``torch.matmul`` (libgomp, default threads; where torch is
   installed) before each call, and alone for the ceiling, at (512, 4096) and
   2^24 float32 elements.  One thread and the default count alternate call
   by call (order drawn at random); a sample is one call, timed alone, the
   other runtime's call untimed before it.  Prints the speed-up (median 1
   thread / median default) and the pool's counters over the default calls:
   threads computing at once (CPU time in chunks / wall time of the
   threaded calls: what the pool got of the cores, whatever their speed on
   a shared host), calls threaded, calls a worker helped, the workers' share of the items,
   stalls and calls sent serial by a back-off.  The goal is >= 1.8x on an
   idle 2-core machine.
3. Concurrent callers (no spinners): 1, 2 and 4 Python threads each call
   ``fast_gelu`` on their own N-element array; prints the total throughput
   against one caller with all threads, the most threads computing large
   calls at once (the pool's own counter), and the most threads of this
   process seen runnable at once (sampled from /proc/self/task, Linux only,
   the sampling thread not counted; it includes a caller running Python
   between calls, which the pool does not govern).

This is a benchmark, not a test: it prints numbers and asserts nothing.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

import gelu_ext
from gelu_ext import _ufuncs
from gelu_ext.jobs import _common

SAMPLE_S = 0.02
SPIN = "import signal, sys\nsignal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\nwhile True: pass\n"


def start_spinners(k):
    return [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(k)]


def stop_spinners(procs):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def ops(n):
    rng = np.random.default_rng(0)
    x = rng.normal(scale=2, size=n).astype(np.float32)
    g = rng.normal(size=n).astype(np.float32)
    cols = 2048
    x2 = x.reshape(-1, cols)
    g2 = g.reshape(-1, cols)
    b = rng.normal(size=cols).astype(np.float32)
    out = np.empty_like(x)
    out2 = out.reshape(-1, cols)
    fg, fgg, rg = gelu_ext.fast_gelu, gelu_ext.fast_gelu_grad, gelu_ext.relu_grad
    return [
        ("exact GELU", lambda: fg(x, out=out)),
        ("tanh GELU", lambda: fg(x, "tanh", out=out)),
        ("exact GELU grad", lambda: fgg(x, g, out=out)),
        ("tanh GELU grad", lambda: fgg(x, g, "tanh", out=out)),
        ("bias+exact GELU (rows)", lambda: fg(x2, bias=b, out=out2)),
        ("bias+exact grad (rows)", lambda: fgg(x2, g2, bias=b, out=out2)),
        ("ReLU", lambda: gelu_ext.relu(x, out=out)),
        ("ReLU grad", lambda: rg(x, g, out=out)),
    ]


def _time(f, loops=1):
    """Seconds per call over ``loops`` back-to-back calls."""
    t0 = time.perf_counter()
    for _ in range(loops):
        f()
    return (time.perf_counter() - t0) / loops


def busy_table(n, repeats):
    """(name, median 1-thread s, median default s, pool counters) per op,
    interleaved; the counters say how the default-thread calls ran."""
    rows = []
    order = np.random.default_rng(12)
    for name, f in ops(n):
        t1, td = [], []
        stats = getattr(_ufuncs, "_pool_stats", lambda reset=False: None)
        for _ in range(3):                                  # warm-up, both modes
            gelu_ext.set_num_threads(None); f()
            gelu_ext.set_num_threads(1); f()
        # A sample is the mean of `loops` calls (>= SAMPLE_S): next to busy
        # cores single ~1 ms calls are either untouched or preempted for a
        # whole time slice, often every other call, so a median of single
        # calls flips between the two; blocks average over the slices.
        loops = max(1, min(1000, int(SAMPLE_S / min(_time(f) for _ in range(3)))))
        stats(reset=True)
        for r in range(repeats):
            # which mode goes first is drawn at random: on a loaded machine
            # a fixed order can fall into step with the scheduler's slices
            # and hand every preempted call to one mode
            for threads in ((1, None) if order.random() < 0.5 else (None, 1)):
                gelu_ext.set_num_threads(threads)
                (t1 if threads == 1 else td).append(_time(f, loops))
        rows.append((name, statistics.median(t1), statistics.median(td), stats()))
    gelu_ext.set_num_threads(None)
    return rows


class RunnableSampler(threading.Thread):
    """Samples how many of this process's threads are in state R."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.most = 0
        self.ok = os.path.isdir("/proc/self/task")

    def run(self):
        me = threading.get_native_id()
        while self.ok and not self.stop.is_set():
            r = 0
            for tid in os.listdir("/proc/self/task"):
                if int(tid) == me:
                    continue
                try:
                    with open(f"/proc/self/task/{tid}/stat") as fh:
                        if fh.read().rsplit(")", 1)[1].split()[0] == "R":
                            r += 1
                except OSError:
                    pass
            self.most = max(self.most, r)
            time.sleep(0.0005)


def runtime_table(repeats):
    """(scenario, shape, median 1-thread s, median default s, counters) for
    fast_gelu right after another runtime's call."""
    rng = np.random.default_rng(3)
    xm = rng.standard_normal((512, 1024), dtype=np.float32)
    wm = rng.standard_normal((1024, 4096), dtype=np.float32) * np.float32(0.03)
    try:
        import torch
    except ImportError:
        torch = None
    rows = []
    for shape in ((512, 4096), (1 << 24,)):
        h = rng.standard_normal(shape, dtype=np.float32)
        o = np.empty_like(h)
        hm = h.reshape(-1)[:512 * 4096].reshape(512, 4096)     # the matmul writes into h
        scenarios = [("alone", lambda: None), ("after np.matmul", lambda: np.matmul(xm, wm, out=hm))]
        if torch is not None:
            tx, tw = torch.from_numpy(xm), torch.from_numpy(wm)
            th, to = torch.from_numpy(h), torch.empty(shape)
            tmm = torch.empty(512, 4096)
            scenarios += [("after torch gelu", lambda: torch.ops.aten.gelu.out(th, out=to)),
                          ("after torch.matmul", lambda: torch.matmul(tx, tw, out=tmm))]
        reps = repeats if h.size < (1 << 22) else max(5, repeats // 3)
        for name, before in scenarios:
            med, pool = _common.medians_after(before, lambda: gelu_ext.fast_gelu(h, out=o), (1, None), reps)
            rows.append((name, shape, med[1], med[None], {k: pool.delta(k) for k in pool.after}, reps))
    return rows, (None if torch is None else torch.__version__)


def callers_row(k, n, calls):
    rng = np.random.default_rng(k)
    xs = [rng.normal(size=n).astype(np.float32) for _ in range(k)]
    outs = [np.empty_like(x) for x in xs]
    barrier = threading.Barrier(k + 1)

    def work(i):
        barrier.wait()
        for _ in range(calls):
            gelu_ext.fast_gelu(xs[i], out=outs[i])

    for i in range(k):                                      # warm-up
        gelu_ext.fast_gelu(xs[i], out=outs[i])
    stats = getattr(_ufuncs, "_pool_stats", lambda reset=False: None)
    stats(reset=True)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(k)]
    sampler = RunnableSampler()
    for t in threads:
        t.start()
    sampler.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    dt = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    st = stats()
    return k * calls * n / dt, (None if st is None else st["max_running"]), (sampler.most if sampler.ok else None)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spinners", type=int, default=os.cpu_count(),
                   help="spinner processes for the busy-core table (default: one per CPU)")
    p.add_argument("--repeats", type=int, default=21, help="interleaved samples per op and mode")
    p.add_argument("--n", type=int, default=1 << 20, help="elements per call (float32)")
    p.add_argument("--calls", type=int, default=20, help="calls per Python thread and round (callers table)")
    p.add_argument("--rounds", type=int, default=9, help="rounds of the callers table (medians)")
    p.add_argument("--only", default="busy,runtimes,callers",
                   help="comma-separated tables to run: busy, runtimes, callers (default: all)")
    a = p.parse_args(argv)
    only = set(a.only.split(","))
    if not only or only - {"busy", "runtimes", "callers"}:
        p.error(f"--only takes busy, runtimes and callers, comma-separated; got {a.only!r}")
    if a.spinners < 0 or a.repeats < 1 or a.n < 2048 or a.n % 2048 or a.calls < 1 or a.rounds < 1:
        p.error("need --spinners >= 0, --repeats, --calls, --rounds >= 1 and --n a positive multiple of 2048")

    cfg = gelu_ext.show_config(print_=False)
    print(f"machine : {cfg['cpu']} ({platform.machine()}), {os.cpu_count()} logical CPUs")
    print("gelu_ext: " + ", ".join(f"{k} {cfg[k]}" for k in
                                   ("version", "isa", "num_threads", "parallel_threshold", "chunk")
                                   if k in cfg))
    print(f"threads : {cfg.get('pool', 'OpenMP')}")
    print(f"python {platform.python_version()}, numpy {np.__version__}; n = {a.n} float32; "
          f"medians of {a.repeats} interleaved samples of >= {SAMPLE_S * 1e3:g} ms")

    if "busy" in only:
        busy_report(a)
    if "runtimes" in only:
        runtimes_report(a)
    if "callers" in only:
        callers_report(a)
    return 0


def runtimes_report(a):
    rows, torch_version = runtime_table(a.repeats)
    threaded = _ufuncs._pool_threaded()
    blas = ""
    try:
        import threadpoolctl
        info = [f"{i['internal_api']} {i['version']} ({i['num_threads']} threads, {i['threading_layer']})"
                for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        blas = "; NumPy's BLAS: " + ", ".join(info)
    except ImportError:
        pass
    print(f"\n== beside other runtimes, no spinners: another runtime's call before each fast_gelu call "
          f"(torch {torch_version or 'not installed'}{blas}); 1 thread and default "
          f"= {gelu_ext.get_num_threads()} threads alternate call by call ==")
    print(f"{'before each call':<20}{'shape':>12}{'1 thread ms':>13}{'default ms':>12}{'speed-up':>10}"
          f"{'computing':>11}   default calls: threaded / helped / workers' share / stalls / serial")
    for name, shape, t1, td, st, reps in rows:
        # (a build whose pool lacks the item and CPU-time counters: n/a,
        # so the same command measures it too)
        items = st.get("worker_items", 0) + st.get("owner_items", 0)
        share = f"{st['worker_items'] / items:.0%}" if items else "n/a"
        par = f"{st['cpu_ns'] / st['wall_ns']:.2f}" if st.get("wall_ns") else "n/a"
        how = (f"{st['jobs']:>3}/{reps} / {st['helped']:>3} / {share:>5} / {st['stalls']} / {st['backoff']}"
               if threaded else "(built without threads)")
        print(f"{name:<20}{'x'.join(map(str, shape)):>12}{t1 * 1e3:>13.3f}{td * 1e3:>12.3f}"
              f"{t1 / td:>10.2f}{par:>11}   {how}")


def busy_report(a):
    procs = start_spinners(a.spinners)
    try:
        time.sleep(0.3)                                     # let them get going
        rows = busy_table(a.n, a.repeats)
    finally:
        stop_spinners(procs)
    print(f"\n== busy cores: {a.spinners} spinner processes on {os.cpu_count()} CPUs; "
          f"default = {gelu_ext.get_num_threads()} threads ==")
    print(f"{'op':<24}{'1 thread ms':>12}{'default ms':>12}{'speed default/1':>17}"
          f"   default calls: threaded (stalled) / serial after a stall")
    for name, t1, td, st in rows:
        how = "" if st is None else f"{st['jobs']:>11} ({st['stalls']}) / {st['backoff']}"
        print(f"{name:<24}{t1 * 1e3:>12.3f}{td * 1e3:>12.3f}{t1 / td:>17.2f}   {how}")


def callers_report(a):
    print(f"\n== concurrent callers, no spinners: each Python thread calls fast_gelu "
          f"{a.calls} times on its own array; medians of {a.rounds} rounds ==")
    print(f"{'callers':>8}{'Gelem/s':>10}{'vs 1 caller':>13}{'max computing':>15}{'max runnable':>14}")
    ks = (1, 2, 4)
    thr = {k: [] for k in ks}
    comp, most = {k: 0 for k in ks}, {k: 0 for k in ks}
    order = np.random.default_rng(7)
    for _ in range(a.rounds):                   # rounds of every k, in random order
        for k in order.permutation(ks):
            t, c, m = callers_row(int(k), a.n, a.calls)
            thr[k].append(t)
            comp[k] = None if c is None else max(comp[k], c)
            most[k] = None if m is None else max(most[k], m)
    base = statistics.median(thr[1])
    for k in ks:
        med = statistics.median(thr[k])
        print(f"{k:>8}{med / 1e9:>10.3f}{med / base:>13.2f}{'n/a' if comp[k] is None else comp[k]:>15}"
              f"{'n/a' if most[k] is None else most[k]:>14}")


if __name__ == "__main__":
    sys.exit(main())
