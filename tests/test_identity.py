"""Where an op with tables is its identity in float32, for large positive x:
x for the forward ones, x up for the gated forms, g for the derivatives.
Every path returns it there without the general formula (the forward GELU
tables by their clamped last piece; the others from a threshold per table,
src/tables/fit_lut.py's identity_from).  Here, on every path: wherever the
float64 kernel says the op is within 2^-26 of its identity the float32
result is exactly it (a signalling NaN g quieted), and up to x = 32 every
result stays within one ULP of the float64 value rounded, so no threshold
sits where the op is not yet its identity.  bench/identity.py checks every
float32 above each threshold.
"""
import numpy as np
import pytest

from gelu_ext import _spec, _ufuncs, testing

# the float32 split kernels (test_twins.py's): every op with tables
KERNELS = [op for op in _ufuncs.OPS.values() if op.name in _spec.SPLIT]
IDS = [op.name for op in KERNELS]


def _base(op):
    """the op whose deviation from its identity decides (a gated form's activation)"""
    return _spec.OP[op.name].base if op.kind == "gate" else op.name


def _x():
    """every 61st float32 in [4, 32], then a geometric sweep to the largest, and inf"""
    lo, hi = (int(np.float32(v).view(np.uint32)) for v in (4.0, 32.0))
    dense = np.arange(lo, hi, 61, dtype=np.uint32).view(np.float32)
    sweep = np.geomspace(32, 3.4e38, 20001).astype(np.float32)
    return np.concatenate([dense, sweep, [np.float32(np.inf)]])


def _g(n):
    rng = np.random.default_rng(26)
    g = rng.standard_normal(n).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3e-39, 3e38, 1.0, 2 - 2 ** -23],
                       np.float32)
    g[::13] = np.resize(special, g[::13].size)
    g[5::1009] = np.uint32(0x7FA00001).view(np.float32)      # a signalling NaN
    return g


def _deviation(name, x64):
    f = getattr(_ufuncs, name)
    with np.errstate(invalid="ignore"):
        if f.nin == 2:
            return np.abs(f(x64, np.ones_like(x64)) - 1)
        return np.abs(np.where(np.isinf(x64), 1.0, f(x64) / x64) - 1)


def _quiet(g):
    b = g.view(np.uint32)
    return np.where(np.isnan(g), b | np.uint32(0x00400000), b)


@pytest.mark.parametrize("op", KERNELS, ids=IDS)
def test_identity_where_the_op_rounds_to_it(op, isa):
    x = _x()
    g = _g(x.size)
    ident = _deviation(_base(op), x.astype(np.float64)) < 2.0 ** -26
    assert ident.sum() > 1000 and not ident[x < 5].any()
    name = op.name
    f = op.ufunc
    with np.errstate(invalid="ignore", over="ignore"):
        got = f(x, g) if f.nin == 2 else f(x)
        if _spec.OP[name].is_grad:
            want = _quiet(g)
        elif op.kind == "gate":
            want = (x * g).view(np.uint32)
        else:
            want = x.view(np.uint32)
    bad = np.flatnonzero(ident & (got.view(np.uint32) != want))
    assert bad.size == 0, f"{name} on {isa}: x {x[bad[:3]]}, g {g[bad[:3]]}: {got[bad[:3]]}"


@pytest.mark.parametrize("op", [op for op in KERNELS if op.kind == "plain"], ids=lambda op: op.name)
def test_within_one_ulp_around_the_threshold(op, isa):
    """Below the threshold the general formula still runs: within 1 ULP of
    the float64 kernel's value rounded, both sides of it."""
    x = _x()
    x = x[np.isfinite(x) & (x < 32)]
    g = np.random.default_rng(3).standard_normal(x.size).astype(np.float32)
    name = op.name
    f = f64 = op.ufunc
    got = f(x, g) if f.nin == 2 else f(x)
    x64 = x.astype(np.float64)
    ref = f64(x64, np.ones_like(x64)) * g if f.nin == 2 else f64(x64)
    err = testing.ulp_error(got, ref, np.float32)
    assert float(np.max(err)) <= 1.0, name
