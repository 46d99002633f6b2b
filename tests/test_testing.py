"""gelu_ext.testing, the public accuracy contract: its ULP, error, bound and
comparison helpers do what their docstrings say."""
import math

import numpy as np
import pytest

from gelu_ext import testing
from opinfo import ORACLED

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_ulp_is_numpy_spacing_for_normals_and_the_subnormal_step_below(dt):
    fi = np.finfo(dt)
    below_max = float(np.nextafter(fi.max, dt(0)))       # (np.spacing(max) overflows)
    v = np.array([1.0, 1.5, 2.0, 3.0, 1e-3, float(fi.smallest_normal), below_max])
    want = np.spacing(v.astype(dt)).astype(np.float64)
    np.testing.assert_array_equal(testing.ulp(v, dt), want)
    tiny = [0.0, float(fi.smallest_subnormal), float(fi.smallest_normal) / 2]
    np.testing.assert_array_equal(testing.ulp(tiny, dt), float(fi.smallest_subnormal))
    assert testing.ulp(np.inf, dt) == testing.ulp(below_max, dt)
    assert testing.ulp(-2.0, dt).shape == ()


def test_ulp_error_counts_ulps_of_the_exact_value_or_of_the_scale():
    one = float(np.spacing(np.float32(1.0)))
    assert testing.ulp_error(1.0 + one, 1.0, F32) == 1.0
    assert testing.ulp_error(1.0 + one, 1.0, F32, scale=4.0) == 0.25
    assert testing.ulp_error(np.nan, np.nan, F32) == 0.0
    assert testing.ulp_error(np.inf, np.inf, F32) == 0.0
    assert testing.ulp_error(0.0, np.nan, F32) == math.inf
    assert testing.ulp_error(1.0, np.inf, F32) == math.inf


def test_ulp_error_keeps_an_mpmath_value_beyond_float64():
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        exact = mpmath.mpf(1) + mpmath.mpf(2) ** -54       # a quarter ULP above 1.0
    assert testing.ulp_error(1.0, exact, F64) == pytest.approx(0.25)
    assert testing.ulp_error(1.0, float(exact), F64) == 0.0   # rounded to a float first: lost


def test_grad_scale_is_the_larger_term():
    x = np.array([-0.7518, 0.0, 1.0, -3.0])
    for name in [o.name for o in ORACLED if o.is_grad]:     # the derivatives measured in ULP(s)
        t1, t2 = testing.grad_terms(name, x)
        np.testing.assert_allclose(t1 + t2, testing.REFERENCE[name](x), rtol=1e-15, atol=1e-17)
        np.testing.assert_array_equal(testing.grad_scale(name, x), np.fmax(abs(t1), abs(t2)))
    assert testing.grad_scale("gelu_erf_grad", np.nan) == 0.0
    with pytest.raises(ValueError, match="name must be 'gelu_erf_grad', 'gelu_tanh_grad', 'silu_grad', "
                                         "'quick_gelu_grad' or 'mish_grad', got 'relu'"):
        testing.grad_terms("relu", x)


# the x sigmoid(kx) family by hand: the twins share one implementation of it
SIGMOID_FAMILY = ["silu", "quick_gelu", "silu_grad", "quick_gelu_grad"]


@pytest.mark.parametrize("name", SIGMOID_FAMILY)
def test_sigmoid_family_twin_agrees_with_mpmath(name):
    """The float64 twin of x sigmoid(kx) (and its derivative) against the
    mpmath oracle, bulk and tails (outside the range where exp(kx) is
    subnormal, which assert_matches_reference hands to mpmath), to 1e-13 of
    max(|value|, s): it is the float32 oracle, so it must be far finer than a
    float32 ULP."""
    pytest.importorskip("mpmath")
    x = np.concatenate([np.linspace(-30, 30, 121), -np.logspace(-300, 2.6, 40),
                        np.logspace(-300, 2.6, 40)])
    twin = testing.REFERENCE[name](x)
    for xi, t in zip(x, twin):
        v = testing.MP_REFERENCE[name](float(xi))
        exact, scale = (float(v[0]), float(v[1])) if isinstance(v, tuple) else (float(v), 0.0)
        assert abs(t - exact) <= 1e-13 * max(abs(exact), scale) + 1e-320, (name, xi, t, exact)


@pytest.mark.parametrize("name, x0", [("silu_grad", -1.2785), ("quick_gelu_grad", -1.2785 / 1.702)])
def test_sigmoid_family_grad_crosses_zero_where_the_terms_cancel(name, x0):
    # SiLU' = 0 at x ~ -1.2785, quick-GELU' at x ~ -0.7512: there only the
    # scale (the larger term) gives the error a meaning
    t1, t2 = testing.grad_terms(name, np.array([x0]))
    assert abs(t1 + t2)[0] < 1e-4 * abs(t1)[0]
    assert testing.grad_scale(name, np.array([x0]))[0] == max(abs(t1[0]), abs(t2[0]))


def test_bounds_cover_every_function_and_float_dtype():
    for name in testing.REFERENCE:
        for dt in ("float16", "float32", "float64"):
            regions = [r for (n, d, r) in testing.BOUNDS if (n, d) == (name, dt)]
            assert sorted(regions) in (["all"], ["bulk", "tail"]), (name, dt, regions)


def test_bound_lookup():
    assert testing.bound("gelu_tanh_grad", F32, "bulk") == testing.Bound(2, "ULP(s)")
    assert testing.bound("gelu_erf", F32, "tail") == testing.bound("gelu_erf", F32)
    with pytest.raises(KeyError, match="no bound for 'gelu_tanh', float32, region 'all'"):
        testing.bound("gelu_tanh", F32)


def test_allowed_error_switches_to_the_relative_bound_in_the_tail():
    x = np.array([-4.0, -6.0])
    exact = testing.ref_gelu_tanh(x)
    allowed = testing.allowed_error("gelu_tanh", F32, x, exact)
    assert allowed[0] == 2 * testing.ulp(exact[0], F32)
    assert allowed[1] == pytest.approx(1e-5 * abs(exact[1]))


def test_assert_same_bits_tells_signed_zeros_apart_but_not_nan_payloads():
    testing.assert_same_bits(np.array([np.nan, 0.0]), np.array([-np.nan, 0.0]))
    with pytest.raises(AssertionError, match="1 of 1 elements differ"):
        testing.assert_same_bits(np.array([0.0]), np.array([-0.0]))
    with pytest.raises(AssertionError, match="dtype float32 != float64"):
        testing.assert_same_bits(np.zeros(1, np.float32), np.zeros(1))


def test_assert_matches_reference_holds_float32_to_the_bound():
    x = np.linspace(-3, 3, 101).astype(np.float32)
    exact = testing.ref_gelu_erf(x)
    testing.assert_matches_reference("gelu_erf", exact.astype(np.float32), x)
    off = (exact * (1 + 4e-7)).astype(np.float32)             # ~3 ULP off
    with pytest.raises(AssertionError, match="gelu_erf float32: .* out of bounds"):
        testing.assert_matches_reference("gelu_erf", off, x)
