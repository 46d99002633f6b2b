"""The plumbing the ``python -m gelu_ext`` jobs share, written once:
Ctrl-C, progress lines and optional imports, timing (``measure``), argument checks,
JSON output, the machine description, and the exact GELU a NumPy user writes
(the baseline the demo and the BERT job time)."""
import _thread
import argparse
import contextlib
import importlib
import json
import math
import os
import platform
import signal
import sys
import threading
import time
from typing import NamedTuple

import numpy as np

import gelu_ext
from gelu_ext import _ufuncs

# ------------------------------------------------ progress, optional extras --


class MissingExtra(SystemExit):
    """An optional package is missing: one line naming what to install."""

    def __init__(self, package, extra):
        super().__init__(f"gelu_ext: this needs {package}; install it with: "
                         f"pip install 'gelu_ext[{extra}]'")


def require(module, extra, package=None):
    """Import ``module`` or raise MissingExtra naming ``extra``."""
    try:
        return import_module(module)
    except ImportError:
        raise MissingExtra(package or module.split(".")[0], extra) from None


def import_module(name):
    """``importlib.import_module``, then ``keep_ctrl_c()``: how the jobs
    import a peer or an optional extra."""
    try:
        return importlib.import_module(name)
    finally:
        keep_ctrl_c()


def progress(msg):
    """One line of progress on stderr (never on stdout, which holds results)."""
    _Guard.partial = True        # print writes msg, then the newline: Ctrl-C may land between
    print(msg, file=sys.stderr, flush=True)
    _Guard.partial = False


# ------------------------------------------------------------------ Ctrl-C --
#
# Ctrl-C ends a job within a second wherever it lands: one line on stderr,
# exit status 130.  A KeyboardInterrupt unwinding to the job's main does not
# do that once the peers are loaded; sending SIGINT at every moment of a
# bench run showed it
# * dropped: raised in JAX's gc callback it is printed ("Exception ignored
#   in: <function _xla_gc_callback ...>") and lost, and the job ran on;
# * turned into an abort: raised in Python code that jaxlib's C++ (nanobind)
#   calls while JAX is imported, it ends in std::terminate (exit -6);
# * turned into a kill: escaping an exec() of a string (scipy's
#   array_api_compat runs exec("from numpy import *") while scipy is
#   imported) it marks CPython's "unhandled KeyboardInterrupt" flag though the
#   main catches it, and at exit the interpreter kills itself with SIGINT
#   (exit -2, after our line); and the interpreter's teardown with torch
#   and JAX loaded took 0.7-1.5 s here.
# So nothing unwinds: the guard's SIGINT handler ends the process there and
# then (the jobs keep no state worth a cleanup; results are printed at the
# end).  CPython runs that handler in the main thread between bytecodes; when
# the main thread is not running Python (a long C call, a wait on a peer's
# threads while SIGINT went to one of them), a watchdog thread, woken through
# signal.set_wakeup_fd by CPython's C-level handler itself, ends the process
# CTRL_C_GRACE seconds later.  A peer's import may install its own SIGINT
# handling; keep_ctrl_c() puts the guard's back after every peer import
# (import_module).

CTRL_C_GRACE = 0.5       # seconds the main thread has before the watchdog ends the job


class _Guard:
    """The process's one Ctrl-C guard (a process has one SIGINT disposition)."""
    line = None          # printed on Ctrl-C; None while no guard is active
    wakeup_fd = -1       # write end of the pipe CPython's C handler writes the signal number to
    partial = False      # a progress line is being written: it may lack its newline
    ending = _thread.allocate_lock()


def _flush_stdout(done):
    try:
        sys.stdout.flush()
    except Exception:            # closed, a broken pipe, a reentrant call
        pass
    done.release()


def _end(line):
    """Print ``line`` on stderr and exit with 130, from whichever thread gets
    here first (the other waits for the exit); never returns."""
    if not _Guard.ending.acquire(blocking=False):
        while True:
            time.sleep(60)
    # Results already printed reach the pipe; but the main thread may hold
    # stdout's lock, or nobody reads the pipe: that must not keep the job
    # alive.  (_thread, not threading: the main thread, which may be running
    # this handler, may hold threading's own locks.)
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(_flush_stdout, (done,))
    done.acquire(timeout=0.2)
    # Our line is the last one: the main thread may still be running (when
    # this is the watchdog), so its progress lines go nowhere from here on.
    sys.stderr = open(os.devnull, "w")
    # on a line of its own, also when the interrupt lands inside progress()
    # between its text and its newline
    os.write(2, (("\n" if _Guard.partial else "") + line + "\n").encode())
    os._exit(130)


def _on_sigint(signum, frame):
    _end(_Guard.line)


def _watchdog(rfd, line):
    with os.fdopen(rfd, "rb", buffering=0) as wake:
        while True:
            got = wake.read(64)
            if not got:                  # the guard was removed
                return
            if int(signal.SIGINT) in got:
                break
    time.sleep(CTRL_C_GRACE)
    _end(line)


def keep_ctrl_c():
    """Put the guard's SIGINT handling back (after a peer's import, which may
    have replaced the handler, the wakeup fd or the signal mask); nothing
    without a guard."""
    if _Guard.line is None:
        return
    # Also re-installs CPython's C-level handler, should a library have
    # replaced it with sigaction() behind Python's back.
    signal.signal(signal.SIGINT, _on_sigint)
    if _Guard.wakeup_fd >= 0:
        signal.set_wakeup_fd(_Guard.wakeup_fd)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


@contextlib.contextmanager
def ctrl_c_exits(line):
    """Run the body so that Ctrl-C ends the process within a second, wherever
    it lands: ``line`` on stderr (the last line), exit status 130, no
    traceback, no cleanup.  For a program's entry point (``python -m
    gelu_ext``, ``bench/ratios.py``); outside the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread() or _Guard.line is not None:
        yield
        return
    saved_handler = signal.getsignal(signal.SIGINT)
    _Guard.line = line
    wfd = -1
    if os.name == "posix":
        rfd, wfd = os.pipe()
        os.set_blocking(wfd, False)      # set_wakeup_fd requires it
        _Guard.wakeup_fd = wfd
        saved_fd = signal.set_wakeup_fd(wfd)
        threading.Thread(target=_watchdog, args=(rfd, line), name="gelu_ext Ctrl-C watchdog",
                         daemon=True).start()
    keep_ctrl_c()
    try:
        yield
    except KeyboardInterrupt:            # raised by code, not by Ctrl-C (the handler never raises)
        _end(line)
    finally:
        _Guard.line, _Guard.wakeup_fd = None, -1
        signal.signal(signal.SIGINT, signal.default_int_handler if saved_handler is None else saved_handler)
        if wfd >= 0:
            signal.set_wakeup_fd(saved_fd)
            os.close(wfd)                # the watchdog reads EOF and ends


# ------------------------------------------------------------------ timing --

class Timing(NamedTuple):
    median: float        # seconds per call
    q1: float
    q3: float
    repeats: int
    loops: int           # calls per timed sample


def _calibrate(f, min_sample):
    """Calls per sample so that one sample lasts >= min_sample seconds."""
    loops = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(loops):
            f()
        dt = time.perf_counter() - t0
        if dt >= min_sample or loops >= 1 << 20:
            return loops, dt / loops
        loops = max(loops * 2, int(loops * 1.2 * min_sample / max(dt, 1e-9)))


def measure(calls, *, min_sample=2e-3, min_repeats=5, max_repeats=25, budget=0.5, setup=None):
    """Median seconds per call of each entry of ``calls`` (name -> function).

    Warm-up, calibration, then ``min_repeats``..``max_repeats`` rounds (as
    many as fit in ``budget`` seconds) in which every implementation takes one
    timed sample, alternating the order each round: on a shared machine the
    load drifts, and interleaving lets the drift hit every entry alike.
    ``setup``: name -> function called, untimed, before each of that
    entry's samples and its warm-up (e.g. to switch an implementation in)."""
    names = list(calls)
    setup = setup or {}
    loops, cost = {}, 0.0
    for k in names:
        if k in setup:
            setup[k]()
        calls[k]()                         # warm-up
        loops[k], per_call = _calibrate(calls[k], min_sample)
        cost += loops[k] * per_call
    repeats = int(min(max_repeats, max(min_repeats, budget / max(cost, 1e-9))))
    samples = {k: [] for k in names}
    for r in range(repeats):
        for k in (names if r % 2 == 0 else names[::-1]):
            f, n = calls[k], loops[k]
            if k in setup:
                setup[k]()
                f()
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            samples[k].append((time.perf_counter() - t0) / n)
    out = {}
    for k in names:
        q1, med, q3 = np.percentile(samples[k], [25, 50, 75])
        out[k] = Timing(float(med), float(q1), float(q3), repeats, loops[k])
    return out


class PoolWatch:
    """The thread pool's counters around a measurement, so that no
    ratio silently measures the pool's back-off: after a threaded call that
    was slower than one thread (src/runtime/gx_pool.c), the next 8-1024 large calls
    run on the caller alone, and a column timed then is not the kernel's
    threaded speed.  ``with PoolWatch() as w: ...``, then ``w.note`` is ''
    or says how many of our large calls ran serially."""

    def __enter__(self):
        self.before = _ufuncs._pool_stats()
        self.after = None
        return self

    def __exit__(self, *exc):
        self.after = _ufuncs._pool_stats()
        return False

    def delta(self, key):
        return self.after[key] - self.before[key]

    @property
    def note(self):
        serial, stalls = self.delta("backoff"), self.delta("stalls")
        if not serial and not stalls:
            return ""
        return (f"pool backed off: {serial} of {serial + self.delta('jobs')} large calls of ours "
                f"ran on one thread after {stalls} stall(s)")


def medians_after(before, call, threads, repeats, seed=5):
    """Median seconds of ``call()`` at each thread count of ``threads`` (a
    count for ``gelu_ext.set_num_threads``), each sample one call timed alone
    right after an untimed ``before()`` -- another runtime's call, as in a
    Transformer feed-forward block -- the counts alternating call
    by call in an order drawn at random, after one warm-up per count.
    Returns ``({count: median}, PoolWatch)``, the watch over the timed calls.
    The default thread count is set again at the end."""
    order = np.random.default_rng(seed)
    for k in threads:
        gelu_ext.set_num_threads(k)
        before()
        call()
    samples = {k: [] for k in threads}
    with PoolWatch() as pool:
        for _ in range(repeats):
            for k in order.permutation(len(threads)):
                gelu_ext.set_num_threads(threads[k])
                before()
                t0 = time.perf_counter()
                call()
                samples[threads[k]].append(time.perf_counter() - t0)
    gelu_ext.set_num_threads(None)
    return {k: float(np.median(v)) for k, v in samples.items()}, pool


def medians(calls, repeats):
    """Median seconds of one call of each entry, over exactly ``repeats``
    interleaved single calls (after warm-up): ``measure`` without calibration."""
    return {k: t.median for k, t in measure(calls, min_sample=0.0, min_repeats=repeats,
                                           max_repeats=repeats, budget=0.0).items()}


def _busy_ticks():
    """CPU ticks the whole machine has spent busy (user, nice, system, irq,
    softirq: /proc/stat's first line), or None where there is no /proc/stat."""
    try:
        with open("/proc/stat") as f:
            user, nice, system, _idle, _iowait, irq, softirq = (int(t) for t in f.readline().split()[1:8])
    except (OSError, ValueError):
        return None
    return user + nice + system + irq + softirq


class OtherLoad:
    """CPUs that processes other than this one kept busy around a
    measurement (the machine's busy time from /proc/stat minus this
    process's own), so that a table timed beside someone else's work says
    so: on 2 cores every parallel region of ours or torch's can wait for a
    thread the other work descheduled.  ``with OtherLoad() as w: ...``, then
    ``w.cpus`` (None where /proc/stat is absent).  ``OtherLoad.wait(s)``
    first waits up to ``s`` seconds for a second in which others kept
    under a tenth of a CPU busy, and says whether one came."""

    _TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __enter__(self):
        self.t0, self.busy0, self.own0 = time.perf_counter(), _busy_ticks(), sum(os.times()[:2])
        self.cpus = None
        return self

    def __exit__(self, *exc):
        busy = _busy_ticks()
        if busy is not None and self.busy0 is not None:
            wall = max(time.perf_counter() - self.t0, 1e-9)
            own = sum(os.times()[:2]) - self.own0
            self.cpus = max(0.0, (busy - self.busy0) / self._TICK - own) / wall
        return False

    @staticmethod
    def wait(seconds):
        end = time.perf_counter() + seconds
        while True:
            with OtherLoad() as w:
                time.sleep(1.0)
            if w.cpus is None or w.cpus < 0.1:
                return True
            if time.perf_counter() >= end:
                return False


# --------------------------------------------------------- argument checks --

def int_at_least(lo):
    """argparse type: an integer >= ``lo``, with a message naming the rule."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or v < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, got {text!r}")
        return v
    return parse


# -------------------------------------------------------------------- JSON --

def _plain(obj):
    """JSON-ready: NumPy scalars and arrays as Python values, NaN/inf (a
    diverged run, an unmeasurable error) as null -- strict JSON has neither."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json(path, doc):
    """Write ``doc`` to ``path`` as strict JSON."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(_plain(doc), f, indent=1, allow_nan=False)


# ------------------------------------------------------------- the machine --

def _cache_sizes():
    """{level: bytes} of the data caches of CPU 0 (Linux sysfs; {} elsewhere)."""
    sizes = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in sorted(os.listdir(base)):
            if not entry.startswith("index"):
                continue
            with open(f"{base}/{entry}/level") as f:
                level = f.read().strip()
            with open(f"{base}/{entry}/type") as f:
                kind = f.read().strip()
            with open(f"{base}/{entry}/size") as f:
                size = f.read().strip()
            if kind == "Instruction":
                continue
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
            sizes[f"L{level}" + ("d" if level == "1" else "")] = int(size.rstrip("KMG")) * mult
    except (OSError, ValueError):
        pass
    return sizes


def machine_info(modules=()):
    """Machine, gelu_ext's configuration and versions (NumPy, and each of
    ``modules`` that is already imported): what every report is stamped with."""
    cfg = gelu_ext.show_config(print_=False)
    info = {
        "cpu": cfg["cpu"], "machine": cfg["machine"], "logical_cpus": os.cpu_count(),
        "caches": _cache_sizes(), "python": platform.python_version(),
        "gelu_ext": cfg["version"], "isa": cfg["isa"], "best_isa": cfg["best_isa"],
        "compiled_isas": cfg["compiled_isas"],
        "num_threads": cfg["num_threads"], "parallel_threshold": cfg["parallel_threshold"],
        "versions": {"numpy": np.__version__},
    }
    for name in modules:
        m = sys.modules.get(name)
        info["versions"][name] = getattr(m, "__version__", None) if m else None
    return info


def _fmt_bytes(n):
    for unit, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= m:
            return f"{n / m:g} {unit}"
    return f"{n} B"


def header_lines(info):
    """The machine / gelu_ext / versions lines that open the bench reports."""
    caches = ", ".join(f"{k} {_fmt_bytes(v)}" for k, v in info["caches"].items()) or "unknown"
    vers = ", ".join(f"{k} {v}" for k, v in info["versions"].items() if v)
    missing = [k for k, v in info["versions"].items() if not v]
    lines = [
        f"machine : {info['cpu']} ({info['machine']}), {info['logical_cpus']} logical CPUs; caches {caches}",
        f"gelu_ext: {info['gelu_ext']}, ISA path {info['isa']} (best {info['best_isa']}, compiled "
        f"{', '.join(info['compiled_isas'])}), "
        f"threads {info['num_threads']}, parallel threshold {info['parallel_threshold']}",
        f"versions: python {info['python']}, {vers}",
    ]
    if missing:
        lines.append(f"missing : {', '.join(missing)} (optional; columns show '-')")
    return lines


# ------------------------------------------------------- the NumPy baseline --

def erf():
    """(erf, True) with SciPy's ufunc, else (math.erf vectorised, False):
    NumPy has no erf, and the vectorised one costs about 1 us an element."""
    try:
        from scipy.special import erf as scipy_erf
        return scipy_erf, True
    except ImportError:
        return np.vectorize(math.erf, otypes=[np.float64]), False


def numpy_exact_gelu(x, erf_):
    """0.5 x (1 + erf(x / sqrt 2)): the exact GELU a NumPy/SciPy user writes."""
    return 0.5 * x * (1.0 + erf_(x * np.sqrt(0.5).astype(x.dtype)))
