"""The seven speed/memory criteria (rows 1-7) and the speed rows beside
them (gradients, fused bias, the rest of the family, float16, bfloat16,
float64, threads after a matmul), the peers' float64 accuracy and the
accurate peer (oneMKL VM), measured here.

Usage::

    python bench/ratios.py [--repeats N] [--strict] [--only family|bf16|matmul|mkl|f64|sigma] [--isa avx2]

Prints the machine, then one row per criterion, its id a criterion's number
or what the row measures (bench/README.md lists them): the measured ratio,
the required one and PASS/FAIL ("peer not installed" when the comparison needs a
peer that is missing).  Every ratio comes from implementations timed side by
side in this process: interleaved repeats after warm-up, medians
(``gelu_ext.jobs.bench.measure``), never two absolute times taken apart.

``--isa avx2`` holds ours, PyTorch, JAX and oneMKL VM to one instruction set
(set before the peers are imported; the header reads each setting back).
ONNX Runtime cannot be held to one: on a CPU with a better instruction set
its rows say "not comparable" instead of PASS/FAIL, as does any peer whose
read-back differs from what was asked (oneMKL VM on a CPU that is not
Intel's, where it runs its generic SSE kernels whatever is asked).

Design: the calls are the ones ``python -m gelu_ext bench`` and the
pytest-benchmark suite time (``gelu_ext.jobs.bench.prepare``), so a ratio here and
a column there mean the same thing.  JAX cannot write into a given buffer, so
comparisons with it use ours allocating its result too.  JAX is
pinned to one thread before it is imported (all JAX rows are 1-thread rows).
oneMKL VM (``gelu_ext.jobs._mkl``: HA CdfNorm times x, the accurate exact GELU
a user could pick instead of ours) runs on MKL's sequential layer: one thread.
"""
import argparse
import os
import sys
import tracemalloc

import numpy as np

import gelu_ext
from gelu_ext import _ufuncs, testing
from gelu_ext.jobs import _common, bench
from gelu_ext.jobs.bench import progress

bench.jax_single_thread()      # before anything imports jax

N20, N24 = 1 << 20, 1 << 24
# x ~ SIGMA N(0, 1) in every row that does not name its own: what models
# feed an activation (BERT's and MiniLM's FFN pre-activations: sigma ~ 1).
# The exact kernels' speed depends on it (their float32 tables cover
# x >= -4.5, the rest takes the tail formula), so the GELU rows are run at
# sigma 3 and 8 too, and --only sigma sweeps it.
SIGMA = 1.0
SWEEP = (0.5, 1.0, 2.0, 3.0, 4.0, 8.0)
NOT_INSTALLED = "peer not installed"
NOT_COMPARABLE = "not comparable"


class Row:
    def __init__(self, num, what, measured, required, verdict, note=""):
        self.num, self.what, self.measured, self.required, self.verdict, self.note = (
            num, what, measured, required, verdict, note)


def _verdict(ok):
    return "PASS" if ok else "FAIL"


def _speed(t_ours, t_other):
    """Our speed relative to the other: > 1 means we are faster."""
    return t_other / t_ours


class Ratios:
    def __init__(self, min_repeats, info):
        self.tcfg = dict(min_sample=5e-3, min_repeats=min_repeats, max_repeats=max(min_repeats, 15), budget=2.0)
        self.rows = []
        self.info = info

    def verdict(self, ok, peer=None):
        """PASS/FAIL, or "not comparable" when ``peer`` (or ours) does not run
        the instruction set ``--isa`` asked for."""
        if peer and (bench.not_comparable(peer, self.info) or bench.not_comparable("gelu_ext", self.info)):
            return NOT_COMPARABLE
        return _verdict(ok)

    def add(self, *a, **k):
        row = Row(*a, **k)
        self.rows.append(row)
        progress(f"ratios: {row.num} {row.what}: {row.measured} ({row.verdict})")

    def time_pair(self, calls):
        """Medians of the calls timed side by side, and the pool's note: ''
        unless our pool backed off during the measurement."""
        with _common.PoolWatch() as w:
            t = {k: v.median for k, v in bench.measure(calls, **self.tcfg).items()}
        return t, w.note

    def speed_row(self, num, what, op, dtype, n, peer, *, threads, required, goal=None, ours="ours",
                  peer_threads=None, sigma=SIGMA):
        """Row comparing ours (``ours`` = 'ours' or 'ours_alloc') with ``peer``
        on x ~ sigma N(0, 1) (named in the row unless it is SIGMA)."""
        req = f">= {required:g}x" + (f" (goal {goal:g}x)" if goal else "")
        if sigma != SIGMA:
            what = what.replace(",", f", x ~ {sigma:g} N(0,1),", 1)
        if peer in bench.PEERS and bench.peer(peer) is None:
            self.add(num, what, "-", req, NOT_INSTALLED)
            return
        d = bench.make_inputs(op, dtype, n, sigma=sigma)
        bench.set_threads(threads)
        try:
            calls = {"ours": bench.prepare(ours, op, d),
                     "peer": bench.prepare(peer, op, d, peer_threads or threads)}
        except bench.Unavailable as e:
            self.add(num, what, "-", req, f"n/a: {e}")
            return
        if peer == "torch" and peer_threads is not None:
            # ours stays at `threads`; PyTorch runs at its own count
            bench.peer("torch").set_num_threads(peer_threads)
        t, pool = self.time_pair(calls)
        s = _speed(t["ours"], t["peer"])
        self.add(num, what, f"{s:.2f}x", req, self.verdict(s >= required, peer), note=pool)

    def vs_call_row(self, num, what, ours_call, other_call, *, required, kind="speed", peer=None):
        """Row timing two given calls; ``peer``: the library ``other_call`` runs, if a peer."""
        t, pool = self.time_pair({"ours": ours_call, "other": other_call})
        if kind == "speed":
            s = _speed(t["ours"], t["other"])
            self.add(num, what, f"{s:.2f}x", f">= {required:g}x", self.verdict(s >= required, peer), note=pool)
        else:     # time ratio, smaller is better
            r = t["ours"] / t["other"]
            self.add(num, what, f"{r:.2f}x", f"<= {required:g}x", _verdict(r <= required),
                     note="; ".join(filter(None, [f"{t['ours'] * 1e9:.0f} ns vs {t['other'] * 1e9:.0f} ns", pool])))


def _ulp_all_paths(r):
    """Criterion 1's accuracy clause: sampled exact f32 ULP on every ISA path
    this CPU runs (the exhaustive check lives in the accuracy tests)."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-3, 3, 1 << 16), rng.uniform(-14, -5, 1 << 15),
                        rng.uniform(-20, 20, 1 << 15), [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(np.float32)
    ref = testing.ref_gelu_erf(x.astype(np.float64))
    bound = testing.bound("gelu_erf", np.float32).value
    saved = _ufuncs._get_isa()
    best = _ufuncs.ISA_NAMES.index(_ufuncs._best_isa())
    try:
        for isa in _ufuncs._compiled_isas():
            if _ufuncs.ISA_NAMES.index(isa) > best:
                r.add("1", f"exact f32 max ULP, ISA path {isa}", "-", f"<= {bound:g}", "not runnable on this CPU")
                continue
            _ufuncs._set_isa(isa)
            err = float(np.max(testing.ulp_error(gelu_ext.fast_gelu(x), ref, np.float32)))
            r.add("1", f"exact f32 max ULP, ISA path {isa} ({x.size} samples)", f"{err:.3g}", f"<= {bound:g}",
                  _verdict(err <= bound))
    finally:
        _ufuncs._set_isa(saved)


def _ulp_f64(r, n=150):
    """Criterion 3's accuracy clause: exact f64 against mpmath on a sample."""
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-3, 3, n), rng.uniform(-30, -5, n // 2), rng.uniform(3, 30, n // 4)])
    got = gelu_ext.fast_gelu(x)
    err = float(np.max(testing.ulp_error(got, [testing.mp_gelu_erf(v) for v in x], np.float64)))
    bound = testing.bound("gelu_erf", np.float64).value
    r.add("3", f"exact f64 max ULP vs mpmath ({x.size} samples)", f"{err:.3g}", f"<= {bound:g}",
          _verdict(err <= bound))


# A faster peer's accuracy, printed beside its ratio.  The regions: the core, where every implementation is accurate; the negative
# tail, where x Phi(x) = x (1 + erf(x / sqrt 2)) / 2 cancels and underflows
# (JAX and PyTorch compute it so); the positive side.
_F64_REGIONS = (("|x| <= 3", -3.0, 3.0), ("-30 <= x <= -5", -30.0, -5.0), ("3 <= x <= 30", 3.0, 30.0))


def _peer_results_f64(op, x):
    """op's float64 results on x from each installed peer: {label: array}."""
    got = {}
    torch, jax = bench.peer("torch"), bench.peer("jax")
    if torch is not None:
        out = np.empty_like(x)
        bench.OPS[op].torch(torch, torch.from_numpy(x), out=torch.from_numpy(out))()
        got["PyTorch"] = out
    if jax is not None:
        got["JAX"] = np.asarray(jax.jit(bench.OPS[op].jax(jax))(jax.device_put(x)))
    if bench.peer("mkl") is not None and bench.OPS[op].mkl:
        got["oneMKL VM"] = bench.prepare("mkl", op, {"x": x, "out": np.empty_like(x)})()
    return got


def _peer_ulp_f64(r, n=400):
    """Max ULP against mpmath of ours and of the float64 peers, per region, for
    exact and tanh GELU (printed beside the float64 ratios)."""
    rng = np.random.default_rng(5)
    for op, mpf in (("gelu_erf", testing.mp_gelu_erf), ("gelu_tanh", testing.mp_gelu_tanh)):
        for label, lo, hi in _F64_REGIONS:
            x = rng.uniform(lo, hi, n)
            exact = [mpf(v) for v in x]
            got = gelu_ext.fast_gelu(x, "none" if op == "gelu_erf" else "tanh")
            ours = float(np.max(testing.ulp_error(got, exact, np.float64)))
            exact64 = np.array([float(v) for v in exact])
            ok = bool(np.all(np.abs(got - exact64) <= testing.allowed_error(op, np.float64, x, exact64)))
            b = testing.bound(op, np.float64, "tail" if hi <= testing.TAIL else "bulk")
            peers = {k: float(np.max(testing.ulp_error(v, exact, np.float64)))
                     for k, v in _peer_results_f64(op, x).items()}
            shown = "; ".join([f"ours {ours:.3g}"] + [f"{k} {v:.3g}" for k, v in peers.items()])
            r.add("ulp64", f"{bench.OPS[op].title} f64 max ULP vs mpmath, {label} ({n} samples)", shown,
                  f"ours <= {b.value:g} {b.unit}", _verdict(ok))


# oneMKL VM, the accurate peer.  Its speed row requires >= 1x: the README calls
# ours the fastest accurate exact GELU, a claim this row, not prose, carries.
_MKL_ROW = "oneMKL VM (HA CdfNorm * x)"


def _mkl_ulp(r, n=1 << 20):
    """oneMKL VM's float32 x Phi(x) beside ours: sampled max ULP against the
    float64 twin in the bench's regions (bulk [-3, 3], negative tail [-14,
    -5], where x Phi(x) is tiny and the product's error shows)."""
    rng = np.random.default_rng(40)
    bound = testing.bound("gelu_erf", np.float32).value
    for region, (lo, hi) in bench.REGIONS.items():
        what = f"exact GELU f32 max ULP, {region} [{lo:g}, {hi:g}] ({n} samples): ours; {_MKL_ROW}"
        if bench.peer("mkl") is None:
            r.add("mkl", what, "-", f"ours <= {bound:g}", NOT_INSTALLED)
            continue
        x = rng.uniform(lo, hi, n).astype(np.float32)
        ref = testing.ref_gelu_erf(x.astype(np.float64))
        d = {"x": x, "out": np.empty_like(x)}
        ours, mkl = (float(np.max(testing.ulp_error(bench.prepare(impl, "gelu_erf", d)(), ref, np.float32)))
                     for impl in ("ours", "mkl"))
        r.add("mkl", what, f"{ours:.3g}; {mkl:.3g}", f"ours <= {bound:g}", _verdict(ours <= bound))


def _mkl_f64_row(r):
    r.speed_row("mkl", f"exact GELU f64 2^20, 1 thread: ours / {_MKL_ROW}", "gelu_erf", np.float64, N20, "mkl",
                threads=1, required=1.0)


def _mkl_rows(r, f64=False):
    """oneMKL VM's speed beside ours, float32 (and float64
    with ``f64``; the full run has that row among the float64 ones), and its
    float32 accuracy."""
    r.speed_row("mkl", f"exact GELU f32 2^20, 1 thread: ours / {_MKL_ROW}", "gelu_erf", np.float32, N20, "mkl",
                threads=1, required=1.0)
    if f64:
        _mkl_f64_row(r)
    _mkl_ulp(r)


def _f64_rows(r):
    """Criteria 2 (float64) and 3, float64 against PyTorch and the peers'
    float64 accuracy beside them."""
    r.speed_row("2", "tanh GELU float64 2^20, 1 thread: ours / JAX (both allocate)",
                "gelu_tanh", np.float64, N20, "jax", threads=1, required=1.0, ours="ours_alloc")
    # 3. exact GELU f64 vs JAX
    r.speed_row("3", "exact GELU f64 2^20, 1 thread: ours / JAX (both allocate)", "gelu_erf", np.float64, N20, "jax",
                threads=1, required=1.0, ours="ours_alloc")
    _ulp_f64(r)
    _peer_ulp_f64(r)
    # float64 exact and tanh GELU against PyTorch too (out= on both sides)
    for okey in ("gelu_erf", "gelu_tanh"):
        r.speed_row("f64", f"{bench.OPS[okey].title} f64 2^20, 1 thread: ours / PyTorch (out=)", okey, np.float64,
                    N20, "torch", threads=1, required=1.0)
    _mkl_f64_row(r)


def _alloc_peak(f):
    """Peak bytes traced by tracemalloc while ``f`` runs, above the start."""
    f()   # first call: lazily created objects (ufunc caches) are not the call's cost
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        r = f()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del r
    return peak


def _memory(r):
    n = N20
    d = bench.make_inputs("gelu_erf_grad", np.float32, n, sigma=SIGMA)
    x, g, o = d["x"], d["g"], d["out"]
    b = np.ones(1024, np.float32)
    xb, ob = x.reshape(-1, 1024), o.reshape(-1, 1024)
    small = 64 << 10          # O(1): at most a NumPy buffer's worth, never O(n)
    peak = _alloc_peak(lambda: gelu_ext.fast_gelu(x))
    r.add("7", f"fast_gelu(x) allocates only its result ({x.nbytes} B)", f"{peak} B",
          f"<= {x.nbytes + 4096} B", _verdict(peak <= x.nbytes + 4096))
    for label, f in (("fast_gelu(x, out=o)", lambda: gelu_ext.fast_gelu(x, out=o)),
                     ("fast_gelu(x, 'tanh', out=o)", lambda: gelu_ext.fast_gelu(x, "tanh", out=o)),
                     ("relu(x, out=o)", lambda: gelu_ext.relu(x, out=o)),
                     ("fast_gelu(x, bias=b, out=o)", lambda: gelu_ext.fast_gelu(xb, bias=b, out=ob)),
                     ("fast_gelu_grad(x, g, out=o)", lambda: gelu_ext.fast_gelu_grad(x, g, out=o))):
        peak = _alloc_peak(f)
        r.add("7", f"{label}: no O(n) allocation", f"{peak} B", f"<= {small} B", _verdict(peak <= small))


# The peers each --only selection compares with (None: the full run), imported
# before the machine is described.
_PEERS_OF = {None: ("torch", "jax", "onnxruntime", "mkl"), "family": ("torch", "jax"), "bf16": (),
             "matmul": ("torch",), "mkl": ("mkl",), "f64": ("torch", "jax", "mkl"), "sigma": ("torch",)}


def _sigma_sweep(r):
    """--only sigma: float32, 1 thread, 2^16 and 2^20, x ~ sigma N(0, 1)
    for each sigma of SWEEP.  Per op and size: ours / PyTorch at each sigma
    (PyTorch's kernels cost the same whatever the data), then our time at
    each sigma over our time at sigma 1, from the same interleaved run.
    Required: our time within 15% of sigma 1's up to sigma 4 and within 35%
    at 8; on AVX-512, exact GELU and its gradient >= 1.3x PyTorch up to
    sigma 4 and >= 1x at 8; on AVX2, the sigma 3 ratio no lower than the
    sigma 1 one.  Without PyTorch only the time ratios are measured."""
    torch = bench.peer("torch")
    wide = _ufuncs._get_isa() == "avx512"
    bench.set_threads(1)
    for key in ("gelu_erf", "gelu_erf_grad", "gelu_tanh", "gelu_tanh_grad", "silu", "silu_grad", "quick_gelu"):
        op = bench.OPS[key]
        exact = key in ("gelu_erf", "gelu_erf_grad")
        for n in (1 << 16, N20):
            size = bench._size_label(n)
            calls = {}
            for sigma in SWEEP:
                d = bench.make_inputs(key, np.float32, n, sigma=sigma)
                calls[f"ours {sigma:g}"] = bench.prepare("ours", key, d)
                if torch is not None:
                    calls[f"torch {sigma:g}"] = bench.prepare("torch", key, d)
            t, pool = r.time_pair(calls)
            speed = {}
            for sigma in SWEEP:
                what = f"{op.title} f32 {size}, x ~ {sigma:g} N(0,1), 1 thread: ours / PyTorch"
                if torch is None:
                    r.add("s", what, "-", "", NOT_INSTALLED)
                    continue
                speed[sigma] = _speed(t[f"ours {sigma:g}"], t[f"torch {sigma:g}"])
                need = (1.3 if sigma <= 4 else 1.0) if (wide and exact) else None
                if need is None and not wide and exact and sigma == 3.0:
                    r.add("s", what, f"{speed[3.0]:.2f}x", f">= {speed[1.0]:.2f}x (sigma 1's)",
                          r.verdict(speed[3.0] >= speed[1.0], "torch"), note=pool)
                elif need is None:
                    r.add("s", what, f"{speed[sigma]:.2f}x", "-", "-", note=pool)
                else:
                    r.add("s", what, f"{speed[sigma]:.2f}x", f">= {need:g}x",
                          r.verdict(speed[sigma] >= need, "torch"), note=pool)
            for sigma in SWEEP:
                if sigma == 1.0:
                    continue
                ratio = t[f"ours {sigma:g}"] / t["ours 1"]
                need = 1.15 if sigma <= 4 else 1.35
                r.add("s", f"{op.title} f32 {size}, 1 thread: our time at x ~ {sigma:g} N(0,1) / at 1 N(0,1)",
                      f"{ratio:.2f}x", f"<= {need:g}x", _verdict(ratio <= need), note=pool)
    bench.set_threads(None)


def run(min_repeats, only=None):
    for name in _PEERS_OF[only]:
        progress(f"ratios: importing {name} ...")
        bench.peer(name)
    if "torch" in _PEERS_OF[only]:
        bench._load_torch()
    info = bench.machine_info()
    r = Ratios(min_repeats, info)
    if only == "bf16":
        _bf16_rows(r)
        return info, r.rows
    if only == "family":       # the SiLU / gated rows alone
        _family_rows(r)
        return info, r.rows
    if only == "matmul":       # threads right after a matmul
        _after_matmul_rows(r)
        return info, r.rows
    if only == "mkl":          # oneMKL VM, the accurate peer
        _mkl_rows(r, f64=True)
        return info, r.rows
    if only == "f64":          # float64 against JAX, PyTorch and oneMKL VM, with their accuracy
        _f64_rows(r)
        return info, r.rows
    if only == "sigma":        # the speed of the exact kernels against the width of the data
        _sigma_sweep(r)
        return info, r.rows
    all_threads = gelu_ext.get_num_threads()

    # 1. exact GELU f32, 2^20, 1 thread vs PyTorch (out= on both sides); and
    # on wide data, where the tail formula takes 7% (sigma 3) and 29% (8) of x
    r.speed_row("1", "exact GELU f32 2^20, 1 thread: ours / PyTorch (out=)", "gelu_erf", np.float32, N20, "torch",
                threads=1, required=1.0, goal=1.5)
    for sigma in (3.0, 8.0):
        r.speed_row("1", "exact GELU f32 2^20, 1 thread: ours / PyTorch (out=)", "gelu_erf", np.float32, N20,
                    "torch", threads=1, required=1.0, sigma=sigma)
    _ulp_all_paths(r)
    _mkl_rows(r)
    # 2. tanh GELU vs JAX (allocating, so ours allocates too)
    r.speed_row("2", "tanh GELU float32 2^20, 1 thread: ours / JAX (both allocate)",
                "gelu_tanh", np.float32, N20, "jax", threads=1, required=1.0, ours="ours_alloc")
    _f64_rows(r)
    # 4. ReLU vs np.copyto of the same array
    bench.set_threads(1)
    for dt in (np.float32, np.float64):
        d = bench.make_inputs("relu", dt, N20, sigma=SIGMA)
        x, o = d["x"], d["out"]
        r.vs_call_row("4", f"ReLU {np.dtype(dt).name} 2^20, 1 thread: ours / np.copyto",
                      bench.prepare("ours", "relu", d), lambda o=o, x=x: np.copyto(o, x), required=0.9)
    # 5. 2^24 f32, out=, all threads: memory-bound
    bench.set_threads(None)
    for okey in ("gelu_erf", "gelu_tanh", "relu"):
        d = bench.make_inputs(okey, np.float32, N24, sigma=SIGMA)
        x, o = d["x"], d["out"]
        r.vs_call_row("5", f"{bench.OPS[okey].title} f32 2^24, {all_threads} threads, out=: ours / np.copyto",
                      bench.prepare("ours", okey, d), lambda o=o, x=x: np.copyto(o, x), required=0.85)
    tdef = bench.torch_default_threads()
    r.speed_row("5", f"exact GELU f32 2^24, out=: ours ({all_threads} thr) / PyTorch (its default, {tdef} thr)",
                "gelu_erf", np.float32, N24, "torch", threads=None, peer_threads=tdef, required=1.0)
    bench.set_threads(None)
    if (os.cpu_count() or 1) < 2:
        r.add("5", "exact GELU f32 2^20: 2 threads / 1 thread", "-", ">= 1.7x", "needs >= 2 cores")
    else:
        d = bench.make_inputs("gelu_erf", np.float32, N20, sigma=SIGMA)
        x, o = d["x"], d["out"]

        def with_threads(n):
            def f():
                gelu_ext.set_num_threads(n)
                return gelu_ext.fast_gelu(x, out=o)
            return f
        t, pool = r.time_pair({"1": with_threads(1), "2": with_threads(2)})
        s = t["1"] / t["2"]
        r.add("5", "exact GELU f32 2^20: 2 threads / 1 thread", f"{s:.2f}x", ">= 1.7x", _verdict(s >= 1.7), note=pool)
        _after_matmul_rows(r)
        gelu_ext.set_num_threads(0)
    # 6. a 16-element call against np.tanh on it (both allocate their result)
    bench.set_threads(None)
    x16 = np.linspace(-3, 3, 16, dtype=np.float32)
    r.vs_call_row("6", "exact GELU f32 16 elements: fast_gelu(x) time / np.tanh(x) time",
                  lambda: gelu_ext.fast_gelu(x16), lambda: np.tanh(x16), required=1.5, kind="time")
    # 7. memory
    _memory(r)

    # the gradients and the fused bias: single thread, float32, out given
    for sigma in (SIGMA, 3.0, 8.0):
        r.speed_row("grad", "exact GELU grad f32 2^20, 1 thread: ours / torch gelu_backward", "gelu_erf_grad",
                    np.float32, N20, "torch", threads=1, required=1.0, sigma=sigma)
    r.speed_row("grad", "tanh GELU grad f32 2^20, 1 thread: ours / torch gelu_backward", "gelu_tanh_grad",
                np.float32, N20, "torch", threads=1, required=1.0)
    bench.set_threads(1)
    for n, req in ((N24, 1.3), (N20, 1.0)):
        d = bench.make_inputs("gelu_erf_bias", np.float32, n, sigma=SIGMA)
        x, b, o = d["x"], d["b"], d["out"]
        r.vs_call_row("bias", f"bias GELU f32 {bench._size_label(n)} {x.shape}, 1 thread: "
                      "fused / fast_gelu(x + b, out=o)",
                      bench.prepare("ours", "gelu_erf_bias", d),
                      lambda x=x, b=b, o=o: gelu_ext.fast_gelu(x + b, out=o), required=req)
    for n in (N20, N24):
        r.speed_row("bias", f"bias GELU f32 {bench._size_label(n)}, 1 thread: fused / ORT BiasGelu", "gelu_erf_bias",
                    np.float32, n, "onnxruntime", threads=1, required=1.0)
    bench.set_threads(None)
    _other_peer_rows(r)
    _family_rows(r)
    _bf16_rows(r)
    return info, r.rows


def _after_matmul_rows(r, calls=41):
    """The Transformer feed-forward pattern -- a matmul, then exact
    GELU on its (512, 4096) float32 output -- with the matmul's runtime still
    spinning on the other cores: 2 threads / 1 thread, the two alternating
    call by call after an untimed matmul each (NumPy's OpenBLAS; torch.matmul
    where PyTorch is installed), medians of single calls.  The note gives the
    pool's counters over the 2-thread calls: their workers' share of the
    items, and any back-off."""
    rng = np.random.default_rng(29)
    x = rng.standard_normal((512, 1024), dtype=np.float32)
    w = rng.standard_normal((1024, 4096), dtype=np.float32) * np.float32(0.03)
    h, o = np.empty((512, 4096), np.float32), np.empty((512, 4096), np.float32)
    befores = [("np.matmul", lambda: np.matmul(x, w, out=h))]
    torch = bench.peer("torch")
    if torch is not None:
        tx, tw, th = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(h)
        befores.append(("torch.matmul", lambda: torch.matmul(tx, tw, out=th)))
    for name, before in befores:
        med, pw = _common.medians_after(before, lambda: gelu_ext.fast_gelu(h, out=o), (1, 2), calls)
        s = med[1] / med[2]
        share = pw.delta("worker_items") / max(1, pw.delta("worker_items") + pw.delta("owner_items"))
        note = "; ".join(filter(None, [f"workers computed {share:.0%} of the items", pw.note]))
        r.add("matmul", f"exact GELU f32 (512, 4096) right after {name}: 2 threads / 1 thread",
              f"{s:.2f}x", ">= 1.8x", _verdict(s >= 1.8), note=note)


def _other_peer_rows(r):
    """What the criteria above do not cover: tanh GELU against ORT FastGelu
    (ort), float16 against our float32 and torch's float16 (f16), and the
    textbook C loop over libm (libm)."""
    r.speed_row("ort", "tanh GELU f32 2^20, 1 thread: ours / ORT FastGelu", "gelu_tanh", np.float32, N20,
                "onnxruntime", threads=1, required=1.0)
    bench.set_threads(1)
    x32 = bench.make_inputs("gelu_erf", np.float32, N20, sigma=SIGMA)["x"]
    x16 = x32.astype(np.float16)
    o32, o16 = np.empty_like(x32), np.empty_like(x16)
    r.vs_call_row("f16", "exact GELU f16 2^20, 1 thread: ours f16 / ours f32 (rate)",
                  lambda: gelu_ext.fast_gelu(x16, out=o16), lambda: gelu_ext.fast_gelu(x32, out=o32), required=0.8)
    torch = bench.peer("torch")
    if torch is None:
        r.add("f16", "exact GELU f16 2^20, 1 thread: ours / torch gelu (float16, out=)", "-", ">= 1x", NOT_INSTALLED)
    else:
        torch.set_num_threads(1)
        t16, to16 = torch.from_numpy(x16), torch.from_numpy(o16.copy())
        r.vs_call_row("f16", "exact GELU f16 2^20, 1 thread: ours / torch gelu (float16, out=)",
                      lambda: gelu_ext.fast_gelu(x16, out=o16), lambda: torch._C._nn.gelu(t16, out=to16),
                      required=1.0, peer="torch")
    try:
        textbook = bench.prepare("textbook", "gelu_erf", {"x": x32, "out": np.empty_like(x32)})
    except bench.Unavailable as e:
        r.add("libm", "exact GELU f32 2^20, 1 thread: ours / C loop over libm erff", "-", ">= 1x", f"n/a: {e}")
    else:
        r.vs_call_row("libm", "exact GELU f32 2^20, 1 thread: ours / C loop over libm erff",
                      lambda: gelu_ext.fast_gelu(x32, out=o32), textbook, required=1.0)
    bench.set_threads(None)


def _family_rows(r):
    """SiLU, quick GELU, Mish and the gated forms (float32, 2^20,
    1 thread, out= on every side that has it) against what a PyTorch or JAX
    user runs: F.silu, F.mish, F.silu(g) * u, F.gelu(g) * u (the product written into
    the preallocated output), silu_backward, and the gated gradients as
    autograd computes them (d_gate = silu_backward(grad * u, g), d_up =
    grad * silu(g)), mish_backward; JAX: the jitted composition and its vjp (allocating, so
    ours allocates too in those rows)."""
    torch, jax = bench.peer("torch"), bench.peer("jax")
    bench.set_threads(1)
    rng = np.random.default_rng(13)
    g = (SIGMA * rng.standard_normal(N20)).astype(np.float32)
    u = rng.standard_normal(N20).astype(np.float32)
    dy = rng.standard_normal(N20).astype(np.float32)
    o, o2 = np.empty_like(g), np.empty_like(g)
    ours = {
        "silu": lambda: gelu_ext.silu(g, out=o),
        "quick_gelu": lambda: gelu_ext.quick_gelu(g, out=o),
        "silu_grad": lambda: gelu_ext.silu_grad(g, dy, out=o),
        "mish": lambda: gelu_ext.mish(g, out=o),
        "mish_grad": lambda: gelu_ext.mish_grad(g, dy),
        "swiglu": lambda: gelu_ext.swiglu(g, u, out=o),
        "geglu": lambda: gelu_ext.geglu(g, u, out=o),
        "swiglu_grad": lambda: gelu_ext.swiglu_grad(g, u, dy, out=(o, o2)),
        "geglu_grad": lambda: gelu_ext.geglu_grad(g, u, dy, out=(o, o2)),
    }
    titles = {
        "silu": ("SiLU f32 2^20, 1 thread: ours / torch F.silu (out=)", "torch"),
        "quick_gelu": ("quick GELU f32 2^20, 1 thread: ours / torch x*sigmoid(1.702x)", "torch"),
        "silu_grad": ("SiLU grad f32 2^20, 1 thread: ours / torch silu_backward (out=)", "torch"),
        "mish": ("Mish f32 2^20, 1 thread: ours / torch F.mish (out=)", "torch"),
        "mish_grad": ("Mish grad f32 2^20, 1 thread: ours / torch mish_backward (both allocate)", "torch"),
        "swiglu": ("SwiGLU f32 2^20, 1 thread: ours / torch F.silu(g)*u", "torch"),
        "geglu": ("GEGLU f32 2^20, 1 thread: ours / torch F.gelu(g)*u", "torch"),
        "swiglu_grad": ("SwiGLU grad f32 2^20, 1 thread: ours / torch autograd's ops", "torch"),
        "geglu_grad": ("GEGLU grad f32 2^20, 1 thread: ours / torch autograd's ops", "torch"),
    }
    if torch is not None:
        torch.set_num_threads(1)
        F, aten = torch.nn.functional, torch.ops.aten
        tg, tu, tdy, to, to2 = (torch.from_numpy(a) for a in (g, u, dy, o.copy(), o2.copy()))
        tpeer = {
            "silu": lambda: aten.silu.out(tg, out=to),
            "quick_gelu": lambda: torch.mul(tg, torch.sigmoid(1.702 * tg), out=to),
            "silu_grad": lambda: aten.silu_backward.grad_input(tdy, tg, grad_input=to),
            "mish": lambda: aten.mish.out(tg, out=to),
            "mish_grad": lambda: aten.mish_backward(tdy, tg),
            "swiglu": lambda: torch.mul(F.silu(tg), tu, out=to),
            "geglu": lambda: torch.mul(F.gelu(tg), tu, out=to),
            "swiglu_grad": lambda: (aten.silu_backward.grad_input(tdy * tu, tg, grad_input=to),
                                    torch.mul(F.silu(tg), tdy, out=to2)),
            "geglu_grad": lambda: (aten.gelu_backward.grad_input(tdy * tu, tg, grad_input=to),
                                   torch.mul(F.gelu(tg), tdy, out=to2)),
        }
    for key, (what, _) in titles.items():
        if torch is None:
            r.add("family", what, "-", ">= 1x", NOT_INSTALLED)
            continue
        r.vs_call_row("family", what, ours[key], tpeer[key], required=1.0, peer="torch")
    if jax is None:
        r.add("family", "SwiGLU f32 2^20, 1 thread: ours / JAX jit silu(g)*u (both allocate)", "-", ">= 1x",
              NOT_INSTALLED)
    else:
        jg, ju = jax.device_put(g), jax.device_put(u)
        fn = jax.jit(lambda a, b: jax.nn.silu(a) * b)
        r.vs_call_row("family", "SwiGLU f32 2^20, 1 thread: ours / JAX jit silu(g)*u (both allocate)",
                      lambda: gelu_ext.swiglu(g, u), lambda: fn(jg, ju).block_until_ready(), required=1.0,
                      peer="jax")
        fs = jax.jit(jax.nn.silu)
        r.vs_call_row("family", "SiLU f32 2^20, 1 thread: ours / JAX jit silu (both allocate)",
                      lambda: gelu_ext.silu(g), lambda: fs(jg).block_until_ready(), required=1.0,
                      peer="jax")
    with np.errstate(over="ignore"):
        r.vs_call_row("family", "SiLU f32 2^20, 1 thread: ours / NumPy x/(1+exp(-x)) (in place)",
                      ours["silu"], lambda: np.divide(g, np.add(np.exp(np.negative(g, out=o2), out=o2), 1.0, out=o2),
                                                      out=o2), required=1.0)
    bench.set_threads(None)


def _bf16_rows(r):
    """bfloat16: elements per second of the bfloat16 loops
    (ml_dtypes) against our own float32 loops on the same values, out= on
    both sides, 1 thread.  A rate: the same element count, so > 1 means
    bfloat16 elements go through faster."""
    rows = (("gelu_erf", "exact GELU"), ("gelu_erf_grad", "exact GELU grad"))
    if _ufuncs._bfloat16()[0] is None:     # imports ml_dtypes where it is installed
        for _, title in rows:
            r.add("bf16", f"{title} bf16 2^20, 1 thread: ours bf16 / ours f32 (rate)", "-", ">= 1x",
                  "ml_dtypes not installed")
        return
    bench.set_threads(1)
    for key, title in rows:
        d = bench.make_inputs(key, np.float32, N20, sigma=SIGMA)
        b = {k: d[k].astype(_ufuncs.BFLOAT16) for k in ("x", "g") if k in d}
        b["out"] = np.empty(d["out"].shape, _ufuncs.BFLOAT16)
        r.vs_call_row("bf16", f"{title} bf16 2^20, 1 thread: ours bf16 / ours f32 (rate)",
                      bench.prepare("ours", key, {**d, **b}), bench.prepare("ours", key, d), required=1.0)
    bench.set_threads(None)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python bench/ratios.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=7, help="minimum interleaved repeats per ratio (default 7)")
    p.add_argument("--strict", action="store_true", help="exit with status 1 if any row FAILs")
    p.add_argument("--isa", choices=tuple(bench.ISA_CAPS),
                   help="hold ours, PyTorch, JAX and oneMKL VM to this instruction set before the peers are "
                   "imported (GELU_EXT_ISA, ATEN_CPU_CAPABILITY, XLA_FLAGS=--xla_cpu_max_isa, "
                   "MKL_Enable_Instructions; the header reads each back); "
                   "ONNX Runtime cannot be held to one: below the CPU's best its rows say 'not comparable'")
    p.add_argument("--only", choices=[k for k in _PEERS_OF if k],
                   help="run only these rows (family: SiLU, quick GELU, gated forms; bf16: bfloat16 against "
                   "float32; matmul: threads right after a matmul; mkl: oneMKL VM, the accurate peer; "
                   "f64: float64 against JAX, PyTorch and oneMKL VM, with their accuracy; "
                   "sigma: float32 GELU, SiLU and their gradients on x ~ sigma N(0,1), sigma 0.5 to 8, "
                   "against PyTorch and against sigma 1)")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats must be >= 1, got {args.repeats}")
    if args.isa:
        bench.cap_isa(args.isa)            # before run() imports the peers
    info, rows = run(args.repeats, args.only)
    print("gelu_ext speed criteria (rows 1-7: the seven criteria; the others named for what they measure, "
          "bench/README.md)  -  python bench/ratios.py" + " ".join([""] + (argv if argv is not None else sys.argv[1:])))
    print("\n".join(bench.header_lines(info) + bench.isa_lines(info)))
    if info["versions"].get("jax"):
        print(f"JAX threads: {bench.jax_threads_label()}; PyTorch default threads: "
              f"{bench.torch_default_threads()}")
    print(f"method  : medians of interleaved repeats in one process after warm-up; x ~ {SIGMA:g} N(0,1) "
          "unless the row names its own; "
          "'x' ratios > 1 mean ours is faster")
    print()
    w = max(len(rw.what) for rw in rows)
    wn = max([3] + [len(rw.num) for rw in rows])
    head = f"{'#':<{wn}} {'criterion':<{w}} {'measured':>12} {'required':>22}  verdict"
    print(head)
    print("-" * len(head))
    for rw in rows:
        note = f"  ({rw.note})" if rw.note else ""
        print(f"{rw.num:<{wn}} {rw.what:<{w}} {rw.measured:>12} {rw.required:>22}  {rw.verdict}{note}")
    fails = sum(rw.verdict == "FAIL" for rw in rows)
    passes = sum(rw.verdict == "PASS" for rw in rows)
    apart = sum(rw.verdict == NOT_COMPARABLE for rw in rows)
    print(f"\n{passes} PASS, {fails} FAIL, " + (f"{apart} {NOT_COMPARABLE}, " if apart else "")
          + f"{len(rows) - passes - fails - apart} not measured")
    return 1 if (args.strict and fails) else 0


if __name__ == "__main__":
    # Ctrl-C anywhere: "ratios: interrupted" and exit status 130
    with _common.ctrl_c_exits("ratios: interrupted"):
        sys.exit(main())
