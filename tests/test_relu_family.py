"""The correctly rounded ops of the spec (the ReLU family: ReLU, squared
ReLU ``relu2``, ReLU6 ``relu6``) and their gradients.

They are correctly rounded (<= 0.5 ULP: their results are exact in float64
and rounded once), so every dtype and every ISA path must give the float64
twin's bits rounded to the dtype; the special values are PyTorch's own
(torch's formula of each op, ``gelu_ext.torch._formulas``, and its autograd)."""
import numpy as np
import pytest

import gelu_ext
from gelu_ext import _spec, testing
from opinfo import torch_formula

# every correctly rounded op of the spec and the forward ones among them
NEW = [op for op in _spec.OPS if op.exact]
IDS = [op.name for op in NEW]
FORWARD = [op.name for op in NEW if not op.is_grad]
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 5.999, 6.0, 6.001, 3.0, -6.0,
           1e-30, -1e-30, 1e30, 3e38, 1e-45]


def _bf16():
    return pytest.importorskip("ml_dtypes").bfloat16


def _inputs(dtype, seed=0):
    """x: every 16-bit pattern, or random bit patterns and the special
    values for float32 and float64; g: random values (specials included)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.itemsize == 2:
        x = np.arange(1 << 16, dtype=np.uint16).view(dt)
    else:
        u = np.dtype(f"u{dt.itemsize}")
        x = rng.integers(0, np.iinfo(u).max, 1 << 16, dtype=u, endpoint=True).view(dt)
        with np.errstate(over="ignore"):
            x[:len(SPECIAL)] = np.array(SPECIAL).astype(dt)
        x[len(SPECIAL):4096] = (8 * rng.standard_normal(4096 - len(SPECIAL))).astype(dt)
    with np.errstate(over="ignore", invalid="ignore"):
        g = (4 * rng.standard_normal(x.size)).astype(np.float64)
        g[::97] = np.inf
        g[1::97] = 0.0
        g[2::97] = np.nan
        g = g.astype(dt)
    return x, g


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("op", NEW, ids=IDS)
def test_correctly_rounded_on_every_path(op, dtype, isa, plain_loads):
    dt = _bf16() if dtype == "bfloat16" else np.dtype(dtype)
    x, g = _inputs(dt)
    uf = getattr(gelu_ext._ufuncs, op.name)
    with np.errstate(all="ignore"):
        got = uf(x, g) if op.is_grad else uf(x)
    testing.assert_matches_reference(op.name, got, x, g if op.is_grad else None)


@pytest.mark.parametrize("op", NEW, ids=IDS)
def test_bounds_are_exact(op):
    for dt in _spec.DTYPES:
        if dt == "bfloat16":                # its name means a dtype once ml_dtypes is imported
            try:
                import ml_dtypes  # noqa: F401
            except ImportError:
                continue
        assert testing.bound(op.name, dt).value <= 0.5


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", FORWARD)
def test_special_values_are_pytorchs(name, dtype):
    """NaN, +-0, +-inf and the kinks: PyTorch's bits, forward and backward.
    64 elements, whole vectors of torch's kernels: its scalar tail of
    hardtanh_backward (ReLU6's) passes g for NaN x, its vector body 0."""
    torch = pytest.importorskip("torch")
    with np.errstate(over="ignore"):
        x = np.resize(np.array(SPECIAL, dtype=dtype), 64)
    g = np.resize(np.array([1.0, -2.5, 0.0, np.inf, 3.0], dtype=dtype), 64)
    t = torch.from_numpy(x.copy()).requires_grad_()
    y = torch_formula(name)(t)
    (d,) = torch.autograd.grad(y, t, torch.from_numpy(g.copy()))
    testing.assert_same_bits(getattr(gelu_ext, name)(x), y.detach().numpy(), name)
    with np.errstate(invalid="ignore", over="ignore"):
        got = getattr(gelu_ext, _spec.OP[name].grad)(x, g)
        # by design: where torch's 2x overflows (x >= 2^127 in float32) and
        # g = 0 it gives inf * 0 = NaN, ours the exact 2x * 0 = 0
        keep = ~np.isinf(x + x) if name == "relu2" else np.ones(x.shape, bool)
    testing.assert_same_bits(got[keep], d.numpy()[keep], _spec.OP[name].grad)
    if name == "relu2":
        testing.assert_matches_reference("relu2_grad", got, x, g)


ACTS = [a for a in _spec.ACTIVATIONS if _spec.OP[a.op].exact]


@pytest.mark.parametrize("act", ACTS, ids=lambda a: a.public)
def test_activation_and_thin_gradient(act):
    assert gelu_ext.activation(act.hf_names[0]) is getattr(gelu_ext, act.public)
    grad = getattr(gelu_ext, _spec.OP[act.op].grad)
    x = np.array([-1.0, 0.5, 7.0])
    testing.assert_same_bits(grad(x), grad(x, np.ones(3)), act.public)


def test_patch_model_replaces_them():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.activations import ACT2CLS
    import gelu_ext.torch as gt
    olds = [ACT2CLS[a.hf_names[0]]() for a in ACTS]
    m = torch.nn.Sequential(*olds)
    x = torch.linspace(-8, 8, 41, dtype=torch.float64)
    want = m(x)
    report = gt.patch_model(m)
    assert [type(r.old) for r in report.replaced] == [type(o) for o in olds]
    assert not report.skipped
    testing.assert_same_bits(m(x).numpy(), want.numpy(), "patched")
    assert transformers is not None
