"""The rest of the family: SiLU, quick-GELU, the gated SwiGLU and
GEGLU, their gradients, and ``activation(name)`` for Hugging Face configs.

* Values against the mpmath oracle (gelu_ext.testing: x sigmoid(kx) at 60
  digits, 1.702 exact) at a few hundred points per dtype -- bulk, |x| from the
  smallest subnormal to the overflow of exp, the tail where results are
  subnormal, SiLU's zero crossing -- within gelu_ext.testing.BOUNDS, on every
  ISA path; a dense float32 sweep against the float64 twin.
* No floating-point warning for any finite input (special values: test_api.py).
* The gated forms are bit-identical to their composed NumPy definitions
  (forward and gradients), broadcast like binary ufuncs, and work on the two
  halves of a concatenated projection as views; a LLaMA-style FFN.
* PyTorch and transformers, when installed, agree within their own (looser)
  accuracy.
"""
import functools
import math
import re
import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest

import gelu_ext
from gelu_ext import activation, quick_gelu, quick_gelu_grad, silu, silu_grad, swiglu, testing
from gelu_ext import _spec
from helpers import FLOAT_DTYPES, dtype_id
from opinfo import OPINFO, OPINFOS, ids

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
K = 1.702          # quick_gelu's slope, exact as a real number in the oracle

# name -> (the function, its k in x sigmoid(kx), is it a derivative): the
# sigmoid family by hand, as its slope k is in the C formula, not the spec
FUNCS = {
    "silu": (silu, 1.0, False),
    "quick_gelu": (quick_gelu, K, False),
    "silu_grad": (silu_grad, 1.0, True),
    "quick_gelu_grad": (quick_gelu_grad, K, True),
}
NAMES = list(FUNCS)


# -------------------------------------------------------- mpmath values --

def points(name, dtype):
    """A few hundred inputs of ``dtype``: bulk, |x| log-spaced from the
    smallest subnormal to where exp(k x) underflows, both signs, the tail
    where x sigmoid(kx) is subnormal, and the zero crossing of the derivative."""
    k = FUNCS[name][1]
    fi = np.finfo(dtype)
    rng = np.random.default_rng(13)
    big = -math.log(float(fi.smallest_subnormal)) / k        # exp(-k big) underflows
    logs = np.logspace(math.log10(float(fi.smallest_subnormal)), math.log10(big), 80)
    # x e^(kx) subnormal: kx from about ln(tiny) - ln|x| down to underflow
    lo_sub = (math.log(float(fi.smallest_subnormal)) - math.log(big)) / k
    hi_sub = (math.log(float(fi.smallest_normal)) - math.log(big / 3)) / k
    x = np.concatenate([
        rng.uniform(-12.0, 12.0, 160), logs, -logs, rng.uniform(lo_sub, hi_sub, 60),
        [-1.2785 / k, -1.2784 / k, 0.0, -0.0, 1.0, -1.0, float(fi.smallest_subnormal),
         -float(fi.smallest_subnormal), float(fi.smallest_normal), -float(fi.smallest_normal)],
    ])
    return np.unique(x.astype(dtype))


@functools.lru_cache(maxsize=None)
def mp_case(name, dtype_name):
    """(x, exact as mpf objects, scale as mpf objects or None) from mpmath."""
    pytest.importorskip("mpmath")
    x = points(name, np.dtype(dtype_name))
    vals = [testing.MP_REFERENCE[name](float(v)) for v in x]
    if FUNCS[name][2]:
        exact = np.array([v[0] for v in vals], dtype=object)
        scale = np.array([v[1] for v in vals], dtype=object)
        return x, exact, scale
    return x, np.array(vals, dtype=object), None


def call(name, x):
    fn, _, grad = FUNCS[name]
    return fn(x)            # derivatives: grad=None gives the derivative itself


@pytest.mark.parametrize("dt", [F32, F64], ids=dtype_id)
@pytest.mark.parametrize("name", NAMES)
def test_within_bound_of_mpmath(name, dt, isa):
    x, exact, scale = mp_case(name, dt.name)
    got = call(name, x)
    assert got.dtype == dt
    err = testing.ulp_error(got, exact, dt, scale)
    b = testing.bound(name, dt)
    worst = int(np.argmax(err))
    assert err.max() <= b.value, (f"{name} {dt} on {isa}: {err.max():.3g} {b.unit} at "
                                  f"x={float(x[worst])!r}, got {float(got[worst])!r}, "
                                  f"exact {float(exact[worst])!r}; bound {b.value}")


@pytest.mark.parametrize("name", NAMES)
def test_float32_dense_sweep_against_the_twin(name, isa):
    """10^5 float32 points over the whole range where the result is not 0 or
    x, against the float64 twin (1e5 times finer than a float32 ULP)."""
    k = FUNCS[name][1]
    x = np.concatenate([np.linspace(-110 / k, 20, 80_001, dtype=np.float32),
                        np.linspace(-1, 1, 20_001, dtype=np.float32)])
    x64 = x.astype(np.float64)
    scale = testing.grad_scale(name, x64) if FUNCS[name][2] else None
    err = testing.ulp_error(call(name, x), testing.REFERENCE[name](x64), F32, scale)
    assert err.max() <= testing.bound(name, F32).value, (name, err.max(), x[np.argmax(err)])


@pytest.mark.parametrize("name", ["silu", "quick_gelu"])
def test_float32_subnormal_results_are_not_flushed(name):
    k = FUNCS[name][1]
    x = np.linspace(-108 / k, -85 / k, 20_001, dtype=np.float32)
    exact = testing.REFERENCE[name](x.astype(np.float64))
    tiny = float(np.finfo(np.float32).smallest_normal)
    sub = (np.abs(exact) < tiny) & (np.abs(exact) > float(np.finfo(np.float32).smallest_subnormal))
    assert sub.sum() > 1000                       # the range really holds subnormal results
    got = call(name, x[sub])
    assert np.all(got != 0)
    assert testing.ulp_error(got, exact[sub], F32).max() <= 1


@pytest.mark.parametrize("name", ["silu_grad", "quick_gelu_grad"])
def test_gradient_times_grad_is_within_bound(name):
    """With an upstream gradient: silu'(x) * g, within the bound scaled by |g|."""
    rng = np.random.default_rng(5)
    for dt in (F32, F64):
        x = rng.uniform(-20, 20, 5000).astype(dt)
        g = rng.standard_normal(5000).astype(dt)
        testing.assert_matches_reference(name, FUNCS[name][0](x, g), x, g)


# ------------------------------------------------------- special values --
# The special values of silu, quick_gelu and their derivatives are in
# tests/test_api.py's table, with exact and tanh GELU's.

@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("name", NAMES)
def test_no_floating_point_warning_for_any_finite_input(name, dt):
    fi = np.finfo(dt)
    mags = [float(fi.max), float(fi.max) / 2, 1e38 if dt != np.float16 else 6e4, 1e4, 745.0,
            89.0, 1.0, float(fi.smallest_normal), float(fi.smallest_subnormal)]
    x = np.array(mags + [-m for m in mags], dtype=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            got = call(name, x)
    assert np.all(np.isfinite(got))


# ------------------------------------------------------------- PyTorch --

def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("dt, rtol", [(np.float32, 2e-6), (np.float64, 1e-13)],
                         ids=["float32", "float64"])
def test_silu_matches_torch(dt, rtol):
    torch = _torch()
    x = np.linspace(-30, 30, 6001, dtype=dt)
    t = torch.from_numpy(x)
    np.testing.assert_allclose(silu(x), torch.nn.functional.silu(t).numpy(), rtol=rtol, atol=1e-30)
    g = np.cos(x)
    want = torch.ops.aten.silu_backward(torch.from_numpy(g), t).numpy()
    np.testing.assert_allclose(silu_grad(x, g), want, rtol=rtol, atol=rtol * 1e-3)


# torch rounds 1.702 to the tensor's dtype (1.3e-8 relative in float32), an
# error the tail amplifies by |1.702 x|: 2.3e-6 relative at x = -20
@pytest.mark.parametrize("dt, rtol", [(np.float32, 1e-5), (np.float64, 1e-13)],
                         ids=["float32", "float64"])
def test_quick_gelu_matches_torch(dt, rtol):
    torch = _torch()
    x = np.linspace(-20, 20, 4001, dtype=dt)
    t = torch.from_numpy(x).requires_grad_()
    y = t * torch.sigmoid(1.702 * t)              # transformers' QuickGELUActivation
    y.sum().backward()
    np.testing.assert_allclose(quick_gelu(x), y.detach().numpy(), rtol=rtol, atol=1e-30)
    np.testing.assert_allclose(quick_gelu_grad(x), t.grad.numpy(), rtol=rtol, atol=rtol * 1e-3)


def test_gated_gradients_match_torch_autograd():
    torch = _torch()
    rng = np.random.default_rng(2)
    gate, up, grad = (rng.standard_normal((16, 32)) * 3 for _ in range(3))
    from gelu_ext.torch import _formulas
    for name, rec in GATED.items():         # against torch's own formula of the op
        ours = rec.grad
        theirs = (lambda g, u, f=_formulas.TORCH_FORMULAS[rec.op], e=rec.extra: f(g, u, *e))
        tg, tu = (torch.from_numpy(a.copy()).requires_grad_() for a in (gate, up))
        theirs(tg, tu).backward(torch.from_numpy(grad))
        d_gate, d_up = ours(gate, up, grad)
        # atol: torch's GELU backward returns 0 below x ~ -10, where ours is ~1e-14
        np.testing.assert_allclose(d_gate, tg.grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(d_up, tu.grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)


# ------------------------------------------------------------ swiglu / geglu --

def _gated_inputs(dt, shape=(64, 48), seed=0):
    rng = np.random.default_rng(seed)
    gate = (rng.standard_normal(shape) * 4).astype(dt)
    up = rng.standard_normal(shape).astype(dt)
    grad = rng.standard_normal(shape).astype(dt)
    # tails, specials and zeros, in gate and in up
    gate.flat[:12] = [-np.inf, np.inf, np.nan, 0.0, -0.0, -100.0, 100.0, -20.0, 1e-30, -1e-30,
                      np.finfo(dt).max, -np.finfo(dt).max]
    up.flat[12:16] = [0.0, -0.0, np.inf, np.nan]
    return gate, up, grad


class Gated(NamedTuple):
    """A gated op of the spec in one mode, through the public functions: the
    fused forward and gradient, and their definitions composed of the base
    op's ufuncs and np.multiply."""
    op: str                     # the torch op of the same name
    extra: tuple                # its approximate argument, if any
    fused: Callable             # (gate, up) -> act(gate) * up
    composed: Callable
    grad: Callable              # (gate, up, grad, **kw) -> (d_gate, d_up)
    grad_composed: Callable


def _gated():
    for t in _spec.TORCH_OPS:
        if t.kind != "gate" or not t.grad:
            continue
        fwd, grad = getattr(gelu_ext, t.name), getattr(gelu_ext, t.grad)
        for mode in (("none", "tanh") if t.has_approximate else (None,)):
            extra = () if mode is None else (mode,)
            act = OPINFO[OPINFO[t.ufunc(mode)].base]
            act_grad = OPINFO[act.grad]
            yield t.name + ("_tanh" if mode == "tanh" else ""), Gated(
                t.name, extra,
                lambda g, u, f=fwd, e=extra: f(g, u, *e),
                lambda g, u, a=act: np.multiply(a.ufunc(g), u),
                lambda g, u, d, f=grad, e=extra, **kw: f(g, u, d, *e, **kw),
                lambda g, u, d, a=act, ag=act_grad: (ag.ufunc(g, np.multiply(u, d)),
                                                     np.multiply(a.ufunc(g), d)))


# id ("swiglu", "geglu", "geglu_tanh") -> its record, for every gated op of the spec
GATED = dict(_gated())
GATED_FORWARD = [getattr(gelu_ext, t.name) for t in _spec.TORCH_OPS if t.kind == "gate" and t.grad]


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=dtype_id)
@pytest.mark.parametrize("op", list(GATED))
def test_gated_is_bit_identical_to_the_composed_ops(op, dt):
    gate, up, _ = _gated_inputs(dt)
    fused, composed = GATED[op].fused, GATED[op].composed
    with np.errstate(invalid="ignore"):               # inf * 0 in the composed ops
        want = composed(gate, up)
        got = fused(gate, up)
    testing.assert_same_bits(got, want, op)


@pytest.mark.parametrize("op", list(GATED))
def test_gated_broadcasts_like_a_binary_ufunc(op):
    gate, up, _ = _gated_inputs(np.float32, shape=(4, 8))
    up = up[0]                                     # (8,) against (4, 8)
    fused, composed = GATED[op].fused, GATED[op].composed
    with np.errstate(invalid="ignore"):
        got = fused(gate, up)
        want = composed(gate, up)
    assert got.shape == (4, 8)
    testing.assert_same_bits(got, want, op)
    testing.assert_same_bits(fused(gate[:, :1], up), composed(gate[:, :1], up), op + " (4,1)")


@pytest.mark.parametrize("op", list(GATED))
def test_concatenated_projection_is_split_with_two_views(op):
    """Models store W_gate and W_up as one (d, 2 f) matrix: the two halves of
    its product are views, and the gated form reads them in place."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((10, 16)).astype(np.float32)
    w = rng.standard_normal((16, 2 * 24)).astype(np.float32)
    h = x @ w
    gate, up = np.split(h, 2, axis=-1)            # == h[:, :24], h[:, 24:]
    assert np.shares_memory(gate, h) and np.shares_memory(up, h)
    fused, composed = GATED[op].fused, GATED[op].composed
    testing.assert_same_bits(fused(gate, up), composed(gate.copy(), up.copy()), op)


def test_out_is_written_and_returned():
    gate, up, _ = _gated_inputs(np.float64)
    for fn in GATED_FORWARD:
        out = np.empty_like(gate)
        with np.errstate(invalid="ignore"):
            assert fn(gate, up, out=out) is out
            testing.assert_same_bits(out, fn(gate, up), fn.__name__)


def test_llama_style_ffn_with_swiglu():
    """``down(silu(gate(x)) * up(x))``: with swiglu, bit-identical to the same
    network with silu and np.multiply, and equal to the textbook NumPy form."""
    rng = np.random.default_rng(11)
    d_model, d_ff, tokens = 32, 86, 20
    x = rng.standard_normal((tokens, d_model)).astype(np.float32)
    w_gate, w_up = (rng.standard_normal((d_model, d_ff)).astype(np.float32) / 4 for _ in range(2))
    w_down = rng.standard_normal((d_ff, d_model)).astype(np.float32) / 8

    y = swiglu(x @ w_gate, x @ w_up) @ w_down
    composed = (silu(x @ w_gate) * (x @ w_up)) @ w_down
    testing.assert_same_bits(y, composed, "FFN")

    g, u = x.astype(np.float64) @ w_gate, x.astype(np.float64) @ w_up
    textbook = (g / (1 + np.exp(-g)) * u) @ w_down
    np.testing.assert_allclose(y, textbook, rtol=1e-5, atol=1e-5)
    assert y.dtype == np.float32 and y.shape == (tokens, d_model)


# ------------------------------------------------------- gated gradients --

@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=dtype_id)
@pytest.mark.parametrize("op", list(GATED))
def test_gated_gradients_are_bit_identical_to_the_composed_definitions(op, dt):
    """d_gate = act'(gate) * (up * grad), the product rounded first as
    autograd does; d_up = act(gate) * grad."""
    gate, up, grad = _gated_inputs(dt)
    rec = GATED[op]
    with np.errstate(invalid="ignore"):
        got, want = rec.grad(gate, up, grad), rec.grad_composed(gate, up, grad)
    assert isinstance(got, tuple) and len(got) == 2
    testing.assert_same_bits(got[0], want[0], op + " d_gate")
    testing.assert_same_bits(got[1], want[1], op + " d_up")


@pytest.mark.parametrize("op", list(GATED))
def test_gated_gradients_match_central_differences(op):
    rng = np.random.default_rng(8)
    gate, up, grad = (rng.uniform(-4, 4, 200) for _ in range(3))
    fused, forward = GATED[op].grad, GATED[op].fused
    d_gate, d_up = fused(gate, up, grad)
    h = 1e-6
    num_gate = (forward(gate + h, up) - forward(gate - h, up)) / (2 * h) * grad
    num_up = (forward(gate, up + h) - forward(gate, up - h)) / (2 * h) * grad
    np.testing.assert_allclose(d_gate, num_gate, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_up, num_up, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op", list(GATED))
def test_gated_gradients_write_an_out_pair(op):
    gate, up, grad = _gated_inputs(np.float32)
    fused = GATED[op].grad
    out = (np.empty_like(gate), np.empty_like(gate))
    with np.errstate(invalid="ignore"):
        got = fused(gate, up, grad, out=out)
        want = fused(gate, up, grad)
    assert got[0] is out[0] and got[1] is out[1]
    testing.assert_same_bits(out[0], want[0], op + " d_gate")
    testing.assert_same_bits(out[1], want[1], op + " d_up")


# ------------------------------------------------------------ bad input --

APPROX = [t for t in _spec.TORCH_OPS if t.kind == "gate" and t.grad and t.has_approximate]


@pytest.mark.parametrize("t", APPROX, ids=lambda t: t.name)
def test_bad_approximate_names_the_argument(t):
    ones = np.ones(3)
    fwd, grad = getattr(gelu_ext, t.name), getattr(gelu_ext, t.grad)
    for call_ in (lambda: fwd(ones, ones, "fast"), lambda: grad(ones, ones, ones, "fast"),
                  lambda: fwd(ones, ones, approximate=None)):
        with pytest.raises(ValueError, match=r"approximate must be 'none' or 'tanh', got "):
            call_()


@pytest.mark.parametrize("bad", ["str", "complex", "object"])
@pytest.mark.parametrize("op", OPINFOS, ids=ids(OPINFOS))
def test_inputs_without_a_float_loop_raise_type_error(op, bad):
    """A string, complex or object operand, first or last."""
    wrong = {"str": np.array(["a"]), "complex": np.array([1 + 2j]),
             "object": np.array([None], dtype=object)}[bad]
    for k in (0, op.nin - 1):
        args = [np.ones(1)] * op.nin
        args[k] = wrong
        with pytest.raises(TypeError):
            op.public(*args)


@pytest.mark.parametrize("fn", GATED_FORWARD, ids=lambda f: f.__name__)
def test_shapes_that_do_not_broadcast_raise(fn):
    with pytest.raises(ValueError, match="broadcast"):
        fn(np.ones((4, 8)), np.ones(7))


# ------------------------------------------------------------ activation() --

HF = [(hf, a) for a in _spec.ACTIVATIONS for hf in a.hf_names]


@pytest.mark.parametrize("name, act", HF, ids=[hf for hf, _ in HF])
def test_activation_returns_the_function_of_its_op(name, act):
    """Each Hugging Face name of the spec: a public function where gelu_ext
    has one (the same object), else a private one; either computes the
    spec's op, bias= (where the op has a fused bias op) and out= included."""
    f = activation(name)
    if act.public in gelu_ext.__all__:
        assert f is getattr(gelu_ext, act.public)
    assert f.__name__ == act.public
    op = OPINFO[act.op]
    x = np.linspace(-8, 8, 1001, dtype=np.float32)
    testing.assert_same_bits(f(x), op.ufunc(x), name)
    out = np.empty_like(x)
    assert f(x, out=out) is out
    bias = [o for o in OPINFOS if o.kind == "bias" and o.base == act.op]
    if bias:
        b = np.float32(0.25)
        testing.assert_same_bits(f(x, bias=b), bias[0].ufunc(x, b), name + " bias")


def test_activation_names_are_the_specs_once_each():
    names = gelu_ext._activation.supported_names()
    assert sorted(names) == sorted(hf for hf, _ in HF)


@pytest.mark.parametrize("name, match", [
    ("gelu_10", re.escape(f"name must be one of {', '.join(map(repr, [hf for hf, _ in HF]))} "
                          f"(the Hugging Face activations gelu_ext computes), got 'gelu_10'") + "$"),
    ("leaky_relu", r"got 'leaky_relu'$"),
    ("", r"got ''$"),
    # a wrong case gets a suggestion: one name per kind of suggestion
    ("GELU", r"got 'GELU'; names are case-sensitive: did you mean 'gelu'\?"),
    ("SiLU", r"did you mean 'silu'\?"),
], ids=["gelu_10", "leaky_relu", "empty", "GELU", "SiLU"])
def test_activation_rejects_other_names_listing_the_supported_ones(name, match):
    with pytest.raises(ValueError, match=match):
        activation(name)


@pytest.mark.parametrize("bad", [None, 1, b"gelu", ["gelu"]], ids=repr)
def test_activation_name_must_be_a_str(bad):
    with pytest.raises(TypeError, match=r"name must be a str \(a Hugging Face hidden_act\), got "):
        activation(bad)


def test_gelu_fast_constant_claim_in_the_docstring():
    """The truncated constant of transformers' gelu_fast, 0.7978845608, is
    3.6e-12 relative from sqrt(2/pi): far below float32's half-ULP."""
    rel = (math.sqrt(2 / math.pi) - 0.7978845608) / math.sqrt(2 / math.pi)
    assert f"{rel:.1e}" == "3.6e-12"
    assert rel < 2.0 ** -24 / 1e4
    assert "3.6e-12" in activation.__doc__ and "0.7978845608" in activation.__doc__


def test_gelu_fast_formula_rounds_to_tanh_gelu_in_float32():
    """transformers' gelu_fast, evaluated exactly (mpmath) and rounded to
    float32, is within our tanh-GELU's float32 bound of it."""
    mp = pytest.importorskip("mpmath")
    x = np.linspace(-9, 9, 361, dtype=np.float32)
    got = activation("gelu_fast")(x)
    with mp.workdps(50):
        c = mp.mpf("0.7978845608")
        exact = np.array([X / (1 + mp.exp(-2 * c * X * (1 + mp.mpf("0.044715") * X * X)))
                          for X in map(mp.mpf, map(float, x))], dtype=object)
    assert testing.ulp_error(got, exact, F32).max() <= testing.bound("gelu_tanh", F32, "bulk").value


def test_activation_matches_transformers():
    """Every name against transformers' ACT2FN (float64, loose: its tanh
    forms evaluate the formula as written, and gelu_fast's constant is truncated)."""
    torch = _torch()
    transformers_activations = pytest.importorskip("transformers.activations")
    x = np.linspace(-8, 8, 1601)
    for name in gelu_ext._activation.supported_names():
        theirs = transformers_activations.ACT2FN[name](torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(activation(name)(x), theirs, rtol=1e-9, atol=1e-12,
                                   err_msg=name)
