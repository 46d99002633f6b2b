"""Shared fixtures and helpers for the gelu_ext test suite.

Design:
- The oracle is ``gelu_ext._reference`` (the slow twin), never the compiled
  code: every expected value is computed in float64 (or mpmath) and only then
  rounded to the dtype under test.
- ``UFUNCS`` describes every ufunc once (arity, which argument is a bias, the
  float64 twin), so the test files parametrise over one table instead of
  repeating the list.
- Process-wide settings the tests touch (ISA path, thread count, parallel
  threshold) are changed only through fixtures that restore them, so test
  order never matters.
"""
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
from scipy.special import ndtr

import gelu_ext
from gelu_ext import _reference as ref
from gelu_ext import _ufuncs

# --------------------------------------------------------------- dtypes --

FLOAT_DTYPES = [np.float16, np.float32, np.float64]
OTHER_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.bool_]
ALL_DTYPES = FLOAT_DTYPES + OTHER_DTYPES


def dtype_id(dt):
    return np.dtype(dt).name


def result_dtype(dt):
    """What NumPy's own ``np.tanh`` returns for ``dt``: the dtype our ufuncs
    must return too (ints and bools go to the smallest float that holds them)."""
    return np.tanh(np.ones(1, dtype=dt)).dtype


# ------------------------------------------------------------- ufuncs --

SQRT_2_PI = math.sqrt(2.0 / math.pi)


def erf_grad_scale(x):
    """s = max(|Phi(x)|, |x phi(x)|): the size of the two terms of gelu'(x).

    The derivative crosses zero at x ~ -0.7518, so its error bound is stated
    in ULPs of s (absolute there), as issue 5 specifies."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        phi = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
        s = np.maximum(np.abs(ndtr(x)), np.abs(x * phi))
    return np.where(np.isnan(s), 1.0, s)


def tanh_grad_scale(x):
    """The same for the tanh form: max(|sig(w)|, |x sig(w) (1 - sig(w)) w'|)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        w = 2.0 * SQRT_2_PI * (x + 0.044715 * x ** 3)
        sig = 1.0 / (1.0 + np.exp(-w))
        one_minus = np.exp(-w) * sig        # 1 - sig without cancellation
        dw = 2.0 * SQRT_2_PI * (1.0 + 3.0 * 0.044715 * x * x)
        s = np.maximum(np.abs(sig), np.abs(x * sig * one_minus * dw))
    return np.where(np.isnan(s), 1.0, s)


@dataclass(frozen=True)
class UfuncSpec:
    """One ufunc and how to compute what it must return.

    ``ref`` maps the float64 point x (already x + b for bias forms) to the
    float64 value of the unary function; ``grad`` says the second input
    multiplies it; ``bias`` says the last input is added to x in the loop
    dtype first; ``scale`` gives the magnitude an error is measured against
    (None: the result itself)."""
    name: str
    nin: int
    ref: Callable
    grad: bool = False
    bias: bool = False
    exact: bool = False            # ReLU and its gradient: bit-exact
    scale: Callable = None
    tanh: bool = False

    @property
    def ufunc(self):
        return getattr(_ufuncs, self.name)


UFUNCS = [
    UfuncSpec("gelu_erf", 1, ref.ref_gelu_erf),
    UfuncSpec("gelu_tanh", 1, ref.ref_gelu_tanh, tanh=True),
    UfuncSpec("relu", 1, ref.ref_relu, exact=True),
    UfuncSpec("gelu_erf_bias", 2, ref.ref_gelu_erf, bias=True),
    UfuncSpec("gelu_tanh_bias", 2, ref.ref_gelu_tanh, bias=True, tanh=True),
    UfuncSpec("relu_grad", 2, ref.ref_relu_grad, grad=True, exact=True),
    UfuncSpec("gelu_erf_grad", 2, ref.ref_gelu_erf_grad, grad=True,
              scale=erf_grad_scale),
    UfuncSpec("gelu_tanh_grad", 2, ref.ref_gelu_tanh_grad, grad=True,
              scale=tanh_grad_scale, tanh=True),
    UfuncSpec("gelu_erf_bias_grad", 3, ref.ref_gelu_erf_grad, grad=True,
              bias=True, scale=erf_grad_scale),
    UfuncSpec("gelu_tanh_bias_grad", 3, ref.ref_gelu_tanh_grad, grad=True,
              bias=True, scale=tanh_grad_scale, tanh=True),
]
UFUNC_IDS = [u.name for u in UFUNCS]
SPECS_BY_NAME = {u.name: u for u in UFUNCS}


@dataclass
class Expected:
    """What a ufunc call must return: ``rounded`` in the loop dtype, the
    unrounded float64 ``value``, the error ``scale`` and the point ``x`` (x + b
    for the fused forms) each element was evaluated at."""
    rounded: np.ndarray
    value: np.ndarray
    scale: np.ndarray
    x: np.ndarray


def expected(spec, args, out_dtype=None):
    """What ``spec.ufunc(*args)`` must return, from the float64 twin.

    NumPy casts every input to the loop dtype (``np.tanh``'s result dtype)
    first; the fused forms add x + b in that dtype (issue 5: bit-identical to
    the unfused op on x + b); the float64 value is rounded to the loop (or
    ``out``) dtype once at the end."""
    arrs = [np.asarray(a) for a in args]
    loop = np.result_type(*[result_dtype(a.dtype) for a in arrs])
    final = loop if out_dtype is None else np.dtype(out_dtype)
    shape = np.broadcast_shapes(*[a.shape for a in arrs])
    with np.errstate(all="ignore"):
        cast = [a.astype(loop) for a in arrs]
        x = cast[0]
        if spec.bias:
            x = (x + cast[-1]).astype(loop)
        x64 = np.broadcast_to(np.asarray(x, dtype=np.float64), shape)
        if spec.exact and spec.grad:            # relu_backward: g where x > 0
            val = np.where(x > 0, cast[1], np.zeros((), loop)).astype(loop)
            val = np.broadcast_to(val, shape)
            return Expected(val.astype(final), val.astype(np.float64), np.ones(shape), x64)
        val = spec.ref(x64)
        scale = np.abs(val) if spec.scale is None else spec.scale(x64)
        if spec.grad:
            g64 = np.asarray(cast[1], dtype=np.float64)
            val = val * g64
            scale = scale * np.abs(g64)
        val = np.broadcast_to(val, shape)
        rounded = val.astype(loop).astype(final)
    return Expected(rounded, val, np.broadcast_to(scale, shape).astype(np.float64), x64)


# ---------------------------------------------------------- comparisons --

def ulp_at(value, dtype):
    """ULP of |value| in ``dtype`` (float64 array), subnormal spacing below
    the normal range, as gelu_ext._reference.ulp_of does per element."""
    fi = np.finfo(dtype)
    v = np.abs(np.asarray(value, dtype=np.float64))
    with np.errstate(all="ignore"):
        _, e = np.frexp(v)                       # v in [2^(e-1), 2^e)
        u = np.ldexp(1.0, (e - 1 - fi.nmant).astype(np.int32))
    u = np.where(np.isfinite(v), u, math.ldexp(1.0, fi.maxexp - 1 - fi.nmant))
    return np.maximum(u, float(fi.smallest_subnormal))


def ulp_errors(got, exact, dtype, scale=None):
    """|got - exact| in ULPs of ``dtype`` at max(|exact|, scale).

    NaN against NaN and equal infinities count 0; any other non-finite
    mismatch counts inf."""
    got = np.asarray(got, dtype=np.float64)
    exact = np.asarray(exact, dtype=np.float64)
    mag = np.abs(exact) if scale is None else np.maximum(np.abs(exact), np.abs(scale))
    with np.errstate(all="ignore"):
        err = np.abs(got - exact) / ulp_at(mag, dtype)
    same = (np.isnan(got) & np.isnan(exact)) | (np.isinf(got) & (got == exact))
    err = np.where(same, 0.0, err)
    return np.where(np.isnan(err), np.inf, err)


def assert_same_bits(a, b, what=""):
    """Bit-for-bit equality, signed zeros and NaN included."""
    a = np.asarray(a)
    b = np.asarray(b)
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    if a.dtype.kind == "f":
        ia = a.view(f"u{a.dtype.itemsize}")
        ib = b.view(f"u{b.dtype.itemsize}")
        bad = ia != ib
        # NaN payloads are not part of any contract: any NaN matches any NaN
        bad &= ~(np.isnan(a) & np.isnan(b))
    else:
        bad = a != b
    n = int(np.count_nonzero(bad))
    assert n == 0, f"{what}: {n} of {a.size} elements differ, first at {np.argwhere(bad)[0]}"


TANH_TAIL = -5.0      # below this the tanh form is bounded relatively (issue 2)
TANH_TAIL_RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-13}


def assert_close_to_reference(spec, got, args, rtol64=1e-13):
    """``got`` matches the twin: bit-exact for ReLU and its gradient; float16
    within 1 ULP of the correctly rounded value; float32 within the issue's
    bound (1 ULP exact GELU, 2 ULP tanh GELU for x >= -5 and 1e-5 relative
    below, 2 ULP(s) derivatives); float64 to ``rtol64`` relative to the scale
    (the float64 twin itself is only good to ~1e-13; test_accuracy.py holds
    float64 to ULP bounds against mpmath)."""
    got = np.asarray(got)
    e = expected(spec, args, out_dtype=got.dtype)
    assert got.shape == e.rounded.shape, (got.shape, e.rounded.shape)
    if spec.exact:
        assert_same_bits(got, e.rounded, spec.name)
        return
    dt = got.dtype
    if dt == np.float16:
        err = ulp_errors(got, e.rounded, dt, e.scale)
        bound = np.ones(got.shape)
    elif dt == np.float32:
        err = ulp_errors(got, e.value, dt, e.scale)
        bound = np.full(got.shape, 2.0 if (spec.grad or spec.tanh) else 1.0)
        if spec.tanh:
            # tail: relative 1e-5, i.e. 1e-5 |ref| / ULP(|ref|) ULPs (>= 1 ULP)
            rel = TANH_TAIL_RTOL[dt] * np.maximum(np.abs(e.value), e.scale) / ulp_at(
                np.maximum(np.abs(e.value), e.scale), dt)
            bound = np.where(e.x < TANH_TAIL, np.maximum(rel, 1.0), bound)
    else:
        with np.errstate(all="ignore"):
            err = np.abs(got - e.value) / np.maximum(np.maximum(np.abs(e.value), e.scale), 1e-300)
        same = (np.isnan(got) & np.isnan(e.value)) | (np.isinf(got) & (got == e.value))
        err = np.where(same, 0.0, np.where(np.isnan(err), np.inf, err))
        bound = np.full(got.shape, rtol64)
    bad = err > bound
    if np.any(bad):
        i = tuple(np.argwhere(bad)[0])
        raise AssertionError(
            f"{spec.name} {dt}: {int(bad.sum())} of {got.size} out of bounds; at {i}: "
            f"x={e.x[i]!r} got {got[i]!r}, expected {e.value[i]!r} "
            f"(error {err[i]:.3g}, bound {bound[i]:.3g})")


# --------------------------------------------------------- ISA / threads --

def usable_isas():
    """ISA paths compiled in and runnable on this CPU (what _set_isa accepts)."""
    before = _ufuncs._get_isa()
    ok = []
    try:
        for name in _ufuncs._compiled_isas():
            try:
                _ufuncs._set_isa(name)
            except ValueError:
                continue
            ok.append(name)
    finally:
        _ufuncs._set_isa(before)
    return ok


@pytest.fixture(params=usable_isas())
def isa(request):
    """Run the test on one ISA path, then restore the previous one."""
    before = _ufuncs._get_isa()
    _ufuncs._set_isa(request.param)
    try:
        yield request.param
    finally:
        _ufuncs._set_isa(before)


@pytest.fixture
def restore_threads():
    """Restore the thread count and parallel threshold a test changes."""
    threshold = _ufuncs._get_parallel_threshold()
    try:
        yield
    finally:
        gelu_ext.set_num_threads(None)
        _ufuncs._set_parallel_threshold(threshold)
