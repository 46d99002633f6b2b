"""A/B of two builds of gelu_ext's kernels in one process: speed ratio and
output bits, op x dtype x ISA path.

    python bench/ab.py --a /work/baseline/before --b /path/to/other/checkout
    python bench/ab.py --a OLD --b NEW --isa avx2,avx512 --dtypes float32 --ops gelu_erf,silu
    python bench/ab.py --a OLD --b OLD_COPY          # A against A: the noise floor

--a and --b are directories holding a built ``gelu_ext/_ufuncs*.so`` (a
checkout after ``python setup.py build_ext --inplace``, or a copy of its
``gelu_ext/`` package) or the ``.so`` itself.  Each ``.so`` is copied to a
temporary directory and loaded as ``gx_a._ufuncs`` / ``gx_b._ufuncs`` (a
dummy package each; the init function, ``PyInit__ufuncs``, is found from the
last component of the name).  The copy makes the two distinct files: for
the same file the dynamic loader hands back the library it already has, and
Cython 3 then returns the module object it already made (checked with Cython
3.3.1: the second import is the first, ISA and thread settings shared), so
A against A needs the copy; it also lets a checkout be rebuilt while this
runs.  Each library is loaded with its own symbols (RTLD_LOCAL, Python's
default), so the two sets of ``gx_*`` functions and their ISA and thread
settings stay apart; this is checked at start.

Why one process: the two builds see the same CPU (frequency, the other jobs
on a shared machine), the same input and output buffers at the same
addresses and the same NumPy, and they are timed alternately, A B B A in
even rounds and B A A B in odd ones, so drift cancels; two processes run at
different times compare different machines.

For every op of ``_ufuncs.OPS`` x dtype x ISA path (``_set_isa`` on both
builds, the CPU's own AMD-loop and bf16cvt settings, 1 thread:
``_set_num_threads(1)`` on both): inputs of --n elements, x ~ --scale N(0,1)
and every other input (incoming gradient, bias, up) N(0,1), contiguous,
``out=`` one preallocated buffer shared by both builds.  A sample is the
thread CPU time (``time.thread_time``: a preemption by another process is
not counted; ``--clock wall`` for perf_counter) of enough back-to-back calls
to last --min-time; per round the ratio mean(B samples) / mean(A samples).

Reading the table: ``B/A`` is the median of the per-round ratios (< 1: B
is faster), ``+-`` half their interquartile range (the noise of one row),
``*`` marks a row whose whole interquartile range lies on one side of 1.
Run A against A first (``--b`` a copy of ``--a``): its ratios and marks are
what noise alone gives on this machine today; a B/A row means something only
beyond that.  Code alignment is not in that noise (a copy loads at the same
offsets): a loop that moved to another 32- or 64-byte offset can shift one
row by several per cent with identical instructions (bench/README.md,
"Comparing two builds").  ``bits`` compares A's and B's output on the
timed inputs and on a zoo of 2^16 special and random-bit-pattern inputs:
``same``, or ``DIFFER t+z`` (t timed and z zoo outputs differ; every bit
counts, NaN payloads too), with the first differing input listed after the
table (exit status 1).
The summary gives per path the median, lowest and highest row ratio.
"""
import argparse
import glob
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types

import numpy as np


def find_so(path):
    """The _ufuncs extension of a checkout, package directory or the file itself."""
    if os.path.isfile(path):
        return path
    for pattern in ("gelu_ext/_ufuncs*.so", "_ufuncs*.so", "gelu_ext/_ufuncs*.pyd", "_ufuncs*.pyd"):
        found = sorted(glob.glob(os.path.join(path, pattern)))
        if found:
            return found[0]
    sys.exit(f"no gelu_ext/_ufuncs*.so under {path!r}: build it (python setup.py build_ext --inplace)")


def load(so, package, tmp):
    """so, copied into tmp, imported as package._ufuncs under a dummy package."""
    copy = os.path.join(tmp, package, os.path.basename(so))
    os.makedirs(os.path.dirname(copy))
    shutil.copy2(so, copy)
    pkg = types.ModuleType(package)
    pkg.__path__ = [os.path.dirname(copy)]
    sys.modules[package] = pkg
    spec = importlib.util.spec_from_file_location(f"{package}._ufuncs", copy)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def import_package(paths):
    """Import gelu_ext before loading the copies: a build's _ufuncs imports
    gelu_ext._spec (pure Python) while it initialises, and gelu_ext, first
    imported from inside that init, takes the half-made copy as its own
    _ufuncs (AttributeError: no OPS).  From sys.path if it is there, else
    from the first of paths that is a checkout."""
    try:
        import gelu_ext._spec  # noqa: F401
        return
    except ImportError:
        pass
    for path in paths:
        if os.path.isdir(os.path.join(path, "gelu_ext")):
            sys.path.insert(0, os.path.abspath(path))
            import gelu_ext._spec  # noqa: F401
            return
    sys.exit("gelu_ext is not importable: put a checkout on PYTHONPATH or pass one as --a or --b")


def plain_loads(m):
    """The build's plain_loads setting (builds from before its name was
    chosen call the setter _amd_loops)."""
    return (getattr(m, "_plain_loads", None) or m._amd_loops)()


def check_apart(a, b):
    """Setting A's ISA and threads must leave B's alone (separate libraries)."""
    if a is b:
        sys.exit("A and B are one module object: the two builds are not loaded apart")
    isas = a._compiled_isas()
    a._set_isa(isas[0]); b._set_isa(a._best_isa())
    a._set_num_threads(1); b._set_num_threads(2)
    if b._get_isa() != a._best_isa() or a._get_isa() != isas[0] or b._get_num_threads() != 2:
        sys.exit("A and B share their settings: the two builds are not loaded apart")
    b._set_num_threads(1)


def inputs(op, dtype, n, scale, seed):
    rng = np.random.default_rng(seed)
    xs = [scale * rng.standard_normal(n)] + [rng.standard_normal(n) for _ in range(op.nin - 1)]
    return [x.astype(dtype) for x in xs]


def zoo(op, dtype, n=1 << 16):
    """Random bit patterns (every class: NaN payloads, subnormals, huge) with
    the special values tiled in, for the bits check only."""
    rng = np.random.default_rng(20261204)
    width = np.dtype(dtype).itemsize
    utype = {2: np.uint16, 4: np.uint32, 8: np.uint64}[width]
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 4.5, -4.5,
                         5.0, -5.0, 9.0, -9.0, 20.0, -20.0, 1e-30, -1e-30, 3e38, -3e38])
    out = []
    for k in range(op.nin):
        bits = rng.integers(0, np.iinfo(utype).max, n, dtype=utype, endpoint=True)
        v = bits.view(dtype).copy()
        with np.errstate(over="ignore"):        # 3e38 is inf in the 16-bit types
            v[k::97] = np.resize(specials.astype(dtype), v[k::97].size)
        v[50 + k::89] = (4 * rng.standard_normal(v[50 + k::89].size)).astype(dtype)
        out.append(v)
    return out


def first_diff(ins, oa, ob):
    """(count of differing outputs, a description of the first)"""
    ua, ub = (o.view(f"u{o.dtype.itemsize}") for o in (oa, ob))
    idx = np.flatnonzero(ua != ub)
    if idx.size == 0:
        return 0, ""
    i = idx[0]

    def hx(v):
        return f"0x{int(v.view(f'u{v.dtype.itemsize}')):0{2 * v.dtype.itemsize}x}"
    args = ", ".join(f"{hx(x[i])} ({x[i]!r})" for x in ins)
    return idx.size, f"at {i}: inputs {args}: A {hx(oa[i])} ({oa[i]!r}), B {hx(ob[i])} ({ob[i]!r})"


def bits(fa, fb, ins):
    oa, ob = np.empty_like(ins[0]), np.empty_like(ins[0])
    fa(*ins, out=oa)
    fb(*ins, out=ob)
    return first_diff(ins, oa, ob)


def calls_per_sample(f, ins, out, clock, min_time):
    k = 1
    while True:
        t0 = clock()
        for _ in range(k):
            f(*ins, out=out)
        t = clock() - t0
        if t >= min_time / 4 or k >= 1 << 16:
            return max(1, int(np.ceil(k * min_time / max(t, 1e-9))))
        k *= 4


def sample(f, ins, out, k, clock):
    t0 = clock()
    for _ in range(k):
        f(*ins, out=out)
    return (clock() - t0) / k


def every_float32(fa, fb, nin, threads):
    """Bits of A and B on every float32 x (2^32 of them, in chunks of 2^24),
    the other inputs N(0, 1) with every 97th a special value (the zoo's
    classes) drawn per chunk: (count differing, how many of them are NaN in
    both with another payload, the first)."""
    count, nans, first = 0, 0, ""
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3e38], np.float32)
    for c0 in range(0, 1 << 32, 1 << 24):
        x = np.arange(c0, c0 + (1 << 24), dtype=np.uint64).astype(np.uint32).view(np.float32)
        rng = np.random.default_rng(c0)
        ins = [x]
        for _ in range(nin - 1):
            v = rng.standard_normal(x.size, dtype=np.float32)
            v[::97] = np.resize(specials, v[::97].size)
            ins.append(v)
        oa, ob = np.empty_like(x), np.empty_like(x)
        with np.errstate(all="ignore"):
            fa(*ins, out=oa)
            fb(*ins, out=ob)
        nd, f = first_diff(ins, oa, ob)
        if nd:
            payload = np.count_nonzero(np.isnan(oa) & np.isnan(ob) & (oa.view(np.uint32) != ob.view(np.uint32)))
            nans += payload
        count += nd
        first = first or f
    return count, nans, first


def time_row(fa, fb, ins, repeat, clock, min_time):
    """Per-round ratios B/A (round r: A B B A if r even, B A A B if odd)."""
    out = np.empty_like(ins[0])
    for f in (fa, fb, fa, fb):          # warm-up: pages of out, caches, branch predictors
        f(*ins, out=out)
    k = calls_per_sample(fa, ins, out, clock, min_time)
    ratios = []
    for r in range(repeat):
        order = (fa, fb, fb, fa) if r % 2 == 0 else (fb, fa, fa, fb)
        t = {fa: 0.0, fb: 0.0}
        for f in order:
            t[f] += sample(f, ins, out, k, clock)
        ratios.append(t[fb] / t[fa])
    return ratios


def quartiles(v):
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], statistics.median(v), q[2]


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu} ({os.cpu_count()} CPUs), Python {platform.python_version()}, NumPy {np.__version__}"


def git_rev(so):
    d = os.path.dirname(os.path.abspath(so))
    run = subprocess.run(["git", "-C", d, "describe", "--always", "--dirty"], capture_output=True, text=True)
    return run.stdout.strip() if run.returncode == 0 else "not a checkout"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", required=True, help="build A: checkout, gelu_ext package dir or _ufuncs .so")
    p.add_argument("--b", required=True, help="build B: as --a")
    p.add_argument("--isa", help="comma-separated paths (default: every path this CPU runs)")
    p.add_argument("--dtypes", default="float32,float64", help="float32,float64,float16,bfloat16")
    p.add_argument("--ops", help="comma-separated ops (default: every op of _ufuncs.OPS)")
    p.add_argument("--n", type=int, default=1 << 20, help="elements per call (default 2^20)")
    p.add_argument("--scale", type=float, default=2.0, help="x ~ scale N(0,1) (default 2)")
    p.add_argument("--repeat", type=int, default=9, help="rounds of A B B A / B A A B (default 9)")
    p.add_argument("--min-time", type=float, default=0.01, help="seconds per sample (default 0.01)")
    p.add_argument("--clock", choices=("thread", "wall"), default="thread")
    p.add_argument("--every-float32", action="store_true",
                   help="bits only: each op on every float32 x (other inputs N(0,1) and specials), "
                        "per path, on 2 threads; no timing (about a minute per op and path)")
    args = p.parse_args(argv)
    if args.repeat < 2:
        p.error("--repeat: at least 2 rounds (the spread needs them)")
    clock = time.thread_time if args.clock == "thread" else time.perf_counter

    so_a, so_b = find_so(args.a), find_so(args.b)
    import_package([args.b, args.a])
    tmp = tempfile.mkdtemp(prefix="gelu_ext_ab.")
    try:
        a, b = load(so_a, "gx_a", tmp), load(so_b, "gx_b", tmp)
    finally:
        shutil.rmtree(tmp)          # the libraries stay mapped
    check_apart(a, b)
    if list(a.OPS) != list(b.OPS):
        print("note: the op tables differ; comparing the ops both have", file=sys.stderr)
    ops = [o for o in (args.ops.split(",") if args.ops else a.OPS) if o in b.OPS]
    runnable = list(a._compiled_isas()[:a._compiled_isas().index(a._best_isa()) + 1])
    isas = args.isa.split(",") if args.isa else runnable
    for isa in isas:
        if isa not in runnable:
            sys.exit(f"--isa: {isa!r} is not a path this CPU runs; it runs {', '.join(runnable)}")
    dtypes = []
    for name in args.dtypes.split(","):
        if name == "bfloat16":
            dt, why = a._bfloat16()
            if dt is None or b._bfloat16()[0] is None:
                sys.exit(f"--dtypes bfloat16: {why or 'build B has no bfloat16 loops'}")
            dtypes.append(dt)
        else:
            dtypes.append(np.dtype(name))

    if args.every_float32:
        return every_float32_table(a, b, ops, isas)
    print(f"# bench/ab.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"# A {so_a} ({git_rev(so_a)})")
    print(f"# B {so_b} ({git_rev(so_b)})")
    print(f"# {machine()}; n {args.n}, x ~ {args.scale} N(0,1), 1 thread, {args.repeat} rounds of "
          f"ABBA/BAAB, samples >= {args.min_time} s {args.clock} time; "
          f"plain loads {plain_loads(a)}, bf16cvt {a._bf16cvt()}")
    print(f"{'isa':9s} {'dtype':9s} {'op':22s} {'B/A':>7s} {'+-':>6s}    bits")
    rows, differ = [], []
    t_start = time.perf_counter()
    for isa in isas:
        a._set_isa(isa); b._set_isa(isa)
        for dt in dtypes:
            for name in ops:
                op = a.OPS[name]
                fa, fb = op.ufunc, b.OPS[name].ufunc
                ins = inputs(op, dt, args.n, args.scale, seed=len(rows))
                nd, first = bits(fa, fb, ins)
                nz, zfirst = bits(fa, fb, zoo(op, dt))
                ratios = time_row(fa, fb, ins, args.repeat, clock, args.min_time)
                q1, med, q3 = quartiles(ratios)
                mark = "*" if q1 > 1 or q3 < 1 else " "
                bit = "same" if nd + nz == 0 else f"DIFFER {nd}+{nz}"
                if nd + nz:
                    differ.append(f"{isa} {dt.name} {name}: {nd} of {args.n} timed inputs {first}; "
                                  f"{nz} of the zoo's {zfirst}")
                rows.append((isa, dt.name, name, med, (q3 - q1) / 2))
                print(f"{isa:9s} {dt.name:9s} {name:22s} {med:7.3f} {(q3 - q1) / 2:6.3f} {mark}  {bit}",
                      flush=True)

    print(f"\n# summary ({time.perf_counter() - t_start:.0f} s): per path, the median of the rows' B/A, "
          f"the lowest and the highest row, the median +-")
    for isa in isas:
        r = [x for x in rows if x[0] == isa]
        lo, hi = min(r, key=lambda x: x[3]), max(r, key=lambda x: x[3])
        print(f"{isa:9s} median {statistics.median(x[3] for x in r):.3f}  "
              f"lowest {lo[3]:.3f} ({lo[1]} {lo[2]})  highest {hi[3]:.3f} ({hi[1]} {hi[2]})  "
              f"median +- {statistics.median(x[4] for x in r):.3f}  ({len(r)} rows)")
    worst = max(rows, key=lambda x: abs(x[3] - 1))
    print(f"worst row: {worst[0]} {worst[1]} {worst[2]} B/A {worst[3]:.3f} +- {worst[4]:.3f}")
    if differ:
        print(f"\n!!! OUTPUT BITS DIFFER between A and B in {len(differ)} rows:")
        for d in differ:
            print("!!!   " + d)
        return 1
    print(f"bits: A and B identical on every row ({len(rows)} rows, timed inputs and zoo)")
    return 0


def every_float32_table(a, b, ops, isas):
    """--every-float32: one row per path and float32 op, bits only."""
    print(f"# bench/ab.py --every-float32: {machine()}; 2 threads")
    a._set_num_threads(2); b._set_num_threads(2)
    differ = []
    t0 = time.perf_counter()
    for isa in isas:
        a._set_isa(isa); b._set_isa(isa)
        for name in ops:
            op = a.OPS[name]
            if np.dtype(np.float32).char not in "".join(t[0] for t in op.ufunc.types):
                continue
            t = time.perf_counter()
            nd, nans, first = every_float32(op.ufunc, b.OPS[name].ufunc, op.nin, 2)
            what = "same" if nd == 0 else f"DIFFER {nd} ({nans} NaN payloads)"
            print(f"{isa:9s} {name:22s} {what}  "
                  f"({time.perf_counter() - t:.0f} s) {first}", flush=True)
            if nd:
                differ.append(f"{isa} {name}: {nd} {first}")
    print(f"# {time.perf_counter() - t0:.0f} s")
    if differ:
        print(f"!!! OUTPUT BITS DIFFER in {len(differ)} rows")
        return 1
    print("bits: A and B identical on every float32 input of every row")
    return 0


if __name__ == "__main__":
    sys.exit(main())
