"""Sampled accuracy: the CI guard that makes a kernel regression fail.

The bounds are gelu_ext.testing.BOUNDS (the promised bounds, not what the
current kernels achieve): float32 against the float64 twin, float64 against
mpmath at 60 digits; derivatives in ULPs of s = max(|first term|, |second
term|) (they cross zero at x ~ -0.7518, where only an absolute bound makes
sense); tanh GELU and its derivative relatively below x = -5, never tighter than 1 ULP
(subnormal results cannot be relatively accurate, but must not be flushed to
0 early, which costs far more than 1 ULP of the smallest subnormal).

float32: about 10^7 random bit patterns (every sign, exponent, NaN, inf and
subnormal input), all float32 in the tail [-14.5, -5] at a stride, and every
float32 whose result is subnormal.  float64: a few thousand points over the
bulk, |x| log-spaced in [1e-300, 40] of both signs, and the tail [-38.6, -5]
down to underflow, against mpmath.  Every check runs on every ISA path this
CPU runs (the ``isa`` fixture).  The exhaustive float32 run is bench/'s job.
"""
import math
import pathlib
import struct

import numpy as np
import pytest

from gelu_ext import _ufuncs, testing
from opinfo import ORACLED

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
TAIL = testing.TAIL


class Check:
    """One function of gelu_ext.testing.BOUNDS and its references."""

    def __init__(self, name):
        self.name = name
        self.ufunc = _ufuncs.OPS[name].ufunc
        self.grad = _ufuncs.OPS[name].grad
        self.ref64 = testing.REFERENCE[name]
        self.scale = (lambda x: testing.grad_scale(name, x)) if self.grad else None

    def mp(self, x):
        """(exact, scale or None) from mpmath."""
        v = testing.MP_REFERENCE[self.name](x)
        return v if self.grad else (v, None)

    def run(self, x):
        if self.grad:
            return self.ufunc(x, x.dtype.type(1))
        return self.ufunc(x)

    def allowed(self, x64, exact, scale, dt):
        """(allowed |got - exact|, the ULP errors are reported in) per element."""
        unit = testing.ulp(exact if scale is None else scale, dt)
        return testing.allowed_error(self.name, dt, x64, exact, scale), unit


# every op with an mpmath oracle: the ones whose bound is not "the twin's bits"
CHECKS = [Check(o.name) for o in ORACLED]
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
    it (located on a coarse scan of the twin, then enumerated exhaustively;
    x ~ -14 for exact and tanh GELU, ~ -100 for SiLU)."""
    scan = f32_range(-128.0, -4.0, 4096).astype(np.float64)
    with np.errstate(all="ignore"):
        y = np.abs(check.ref64(scan))
    tiny = float(np.finfo(np.float32).smallest_normal)
    low = float(np.finfo(np.float32).smallest_subnormal) / 4
    hit = scan[(y < tiny) & (y > low)]
    assert hit.size, f"{check.name}: no subnormal results in [-128, -4]"
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


@pytest.mark.parametrize("dataset", [pytest.param(d, marks=pytest.mark.slow) if d == "random_bits" else d
                                     for d in DATASETS], scope="module")
@check_param
def test_float32_within_bound(check, dataset, isa):
    x, exact, allowed, ulp = f32_case(check, dataset)
    got = check.run(x)
    assert got.dtype == F32
    assert_within(check, x, got, exact, allowed, ulp, f"float32 {dataset} on {isa}")


@check_param
def test_float32_bulk_errors_through_ulp_error(check):
    """The same measure through gelu_ext.testing.ulp_error on the bulk [-5, 6]
    (one region: tanh GELU's relative tail starts below)."""
    x = np.linspace(-5, 6, 100_001, dtype=np.float32)
    x64 = x.astype(np.float64)
    scale = None if check.scale is None else check.scale(x64)
    err = testing.ulp_error(check.run(x), check.ref64(x64), F32, scale)
    b = testing.bound(check.name, F32, "bulk")
    assert b.unit.startswith("ULP") and err.max() <= b.value, (check.name, err.max())


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
        rng.uniform(-38.7, -37.3, 150),               # exact GELU: subnormal results
        rng.uniform(-21.8, -20.9, 150),               # tanh GELU: subnormal results
        [-0.7518, -0.75179, 0.0, -0.0, 5e-324, -5e-324],
        np.linspace(-5.01, 5.01, 401),                # the float64 tables' 16 pieces
        [s * np.nextafter(5.0, v) for s in (1, -1) for v in (0, 9)] + [5.0, -5.0],  # their edge
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


# ---------------------------------------------------------------- README --

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
# README accuracy-table row -> (function, region) of gelu_ext.testing.BOUNDS:
# the rows' titles are prose written for readers, so this map is by hand
README_ROWS = {
    "exact GELU `x·Φ(x)`": ("gelu_erf", "all"),
    "— results in the subnormal range": ("gelu_erf", "all"),
    "tanh GELU, x ≥ −5": ("gelu_tanh", "bulk"),
    "tanh GELU, x < −5 (relative)": ("gelu_tanh", "tail"),
    "exact GELU′ `Φ(x) + x·φ(x)`": ("gelu_erf_grad", "all"),
    "tanh GELU′, x ≥ −5": ("gelu_tanh_grad", "bulk"),
    "SiLU `x·sigmoid(x)`, subnormal results included": ("silu", "all"),
    "quick GELU `x·sigmoid(1.702x)`, subnormal results included": ("quick_gelu", "all"),
    "SiLU′": ("silu_grad", "all"),
    "quick GELU′": ("quick_gelu_grad", "all"),
    "mish `x·tanh(softplus(x))`, subnormal results included²": ("mish", "all"),
    "mish′²": ("mish_grad", "all"),
    "ReLU": ("relu", "all"),
}


def readme_accuracy_rows():
    """{row title: (float32 bound, float64 bound)} from the README's table."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Accuracy\n", 1)[1].split("\n## ", 1)[0]
    table = section.split("\n| function |", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:           # after the header and --- lines
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0]] = (float(cells[2]), float(cells[4]))
    return rows


def test_readme_accuracy_table_states_the_bounds():
    rows = readme_accuracy_rows()
    assert set(rows) == set(README_ROWS), "README accuracy rows changed: update README_ROWS"
    for title, (b32, b64) in rows.items():
        name, region = README_ROWS[title]
        assert (b32, b64) == (testing.bound(name, F32, region).value,
                              testing.bound(name, F64, region).value), title
