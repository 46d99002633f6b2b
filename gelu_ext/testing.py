"""The accuracy contract of gelu_ext and the slow twin that checks it.

In the spirit of ``numpy.testing``: what the test suite, the fuzz tests,
``bench/ulp.py`` and ``python -m gelu_ext bench`` use to judge a result, so
that a bound, a ULP or a reference value is defined once.

* ``BOUNDS``: the bound of every function x dtype x region (the README's
  accuracy table is checked against it).
* ``ulp`` and ``ulp_error``: errors in ULPs of the result's dtype, subnormal
  spacing below the normal range (an early flush to 0 shows as a huge
  error).  A derivative's error is measured in ULPs of its scale ``s``, the
  larger of its two terms (``grad_scale``): GELU' crosses zero at x ~ -0.7518,
  where only an absolute bound makes sense.
* The slow twin, independent of the compiled code: ``mp_*`` is mpmath at 60
  significant digits (the oracle for float64), ``ref_*`` float64 NumPy
  (relative error below 1e-12 over the float32 range with SciPy's ``ndtr``;
  the oracle for float32 and float16, far too coarse for float64).
* ``assert_same_bits`` and ``assert_matches_reference``.

mpmath and SciPy are optional: they are imported by the functions that need
them, never by ``import gelu_ext`` (``pip install 'gelu_ext[test]'``).
"""
import math

import numpy as np

from . import _spec
from ._spec import Bound

__all__ = ["TAIL", "Bound", "BOUNDS", "bound", "allowed_error", "ulp", "ulp_error",
           "grad_terms", "grad_scale", "REFERENCE", "MP_REFERENCE",
           "ref_gelu_erf", "ref_gelu_tanh", "ref_relu", "ref_gelu_erf_grad",
           "ref_gelu_tanh_grad", "ref_relu_grad", "ref_relu2", "ref_relu2_grad", "ref_relu6",
           "ref_relu6_grad", "ref_silu", "ref_quick_gelu",
           "ref_silu_grad", "ref_quick_gelu_grad", "ref_mish", "ref_mish_grad",
           "mp_gelu_erf", "mp_gelu_tanh", "mp_gelu_erf_grad", "mp_gelu_tanh_grad",
           "mp_silu", "mp_quick_gelu", "mp_silu_grad", "mp_quick_gelu_grad", "mp_mish",
           "mp_mish_grad", "assert_same_bits",
           "assert_matches_reference"]

# ------------------------------------------------------------------ bounds --

TAIL = -5.0     # tanh GELU and its gradient are bounded relatively below this x


# (function, dtype, region) -> Bound, from the op spec (gelu_ext/_spec.py,
# each op's ``bounds``).  Regions: "all"; for tanh GELU and its gradient
# "bulk" (x >= TAIL) and "tail" (x < TAIL).  float32 and float64 are the
# bounds promised, not what the kernels achieve; float16 and bfloat16
# (ml_dtypes) results are float32 results rounded once: held to 1 ULP of the
# exact value itself (not of a rounded reference), tail included.
BOUNDS = {(op.name, dt, region): b for op in _spec.OPS for dt, region, b in op.bounds}


def bound(name, dtype, region="all"):
    """The Bound of function ``name`` for ``dtype`` in ``region`` ("all" is
    found for functions bounded per region only where both regions agree)."""
    dt = np.dtype(dtype).name
    try:
        return BOUNDS[(name, dt, region)]
    except KeyError:
        pass
    if region == "all" and BOUNDS.get((name, dt, "bulk")) == BOUNDS.get((name, dt, "tail")) is not None:
        return BOUNDS[(name, dt, "bulk")]
    if region in ("bulk", "tail") and (name, dt, "all") in BOUNDS:
        return BOUNDS[(name, dt, "all")]
    raise KeyError(f"no bound for {name!r}, {dt}, region {region!r}")


def allowed_error(name, dtype, x, exact, scale=None):
    """Largest |got - exact| that BOUNDS allows at each point ``x``.

    ``exact`` is the true value (float64), ``scale`` the derivative's s
    (``grad_scale``) or None.  ULPs are taken at |exact|, or at s when given;
    a relative bound is relative to max(|exact|, s)."""
    x = np.asarray(x, dtype=np.float64)
    mag = np.abs(np.asarray(exact, dtype=np.float64))
    u = ulp(mag if scale is None else scale, dtype)
    if scale is not None:
        mag = np.fmax(mag, np.abs(np.asarray(scale, dtype=np.float64)))
    dt = np.dtype(dtype).name
    regions = ["all"] if (name, dt, "all") in BOUNDS else ["bulk", "tail"]
    allowed = np.zeros(np.broadcast_shapes(x.shape, mag.shape))
    for region in regions:
        b = BOUNDS[(name, dt, region)]
        with np.errstate(all="ignore"):
            a = np.fmax(b.value * mag, u) if b.unit == "rel" else b.value * u
        here = True if region == "all" else ((x < TAIL) if region == "tail" else ~(x < TAIL))
        allowed = np.where(here, a, allowed)
    return allowed


# -------------------------------------------------------------------- ULPs --

def _finfo(dtype):
    """np.finfo, or ml_dtypes' for its bfloat16 (np.finfo rejects it)."""
    if _is_bfloat16(dtype):
        import ml_dtypes
        return ml_dtypes.finfo(np.dtype(dtype))
    return np.finfo(dtype)


def _is_bfloat16(dtype):
    # by name: ml_dtypes is imported only by what needs it
    try:
        return np.dtype(dtype).name == "bfloat16"
    except TypeError:
        return False


def ulp(v, dtype):
    """ULP in ``dtype`` of the float64 magnitudes |v|: 2^(e - nmant) for |v|
    in [2^e, 2^(e+1)), the smallest subnormal below the normal range, and the
    ULP of finfo.max above it (inf and NaN included).  Built from the exponent
    bits: frexp/ldexp are several times slower on the exhaustive runs.
    ``dtype`` may be ml_dtypes' bfloat16."""
    fi = _finfo(dtype)
    v = np.asarray(v, dtype=np.float64)
    bits = np.ascontiguousarray(v).view(np.uint64).reshape(v.shape)
    e = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64) - 1023
    e = np.clip(e, fi.minexp, fi.maxexp - 1) - fi.nmant + 1023      # biased exponent of the ULP
    normal = (np.maximum(e, 1).astype(np.uint64) << np.uint64(52)).view(np.float64)
    # float64 ULPs below 2^-1022 are subnormal doubles: 2^(e - 1023) is bit 51 + e
    sub = (np.uint64(1) << np.clip(51 + e, 0, 51).astype(np.uint64)).view(np.float64)
    return np.where(e < 1, sub, normal)


def _hi_lo(exact):
    """``exact`` as float64 (hi, lo) with hi + lo exact to ~106 bits: mpmath
    numbers are split, floats have lo = 0."""
    a = np.asarray(exact)
    if a.dtype != object:
        return a.astype(np.float64), None
    mp = _mp()
    hi = np.empty(a.shape)
    lo = np.empty(a.shape)
    with mp.workdps(_DPS):
        for i, v in np.ndenumerate(a):
            hi[i] = float(v)
            lo[i] = float(v - mp.mpf(hi[i])) if math.isfinite(hi[i]) else 0.0
    return hi, lo


def ulp_error(got, exact, dtype, scale=None):
    """|got - exact| in ULPs of ``dtype`` at |exact| (at |scale| if given), elementwise.

    ``exact``: float64 values (a float64 twin, >= 1e5 times finer than a
    float32 ULP) or mpmath numbers (kept to ~106 bits, fine enough for
    float64 results).  ``scale``: the derivative's s (see ``grad_scale``).
    NaN against NaN and equal infinities count 0; any other non-finite
    mismatch counts inf.  Returns a float for scalar arguments."""
    hi, lo = _hi_lo(exact)
    with np.errstate(invalid="ignore"):     # ml_dtypes flags a signalling NaN it widens
        g = np.asarray(got, dtype=np.float64)
    mag = hi if scale is None else _hi_lo(scale)[0]
    with np.errstate(all="ignore"):
        d = g - hi          # exact where got and exact are within a factor 2 (Sterbenz)
        if lo is not None:
            d = d - lo
        err = np.abs(d) / ulp(mag, dtype)
    same = (np.isnan(g) & np.isnan(hi)) | (np.isinf(g) & (g == hi))
    err = np.where(same, 0.0, np.where(np.isnan(err), np.inf, err))
    return float(err) if err.ndim == 0 else err


# ---------------------------------------------------------- float64 twin --

_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_A = 0.044715


def _ndtr(x):
    """Phi(x) in float64 to ~1e-13 relative for x > -37 (SciPy's ndtr; without
    SciPy erfc of a rounded argument, the rounding amplified ~x^2 times)."""
    try:
        from scipy.special import ndtr
    except ImportError:
        erfc = np.vectorize(math.erfc, otypes=[np.float64])
        return 0.5 * erfc(-np.asarray(x, dtype=np.float64) / math.sqrt(2.0))
    return ndtr(x)


_QUICK_C = 1.702


def _tanh_w(x):
    """w = 2u = 2 sqrt(2/pi) (x + 0.044715 x^3): tanh GELU is x sigmoid(w)."""
    return 2.0 * _SQRT_2_PI * (x + _TANH_A * x ** 3)


# w(x) and w'(x) of the x sigmoid(w(x)) functions
_SIG_W = {"gelu_tanh": (_tanh_w, lambda x: 2.0 * _SQRT_2_PI * (1.0 + 3.0 * _TANH_A * x * x)),
          "silu": (lambda x: x, lambda x: np.ones_like(x)),
          "quick_gelu": (lambda x: _QUICK_C * x, lambda x: np.full_like(x, _QUICK_C))}


def _sigmoid_w(x, op="gelu_tanh"):
    """sigmoid(w) and 1 - sigmoid(w) for op's w, both without cancellation."""
    with np.errstate(over="ignore", invalid="ignore"):
        w = _SIG_W[op][0](x)
        s = 1.0 / (1.0 + np.exp(-w))
        return s, np.where(w > 0, np.exp(-w) * s, 1.0 - s)


def _gelu_limits(x, r):
    """The limits of x Phi(x) and x sigmoid(w): -inf -> -0.0, +inf -> +inf."""
    r = np.where(np.isneginf(x), -0.0, r)
    return np.where(np.isposinf(x), np.inf, r)


def ref_gelu_erf(x):
    """x Phi(x) in float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return _gelu_limits(x, x * _ndtr(x))


def ref_gelu_tanh(x):
    """x sigmoid(w) in float64: tanh GELU without the tanh formula's cancellation."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return _gelu_limits(x, x * _sigmoid_w(x)[0])


def ref_relu(x):
    """max(x, 0) as torch.relu computes it, in x's dtype: 0.0 where x < 0,
    x elsewhere (NaN and -0.0 kept)."""
    x = np.asarray(x)
    return np.where(x < 0, np.zeros_like(x), x)


def ref_relu2(x):
    """relu(x)^2 in float64 (exact for float32 and 16-bit x): NaN kept, x <= 0 -> 0.0."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        return np.where(x < 0, 0.0, x * x)


def ref_relu2_grad(x, g=None):
    """2x (times ``g``) where x > 0, NaN for NaN x, else 0, in float64."""
    x = np.asarray(x, dtype=np.float64)
    g = 1.0 if g is None else np.asarray(g, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x <= 0, 0.0, (x + x) * g)


def ref_relu6(x):
    """min(max(x, 0), 6) in float64: NaN and -0.0 kept, as torch's clamp."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x < 0, 0.0, np.where(x > 6, 6.0, x))


def ref_relu6_grad(x, g=None):
    """1 (or ``g``) where 0 < x < 6, else 0 (NaN x too), in float64."""
    x = np.asarray(x, dtype=np.float64)
    g = 1.0 if g is None else np.asarray(g, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where((x > 0) & (x < 6), g * np.ones_like(x), 0.0)


def ref_silu(x):
    """x sigmoid(x) in float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return _gelu_limits(x, x * _sigmoid_w(x, "silu")[0])


def ref_quick_gelu(x):
    """x sigmoid(1.702 x) in float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return _gelu_limits(x, x * _sigmoid_w(x, "quick_gelu")[0])


def _mish_t(x):
    """t = tanh(softplus(x)) and 1 - t^2 = sech(softplus(x))^2, the latter
    without cancellation (softplus by np.logaddexp: log1p, no 1 + e^x)."""
    sp = np.logaddexp(0.0, x)
    return np.tanh(sp), 1.0 / np.cosh(sp) ** 2


def ref_mish(x):
    """x tanh(softplus(x)) in float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return _gelu_limits(x, x * _mish_t(x)[0])


def grad_terms(name, x):
    """The two terms of a GELU derivative in float64: (Phi(x), x phi(x)) for
    ``gelu_erf_grad``, (s, x s (1 - s) w') with s = sigmoid(w) for
    ``gelu_tanh_grad``, (t, x sigmoid(x) (1 - t^2)) with t = tanh(softplus(x))
    for ``mish_grad``.  Non-finite terms (at +-inf) are 0."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        if name == "gelu_erf_grad":
            t1, t2 = _ndtr(x), x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI
        elif name in ("gelu_tanh_grad", "silu_grad", "quick_gelu_grad"):
            op = name[:-len("_grad")]
            t1, one_minus = _sigmoid_w(x, op)
            t2 = x * t1 * one_minus * _SIG_W[op][1](x)
        elif name == "mish_grad":
            t1, sech2 = _mish_t(x)
            t2 = x * _sigmoid_w(x, "silu")[0] * sech2
        else:
            raise ValueError("name must be 'gelu_erf_grad', 'gelu_tanh_grad', 'silu_grad', "
                             f"'quick_gelu_grad' or 'mish_grad', got {name!r}")
    return (np.where(np.isfinite(t1), t1, np.where(np.isnan(x), t1, 0.0)),
            np.where(np.isfinite(t2), t2, 0.0))


def grad_scale(name, x):
    """s = max(|term1|, |term2|) of the derivative ``name`` at x (0 for NaN):
    the magnitude its error is measured in."""
    t1, t2 = grad_terms(name, x)
    return np.nan_to_num(np.fmax(np.abs(t1), np.abs(t2)), nan=0.0)


def _grad_limits(x, r, big=np.inf):
    r = np.where(np.isposinf(x) | (x > big), 1.0, r)
    return np.where(np.isneginf(x) | (x < -big), 0.0, r)


def _ref_grad(name, x, big=np.inf):
    """The sum of the derivative's two terms, with its limits beyond +-big."""
    x = np.asarray(x, dtype=np.float64)
    t1, t2 = grad_terms(name, x)
    return _grad_limits(x, t1 + t2, big)


def ref_gelu_erf_grad(x):
    """Phi(x) + x phi(x) in float64."""
    return _ref_grad("gelu_erf_grad", x)


def ref_gelu_tanh_grad(x):
    """d/dx of tanh GELU in float64."""
    return _ref_grad("gelu_tanh_grad", x, big=1e100)     # x^3 overflows beyond


def ref_relu_grad(x, g=None):
    """0 where x <= 0 else 1; with ``g``: 0 where x <= 0 else g (NaN x: g,
    as torch's threshold_backward)."""
    x = np.asarray(x)
    if g is not None:
        with np.errstate(invalid="ignore"):
            return np.where(x <= 0, 0.0, g)
    return (~(x <= 0)).astype(np.result_type(x.dtype, np.float16))


def ref_silu_grad(x):
    """d/dx x sigmoid(x) in float64."""
    return _ref_grad("silu_grad", x)


def ref_quick_gelu_grad(x):
    """d/dx x sigmoid(1.702 x) in float64."""
    return _ref_grad("quick_gelu_grad", x)


def ref_mish_grad(x):
    """d/dx x tanh(softplus(x)) in float64."""
    return _ref_grad("mish_grad", x)


# op name -> its float64 twin, as the spec names them
REFERENCE = {op.name: globals()[op.reference] for op in _spec.OPS if op.reference}


# ------------------------------------------------------------------ mpmath --

_DPS = 60
_TANH_A_MP = "0.044715"    # exact decimal, as the formula is written


def _mp():
    try:
        import mpmath
    except ImportError as e:
        raise ImportError("the mpmath oracle needs mpmath: pip install 'gelu_ext[test]'") from e
    return mpmath


def _mp_with_limits(x, f, dps=_DPS + 20):
    """An activation as an mpf: f(X) at ``dps`` digits for finite x (X its mpf),
    the limits (NaN, +inf, 0) at NaN and +-inf."""
    mp = _mp()
    x = float(x)
    if math.isnan(x):
        return mp.mpf("nan")
    if math.isinf(x):
        return mp.mpf(x) if x > 0 else mp.mpf(0)
    with mp.workdps(dps):
        return f(mp.mpf(x))


def mp_gelu_erf(x):
    """x Phi(x) as an mpf (NaN for NaN, the limits at +-inf)."""
    return _mp_with_limits(x, lambda X: X * _mp().ncdf(X), _DPS)


def _mp_tanh_w(X):
    mp = _mp()
    return 2 * mp.sqrt(2 / mp.pi) * (X + mp.mpf(_TANH_A_MP) * X ** 3)


def mp_gelu_tanh(x):
    """x/2 (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))) evaluated exactly, as an mpf."""
    # x sigmoid(w): the same value as the tanh formula, without its cancellation
    return _mp_with_limits(x, lambda X: X / (1 + _mp().exp(-_mp_tanh_w(X))))


def _mp_grad(t1, t2):
    """(t1 + t2, max(|t1|, |t2|)): the sum taken at the working precision
    (an mpf sum outside it would round to 53 bits)."""
    mp = _mp()
    with mp.workdps(_DPS):
        return t1 + t2, max(abs(t1), abs(t2))


def mp_gelu_erf_grad(x):
    """(gelu'(x), its scale max(|Phi(x)|, |x phi(x)|)) as mpfs."""
    mp = _mp()
    with mp.workdps(_DPS):
        X = mp.mpf(float(x))
        return _mp_grad(mp.ncdf(X), X * mp.npdf(X))


def mp_gelu_tanh_grad(x):
    """(d/dx gelu_tanh(x), its scale max(|s|, |x s (1-s) w'|)) as mpfs."""
    mp = _mp()
    with mp.workdps(_DPS + 20):
        X = mp.mpf(float(x))
        s = 1 / (1 + mp.exp(-_mp_tanh_w(X)))
        dw = 2 * mp.sqrt(2 / mp.pi) * (1 + 3 * mp.mpf(_TANH_A_MP) * X ** 2)
        return _mp_grad(s, X * s * (1 - s) * dw)


def _mp_sig_c(op):
    mp = _mp()
    return mp.mpf(1) if op == "silu" else mp.mpf("1.702")     # exact decimal


def _mp_xsig(op, x):
    return _mp_with_limits(x, lambda X: X / (1 + _mp().exp(-_mp_sig_c(op) * X)))


def _mp_xsig_grad(op, x):
    mp = _mp()
    with mp.workdps(_DPS + 20):
        X = mp.mpf(float(x))
        c = _mp_sig_c(op)
        s = 1 / (1 + mp.exp(-c * X))
        return _mp_grad(s, X * s * (1 - s) * c)


def mp_silu(x):
    """x sigmoid(x) as an mpf (NaN for NaN, the limits at +-inf)."""
    return _mp_xsig("silu", x)


def mp_quick_gelu(x):
    """x sigmoid(1.702 x) as an mpf, 1.702 exact (NaN for NaN, the limits at +-inf)."""
    return _mp_xsig("quick_gelu", x)


def mp_silu_grad(x):
    """(silu'(x), its scale max(|s|, |x s (1-s)|)), s = sigmoid(x), as mpfs."""
    return _mp_xsig_grad("silu", x)


def mp_quick_gelu_grad(x):
    """(quick_gelu'(x), its scale max(|s|, |1.702 x s (1-s)|)), s = sigmoid(1.702 x)."""
    return _mp_xsig_grad("quick_gelu", x)


def _mp_mish_t(X):
    """tanh(softplus(X)) and sech(softplus(X))^2 = 1 - tanh^2 (no cancellation)."""
    mp = _mp()
    sp = mp.log1p(mp.exp(X))
    return mp.tanh(sp), mp.sech(sp) ** 2


def mp_mish(x):
    """x tanh(log(1 + e^x)) as an mpf (NaN for NaN, the limits at +-inf)."""
    return _mp_with_limits(x, lambda X: X * _mp_mish_t(X)[0])


def mp_mish_grad(x):
    """(mish'(x), its scale max(|t|, |x sigmoid(x) (1-t^2)|)), t = tanh(softplus(x)), as mpfs."""
    mp = _mp()
    with mp.workdps(_DPS + 20):
        X = mp.mpf(float(x))
        t, sech2 = _mp_mish_t(X)
        return _mp_grad(t, X * sech2 / (1 + mp.exp(-X)))


# op name -> its mpmath oracle, as the spec names them
MP_REFERENCE = {op.name: globals()[op.oracle] for op in _spec.OPS if op.oracle}


# -------------------------------------------------------------- assertions --

def _differ(got, want):
    """Elementwise: not the same value and sign (so not the same bits, for
    floats) and not both NaN; complex numbers part by part."""
    if want.dtype.kind == "c":
        return _differ(got.real, want.real) | _differ(got.imag, want.imag)
    if want.dtype.kind != "f" and not _is_bfloat16(want.dtype):
        return got != want
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    return ~(same | (np.isnan(got) & np.isnan(want)))


def assert_same_bits(got, want, what=""):
    """Same dtype, shape and bits, signed zeros included; any NaN matches any
    NaN (payloads are not part of any contract)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    bad = _differ(got, want)
    n = int(np.count_nonzero(bad))
    assert n == 0, f"{what}: {n} of {bad.size} elements differ, first at {np.argwhere(bad)[0]}"


# The float64 twin is good to ~1e-13 relative; float64 results are held to
# it only this loosely (the BOUNDS are checked against mpmath, tests/test_accuracy.py).
TWIN_RTOL = 1e-12
# where the twin underflows or overflows early but the true value is still a
# (subnormal) float64, float64 results are checked against mpmath instead
_TWIN_FAILS = {"gelu_erf": (-40.0, -37.0), "gelu_tanh": (-22.5, -21.0),
               "silu": (-760.0, -700.0), "quick_gelu": (-450.0, -410.0),
               "mish": (-760.0, -700.0)}


def _exact_where_twin_fails(name, x, g, want, scale):
    lo, hi = _TWIN_FAILS[name.replace("_grad", "")]
    tail = (x > lo) & (x < hi)
    if not tail.any():
        return want, scale
    mp = _mp()
    want, scale = np.array(want, dtype=np.float64), np.array(scale, dtype=np.float64)
    for i in map(tuple, np.argwhere(tail)):
        v = MP_REFERENCE[name](float(x[i]))
        with mp.workdps(_DPS):
            if name.endswith("_grad"):
                want[i] = float(v[0] * float(g[i]))
                scale[i] = float(v[1] * abs(float(g[i])))
            else:
                want[i] = float(v)
    return want, scale


def assert_matches_reference(name, got, x, g=None):
    """``got`` is function ``name`` (a base op: gelu_erf, gelu_tanh, relu or a
    ``*_grad``) at ``x``, times ``g`` for derivatives, in ``got``'s dtype.

    ``x`` and ``g`` are the values the kernel saw (x + b rounded to the loop
    dtype for the fused forms).  The spec's exact ops (ReLU and its
    gradient): bit-exact.  float32
    and bfloat16: BOUNDS against the float64 twin.  float16: 1 ULP of the twin
    rounded to float16.  float64: ``TWIN_RTOL`` of max(|value|, s) against the twin
    (mpmath where the twin underflows), plus a few subnormals scaled by g (the
    derivative is rounded to float64 before the product)."""
    got = np.asarray(got)
    dt = got.dtype
    with np.errstate(invalid="ignore"):     # ml_dtypes flags a signalling NaN it widens
        x = np.asarray(x, dtype=np.float64)
    shape = np.broadcast_shapes(x.shape, got.shape, np.shape(g) if g is not None else ())
    assert got.shape == shape, f"{name}: shape {got.shape} != {shape}"
    x = np.broadcast_to(x, shape)
    g = np.broadcast_to(np.asarray(1.0 if g is None else g), shape)
    if _spec.OP[name].exact:
        # correctly rounded: the twin is exact in float64 (or the float64
        # result itself), so rounding it once to got's dtype gives the bits
        with np.errstate(all="ignore"):
            want = REFERENCE[name](x, g.astype(np.float64)) if name.endswith("_grad") else REFERENCE[name](x)
            assert_same_bits(got, np.asarray(want, dtype=np.float64).astype(dt), name)
        return
    with np.errstate(all="ignore"):
        g64 = g.astype(np.float64)
        want = REFERENCE[name](x) * g64
        scale = (grad_scale(name, x) * np.abs(g64) if name.endswith("_grad")
                 else np.zeros(shape))
        if dt == np.float64:
            want, scale = _exact_where_twin_fails(name, x, g64, want, scale)
            allowed = (TWIN_RTOL * np.fmax(np.abs(want), scale)
                       + 64 * 5e-324 * np.maximum(np.abs(g64), 1))
        elif dt == np.float16:
            want = want.astype(dt).astype(np.float64)
            allowed = 1.0 * ulp(np.fmax(np.abs(want), scale), dt)
        else:
            allowed = allowed_error(name, dt, x, want, scale if name.endswith("_grad") else None)
        got64 = got.astype(np.float64)
        err = np.abs(got64 - want)
    nan_w, nan_g = np.isnan(want), np.isnan(got64)
    inf = np.isinf(want) | np.isinf(got64)
    bad = ((nan_w != nan_g) | (inf & ~nan_w & ~nan_g & (got64 != want))
           | (~nan_w & ~nan_g & ~inf & ~(err <= allowed)))
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        raise AssertionError(
            f"{name} {dt}: {int(bad.sum())} of {bad.size} out of bounds; at {i}: x={x[i]!r} "
            f"g={g[i]!r} got {got[i]!r}, expected {want[i]!r} (error {err[i]:.3g}, "
            f"allowed {allowed[i]:.3g})")
