"""Gradients: fast_gelu_grad and relu_grad.

Checked three independent ways: against the float64 twin, against central
finite differences of fast_gelu itself, and (where torch is installed)
against PyTorch autograd for both approximations.
"""
import numpy as np
import pytest

from gelu_ext import fast_gelu, fast_gelu_grad, relu, relu_grad
from gelu_ext import testing
from gelu_ext.testing import assert_same_bits
from helpers import FLOAT_DTYPES, SPECS_BY_NAME, assert_close_to_reference, dtype_id

MODES = ["none", "tanh"]
GRAD = {"none": "gelu_erf_grad", "tanh": "gelu_tanh_grad"}
ZERO_CROSSING = -0.7518     # gelu'(x) = 0 here (both forms, to 1e-3)


def bulk(n=4001, dt=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    x = np.concatenate([np.linspace(-6, 6, n), rng.uniform(-6, 6, n),
                        ZERO_CROSSING + rng.normal(0, 1e-3, 64)])
    return x.astype(dt)


# ------------------------------------------------------------ reference --

@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("mode", MODES)
def test_grad_matches_reference(mode, dt):
    x = bulk(dt=dt)
    assert_close_to_reference(SPECS_BY_NAME[GRAD[mode]], fast_gelu_grad(x, approximate=mode),
                              [x, np.ones_like(x)])


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("mode", MODES)
def test_grad_times_upstream_matches_reference(mode, dt):
    x = bulk(dt=dt)
    g = np.random.default_rng(1).uniform(-3, 3, x.size).astype(dt)
    assert_close_to_reference(SPECS_BY_NAME[GRAD[mode]], fast_gelu_grad(x, g, mode), [x, g])


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
def test_relu_grad_matches_reference(dt):
    x = bulk(dt=dt)
    g = np.random.default_rng(2).uniform(-3, 3, x.size).astype(dt)
    assert_close_to_reference(SPECS_BY_NAME["relu_grad"], relu_grad(x, g), [x, g])


# ------------------------------------------------- finite differences --

@pytest.mark.parametrize("mode", MODES)
def test_grad_matches_central_differences(mode):
    x = bulk(2001)
    # h ~ eps^(1/3) balances the h^2 truncation against rounding of f: the
    # difference quotient is good to ~1e-10 here; a wrong derivative is off
    # by far more (e.g. dropping the x phi(x) term changes it by up to 0.24)
    h = 2.0 ** -17
    fd = (fast_gelu(x + h, mode) - fast_gelu(x - h, mode)) / (2 * h)
    np.testing.assert_allclose(fast_gelu_grad(x, approximate=mode), fd, rtol=0, atol=1e-9)


@pytest.mark.parametrize("mode", MODES)
def test_grad_is_one_half_at_zero(mode):
    assert fast_gelu_grad(0.0, approximate=mode) == 0.5


@pytest.mark.parametrize("mode", MODES)
def test_grad_crosses_zero_where_gelu_has_its_minimum(mode):
    x = np.linspace(-0.80, -0.70, 10_001)
    g = fast_gelu_grad(x, approximate=mode)
    assert g[0] < 0 < g[-1]
    assert x[np.argmin(np.abs(g))] == pytest.approx(ZERO_CROSSING, abs=2e-3)


def test_relu_grad_matches_central_differences_away_from_zero():
    x = bulk(2001)
    x = x[np.abs(x) > 1e-3]
    h = 1e-4
    fd = (relu(x + h) - relu(x - h)) / (2 * h)
    np.testing.assert_allclose(relu_grad(x), fd, rtol=0, atol=1e-9)


# ------------------------------------------------------- grad argument --

@pytest.mark.parametrize("k", [-3, -1, 1, 4], ids=lambda k: f"2**{k}")
@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("mode", MODES)
def test_power_of_two_grad_scales_exactly(mode, dt, k):
    x = bulk(dt=dt)
    # keep results that stay normal after scaling: scaling by 2**k is then
    # exact in any correctly written kernel, whatever order it multiplies in
    tiny = float(np.finfo(dt).smallest_normal) * 2.0 ** 4
    x = x[np.abs(fast_gelu_grad(x.astype(np.float64), approximate=mode)) > tiny]
    assert_same_bits(fast_gelu_grad(x, dt(2.0 ** k), mode),
                     (fast_gelu_grad(x, approximate=mode) * dt(2.0 ** k)).astype(dt))


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("mode", MODES)
def test_negated_grad_negates(mode, dt):
    x = bulk(dt=dt)
    g = np.random.default_rng(3).uniform(0.1, 3, x.size).astype(dt)
    assert_same_bits(fast_gelu_grad(x, -g, mode), -fast_gelu_grad(x, g, mode))


@pytest.mark.parametrize("mode", MODES)
def test_zero_grad_gives_zero(mode):
    x = bulk()
    assert np.all(fast_gelu_grad(x, 0.0, mode) == 0)


@pytest.mark.parametrize("mode", MODES)
def test_grad_broadcasts_against_x(mode):
    x = np.linspace(-3, 3, 12).reshape(3, 4)
    g = np.array([1.0, -2.0, 0.5, 4.0])
    got = fast_gelu_grad(x, g, mode)
    assert got.shape == (3, 4)
    assert_same_bits(got, fast_gelu_grad(x, np.broadcast_to(g, (3, 4)).copy(), mode))


def test_grad_shape_mismatch_raises():
    with pytest.raises(ValueError, match=r"operands could not be broadcast together with shapes \(5,\) \(4,\)"):
        fast_gelu_grad(np.ones(5), np.ones(4))


# ---------------------------------------------------------------- bias --

BIAS_SHAPES = {"features": (5,), "column": (4, 1), "scalar": (), "full": (4, 5)}


@pytest.mark.parametrize("bias_shape", list(BIAS_SHAPES))
@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("mode", MODES)
def test_grad_bias_broadcasts_and_equals_unfused(mode, dt, bias_shape):
    rng = np.random.default_rng(4)
    x = rng.uniform(-4, 4, (4, 5)).astype(dt)
    g = rng.uniform(-2, 2, (4, 5)).astype(dt)
    b = np.asarray(rng.uniform(-1, 1, BIAS_SHAPES[bias_shape])).astype(dt)
    assert_same_bits(fast_gelu_grad(x, g, mode, bias=b), fast_gelu_grad(x + b, g, mode))


@pytest.mark.parametrize("bias_shape", list(BIAS_SHAPES))
@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("mode", MODES)
def test_forward_bias_broadcasts_and_equals_unfused(mode, dt, bias_shape):
    rng = np.random.default_rng(5)
    x = rng.uniform(-4, 4, (4, 5)).astype(dt)
    b = np.asarray(rng.uniform(-1, 1, BIAS_SHAPES[bias_shape])).astype(dt)
    assert_same_bits(fast_gelu(x, mode, bias=b), fast_gelu(x + b, mode))


@pytest.mark.parametrize("mode", MODES)
def test_grad_bias_without_grad_is_the_derivative_at_x_plus_b(mode):
    x = np.linspace(-3, 3, 13)
    assert_same_bits(fast_gelu_grad(x, approximate=mode, bias=0.25),
                     fast_gelu_grad(x + 0.25, approximate=mode))


def test_bias_shape_mismatch_raises():
    with pytest.raises(ValueError, match=r"operands could not be broadcast together"):
        fast_gelu(np.ones((4, 5)), bias=np.ones(4))


# ---------------------------------------------------------------- relu --

@pytest.mark.parametrize("x, want", [(0.0, 0.0), (-0.0, 0.0), (1e-300, 3.0), (-1e-300, 0.0),
                                     (np.nan, 3.0), (np.inf, 3.0), (-np.inf, 0.0)],
                         ids=["0", "-0", "tiny", "-tiny", "nan", "inf", "-inf"])
def test_relu_grad_points(x, want):
    assert relu_grad(np.array([x]), np.array([3.0]))[0] == want


def test_relu_grad_without_grad_is_the_step():
    x = np.array([-2.0, -0.0, 0.0, 0.5, 7.0])
    np.testing.assert_array_equal(relu_grad(x), [0, 0, 0, 1, 1])


# --------------------------------------------------------------- torch --

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def torch_grad(torch, x, g, mode):
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y = torch.nn.functional.gelu(xt, approximate=mode)
    y.backward(torch.tensor(g, dtype=torch.float64))
    return xt.grad.numpy()


@pytest.mark.parametrize("mode", MODES)
def test_grad_matches_torch_autograd(torch, mode):
    x = bulk()
    g = np.random.default_rng(6).uniform(-2, 2, x.size)
    want = torch_grad(torch, x, g, mode)
    # 1e-12 relative, plus an absolute term for torch's own
    # rounding: for x < 0 it computes 0.5 (1 + erf), 0.5 (1 + tanh) and
    # 1 - tanh^2, which cancel to an absolute error of a few eps times its
    # largest intermediate, 1 + |x| u'(x) (2e-6 relative at x = -6, measured);
    # near the zero crossing x ~ -0.7518 only an absolute bound makes sense
    # anyway.  test_accuracy.py holds the tail to ULP bounds against mpmath.
    err = np.abs(fast_gelu_grad(x, g, mode) - want)
    du = np.sqrt(2 / np.pi) * (1 + 3 * 0.044715 * x * x)
    bound = 1e-12 * np.abs(want) + 4 * np.finfo(np.float64).eps * (1 + np.abs(x) * du) * np.abs(g)
    assert np.all(err <= bound), f"max excess at x={x[np.argmax(err - bound)]}"


def test_relu_grad_matches_torch_autograd(torch):
    x = np.concatenate([bulk(201), [0.0, -0.0]])
    xt = torch.tensor(x, requires_grad=True)
    torch.relu(xt).backward(torch.ones_like(xt))
    np.testing.assert_array_equal(relu_grad(x), xt.grad.numpy())


# Where gelu'(x) alone underflows float32, a huge upstream grad brings the
# product back into range: the derivative must not be clamped there (at
# x = -14 with grad = 8.5e37 the product is about 1e-54 * 8.5e37).
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("x", [-12.5, -14.0, -17.03125, -19.75, -21.0, -23.5])
def test_float32_tail_derivative_times_huge_grad(approximate, x):
    import mpmath
    g = np.float32(8.5e37)
    d, _ = testing.MP_REFERENCE[GRAD[approximate]](x)
    with mpmath.workdps(60):
        want = np.float32(float(d * mpmath.mpf(float(g))))
    got = fast_gelu_grad(np.float32(x), g, approximate)
    assert abs(float(got) - float(want)) <= 2 * float(np.spacing(np.abs(want))), (got, want)
