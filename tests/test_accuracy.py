"""Sampled accuracy: the CI guard that makes a kernel regression fail.

The bounds are the issues' (2 and 5), not what the current kernels achieve:

========================  ==============================  ==============================
function                  float32 (vs float64 twin)       float64 (vs mpmath, 60 digits)
========================  ==============================  ==============================
gelu_erf                  1 ULP                           2 ULP
gelu_tanh, x >= -5        2 ULP                           2 ULP
gelu_tanh, x < -5         1e-5 relative (>= 1 ULP)        1e-13 relative (>= 1 ULP)
gelu_erf'                 2 ULP(s)                        4 ULP(s)
gelu_tanh', x >= -5       4 ULP(s)                        4 ULP(s)
gelu_tanh', x < -5        1e-5 relative to s (>= 1 ULP)   1e-13 relative to s (>= 1 ULP)
========================  ==============================  ==============================

s = max(|first term|, |second term|) of the derivative (Phi(x) and x phi(x) for
the exact form): the derivative crosses zero at x ~ -0.7518, where only an
absolute bound makes sense (issue 5).  Issue 5 bounds the tanh derivative for
x >= -5 only; its tail gets the forward tanh tail's relative bound.  "(>= 1
ULP)": subnormal results cannot be relatively accurate, but must not be
flushed to 0 early, which costs far more than 1 ULP of the smallest subnormal.

float32: about 10^7 random bit patterns (every sign, exponent, NaN, inf and
subnormal input), all float32 in the tail [-14.5, -5] at a stride, and every
float32 whose result is subnormal.  float64: a few thousand points over the
bulk, |x| log-spaced in [1e-300, 40] of both signs, and the tail [-38.6, -5]
down to underflow, against mpmath.  Every check runs on every ISA path this
CPU runs (the ``isa`` fixture).  The exhaustive float32 run is bench/'s job.
"""
import math
import struct

import numpy as np
import pytest

import gelu_ext
from gelu_ext import _reference as ref
from conftest import erf_grad_scale, tanh_grad_scale, ulp_at

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
TAIL = -5.0


class Check:
    """One function and its bounds (see the module docstring)."""

    def __init__(self, name, ufunc, grad, ref64, mp, scale, ulps, tail_rtol=None):
        self.name, self.ufunc, self.grad = name, ufunc, grad
        self.ref64, self.mp, self.scale = ref64, mp, scale
        self.ulps, self.tail_rtol = ulps, tail_rtol

    def run(self, x):
        if self.grad:
            return self.ufunc(x, x.dtype.type(1))
        return self.ufunc(x)

    def allowed(self, x64, exact, scale, dt):
        """Allowed |got - exact| per element, from the bounds in ULPs of
        max(|exact|, scale)."""
        mag = np.abs(exact) if scale is None else np.maximum(np.abs(exact), scale)
        ulp = ulp_at(mag, dt)
        ulps = np.full(x64.shape, float(self.ulps[dt]))
        if self.tail_rtol is not None:
            with np.errstate(all="ignore"):
                rel = np.maximum(self.tail_rtol[dt] * mag / ulp, 1.0)
            ulps = np.where(x64 < TAIL, rel, ulps)
        return ulps * ulp, ulp


_mp_erf_grad = ref.mp_gelu_erf_grad
_mp_tanh_grad = ref.mp_gelu_tanh_grad


CHECKS = [
    Check("gelu_erf", gelu_ext.gelu_erf, False, ref.ref_gelu_erf,
          lambda x: (ref.mp_gelu_erf(x), None), None, {F32: 1, F64: 2}),
    Check("gelu_tanh", gelu_ext.gelu_tanh, False, ref.ref_gelu_tanh,
          lambda x: (ref.mp_gelu_tanh(x), None), None, {F32: 2, F64: 2},
          tail_rtol={F32: 1e-5, F64: 1e-13}),
    Check("gelu_erf_grad", gelu_ext.gelu_erf_grad, True, ref.ref_gelu_erf_grad,
          _mp_erf_grad, erf_grad_scale, {F32: 2, F64: 4}),
    Check("gelu_tanh_grad", gelu_ext.gelu_tanh_grad, True, ref.ref_gelu_tanh_grad,
          _mp_tanh_grad, tanh_grad_scale, {F32: 4, F64: 4},
          tail_rtol={F32: 1e-5, F64: 1e-13}),
]
# scope="module": pytest runs all ISA paths of one check back to back, so the
# one-entry caches below compute each reference once
check_param = pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.name, scope="module")


CHUNK = 1 << 19      # work in blocks: 80 MB temporaries cost more in page faults than in math


def assert_within(check, x, got, exact, allowed, ulp, where, lo=None):
    """|got - exact| <= allowed (exact = ``exact`` + ``lo`` when given), NaN
    matching NaN and equal infinities."""
    bad, worst, worst_ulps = 0, None, -1.0
    for i in range(0, x.size, CHUNK):
        sl = slice(i, i + CHUNK)
        with np.errstate(all="ignore"):    # a signalling NaN passed through quietens here
            g = np.asarray(got[sl], dtype=np.float64)
            e = exact[sl]
            err = np.abs(g - e)
            if lo is not None:
                # g - e is exact when the two are within a factor 2 (Sterbenz),
                # so this is |got - (exact + lo)| to ~106 bits
                err = np.abs((g - e) - lo[sl])
        ok = (err <= allowed[sl]) | (np.isnan(g) & np.isnan(e)) | (g == e)
        if not ok.all():
            idx = np.flatnonzero(~ok)
            u = np.nan_to_num(err[idx] / ulp[sl][idx], nan=np.inf)
            bad += idx.size
            if u.max() > worst_ulps:
                worst_ulps, worst = float(u.max()), i + int(idx[np.argmax(u)])
    if bad:
        g = float(np.float64(got[worst]))
        raise AssertionError(
            f"{check.name} {where}: {bad} of {x.size} points out of bounds; worst "
            f"x={float(x[worst])!r}: got {g!r}, exact {float(exact[worst])!r}, error "
            f"{worst_ulps:.4g} ULP, allowed {allowed[worst] / ulp[worst]:.4g}")


# -------------------------------------------------------------- float32 --

def f32_range(lo, hi, stride=1):
    """Every ``stride``-th float32 in [lo, hi] (lo < hi <= 0 or 0 <= lo < hi)."""
    a, b = (struct.unpack("<I", struct.pack("<f", v))[0] for v in (lo, hi))
    a, b = min(a, b), max(a, b)
    return np.arange(a, b + 1, stride, dtype=np.uint32).view(np.float32)


def random_bit_patterns(n=10_000_000, seed=20240611):
    return np.random.default_rng(seed).integers(0, 1 << 32, n, dtype=np.uint32).view(np.float32)


def subnormal_result_inputs(check):
    """Every float32 x < 0 whose exact result is subnormal or rounds to 0 from
    it (located on a coarse scan of the twin, then enumerated exhaustively)."""
    scan = f32_range(-16.0, -4.0, 4096).astype(np.float64)
    with np.errstate(all="ignore"):
        y = np.abs(check.ref64(scan))
    tiny = float(np.finfo(np.float32).smallest_normal)
    low = float(np.finfo(np.float32).smallest_subnormal) / 4
    hit = scan[(y < tiny) & (y > low)]
    assert hit.size, f"{check.name}: no subnormal results in [-16, -4]"
    step = scan[0] - scan[1]
    return f32_range(float(hit.min()) - step, float(hit.max()) + step)


DATASETS = {
    "random_bits": lambda check: random_bit_patterns(),
    "tail": lambda check: f32_range(-14.5, TAIL, 7),
    "subnormal_results": subnormal_result_inputs,
}

_f32_cache = {}


def f32_case(check, dataset):
    """(x, exact, allowed, ulp) for one check and data set; one entry kept."""
    key = (check.name, dataset)
    if key not in _f32_cache:
        _f32_cache.clear()
        x = DATASETS[dataset](check)
        exact, allowed, ulp = (np.empty(x.size) for _ in range(3))
        for i in range(0, x.size, CHUNK):
            sl = slice(i, i + CHUNK)
            with np.errstate(invalid="ignore"):      # signalling NaNs quieten on the cast
                x64 = x[sl].astype(np.float64)
            with np.errstate(all="ignore"):
                exact[sl] = check.ref64(x64)
                scale = None if check.scale is None else check.scale(x64)
            allowed[sl], ulp[sl] = check.allowed(x64, exact[sl], scale, F32)
        _f32_cache[key] = (x, exact, allowed, ulp)
    return _f32_cache[key]


@pytest.mark.parametrize("dataset", list(DATASETS), scope="module")
@check_param
def test_float32_within_bound(check, dataset, isa):
    x, exact, allowed, ulp = f32_case(check, dataset)
    got = check.run(x)
    assert got.dtype == F32
    assert_within(check, x, got, exact, allowed, ulp, f"float32 {dataset} on {isa}")


def test_float32_forward_errors_with_reference_helper():
    """The same measure through gelu_ext._reference.ulp_error_vec, on the
    bulk, for the two forward functions: the helper and this file agree."""
    x = np.linspace(-6, 6, 100_001, dtype=np.float32)
    for check in CHECKS[:2]:
        err = ref.ulp_error_vec(check.run(x), check.ref64(x.astype(np.float64)), F32)
        assert err.max() <= check.ulps[F32], check.name


@check_param
def test_float32_subnormal_results_are_not_flushed(check):
    """The deepest float32 input with a nonzero exact result gives nonzero."""
    x = subnormal_result_inputs(check)
    with np.errstate(all="ignore"):
        exact = check.ref64(x.astype(np.float64))
    keep = np.abs(exact) > float(np.finfo(np.float32).smallest_subnormal)
    assert np.all(check.run(x[keep]) != 0)


# -------------------------------------------------------------- float64 --

def float64_points(seed=7):
    rng = np.random.default_rng(seed)
    logs = np.logspace(-300, math.log10(40.0), 500)
    return np.unique(np.concatenate([
        rng.uniform(-8.0, 8.0, 600),                  # bulk
        logs, -logs,                                  # |x| in [1e-300, 40], both signs
        rng.uniform(-38.6, TAIL, 600),                # tail
        rng.uniform(-38.7, -37.3, 150),               # exact forms: subnormal results
        rng.uniform(-21.8, -20.9, 150),               # tanh forms: subnormal results
        [-0.7518, -0.75179, 0.0, -0.0, 5e-324, -5e-324],
    ]))


_f64_cache = {}


def f64_case(check):
    """(x, exact hi, exact lo, scale) from mpmath; one check kept."""
    if check.name not in _f64_cache:
        _f64_cache.clear()
        x = float64_points()
        hi, lo, scale = (np.empty(x.size) for _ in range(3))
        import mpmath
        for i, xi in enumerate(x):
            v, s = check.mp(float(xi))
            hi[i] = float(v)
            lo[i] = float(v - mpmath.mpf(hi[i]))      # exact = hi + lo to ~106 bits
            scale[i] = 0.0 if s is None else float(s)
        _f64_cache[check.name] = (x, hi, lo, scale)
    return _f64_cache[check.name]


@check_param
def test_float64_within_bound_vs_mpmath(check, isa):
    x, hi, lo, scale = f64_case(check)
    got = check.run(x)
    assert got.dtype == F64
    allowed, ulp = check.allowed(x, hi, None if check.scale is None else scale, F64)
    assert_within(check, x, got, hi, allowed, ulp, f"float64 vs mpmath on {isa}", lo=lo)


@check_param
def test_float64_bulk_is_far_inside_the_twin_tolerance(check, isa):
    """Sanity for the harness: the float64 kernels agree with the float64
    twin to 1e-12 (relative to max(|value|, s)) on the bulk [-8, 8]."""
    x = np.linspace(-8, 8, 20_001)
    exact = check.ref64(x)
    mag = np.abs(exact) if check.scale is None else np.maximum(np.abs(exact), check.scale(x))
    np.testing.assert_array_less(np.abs(check.run(x) - exact), 1e-12 * mag + 1e-300)
