"""The slow twin: what every fast kernel must agree with.

Two levels, both independent of the compiled code:

* ``mp_*``: mpmath at 60 significant digits (the oracle for float64 and for
  ULP measurements).  Per element, slow: use on samples.
* ``ref_*``: float64 NumPy evaluations whose relative error is below 1e-12
  over the whole float32 range (SciPy's ``ndtr`` where SciPy is installed,
  ``math.erfc`` otherwise).  Fast enough for exhaustive float32 checks; far
  too coarse for judging float64 results.

``ulp_error`` turns a result into ULPs of the result's dtype, with the ULP of
subnormals taken as the smallest subnormal, so an early flush to 0 in the tail
shows up as a huge error.
"""
import math

import numpy as np

# ------------------------------------------------------------------ mpmath --

_DPS = 60
_TANH_A = "0.044715"    # exact decimal, as the formula is written


def _mp():
    try:
        import mpmath
    except ImportError as e:   # pragma: no cover - mpmath is a test dependency
        raise ImportError("the mpmath oracle needs mpmath: pip install 'gelu_ext[test]'") from e
    return mpmath


def _mp_gelu_limit(x):
    """The GELU forms at NaN and +-inf (NaN, +inf, 0) as an mpf; None otherwise."""
    mp = _mp()
    if math.isnan(x):
        return mp.mpf("nan")
    if math.isinf(x):
        return mp.mpf(x) if x > 0 else mp.mpf(0)
    return None


def mp_phi(x):
    """Standard normal CDF Phi(x) as an mpf."""
    mp = _mp()
    with mp.workdps(_DPS):
        return mp.ncdf(mp.mpf(float(x)))


def mp_gelu_erf(x):
    """x * Phi(x) as an mpf (float('nan') for NaN, limits at +-inf)."""
    mp = _mp()
    x = float(x)
    limit = _mp_gelu_limit(x)
    if limit is not None:
        return limit
    with mp.workdps(_DPS):
        X = mp.mpf(x)
        return X * mp.ncdf(X)


def _mp_tanh_w(X):
    mp = _mp()
    return 2 * mp.sqrt(2 / mp.pi) * (X + mp.mpf(_TANH_A) * X ** 3)


def mp_gelu_tanh(x):
    """x/2 (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))) evaluated exactly, as an mpf."""
    mp = _mp()
    x = float(x)
    limit = _mp_gelu_limit(x)
    if limit is not None:
        return limit
    with mp.workdps(_DPS + 20):
        X = mp.mpf(x)
        # x * sigmoid(w): the same value as the tanh form, without cancellation
        return X / (1 + mp.exp(-_mp_tanh_w(X)))


def mp_gelu_erf_grad_terms(x):
    """(Phi(x), x phi(x)) as mpfs: gelu'(x) is their sum."""
    mp = _mp()
    with mp.workdps(_DPS):
        X = mp.mpf(float(x))
        return mp.ncdf(X), X * mp.npdf(X)


def mp_gelu_tanh_grad_terms(x):
    """(s, x s (1-s) w') with s = sigmoid(w): the tanh-GELU derivative's two terms."""
    mp = _mp()
    with mp.workdps(_DPS + 20):
        X = mp.mpf(float(x))
        w = _mp_tanh_w(X)
        s = 1 / (1 + mp.exp(-w))
        dw = 2 * mp.sqrt(2 / mp.pi) * (1 + 3 * mp.mpf(_TANH_A) * X ** 2)
        return s, X * s * (1 - s) * dw


def mp_gelu_erf_grad(x):
    """(gelu'(x), max(|Phi(x)|, |x phi(x)|)) as mpfs; the sum is taken at the
    working precision (an mpf sum outside it would round to 53 bits)."""
    mp = _mp()
    with mp.workdps(_DPS):
        a, b = mp_gelu_erf_grad_terms(x)
        return a + b, max(abs(a), abs(b))


def mp_gelu_tanh_grad(x):
    """(d/dx gelu_tanh(x), the larger of its two terms) as mpfs."""
    mp = _mp()
    with mp.workdps(_DPS):
        a, b = mp_gelu_tanh_grad_terms(x)
        return a + b, max(abs(a), abs(b))


def ulp_of(value, dtype):
    """The ULP of ``value`` (an mpf or float) in ``dtype``, subnormals included."""
    dtype = np.dtype(dtype)
    fi = np.finfo(dtype)
    a = abs(float(value))
    tiny = float(fi.smallest_subnormal)
    if a == 0.0 or a < float(fi.smallest_normal):
        return tiny
    if math.isinf(a):
        return float(np.spacing(fi.max))
    e = math.frexp(a)[1] - 1                   # a in [2^e, 2^(e+1))
    return math.ldexp(1.0, e - (fi.nmant))


def ulp_error(got, exact, dtype, scale=None):
    """|got - exact| in ULPs of ``dtype`` at ``exact`` (or at ``scale``).

    ``scale`` lets a bound be stated relative to another magnitude (for the
    derivative, ULP(max(|Phi|, |x phi|)) where the sum crosses zero)."""
    mp = _mp()
    got = float(got)
    if math.isnan(got) or mp.isnan(exact):
        return 0.0 if (math.isnan(got) and mp.isnan(exact)) else math.inf
    if math.isinf(got) or mp.isinf(exact):
        return 0.0 if got == exact else math.inf
    with mp.workdps(_DPS):
        err = abs(mp.mpf(got) - exact)
        return float(err / mp.mpf(ulp_of(exact if scale is None else scale, dtype)))


# ------------------------------------------------------- float64 NumPy twin --

def _erfc(z):
    try:
        from scipy.special import erfc
        return erfc(z)
    except ImportError:
        return np.vectorize(math.erfc, otypes=[np.float64])(z)


def _ndtr(x):
    """Phi(x) in float64 to ~1e-13 relative for x > -37 (erfc of a rounded
    argument: the rounding is amplified ~x^2 times, harmless at this level)."""
    try:
        from scipy.special import ndtr
        return ndtr(x)
    except ImportError:
        return 0.5 * _erfc(-x / math.sqrt(2.0))


def _gelu_limits(x, r):
    """The GELU forms' limits: -inf -> -0.0, +inf -> +inf."""
    r = np.where(np.isneginf(x), -0.0, r)
    return np.where(np.isposinf(x), np.inf, r)


def ref_gelu_erf(x):
    """x * Phi(x) in float64 (the fast float32 oracle)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return _gelu_limits(x, x * _ndtr(x))


def _sigmoid_w(x):
    """sigmoid(2u) for the tanh form, in float64, without cancellation."""
    with np.errstate(over="ignore", invalid="ignore"):
        w = 2.0 * math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)
        return 1.0 / (1.0 + np.exp(-w))


def ref_gelu_tanh(x):
    """x * sigmoid(2u) in float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return _gelu_limits(x, x * _sigmoid_w(x))


def ref_relu(x):
    """max(x, 0) with NaN kept and -0.0 -> 0.0."""
    x = np.asarray(x)
    return np.where(np.isnan(x), x, np.where(x > 0, x, np.zeros_like(x)))


def ref_gelu_erf_grad(x):
    """Phi(x) + x phi(x) in float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        r = _ndtr(x) + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    r = np.where(np.isposinf(x), 1.0, r)
    return np.where(np.isneginf(x), 0.0, r)


def ref_gelu_tanh_grad(x):
    """d/dx of the tanh form in float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        s = _sigmoid_w(x)
        dw = 2.0 * math.sqrt(2.0 / math.pi) * (1.0 + 3.0 * 0.044715 * x * x)
        r = s + x * s * (1.0 - s) * dw
    r = np.where(np.isposinf(x) | (x > 1e100), 1.0, r)
    return np.where(np.isneginf(x) | (x < -1e100), 0.0, r)


def ref_relu_grad(x):
    """1 where x > 0 else 0."""
    x = np.asarray(x)
    return (x > 0).astype(np.result_type(x.dtype, np.float16))


# --------------------------------------------------- vectorised ULP errors --

def ulp_error_vec(got, ref, dtype):
    """Elementwise |got - ref| in ULPs of ``dtype`` at ``ref``.

    ``ref`` is a float64 array at least ~1e5 times more accurate than a ULP of
    ``dtype`` (so this is meant for float32/float16 results against the
    ``ref_*`` twins).  NaN vs NaN and equal infinities count as 0; a NaN or
    inf where the other side is finite counts as inf."""
    dtype = np.dtype(dtype)
    fi = np.finfo(dtype)
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        _, e = np.frexp(ref)                       # |ref| in [2^(e-1), 2^e)
        ulp = np.ldexp(1.0, e - 1 - fi.nmant)
        ulp = np.maximum(ulp, float(fi.smallest_subnormal))
        err = np.abs(got - ref) / ulp
    both_nan = np.isnan(got) & np.isnan(ref)
    same_inf = np.isinf(got) & (got == ref)
    err = np.where(both_nan | same_inf, 0.0, err)
    return np.where(np.isnan(err), np.inf, err)
