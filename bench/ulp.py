"""Accuracy of gelu_ext's kernels: max error per function x dtype x range x ISA path.

Usage (from a checkout: ``PYTHONPATH=. python3 bench/ulp.py ...``, or with an
installed gelu_ext)::

    python3 bench/ulp.py --quick             # seconds: samples of every check
    python3 bench/ulp.py --exhaustive        # all 2^32 float32 inputs (+ all float16)
    python3 bench/ulp.py --f64 1000000       # 1e6 float64 points vs mpmath
    python3 bench/ulp.py --exhaustive --f64 1000000 --isa avx2 --jobs 2
    python3 bench/ulp.py --exhaustive --funcs mish,mish_grad   # some functions only

Errors (the README's accuracy table comes from this script; the bounds are
gelu_ext.testing.BOUNDS):

* ``gelu_erf`` x Phi(x), ``gelu_tanh``, ``relu``, ``silu`` x sigmoid(x),
  ``quick_gelu`` x sigmoid(1.702 x) and ``mish`` x tanh(softplus(x)): in ULPs
  of the exact value; results below the normal range count in ULPs of the smallest
  subnormal, so a flush to 0 shows up as a huge error.  For ``gelu_tanh`` in
  the negative tail x < -5, the relative error |got - exact| / max(|exact|,
  smallest normal), shown as "rel".
* ``gelu_erf_grad``, ``gelu_tanh_grad``, ``silu_grad``, ``quick_gelu_grad``
  and ``mish_grad`` (the ufuncs with grad = 1): in
  ULPs of s = max(|term1|, |term2|) of the derivative's two terms (GELU'
  crosses 0 near x = -0.75, mish' near -1.19); for the tanh derivative in the tail x < -5 the relative
  error as for gelu_tanh.
* float16 (exhaustive and quick modes): reported, no bound.

Bounds are gelu_ext.testing.BOUNDS.  Oracles: float32/float16 against the
float64 twins in gelu_ext.testing (``ref_*``; >1e5 times finer than a float32
ULP), float64 against mpmath (``mp_*``, 60 digits), sampled: the bulk [-3, 3], log-uniform |x| in
[1e-300, 40] of both signs, dense in the tail [-38.6, -5] (SiLU, mish and
quick GELU: to where they underflow, -760, -760 and -450), and subnormal
inputs.  The exact values are computed once and compared with every ISA path
(``gelu_ext._ufuncs._compiled_isas()`` that this CPU runs, or ``--isa``).

Exit status 1 if any bound is exceeded (each failure is printed).
"""
import argparse
import math
import multiprocessing as mpr
import os
import sys
import time

import numpy as np

import gelu_ext
from gelu_ext import testing as T
from gelu_ext import _spec
from gelu_ext import _ufuncs as U

# in this order: a function's float64 sample is seeded by its place here
FUNCS = ("gelu_erf", "gelu_tanh", "relu", "gelu_erf_grad", "gelu_tanh_grad",
         "silu", "quick_gelu", "silu_grad", "quick_gelu_grad", "mish", "mish_grad")
# ops with an mpmath oracle that this script does not measure yet (each
# needs its series and limits below)
UNMEASURED = tuple(op.name for op in _spec.OPS if op.oracle and op.name not in FUNCS)
FORWARD = tuple(f for f in FUNCS if not f.endswith("_grad"))
GRADS = tuple(f for f in FUNCS if f.endswith("_grad") and f != "relu_grad")
# x sigmoid(c x): c (the tanh form is handled on its own)
SIG_C = {"silu": 1.0, "quick_gelu": 1.702}
RANGES = ("subnormal", "tiny", "bulk", "moderate", "neg tail", "positive", "special")
# the error allowed at x = +-0, +-inf, NaN: 0 (exact), but mish'(0) = 3/5 rounded
SPECIAL_BOUND = {"mish_grad": 0.5}
# functions whose negative tail (x < -5) is judged by relative error, not ULPs
TAIL_REL_FUNCS = tuple(f for f in FUNCS if (f, "float32", "tail") in T.BOUNDS)


def runnable_isas():
    """Compiled ISA paths this CPU can run, lowest first."""
    comp = list(U._compiled_isas())
    best = U._best_isa()
    return comp[: comp.index(best) + 1]


def kernel(name, x):
    """gelu_ext's result for ``name`` (derivatives with grad = 1)."""
    if name in GRADS:
        return getattr(U, name)(x, np.ones_like(x))
    return getattr(U, name)(x)


def classify(x, dtype):
    """Range label index (into RANGES) of every element of x."""
    fi = np.finfo(dtype)
    with np.errstate(invalid="ignore"):      # float16/32 signalling NaN patterns
        xd = x.astype(np.float64)
    a = np.abs(xd)
    with np.errstate(invalid="ignore"):
        conds = [
            (a > 0) & (a < fi.smallest_normal),
            (a >= fi.smallest_normal) & (a < 2.0 ** -10),
            (a >= 2.0 ** -10) & (a <= 3),
            (xd >= -5) & (xd < -3),
            (xd < -5) & np.isfinite(xd),
            (xd > 3) & np.isfinite(xd),
        ]
    return np.select(conds, list(range(6)), default=6)


# ------------------------------------------------ float64 twins (vectorised) --

C0 = 1.0 / math.sqrt(2.0 * math.pi)
CW = 2.0 * math.sqrt(2.0 / math.pi)
TINY = 2.0 ** -10       # below: Taylor series (truncation < 2^-48 relative)
HUGE = 128.0            # above: the limits x, 0, 1 (x Q(x) < 1e-800, x sigmoid(-x) and
                        # |mish(-x)| < 2^-177, 1 - tanh(softplus x) < 2^-368)


def _refs_middle(xd, funcs):
    """float64 twins (gelu_ext.testing) and the derivatives' scales; x is
    finite here, so the derivatives are the sums of their terms."""
    P = {n: T.REFERENCE[n](xd) for n in FORWARD if n in funcs}
    for n in GRADS:
        if n not in funcs:
            continue
        t1, t2 = T.grad_terms(n, xd)
        P[n] = (t1 + t2, np.fmax(np.abs(t1), np.abs(t2)))
    return P


def _tiny_terms(base, x):
    """|x| < 2^-10: the function ``base`` and its derivative's two terms
    (t1, t2) by series whose truncation is below 2^-48 relative."""
    x2 = x * x
    if base == "gelu_erf":
        # x Phi(x) = x/2 + C0 x^2 - C0 x^4/6 + O(x^6)
        t1 = 0.5 + C0 * x * (1.0 - x2 / 6)
        return x * t1, t1, C0 * x * (1.0 - x2 / 2)
    if base == "gelu_tanh":
        # sigmoid(w) = 1/2 + w/4 - w^3/48 + O(w^5), w = CW (x + a x^3)
        w = CW * x * (1.0 + 0.044715 * x2)
        dw = CW * (1.0 + 3 * 0.044715 * x2)
        sg = 0.5 + w * (0.25 - w * w / 48)
        return x * sg, sg, x * dw * (0.25 - w * w / 16)   # x sigmoid (1 - sigmoid) w'
    if base in SIG_C:                                      # x sigmoid(c x)
        c = SIG_C[base]
        w = c * x
        sg = 0.5 + w * (0.25 - w * w / 48)
        return x * sg, sg, x * c * (0.25 - w * w / 16)
    if base == "mish":
        # t = tanh(softplus x) = 3/5 + 8x/25 - 2x^2/125 - 86x^3/1875 - 7x^4/18750
        # + O(x^5) (tanh(log 2) = 3/5), x sigmoid(x) (1 - t^2) = 8x/25 - 4x^2/125
        # - 86x^3/625 - 14x^4/9375 + O(x^5)
        t = 0.6 + x * (0.32 - x * (2 / 125 + x * (86 / 1875 + x * (7 / 18750))))
        return x * t, t, x * (0.32 - x * (4 / 125 + x * (86 / 625 + x * (14 / 9375))))
    raise KeyError(f"no series for {base!r}")


def _refs_tiny(x, funcs):
    """|x| < 2^-10: series (_tiny_terms) for the functions and derivatives."""
    P = {}
    if "relu" in funcs:
        P["relu"] = np.where(x < 0, 0.0, x)
    for base in dict.fromkeys(n.removesuffix("_grad") for n in funcs if n != "relu"):
        f, t1, t2 = _tiny_terms(base, x)
        if base in funcs:
            P[base] = f
        if base + "_grad" in funcs:
            P[base + "_grad"] = (t1 + t2, np.maximum(np.abs(t1), np.abs(t2)))
    return P


def _refs_huge(x, funcs):
    """|x| >= HUGE, inf and NaN: the limits (exact far below any ULP)."""
    pos = x > 0
    lim = np.where(np.isnan(x), x, np.where(pos, x, -0.0))
    one = np.where(np.isnan(x), x, pos.astype(np.float64))
    P = {n: lim for n in FORWARD if n in funcs}
    if "relu" in funcs:
        P["relu"] = T.ref_relu(x)
    for n in GRADS:
        if n in funcs:
            P[n] = (one, np.where(pos, 1.0, 0.0))     # s: 1, or below any subnormal
    return P


def small_refs(xd, dtype, labels, funcs=FUNCS):
    """float64 references for float32/float16 inputs xd: {name: (ref, unit)},
    the error of a result being |got - ref| / unit (unit: the ULP at the exact
    value; for derivatives the ULP of s = max(|term1|, |term2|); for the tanh
    forms in the negative tail max(|exact|, smallest normal), a relative
    error).  The float64 twins of gelu_ext.testing serve 2^-10 <= |x| < HUGE;
    outside, where they are slow and add nothing, series and limits do (this
    is what makes the exhaustive run take minutes, not hours)."""
    fi = np.finfo(dtype)
    a = np.abs(xd)
    bands = [(a >= TINY) & (a < HUGE), a < TINY, ~(a < HUGE)]       # NaN -> huge band
    ref = {n: np.empty_like(xd) for n in funcs}
    sc = {n: np.empty_like(xd) for n in GRADS if n in funcs}
    with np.errstate(all="ignore"):
        for m, fn in zip(bands, (_refs_middle, _refs_tiny, _refs_huge)):
            if not m.any():
                continue
            if m.all():          # the usual case: a chunk of the exhaustive run is one binade
                part = fn(xd, funcs)
                for n in funcs:
                    v = part[n]
                    if isinstance(v, tuple):
                        ref[n], sc[n] = v
                    else:
                        ref[n] = v
                break
            part = fn(xd[m], funcs)
            for n in funcs:
                v = part[n]
                if isinstance(v, tuple):
                    ref[n][m], sc[n][m] = v
                else:
                    ref[n][m] = v
        tail = labels == RANGES.index("neg tail")
        out = {n: (ref[n], T.ulp(ref[n], dtype)) for n in FORWARD if n in funcs}
        for n in sc:
            out[n] = (ref[n], T.ulp(sc[n], dtype))
        for n in TAIL_REL_FUNCS:
            if n not in funcs:
                continue
            rel_unit = np.maximum(np.abs(ref[n]), float(fi.smallest_normal))
            out[n] = (ref[n], np.where(tail, rel_unit, out[n][1]))
    return out


def err_small(got, ref, unit):
    """|got - ref| / unit with NaN = NaN and equal infinities counting 0."""
    with np.errstate(all="ignore"):
        g = got.astype(np.float64)
        err = np.abs(g - ref) / unit
    err = np.where((np.isnan(g) & np.isnan(ref)) | (np.isinf(g) & (g == ref)), 0.0, err)
    return np.where(np.isnan(err), np.inf, err)


def range_index(labels):
    """Indices of the elements in each range (computed once per chunk)."""
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(len(RANGES) + 1))
    return [order[bounds[i]:bounds[i + 1]] for i in range(len(RANGES))]


class Table:
    """max error and its argument per (isa, dtype, function, range)."""

    def __init__(self):
        self.cells = {}

    def add(self, isa, dtype, name, idx, x, err):
        """Fold the errors ``err`` at ``x`` (idx: per-range index arrays) in."""
        for ri, ix in enumerate(idx):
            if len(ix) == 0:
                continue
            e = err[ix]
            i = int(np.argmax(e))
            rel = RANGES[ri] == "neg tail" and name in TAIL_REL_FUNCS
            key = (isa, np.dtype(dtype).name, name, RANGES[ri], rel)
            self._fold(key, float(e[i]), float(x[ix[i]]), len(ix))

    def _fold(self, key, e, xv, cnt):
        old = self.cells.get(key)
        if old is None:
            self.cells[key] = [e, xv, cnt]
        else:
            old[2] += cnt
            if e > old[0]:
                old[0], old[1] = e, xv

    def merge(self, other):
        for key, (e, xv, cnt) in other.cells.items():
            self._fold(key, e, xv, cnt)

    def check_and_print(self, title):
        print(f"\n## {title}")
        print(f"{'isa':9s} {'dtype':8s} {'function':15s} {'range':10s} {'points':>11s} "
              f"{'max err':>10s} {'unit':5s} {'bound':>7s}  at x")
        failures = []
        for key in sorted(self.cells, key=lambda k: (k[0], k[1], FUNCS.index(k[2]), RANGES.index(k[3]), k[4])):
            isa, dt, name, rng, rel = key
            e, xv, cnt = self.cells[key]
            # float16 is reported without a bound (BOUNDS holds it to the
            # rounded twin, not to the exact value measured here)
            region = "tail" if rel else ("bulk" if name in TAIL_REL_FUNCS else "all")
            b = T.BOUNDS[(name, dt, region)] if dt != "float16" else None
            bound, unit = (None if b is None else b.value), ("rel" if rel else
                                                            "ULP(s)" if name.endswith("grad") else "ULP")
            if rng == "special":
                bound = SPECIAL_BOUND.get(name, 0.0) if dt != "float16" else None
            ok = bound is None or e <= bound
            flag = "" if ok else "  <-- FAIL"
            bstr = "-" if bound is None else (f"{bound:.0e}" if rel else f"{bound:g}")
            estr = f"{e:.2e}" if rel else f"{e:.3f}"
            print(f"{isa:9s} {dt:8s} {name:15s} {rng:10s} {cnt:11d} {estr:>10s} {unit:5s} {bstr:>7s}  {xv!r}{flag}")
            if not ok:
                failures.append(f"{isa} {dt} {name} {rng}: {estr} {unit} > {bstr} at x = {xv!r}")
        return failures


# ------------------------------------------------------------ float32 / 16 --

def _f32_chunk(args):
    """Worker: table for the float32 bit patterns lo, lo + step, ... < hi."""
    lo, hi, step, isas, funcs = args
    bits = np.arange(lo, hi, step, dtype=np.uint64).astype(np.uint32)
    return _small_table(bits.view(np.float32), np.float32, isas, funcs)


def _small_table(x, dtype, isas, funcs=FUNCS):
    """Errors of every function on every ISA path for float32/float16 x.

    The error of the reference's own rounding (ref -> dtype) is computed once
    per function; a path's result is compared bitwise with that rounding and
    only the (rare) elements that differ get their own error, so each extra
    ISA path costs little more than running its kernels."""
    gelu_ext.set_num_threads(1)
    with np.errstate(invalid="ignore"):
        if np.all(~(np.abs(x) < HUGE)):
            return _huge_table(x, dtype, isas, funcs)
    t = Table()
    with np.errstate(invalid="ignore"):      # signalling NaN bit patterns
        xd = x.astype(np.float64)
    labels = classify(x, dtype)
    idx = range_index(labels)
    refs = small_refs(xd, dtype, labels, funcs)
    huge = False
    itype = np.uint16 if np.dtype(dtype).itemsize == 2 else np.uint32
    for name in funcs:
        ref, unit = refs[name]
        with np.errstate(all="ignore"):
            cr = ref.astype(dtype)
        if huge:         # limits x, +-0, 1: exactly representable, error 0
            base = np.zeros(len(x))
        else:
            base = err_small(cr, ref, unit)
        base_t = Table()
        base_t.add("", dtype, name, idx, x, base)
        crb = cr.view(itype)
        for isa in isas:
            U._set_isa(isa)
            got = kernel(name, x)
            diff = np.flatnonzero((got.view(itype) != crb) & ~(np.isnan(got) & np.isnan(cr)))
            for (_, dt, nm, rng, rel), (e, xv, cnt) in base_t.cells.items():
                t._fold((isa, dt, nm, rng, rel), e, xv, cnt)
            if len(diff):
                e = err_small(got[diff], ref[diff], unit[diff])
                sub = [np.flatnonzero(labels[diff] == r) for r in range(len(RANGES))]
                extra = Table()
                extra.add(isa, dtype, name, sub, x[diff], e)
                for key, (ev, xv, _) in extra.cells.items():
                    t._fold(key, ev, xv, 0)
    return t


def _huge_table(x, dtype, isas, funcs=FUNCS):
    """|x| >= HUGE, inf, NaN (half of all float32 inputs): the exact results are
    the limits x or -0.0 (gelu forms; relu x or 0) and 1 or 0 (derivatives),
    so a result is compared bitwise with them and only a mismatch is measured."""
    pos = x > 0
    nan = np.isnan(x)
    zero = np.zeros_like(x)
    lim = np.where(pos | nan, x, -zero)
    one = np.where(nan, x, pos.astype(x.dtype))
    want = {n: lim for n in FORWARD}
    want["relu"] = np.where(pos | nan, x, zero)
    want.update({n: one for n in GRADS})
    labels = classify(x, dtype)
    idx = range_index(labels)
    itype = np.uint16 if np.dtype(dtype).itemsize == 2 else np.uint32
    t = Table()
    for name in funcs:
        wb = want[name].view(itype)
        for isa in isas:
            U._set_isa(isa)
            got = kernel(name, x)
            bad = np.flatnonzero((got.view(itype) != wb) & ~(np.isnan(got) & nan))
            err = np.zeros(len(x))
            if len(bad):      # e.g. -0.0 vs +0.0 counts 0 here: check_specials checks signs
                xb = x[bad]
                labels_b = classify(xb, dtype)
                ref, unit = small_refs(xb.astype(np.float64), dtype, labels_b, (name,))[name]
                err[bad] = err_small(got[bad], ref, unit)
            t.add(isa, dtype, name, idx, x, err)
    return t


def _pool_map(fn, tasks, jobs, label=None):
    """map over worker processes (results in order), with a progress line
    on stderr every ~5% when ``label`` is given."""
    t0 = time.perf_counter()
    step = max(len(tasks) // 20, 1)

    def progress(i):
        if label and (i % step == 0 or i == len(tasks)):
            el = time.perf_counter() - t0
            print(f"  {label}: {i}/{len(tasks)} chunks, {el:.0f} s, ~{el / i * (len(tasks) - i):.0f} s left",
                  file=sys.stderr, flush=True)

    if jobs <= 1:
        out = []
        for i, a in enumerate(tasks, 1):
            out.append(fn(a))
            progress(i)
        return out
    out = []
    with mpr.get_context("fork").Pool(jobs) as pool:
        for i, r in enumerate(pool.imap(fn, tasks, chunksize=1), 1):
            out.append(r)
            progress(i)
    return out


def run_float32(isas, jobs, stride=1, chunk=1 << 20, float16=True, funcs=FUNCS):
    """All float32 inputs (stride 1) or every stride-th bit pattern (stride made
    odd, so every low-bit pattern of the mantissa occurs)."""
    total = 1 << 32
    if stride > 1:
        stride |= 1
    span = chunk * stride
    tasks = [(lo, min(lo + span, total), stride, isas, funcs) for lo in range(0, total, span)]
    table = Table()
    for t in _pool_map(_f32_chunk, tasks, jobs, label="float32"):
        table.merge(t)
    if float16:
        x16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
        table.merge(_small_table(x16, np.float16, isas, funcs))
    return table, (total + stride - 1) // stride


def run_f32_sample(isas, n, seed=0, funcs=FUNCS):
    """Random float32 bit patterns plus a dense negative tail (quick mode)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    tail = rng.uniform(-15, -5, n // 4).astype(np.float32)
    x = np.concatenate([bits.view(np.float32), tail, special_values(np.float32)])
    t = _small_table(x, np.float32, isas, funcs)
    x16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    t.merge(_small_table(x16, np.float16, isas, funcs))
    return t


def special_values(dtype):
    fi = np.finfo(dtype)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, fi.max, -fi.max, fi.smallest_subnormal,
                     -fi.smallest_subnormal], dtype=dtype)


# ------------------------------------------------------------------ float64 --

# where each function's float64 results underflow: the end of its sampled tail
# (mish(x) ~ x e^x there, as x sigmoid(x): both underflow near x = -751.6)
F64_TAIL = {"silu": 760.0, "silu_grad": 760.0, "quick_gelu": 450.0, "quick_gelu_grad": 450.0,
            "mish": 760.0, "mish_grad": 760.0}


def f64_points(n, seed=1, tail_end=38.6):
    """n float64 inputs: 30% bulk [-3, 3], 30% log-uniform |x| in [1e-300,
    tail_end + 1.4] (both signs), 35% uniform in the tail [-tail_end, -5], 5%
    subnormal inputs.  tail_end: 38.6 for the GELU forms (where x Phi(x)
    underflows), more for SiLU, mish and quick GELU (F64_TAIL)."""
    rng = np.random.default_rng(seed)
    nb, nl, nt = int(0.3 * n), int(0.3 * n), int(0.35 * n)
    ns = n - nb - nl - nt
    bulk = rng.uniform(-3, 3, nb)
    wide = np.exp(rng.uniform(math.log(1e-300), math.log(tail_end + 1.4), nl)) * rng.choice([-1.0, 1.0], nl)
    tail = rng.uniform(-tail_end, -5, nt)
    sub = (rng.integers(1, 1 << 52, ns, dtype=np.int64).view(np.float64)
           * rng.choice([-1.0, 1.0], ns))
    return np.concatenate([bulk, wide, tail, sub])


SHIFT = 200          # exponent shift applied to exact values below 2^-1000


def _mp_exact(args):
    """Worker: exact values as double-double (hi, lo) and the scale s, via mpmath."""
    name, xs = args
    import mpmath as mp
    hi = np.empty(len(xs))
    lo = np.empty(len(xs))
    sc = np.full(len(xs), np.nan)
    sh = np.zeros(len(xs), np.int64)
    fn = T.MP_REFERENCE[name]
    grad = name.endswith("_grad")
    with mp.workdps(60):
        for i, x in enumerate(xs):
            if abs(x) > 1e3 or math.isnan(x):
                # limits (mpmath's ncdf overflows near finfo.max): x Phi(x),
                # the sigmoid forms and mish are x (x > 0) or below any
                # subnormal (x < 0); the derivatives are 1 or 0 to far below a ULP
                if grad:
                    hi[i], lo[i], sc[i] = (x if math.isnan(x) else float(x > 0)), 0.0, 1.0
                else:
                    hi[i], lo[i] = (x if x > 0 or math.isnan(x) else -0.0), 0.0
                continue
            if grad:
                v, s = fn(x)
                sc[i] = float(s)
            else:
                v = fn(x)
            if abs(v) < mp.ldexp(1, -1000):
                # below the normal range: keep the low part resolvable (a plain
                # double-double would round it to a multiple of 2^-1074)
                v = mp.ldexp(v, SHIFT)
                sh[i] = SHIFT
                if not math.isnan(sc[i]):
                    sc[i] = float(mp.ldexp(mp.mpf(sc[i]), SHIFT))
            h = float(v)
            hi[i] = h
            lo[i] = float(v - h) if math.isfinite(h) else 0.0
    return hi, lo, sc, sh


def run_float64(isas, n, jobs, funcs=FUNCS):
    """Sampled float64 check: n points for gelu_erf, n/4 for the others."""
    table = Table()
    for name in funcs:
        m = n if name == "gelu_erf" else max(n // 4, 1)
        x = np.concatenate([f64_points(m, seed=FUNCS.index(name) + 1, tail_end=F64_TAIL.get(name, 38.6)),
                            special_values(np.float64)])
        labels = classify(x, np.float64)
        idx = range_index(labels)
        if name == "relu":
            ref = T.ref_relu(x)
            hi, lo, sc, sh = ref, np.zeros_like(ref), np.full_like(ref, np.nan), np.zeros(ref.shape, np.int64)
        else:
            parts = np.array_split(x, max(min(len(x) // 500, 200), 1))
            res = _pool_map(_mp_exact, [(name, p) for p in parts], jobs, label=f"float64 {name}")
            hi = np.concatenate([r[0] for r in res])
            lo = np.concatenate([r[1] for r in res])
            sc = np.concatenate([r[2] for r in res])
            sh = np.concatenate([r[3] for r in res])
        # the ULP unit at the true (unshifted) magnitude, expressed shifted
        unit = np.ldexp(T.ulp(np.ldexp(np.where(np.isnan(sc), hi, sc), -sh), np.float64), sh)
        for isa in isas:
            U._set_isa(isa)
            got = kernel(name, x)
            with np.errstate(all="ignore"):
                gs = np.ldexp(got, sh)                # exact: a power-of-two shift
                diff = np.abs((gs - hi) - lo)         # gs - hi is exact when close
                err = diff / unit
            same = (np.isnan(got) & np.isnan(hi)) | (np.isinf(got) & (got == hi)) | (gs == hi) & (lo == 0)
            err = np.where(same, 0.0, err)
            err = np.where(np.isnan(err), np.inf, err)
            if name in TAIL_REL_FUNCS:
                tail = labels == RANGES.index("neg tail")
                with np.errstate(all="ignore"):
                    rel = diff / np.maximum(np.abs(hi), np.ldexp(np.finfo(np.float64).smallest_normal, sh))
                err = np.where(tail, rel, err)
            table.add(isa, np.float64, name, idx, x, err)
    return table


def check_specials(isas, funcs=FUNCS):
    """Exact special values (sign of zero included) in float32 and float64."""
    fails = []
    for isa in isas:
        U._set_isa(isa)
        for dt in (np.float32, np.float64):
            fi = np.finfo(dt)
            cases = {
                "gelu_erf": [(np.nan, np.nan), (np.inf, np.inf), (-np.inf, -0.0), (0.0, 0.0), (-0.0, -0.0)],
                "gelu_tanh": [(np.nan, np.nan), (np.inf, np.inf), (-np.inf, -0.0), (0.0, 0.0), (-0.0, -0.0),
                              (fi.max, fi.max), (-fi.max, -0.0)],
                "relu": [(np.nan, np.nan), (-0.0, -0.0), (np.inf, np.inf), (-np.inf, 0.0)],
                "gelu_erf_grad": [(np.nan, np.nan), (np.inf, 1.0), (-np.inf, 0.0), (0.0, 0.5)],
                "gelu_tanh_grad": [(np.nan, np.nan), (np.inf, 1.0), (-np.inf, 0.0), (0.0, 0.5)],
            }
            for f in SIG_C:
                cases[f] = cases["gelu_tanh"]
                cases[f + "_grad"] = cases["gelu_tanh_grad"]
            cases["mish"] = cases["gelu_tanh"]
            cases["mish_grad"] = cases["gelu_tanh_grad"][:3] + [(0.0, 0.6)]    # tanh(log 2) = 3/5
            for name in funcs:
                pairs = cases[name]
                x = np.array([p[0] for p in pairs], dt)
                want = np.array([p[1] for p in pairs], dt)
                got = kernel(name, x)
                ok = ((got == want) & (np.signbit(got) == np.signbit(want))) | (np.isnan(got) & np.isnan(want))
                for xi, gi, wi, o in zip(x, got, want, ok):
                    if not o:
                        fails.append(f"{isa} {np.dtype(dt).name} {name}({xi!r}) = {gi!r}, expected {wi!r}")
    return fails


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="samples only (seconds)")
    ap.add_argument("--exhaustive", action="store_true", help="all 2^32 float32 inputs")
    ap.add_argument("--subsample", type=int, default=0, metavar="K",
                    help="float32: every K-th chunk of 2^22 inputs (e.g. 64 while iterating)")
    ap.add_argument("--f64", type=int, default=0, metavar="N", help="float64 points vs mpmath (1e6 for the bound)")
    ap.add_argument("--isa", action="append", help="ISA path(s) to check (default: all this CPU runs)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--funcs", metavar="A,B", help=f"functions to check (default: all of {','.join(FUNCS)})")
    args = ap.parse_args(argv)
    funcs = FUNCS
    if args.funcs:
        names = args.funcs.split(",")
        bad = [f for f in names if f not in FUNCS]
        if bad:
            ap.error(f"--funcs must be among {','.join(FUNCS)}, got {bad}")
        funcs = tuple(f for f in FUNCS if f in names)
    if not (args.quick or args.exhaustive or args.subsample or args.f64):
        args.quick = True
    isas = runnable_isas()
    if args.isa:
        bad = [i for i in args.isa if i not in isas]
        if bad:
            ap.error(f"--isa must be among {isas} (compiled and runnable here), got {bad}")
        isas = args.isa
    print(f"gelu_ext {getattr(gelu_ext, '__version__', '?')} from {os.path.dirname(gelu_ext.__file__)}; "
          f"numpy {np.__version__}; ISA paths checked: {', '.join(isas)}; jobs {args.jobs}")
    if funcs != FUNCS:
        print(f"functions: {', '.join(funcs)}")
    if UNMEASURED:
        print(f"not measured (no series or limits in bench/ulp.py yet): {', '.join(UNMEASURED)}")
    failures = check_specials(isas, funcs)
    if args.quick:
        t0 = time.perf_counter()
        t = run_f32_sample(isas, 1 << 20, funcs=funcs)
        t.merge(run_float64(isas, 4000, args.jobs, funcs))
        failures += t.check_and_print(f"quick: 2^20 random float32 bit patterns + tail, all float16, "
                                      f"4000 float64 points ({time.perf_counter() - t0:.1f} s)")
    if args.exhaustive or args.subsample:
        stride = 1 if args.exhaustive else args.subsample
        t0 = time.perf_counter()
        t, n = run_float32(isas, args.jobs, stride, funcs=funcs)
        dt = time.perf_counter() - t0
        what = "exhaustive: all 2^32 float32 inputs" if stride == 1 else f"float32: 1/{stride} of all inputs ({n} points)"
        failures += t.check_and_print(f"{what}, all 65536 float16 inputs; {dt:.0f} s wall on {args.jobs} processes")
    if args.f64:
        t0 = time.perf_counter()
        t = run_float64(isas, args.f64, args.jobs, funcs)
        dt = time.perf_counter() - t0
        failures += t.check_and_print(f"float64: {args.f64} points for gelu_erf, {args.f64 // 4} for each other "
                                      f"function, vs mpmath; {dt:.0f} s wall on {args.jobs} processes")
    if failures:
        print("\nFAILED bounds:")
        for f in failures:
            print("  " + f)
        return 1
    print("\nall bounds hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
