"""gelu_ext.torch under torch.func and forward-mode AD.

Every transform gives torch's derivatives, never a silent zero: each op
(through ``gelu_ext.torch.functional``) under each transform of
``torch.func``, ``torch.autograd.forward_ad`` and
``torch.autograd.functional`` (forward-mode and vectorized strategies
included) is compared with the same transform of torch's own function, in
float32 and float64.  The quick tier runs every (op, transform) pair once,
the dtype rotating (tests/helpers.py, quick_tier).  Beyond that: a dual
tensor's tangent is never None, for every op; the JVP is our gradient kernel
applied to the tangent (its bits); vmap runs the op's own rule (torch's
per-sample fallback disabled) and keeps the ufuncs' bits; per-sample
gradients of a patched model equal the loop over samples; the other entry
points (``torch.ops.gelu_ext``, the modules) and float16/bfloat16.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="gelu_ext.torch needs PyTorch (pip install '.[torch]')")

import torch.nn.functional as F                            # noqa: E402
import torch.autograd.forward_ad as fwAD                   # noqa: E402
from torch.autograd import functional as AF                # noqa: E402

from gelu_ext.torch import functional as GF                # noqa: E402
import gelu_ext.torch as gt                                # noqa: E402
from gelu_ext.torch import _formulas                       # noqa: E402
from helpers import quick_tier                             # noqa: E402
from opinfo import functional_cases, torch_op_modes, torch_ops  # noqa: E402

ops = torch.ops.gelu_ext
func = torch.func


def make(shape, dtype, seed, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)


def bits(t):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().copy()
    return t.numpy().view({2: np.int16, 4: np.int32, 8: np.int64}[t.element_size()]).copy()


# id -> (ours, torch's, operand shapes): every forward op of the spec through
# its functional function (in each mode, with bias=, in place on a non-leaf
# as inside a model), against torch's own formula of it; the second operand of
# the binary ops broadcasts, so the reductions of its derivatives are
# exercised too
OPS = {c.id: (c.ours, c.theirs, [(2, 3), (3,)][:c.nargs]) for c in functional_cases()}
DTYPES = {"f32": torch.float32, "f64": torch.float64}
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float64: dict(rtol=1e-9, atol=1e-12),
       torch.float16: dict(rtol=1e-2, atol=2e-3), torch.bfloat16: dict(rtol=4e-2, atol=2e-2)}


def operands(op, dtype):
    return tuple(make(s, dtype, seed) for seed, s in enumerate(OPS[op][2]))


def tangents(args):
    return tuple(make(a.shape, a.dtype, 10 + i, scale=1.0) for i, a in enumerate(args))


def scalar(f):
    """A scalar of f's output that is not linear in it, so the Hessian
    holds f' f' and f f'' terms (relu's included)."""
    return lambda *a: 0.5 * (f(*a) ** 2).sum()


def argnums(args):
    return tuple(range(len(args)))


def per_sample(f, args, transform):
    """transform(f) vmapped over the first operand's leading dimension."""
    return func.vmap(transform(f), in_dims=(0,) + (None,) * (len(args) - 1))(*args)


def vmap_jvp(f, args, ts):
    """jvp per sample of the first operand (and of its tangent)."""
    n = len(args)
    dims = (0,) + (None,) * (n - 1)
    return func.vmap(lambda *at: func.jvp(f, at[:n], at[n:]), in_dims=dims + dims)(*args, *ts)


def dual_tangent(f, args, ts):
    with fwAD.dual_level():
        out = fwAD.unpack_dual(f(*(fwAD.make_dual(a, t) for a, t in zip(args, ts)))).tangent
    assert out is not None, "a dual tensor lost its tangent"
    return out


# transform id -> (f, operands) -> result (any nesting of tensors)
TRANSFORMS = {
    "func.grad": lambda f, a: func.grad(scalar(f), argnums(a))(*a),
    "func.vjp": lambda f, a: func.vjp(f, *a)[1](make(f(*a).shape, a[0].dtype, 20)),
    "func.jacrev": lambda f, a: func.jacrev(f, argnums(a))(*a),
    "func.jacfwd": lambda f, a: func.jacfwd(f, argnums(a))(*a),
    "func.hessian": lambda f, a: func.hessian(scalar(f), argnums(a))(*a),
    "jacrev(jacrev)": lambda f, a: func.jacrev(func.jacrev(scalar(f), argnums(a)), argnums(a))(*a),
    "func.jvp": lambda f, a: func.jvp(f, a, tangents(a)),
    "func.vmap": lambda f, a: per_sample(f, a, lambda g: g),
    "vmap(grad)": lambda f, a: per_sample(f, a, lambda g: func.grad(scalar(g), argnums(a))),
    "vmap(jvp)": lambda f, a: vmap_jvp(f, a, tangents(a)),
    "forward_ad": lambda f, a: dual_tangent(f, a, tangents(a)),
    "AF.jacobian": lambda f, a: AF.jacobian(f, a),
    "AF.jacobian vectorize": lambda f, a: AF.jacobian(f, a, vectorize=True),
    "AF.jacobian forward-mode": lambda f, a: AF.jacobian(f, a, vectorize=True,
                                                         strategy="forward-mode"),
    "AF.hessian": lambda f, a: AF.hessian(scalar(f), a),
    "AF.hessian vectorize": lambda f, a: AF.hessian(scalar(f), a, vectorize=True),
    "AF.hessian forward-mode": lambda f, a: AF.hessian(scalar(f), a, vectorize=True,
                                                       outer_jacobian_strategy="forward-mode"),
    "AF.jvp": lambda f, a: AF.jvp(f, a, tangents(a)),
    "AF.vjp": lambda f, a: AF.vjp(f, a, make(f(*a).shape, a[0].dtype, 20)),
    "AF.hvp": lambda f, a: AF.hvp(scalar(f), a, tangents(a)),
    "AF.vhp": lambda f, a: AF.vhp(scalar(f), a, tangents(a)),
}


def leaves(result):
    if isinstance(result, torch.Tensor):
        return [result]
    return [t for r in result for t in leaves(r)]


def assert_same_derivatives(got, want, dtype):
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w, **TOL[dtype])
    # no silent zero: some derivative in the result is not zero
    assert any(w.abs().max() > 0 for w in want if w.numel())


CASES = quick_tier(((t, op, d), pytest.param(t, op, d, id=f"{t}-{op}-{d}"))
                   for t in TRANSFORMS for op in OPS for d in DTYPES)


@pytest.mark.parametrize("transform, op, dtype", CASES)
def test_transform_gives_torchs_derivatives(transform, op, dtype):
    ours, theirs, _ = OPS[op]
    args = operands(op, DTYPES[dtype])
    got = TRANSFORMS[transform](ours, args)
    want = TRANSFORMS[transform](theirs, args)
    assert_same_derivatives(got, want, DTYPES[dtype])


# ------------------------------------------------------ forward-mode AD --

# every op, the gradient ops too (forward over reverse needs their JVPs)
ALL_OPS = torch_ops()

def nin(name):
    return len(gt._ops._OPS[name].args)


@pytest.mark.parametrize("name", list(ALL_OPS))
def test_dual_tensor_tangent_is_never_none(name):
    """Every op of torch.ops.gelu_ext, one input dual at a time: the output
    carries a tangent, and it is the derivative along that input (the
    gradient of the output's weighted sum, from backward, dotted with it)."""
    args = [make((3, 4), torch.float64, i) for i in range(nin(name))]
    extra = ALL_OPS[name]
    for k in range(len(args)):
        t = make((3, 4), torch.float64, 10 + k, scale=1.0)
        with fwAD.dual_level():
            dual = list(args)
            dual[k] = fwAD.make_dual(args[k], t)
            outs = getattr(ops, name)(*dual, *extra)
            outs = outs if isinstance(outs, tuple) else (outs,)
            tans = [fwAD.unpack_dual(o).tangent for o in outs]
        assert all(tan is not None for tan in tans), (name, k)
        for i, tan in enumerate(tans):
            x = args[k].clone().requires_grad_()
            call = list(args)
            call[k] = x
            out = getattr(ops, name)(*call, *extra)
            out = out[i] if isinstance(out, tuple) else out
            w = make(out.shape, torch.float64, 30)
            (g,) = torch.autograd.grad((out * w).sum(), x, allow_unused=True)
            g = torch.zeros_like(x) if g is None else g
            torch.testing.assert_close((tan * w).sum(), (g * t).sum(), rtol=1e-12, atol=1e-14)


# every plain forward op in every mode: id -> (op, extra arguments)
UNARY = {i: (name, extra) for i, name, extra in torch_op_modes(forward=True, kind="plain")}

@pytest.mark.parametrize("dtype", list(DTYPES.values()), ids=list(DTYPES))
@pytest.mark.parametrize("op", list(UNARY))
def test_jvp_is_our_gradient_kernel_on_the_tangent(op, dtype):
    name, extra = UNARY[op]
    x, t = make((64,), dtype, 0), make((64,), dtype, 1)
    _, tan = func.jvp(lambda x: getattr(ops, name)(x, *extra), (x,), (t,))
    grad = gt._ops._spec.TORCH_OP[name].grad
    np.testing.assert_array_equal(bits(tan), bits(getattr(ops, grad)(x, t, *extra)))


# ------------------------------------------------------------------ vmap --

# the forward ops of two tensors (bias, gated), in every mode
BINARY = {i: (name, extra) for i, name, extra in torch_op_modes(forward=True, nargs=2)}


@pytest.fixture
def no_vmap_fallback():
    """torch's per-sample fallback (a loop over the batch) disabled: an op
    without its own vmap rule raises instead of running it."""
    torch._C._functorch._set_vmap_fallback_enabled(False)
    try:
        yield
    finally:
        torch._C._functorch._set_vmap_fallback_enabled(True)


@pytest.mark.parametrize("name", list(ALL_OPS))
def test_vmap_runs_the_ops_rule_and_keeps_the_bits(name, no_vmap_fallback):
    """Batched along different dimensions, each result the unbatched op's bits."""
    args = [make((5, 3, 4), torch.float32, i) for i in range(nin(name))]
    in_dims = [i % 3 for i in range(len(args))]
    batched = [a.movedim(0, d) for a, d in zip(args, in_dims)]
    got = func.vmap(lambda *a: getattr(ops, name)(*a, *ALL_OPS[name]), in_dims=tuple(in_dims))(*batched)
    want = getattr(ops, name)(*args, *ALL_OPS[name])
    for g, w in zip(leaves(got), leaves(want)):
        np.testing.assert_array_equal(bits(g), bits(w))


@pytest.mark.parametrize("name", list(BINARY))
def test_vmap_operands_of_different_ranks_broadcast_per_sample(name, no_vmap_fallback):
    """Per sample, a (4,) operand against an unbatched (3, 4) one, and a
    batched (3, 1) one against a batched (4,) one: the batch dimensions
    line up and the rest broadcasts as the unbatched op's operands do."""
    op, extra = BINARY[name]
    f = lambda a, b: getattr(ops, op)(a, b, *extra)                  # noqa: E731
    a, b = make((6, 4), torch.float64, 0), make((3, 4), torch.float64, 1)
    got = func.vmap(f, in_dims=(0, None))(a, b)
    assert got.shape == (6, 3, 4)
    for i in range(6):
        np.testing.assert_array_equal(bits(got[i]), bits(f(a[i], b)))
    a, b = make((3, 1, 6), torch.float64, 2), make((6, 4), torch.float64, 3)
    got = func.vmap(f, in_dims=(2, 0))(a, b)
    assert got.shape == (6, 3, 4)
    for i in range(6):
        np.testing.assert_array_equal(bits(got[i]), bits(f(a[..., i], b[i])))


def test_per_sample_gradients_of_a_patched_model_equal_the_loop():
    """vmap(grad) over a model whose activations patch_model swapped (the
    usual per-sample-gradient recipe, e.g. for DP-SGD) gives each sample's
    gradient as a backward pass on that sample alone does."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.GELU(), torch.nn.Linear(8, 8),
                                torch.nn.SiLU(), torch.nn.Linear(8, 2)).double()
    assert len(gt.patch_model(model).replaced) == 2
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = make((5, 6), torch.float64, 0), make((5, 2), torch.float64, 1)

    def loss(p, xi, yi):
        out = func.functional_call(model, p, (xi[None],))
        return F.mse_loss(out, yi[None])

    batched = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(5):
        model.zero_grad()
        loss(dict(model.named_parameters()), x[i], y[i]).backward()
        for k, p in model.named_parameters():
            torch.testing.assert_close(batched[k][i], p.grad, rtol=1e-12, atol=1e-14, msg=k)


# --------------------------------------------------------- entry points --

def _entries():
    """Each forward op through torch.ops.gelu_ext (its default mode, then
    tanh) and through its module, against torch's own formula of it."""
    for t in gt._ops._spec.TORCH_OPS:
        if not t.grad:
            continue
        formula, n = _formulas.TORCH_FORMULAS[t.name], len(t.args)
        modes = (None, "tanh") if t.has_approximate else (None,)
        for mode in modes:
            extra = () if mode is None else (mode,)
            tag = "" if mode is None else f" {mode}"
            yield (f"ops.{t.name}{tag}", (lambda *a, o=getattr(ops, t.name), e=extra: o(*a, *e),
                                          lambda *a, f=formula, e=extra: f(*a, *e), n))
            if t.module:
                yield (f"gt.{t.module}{tag}", (getattr(gt, t.module)(*extra),
                                               lambda *a, f=formula, e=extra: f(*a, *e), n))


ENTRY = dict(_entries())


@pytest.mark.parametrize("transform", ["func.jvp", "func.hessian", "vmap(grad)"])
@pytest.mark.parametrize("entry", list(ENTRY))
def test_other_entry_points(entry, transform):
    ours, theirs, n = ENTRY[entry]
    args = tuple(make((3, 4), torch.float64, i) for i in range(n))
    assert_same_derivatives(TRANSFORMS[transform](ours, args), TRANSFORMS[transform](theirs, args),
                            torch.float64)


# ------------------------------------------------------ half precisions --

HALF = {"f16": torch.float16, "bf16": torch.bfloat16}


@pytest.mark.parametrize("transform", ["func.jvp", "func.grad", "forward_ad"])
@pytest.mark.parametrize("dtype", list(HALF.values()), ids=list(HALF))
@pytest.mark.parametrize("op", list(OPS))
def test_half_precision(op, dtype, transform):
    """float16 and bfloat16 keep their dtype; the values are torch's own
    transform's, computed in float64 on the same (half-precision) inputs,
    to the half type's precision."""
    ours, theirs, _ = OPS[op]
    args = operands(op, dtype)
    got = leaves(TRANSFORMS[transform](ours, args))
    want = leaves(TRANSFORMS[transform](theirs, tuple(a.double() for a in args)))
    for g, w in zip(got, want):
        assert g.dtype == dtype
        torch.testing.assert_close(g.double(), w, **TOL[dtype])


def test_autograd_outside_a_transform_records_through_it():
    """torch.func.grad of a function of a tensor that requires grad: the
    plain autograd around the transform differentiates the gradient (the
    op's levels below functorch's keep their grad mode)."""
    x0 = make((2, 3), torch.float64, 0)
    result = []
    for silu in (GF.silu, F.silu):
        x = x0.clone().requires_grad_()
        g = func.grad(lambda t: (silu(t) ** 2).sum())(x)
        (h,) = torch.autograd.grad(g.sum(), x)
        result.append(h)
    assert result[1].abs().max() > 0
    torch.testing.assert_close(result[0], result[1], rtol=1e-12, atol=1e-14)


@pytest.mark.slow
def test_compiled_transforms_fullgraph():
    """torch.compile(fullgraph=True) of grad and jvp over our op: no graph
    break, torch's derivatives."""
    x, t = make((8,), torch.float64, 0), make((8,), torch.float64, 1)
    grad = lambda f: func.grad(scalar(f))                              # noqa: E731
    jvp = lambda f: lambda x, t: func.jvp(f, (x,), (t,))[1]            # noqa: E731
    torch._dynamo.reset()
    for transform in (grad, jvp):
        ours = torch.compile(transform(GF.gelu), fullgraph=True, backend="aot_eager")
        args = (x,) if transform is grad else (x, t)
        assert_same_derivatives(ours(*args), transform(F.gelu)(*args), torch.float64)
