"""gelu_ext.torch: the custom ops, the functional API, the modules, patch_model.

The ops' bits are the NumPy ufuncs' bits (the oracle of every other test
file), so here the ufuncs are the reference: every op x dtype is compared
bit for bit with its ufunc, special values included.  Beyond that: what
PyTorch itself checks of a custom op (``torch.library.opcheck``: schema,
autograd registration, fake tensors, eager vs compiled, on 0-d, empty,
transposed, sliced and broadcast inputs, with and without
``requires_grad``), ``gradcheck`` in float64, ``torch.compile`` and
``torch.export``, and a real pretrained model (all-MiniLM-L6-v2, when its
wheel and transformers are installed) patched and unpatched.
"""
import copy
import io
import pickle
import textwrap
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="gelu_ext.torch needs PyTorch (pip install '.[torch]')")


import gelu_ext                                            # noqa: E402
from gelu_ext.torch import functional as GF                # noqa: E402
from gelu_ext.torch import _ops                            # noqa: E402
from gelu_ext.torch import _formulas                       # noqa: E402
from gelu_ext import _spec                                 # noqa: E402
import gelu_ext.torch as gt                                # noqa: E402
from helpers import python_child                           # noqa: E402
from opinfo import functional_cases, torch_ops  # noqa: E402

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
DT_IDS = ["f16", "bf16", "f32", "f64"]
ops = torch.ops.gelu_ext

# op name -> its extra arguments (approximate, alternating): the spec's
# forward ops, then its gradient ops
FORWARD = torch_ops(forward=True)
GRADS = torch_ops(forward=False)
ALL = {**FORWARD, **GRADS}
LAYOUTS = ["contiguous", "0-d", "empty", "transposed", "sliced", "broadcast"]


def nin(name):
    return len(_ops._OPS[name].args)


def make(shape, dtype, seed, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)


def operands(name, layout, dtype, requires_grad=False):
    """The op's tensor operands in one of LAYOUTS."""
    n = nin(name)
    if layout == "contiguous":
        ts = [make((3, 5), dtype, i) for i in range(n)]
    elif layout == "0-d":
        ts = [make((), dtype, i) for i in range(n)]
    elif layout == "empty":
        ts = [make((0, 5), dtype, i) for i in range(n)]
    elif layout == "transposed":
        ts = [make((5, 3), dtype, i).t() for i in range(n)]
    elif layout == "sliced":
        ts = [make((6, 9), dtype, i)[::2, 1::2] for i in range(n)]
    else:       # broadcast: the second operand a row; a unary op's input expanded
        ts = ([make((5,), dtype, 0).expand(3, 5)] if n == 1 else
              [make((3, 5), dtype, 0), make((5,), dtype, 1)] + [make((3, 5), dtype, i)
                                                               for i in range(2, n)])
    if requires_grad:
        ts = [t.detach().requires_grad_() for t in ts]
    return ts


def bits(t):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().copy()
    return t.numpy().view({2: np.int16, 4: np.int32, 8: np.int64}[t.element_size()]).copy()


# ------------------------------------------------------------------ opcheck --

# Every op x dtype on contiguous input, and every op x other layout, each
# layout on two dtypes that rotate with the op (so every layout meets every
# dtype across the ops): ops x 14 cases instead of the ops x 24 product,
# which CI's time budget cannot afford and which adds no path
# (layout handling is dtype-independent: NumPy's strided loop).
OPCHECK_CASES = [(n, "contiguous", d) for n in ALL for d in range(len(DTYPES))] + [
    (n, lay, (i + j + k) % len(DTYPES)) for i, n in enumerate(ALL)
    for j, lay in enumerate(LAYOUTS[1:]) for k in (0, 2)]


# The quick tier keeps one case per op, its layout and dtype rotating with
# the op, so every op, layout and dtype is checked there; the rest run in
# the full suite.
def _quick_case(i, name):
    cases = [c for c in OPCHECK_CASES if c[:2] == (name, LAYOUTS[i % len(LAYOUTS)])]
    return cases[i // len(LAYOUTS) % len(cases)]


OPCHECK_QUICK = {_quick_case(i, n) for i, n in enumerate(ALL)}


@pytest.mark.parametrize("name, layout, dtype", [
    pytest.param(n, lay, DTYPES[d], id=f"{n}-{lay}-{DT_IDS[d]}",
                 marks=[] if (n, lay, d) in OPCHECK_QUICK else [pytest.mark.slow])
    for n, lay, d in OPCHECK_CASES])
def test_opcheck(name, layout, dtype):
    """All of opcheck's tests, with and without requires_grad (the gradient
    ops are differentiable too: double backward)."""
    for rg in (False, True):
        args = (*operands(name, layout, dtype, rg), *ALL[name])
        result = torch.library.opcheck(getattr(ops, name).default, args)
        assert set(result.values()) == {"SUCCESS"}, (rg, result)


# -------------------------------------------------------- bits vs the ufuncs --

SPECIALS = [0.0, -0.0, 1.0, -1.0, 2.0, -0.75, 1e-30, -1e-30, 3e-39, -3e-39, 5.0, -5.0, -10.0,
            -13.0, -20.0, -30.0, -40.0, 40.0, 1e30, -1e30, float("inf"), float("-inf"),
            float("nan")]


def special_and_random(dtype, seed, n=257):
    x = torch.cat([torch.tensor(SPECIALS, dtype=torch.float64),
                   make((n,), torch.float64, seed, scale=4.0)]).to(dtype)
    return x


def ufunc_reference(name, tensors, extra):
    """The same computation through the NumPy ufuncs (gelu_ext's public API)."""
    dt = tensors[0].dtype
    if dt == torch.bfloat16:
        import ml_dtypes
        arrs = [t.detach().view(torch.int16).numpy().view(ml_dtypes.bfloat16) for t in tensors]
    else:
        arrs = [t.detach().numpy() for t in tensors]
    # the spec's ufunc(s) of the op, on its operands in the ufunc's order
    # (that these are the right functions is test_torch_func's comparison
    # with torch's own)
    t = _spec.TORCH_OP[name]
    res = tuple(getattr(gelu_ext._ufuncs, t.ufunc(extra[0] if extra else None, i))(
                    *[arrs[j] for j in out.operands]) for i, out in enumerate(t.ufuncs))
    res = res if isinstance(res, tuple) else (res,)
    if dt == torch.bfloat16:
        return [np.asarray(r).view(np.int16) for r in res]
    return [np.asarray(r).view({2: np.int16, 4: np.int32, 8: np.int64}[np.asarray(r).itemsize])
            for r in res]


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("name", list(ALL))
def test_bit_identical_to_the_ufuncs(name, dtype):
    n = nin(name)
    tensors = [special_and_random(dtype, seed) for seed in range(n)]
    # every special value against every other in the binary ops: roll the rest
    tensors = [tensors[0]] + [torch.roll(t, 7 * i) for i, t in enumerate(tensors[1:], 1)]
    before = [bits(t) for t in tensors]
    out = getattr(ops, name)(*tensors, *ALL[name])
    out = out if isinstance(out, tuple) else (out,)
    for got, want in zip(out, ufunc_reference(name, tensors, ALL[name])):
        assert got.dtype == dtype
        np.testing.assert_array_equal(bits(got), want)
        for t in tensors:                                  # a new tensor, never an input
            assert got.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
    for t, b in zip(tensors, before):                      # inputs untouched
        np.testing.assert_array_equal(bits(t), b)


def _cpp_kernels():
    """Whether the C++ CPU kernels are in (gelu_ext.torch.kernels() == "cpp":
    the default where they were built for this torch; GELU_EXT_TORCH_CPP=0
    tests the Python ones)."""
    from gelu_ext.torch import _cpp
    return _cpp.active()


def test_bfloat16_without_ml_dtypes_says_what_to_install(monkeypatch):
    if _cpp_kernels():
        pytest.skip("the C++ kernels read bfloat16 tensors without ml_dtypes")
    monkeypatch.setattr(_ops, "_BF16", [None])
    with pytest.raises(TypeError, match=r"bfloat16 tensors need ml_dtypes.*gelu_ext\[torch\]"):
        GF.gelu(torch.zeros(3, dtype=torch.bfloat16))
    GF.gelu(torch.zeros(3))                                # other dtypes unaffected


def test_mixed_dtypes_promote_as_torch_does():
    g, u = make((4, 6), torch.float32, 0), make((6,), torch.float64, 1)
    got = GF.swiglu(g, u)
    assert got.dtype == torch.result_type(g, u) == torch.float64
    np.testing.assert_array_equal(bits(got), bits(GF.swiglu(g.double(), u)))


def test_strides_kept_no_copy_for_dense_input():
    x = make((4, 6), torch.float32, 0).t()
    y = GF.gelu(x)
    assert y.stride() == x.stride() and y.shape == x.shape
    np.testing.assert_array_equal(bits(y), bits(GF.gelu(x.contiguous())))


# ------------------------------------------------------------- autograd --

def f64(shape, seed, rg=True):
    return make(shape, torch.float64, seed, scale=2.0).requires_grad_(rg)


# operand shapes of a binary op: alike, the second broadcast, the first
BINARY_SHAPES = {"": ((3, 4), (3, 4)), " (second broadcast)": ((2, 3, 4), (3, 1)),
                 " (first broadcast)": ((4,), (3, 4))}


def _gradcheck_cases():
    """Every forward op through its functional function, in every mode, with
    bias=; a binary one with each operand broadcast in turn."""
    for c in functional_cases(inplace=False):
        if c.nargs == 1:
            yield c.id, (lambda c=c: (c.ours, (f64((3, 4), 0),)))
            continue
        for tag, shapes in BINARY_SHAPES.items():
            yield c.id + tag, (lambda c=c, shapes=shapes:
                               (c.ours, tuple(f64(sh, i) for i, sh in enumerate(shapes))))


GRADCHECK = dict(_gradcheck_cases())


@pytest.mark.parametrize("case", list(GRADCHECK))
def test_gradcheck_float64(case):
    fn, args = GRADCHECK[case]()
    assert torch.autograd.gradcheck(fn, args)


@pytest.mark.parametrize("name", list(FORWARD))
def test_gradients_dtype_and_shape(name):
    """Gradients come back in each operand's dtype and shape (bfloat16 too)."""
    ts = operands(name, "broadcast", torch.bfloat16, requires_grad=True)
    out = getattr(ops, name)(*ts, *FORWARD[name])
    out.sum().backward()
    for t in ts:
        assert t.grad.dtype == torch.bfloat16 and t.grad.shape == t.shape


@pytest.mark.parametrize("case", list(GRADCHECK))
def test_gradgradcheck_float64(case):
    """Double backward (e.g. a gradient penalty): the gradient ops'
    derivatives, broadcast operands included."""
    fn, args = GRADCHECK[case]()
    assert torch.autograd.gradgradcheck(fn, args)


@pytest.mark.parametrize("name", list(GRADS))
def test_gradient_ops_gradcheck_float64(name):
    """Each gradient op against finite differences of itself, grad operand included."""
    args = [t.double().detach().requires_grad_() for t in operands(name, "broadcast", torch.float64)]
    assert torch.autograd.gradcheck(lambda *t: getattr(ops, name)(*t, *GRADS[name]), args)


@pytest.mark.parametrize("op", [c for c in functional_cases(inplace=False, scale=None) if c.nargs == 1],
                         ids=lambda c: c.id)
def test_second_derivative_against_torch(op):
    """f'' from double backward matches that of torch's own formula (float64)."""
    x = torch.linspace(-6, 6, 241, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(op.ours(x).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    x2 = x.detach().clone().requires_grad_()
    (g2,) = torch.autograd.grad(op.theirs(x2).sum(), x2, create_graph=True)
    (h2,) = torch.autograd.grad(g2.sum(), x2)
    torch.testing.assert_close(h, h2, rtol=1e-12, atol=1e-13)


# ReLU's kink: the subgradient torch picks at 0 (a choice, not a formula)
def test_relu_zero_gradient_at_zero_as_torch():
    x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    GF.relu(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_grad_modes(mode):
    x = make((8, 16), torch.float32, 0)
    with getattr(torch, mode)():
        y = GF.gelu(x)
    assert not y.requires_grad
    np.testing.assert_array_equal(bits(y), gelu_ext.fast_gelu(x.numpy()).view(np.int32))


def test_bfloat16_autocast():
    """CPU autocast leaves custom ops uncast; bfloat16 activations from the
    autocast Linear simply run the bfloat16 loops."""
    lin = torch.nn.Linear(16, 32)
    x = make((4, 16), torch.float32, 0)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = lin(x)
        y = GF.gelu(h)
    assert h.dtype == y.dtype == torch.bfloat16
    np.testing.assert_array_equal(bits(y), bits(ops.gelu(h.detach())))


# ----------------------------------------------------------- compile, export --

class Block(torch.nn.Module):
    """Every forward op in every mode once, in a small FFN-like block: the
    binary ones on two projections (bias= on a parameter), the unary ones on
    their sum."""
    CASES = list(functional_cases(inplace=False, scale=None))

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(8, 16)
        self.bias = torch.nn.Parameter(torch.randn(16))

    def forward(self, x):
        g, u = self.a(x), self.b(x)
        y = sum(c.ours(g, self.bias if _spec.TORCH_OP[c.op].kind == "bias" else u)
                for c in self.CASES if c.nargs == 2)
        return sum(c.ours(y) for c in self.CASES if c.nargs == 1).sum(-1)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compile_fullgraph_equals_eager(dynamic):
    torch.manual_seed(0)
    m = Block()
    x = torch.randn(5, 8)
    eager = m(x)
    eager.sum().backward()
    g_eager = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    torch._dynamo.reset()
    compiled = torch.compile(m, fullgraph=True, dynamic=dynamic, backend="aot_eager")
    got = compiled(x)
    got.sum().backward()
    torch.testing.assert_close(got, eager, rtol=0, atol=0)
    for p, g in zip(m.parameters(), g_eager):
        torch.testing.assert_close(p.grad, g, rtol=0, atol=0)


# What an environment that sets CI (GitHub Actions does) changes in
# inductor: it refuses a fallback kernel for an op with an entry in torch's
# decomposition table, which our forward ops have while an ONNX export runs
# (gelu_ext.torch.onnx), and it makes a custom op returning an alias of its
# input an error (the config that says so is set where this torch has it).
# Both are set here whatever the environment, with inductor's caches off so
# that the graph is lowered even where an earlier run cached it.
@pytest.fixture
def as_under_ci(monkeypatch):
    import torch._functorch.config
    import torch._inductor.config
    monkeypatch.setenv("CI", "true")
    functorch = {"enable_autograd_cache": False}
    if hasattr(torch._functorch.config, "error_on_custom_op_aliasing"):
        functorch["error_on_custom_op_aliasing"] = True
    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(**functorch):
        yield


# (the inductor tests share one pytest-xdist worker under --dist loadgroup,
# as CI runs them: inductor's first compile in a process costs seconds)
@pytest.mark.slow      # inductor compiles C++: CPU-seconds; the aot_eager tests above stay quick
@pytest.mark.xdist_group("inductor")
def test_compile_inductor_keeps_the_ops_bits(as_under_ci):
    """The default backend (inductor, which compiles C++), as under CI: every
    forward op stays an opaque call, so its outputs and the gradients
    through it (the gradient ops, compiled too) are eager's bits."""
    def f(operands):
        return [getattr(ops, name)(*ts, *FORWARD[name]) for name, ts in operands.items()]

    torch._dynamo.reset()
    given = {name: operands(name, "broadcast", torch.float32) for name in FORWARD}
    results = []
    for fn in (f, torch.compile(f, fullgraph=True)):
        inputs = {name: [t.detach().clone().requires_grad_() for t in ts] for name, ts in given.items()}
        outs = fn(inputs)
        sum(o.sum() for o in outs).backward()
        results.append([o.detach() for o in outs] + [t.grad for ts in inputs.values() for t in ts])
    assert len(results[1]) == len(FORWARD) + sum(map(nin, FORWARD))
    for eager, compiled in zip(*results):
        np.testing.assert_array_equal(bits(compiled), bits(eager))


def exported_block():
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), gt.GELU(), torch.nn.Linear(16, 16), gt.SiLU())
    x = torch.randn(4, 8)
    return m, x, torch.export.export(m, (x,))


def test_export_one_node_per_op():
    m, x, ep = exported_block()
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert targets.count("gelu_ext.gelu.default") == 1, targets
    assert targets.count("gelu_ext.silu.default") == 1, targets
    assert torch.equal(ep.module()(x), m(x))


@pytest.mark.slow
def test_export_reloads_in_a_fresh_process(tmp_path):
    m, x, ep = exported_block()
    path = tmp_path / "m.pt2"
    torch.export.save(ep, str(path))
    torch.save(x, tmp_path / "x.pt")
    torch.save(m(x).detach(), tmp_path / "y.pt")
    code = textwrap.dedent(f"""
        import torch, gelu_ext.torch
        ep = torch.export.load({str(path)!r})
        x, y = torch.load({str(tmp_path / 'x.pt')!r}), torch.load({str(tmp_path / 'y.pt')!r})
        assert torch.equal(ep.module()(x), y)
        print("ok")
    """)
    r = python_child(["-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


_AOTI_LOAD = """
import sys, torch
if sys.argv[1] == "import":
    import gelu_ext.torch
try:
    run = torch._inductor.aoti_load_package(sys.argv[2])
except RuntimeError as e:
    print("error:", e)
else:
    x, y = torch.load(sys.argv[3])
    print("equal" if torch.equal(run(x), y) else "differs")
"""


@pytest.mark.slow                       # inductor compiles C++: tens of seconds
@pytest.mark.xdist_group("inductor")
@pytest.mark.filterwarnings("ignore:.*LeafSpec.*:FutureWarning")     # torch's packaging code, not ours
def test_aoti_package_runs_where_gelu_ext_torch_is_imported(tmp_path):
    """An AOTInductor package calls our ops by name: it loads, and gives
    the eager bits, where ``import gelu_ext.torch`` ran first; without it
    torch's loader fails with the message the README quotes, which names
    no import (torch.export.load's does)."""
    m, x, ep = exported_block()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp_path / "m.pt2"))
    torch.save((x, m(x).detach()), tmp_path / "xy.pt")
    out = {how: python_child(["-c", _AOTI_LOAD, how, path, str(tmp_path / "xy.pt")], capture_output=True,
                             text=True, timeout=300, cwd=tmp_path)
           for how in ("import", "no-import")}
    assert out["import"].stdout.strip() == "equal", out["import"].stderr[-2000:]
    assert out["no-import"].stdout.strip() == "error: Could not find schema for gelu_ext::gelu.", \
        out["no-import"].stderr[-2000:]


# ------------------------------------------------------- API, devices, errors --

def test_import_gelu_ext_never_imports_torch(tmp_path):
    code = "import sys, gelu_ext; print('torch' in sys.modules)"
    r = python_child(["-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


META_CASES = list(functional_cases(inplace=False, scale=None))


@pytest.mark.parametrize("call", META_CASES, ids=lambda c: c.id)
def test_meta_tensors_go_to_torch(call):
    x = torch.empty(3, 4, device="meta")
    out = call.ours(*[x, x[0]][:call.nargs])
    assert out.device.type == "meta" and out.shape == (3, 4)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int8, torch.bool, torch.complex64])
def test_ops_reject_non_float_tensors_naming_the_argument(dtype):
    x = torch.zeros(3, dtype=dtype)
    with pytest.raises(TypeError, match=r"x must be a float16, bfloat16, float32 or float64 tensor"):
        ops.gelu(x)
    with pytest.raises(TypeError, match=r"up must be a float16"):
        ops.swiglu(torch.zeros(3), x)


def outcome(fn):
    """(the result, or the exception's type and message)."""
    try:
        return fn()
    except Exception as e:              # noqa: BLE001 - the comparison is the point
        return type(e), str(e)


def same_outcome(ours, theirs):
    a, b = outcome(ours), outcome(theirs)
    if isinstance(b, torch.Tensor):
        assert isinstance(a, torch.Tensor), a
        assert a.dtype == b.dtype and a.layout == b.layout and a.is_nested == b.is_nested
        if b.is_nested:
            a, b = torch.cat(a.unbind()), torch.cat(b.unbind())
        elif b.layout != torch.strided:
            a, b = a.to_dense(), b.to_dense()
        elif b.is_quantized:
            a, b = a.dequantize(), b.dequantize()
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    else:
        assert a == b


# every one-tensor functional function (each mode, in place too) and torch's own formula
FUNCTIONAL_CALLS = {c.id: (c.ours, c.theirs) for c in functional_cases(scale=None) if c.nargs == 1}
OTHER_TENSORS = {
    "int64": lambda: torch.tensor([-2, 0, 3]), "int8": lambda: torch.tensor([-2, 0, 3], dtype=torch.int8),
    "uint8": lambda: torch.tensor([254, 0, 3], dtype=torch.uint8), "bool": lambda: torch.tensor([True, False]),
    "complex64": lambda: torch.tensor([1 + 1j, -1 - 2j]),
    "sparse_coo": lambda: torch.tensor([[0.0, -1.0], [2.0, 0.0]]).to_sparse(),
    "sparse_csr": lambda: torch.tensor([[0.0, -1.0], [2.0, 0.0]]).to_sparse_csr(),
    "quantized": lambda: torch.quantize_per_tensor(torch.tensor([-1.0, 0.5, 2.0]), 0.1, 10, torch.quint8),
    "nested": lambda: torch.nested.nested_tensor([make((2, 3), torch.float32, 0), make((4, 3), torch.float32, 1)],
                                                 layout=torch.jagged),
}


@pytest.mark.parametrize("kind", OTHER_TENSORS)
@pytest.mark.parametrize("call", FUNCTIONAL_CALLS)
def test_functional_gives_other_tensors_torchs_own_result_or_error(call, kind):
    """Integer, bool, complex, sparse, quantized and nested tensors are not
    ours to compute: relu of an int64 tensor works, gelu of one raises, as
    torch's own functions do (the same result, or the same error)."""
    ours, theirs = FUNCTIONAL_CALLS[call]
    with warnings.catch_warnings():     # sparse CSR tensors are a beta feature, and say so
        warnings.simplefilter("ignore", UserWarning)
        a, b = OTHER_TENSORS[kind](), OTHER_TENSORS[kind]()
    same_outcome(lambda: ours(a), lambda: theirs(b))


def test_inputs_and_outputs_stay_resizable():
    """The ops read and write through ndarrays over the tensors' memory, not
    ``Tensor.numpy()``, which would leave both storages unresizable."""
    x = make((4, 5), torch.float32, 0)
    for y in (GF.gelu(x), GF.silu(x), GF.swiglu(x, x), GF.gelu(x.to(torch.bfloat16))):
        y.resize_(40)
    x.resize_(40)
    assert x.shape == (40,)


def test_bad_approximate_and_non_tensors():
    with pytest.raises(ValueError, match=r"approximate must be 'none' or 'tanh', got 'fast'"):
        GF.gelu(torch.zeros(3), "fast")
    with pytest.raises(ValueError, match=r"approximate must be 'none' or 'tanh'"):
        gt.GELU("erf")
    with pytest.raises(TypeError, match=r"input must be a torch.Tensor, got ndarray"):
        GF.gelu(np.zeros(3))


def test_inplace_calls():
    x = make((4, 5), torch.float32, 0)
    want = GF.silu(x)
    y = x.clone()
    assert GF.silu(y, inplace=True) is y
    np.testing.assert_array_equal(bits(y), bits(want))
    assert gt.ReLU(inplace=True)(y) is y


# the spec's in-place functions, ours and the op's torch formula (torch's own
# function, F.relu for relu, with torch's inplace flag)
INPLACE = {t.functional: (getattr(GF, t.functional), _formulas.TORCH_FORMULAS[t.name])
           for t in _spec.TORCH_OPS if t.inplace}


def inplace_grads(fn, case):
    """x.grad after ``fn(t, inplace=True)`` on a tensor derived from a leaf
    x in the way ``case`` names, then a backward through the result."""
    x = make((4, 6), torch.float64, 1).requires_grad_()
    if case == "non-leaf":
        t = x * 1.5
        out = fn(t, inplace=True)
        assert out is t
        loss = (out * torch.arange(24.0, dtype=torch.float64).view(4, 6)).sum()
    else:               # "view of a base that requires grad": the base is rebased
        base = x * 1.5
        fn(base[1:3, ::2], inplace=True)
        loss = (base * torch.arange(24.0, dtype=torch.float64).view(4, 6)).sum()
    loss.backward()
    return x.grad


@pytest.mark.parametrize("case", ["non-leaf", "view of a base"])
@pytest.mark.parametrize("name", INPLACE)
def test_inplace_under_autograd_as_torch(name, case):
    """The gradient through an in-place call is torch's.  To 1e-13: torch's
    own float64 backward formulas are some ULP off (mish's by up to ~50),
    while a wrong graph (the overwritten input used) is off by O(1)."""
    ours, theirs = INPLACE[name]
    torch.testing.assert_close(inplace_grads(ours, case), inplace_grads(theirs, case),
                               rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_refusals_as_torch(name):
    """A leaf that requires grad is refused, and a tensor another backward
    saved is caught by its version counter, with torch's own errors."""
    for fn in INPLACE[name]:
        leaf = make((3,), torch.float32, 0).requires_grad_()
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            fn(leaf, inplace=True)
        y = leaf * 1.0
        z = y * y                       # saves y
        fn(y, inplace=True)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def inplace_net(act):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 16), act(inplace=True), torch.nn.Linear(16, 16),
                               act(inplace=True), torch.nn.Linear(16, 1))


def train_losses(model, steps=4, compiled=False):
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(32, 4, generator=g), torch.randn(32, 1, generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    run = torch.compile(model, fullgraph=True) if compiled else model
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(run(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


# the torch.nn classes with an inplace flag that patch_model replaces
INPLACE_CLASSES = [a for a in _spec.ACTIVATIONS if a.torch_class and "inplace" in a.copy]


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["eager", "compiled"])
@pytest.mark.parametrize("act", INPLACE_CLASSES, ids=lambda a: a.torch_class)
def test_patched_inplace_activations_train_as_unpatched(act, compiled):
    cls = getattr(torch.nn, act.torch_class)
    want = train_losses(inplace_net(cls))
    model = inplace_net(cls)
    assert len(gt.patch_model(model)) == 2
    got = train_losses(model, compiled=compiled)
    # a correctly rounded op is exact in both; torch's SiLU is not always correctly rounded
    exact = _spec.OP[act.op].exact and not compiled
    np.testing.assert_allclose(got, want, rtol=0 if exact else 1e-5)


@pytest.mark.slow
def test_tiny_swinv2_with_inplace_relu_fine_tunes_as_unpatched():
    """transformers' Swinv2 has ReLU(inplace=True) in its position-bias MLP."""
    transformers = pytest.importorskip("transformers")
    cfg = transformers.Swinv2Config(image_size=16, patch_size=4, embed_dim=8, depths=[1, 1],
                                    num_heads=[2, 2], window_size=2, num_labels=3)

    def losses(patch):
        torch.manual_seed(0)
        model = transformers.Swinv2ForImageClassification(cfg).train()
        if patch:
            names = {type(r.old).__name__ for r in gt.patch_model(model).replaced}
            assert "ReLU" in names
        g = torch.Generator().manual_seed(1)
        px, labels = torch.randn(4, 3, 16, 16, generator=g), torch.tensor([0, 1, 2, 1])
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        out = []
        for _ in range(3):
            opt.zero_grad()
            loss = model(pixel_values=px, labels=labels).loss
            loss.backward()
            opt.step()
            out.append(loss.item())
        return out

    np.testing.assert_allclose(losses(True), losses(False), rtol=1e-5)


@pytest.mark.parametrize("t", [t for t in _spec.TORCH_OPS if t.module], ids=lambda t: t.module)
def test_modules_match_functional_and_pickle(t):
    """Each module of the spec (approximate="tanh" where it takes it)."""
    tensors = [make((4, 5), torch.float32, i) for i in range(len(t.args))]
    extra = ("tanh",) if t.has_approximate else ()
    mod = getattr(gt, t.module)(*extra)
    want = getattr(GF, t.functional)(*tensors, *extra)
    for m in (mod, pickle.loads(pickle.dumps(mod)), copy.deepcopy(mod)):
        assert type(m) is type(mod)
        np.testing.assert_array_equal(bits(m(*tensors)), bits(want))


def test_module_reprs():
    assert repr(gt.GELU("tanh")) == "GELU(approximate='tanh')"


# -------------------------------------------------------------- patch_model --

def small_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(),
                               torch.nn.Linear(32, 32), torch.nn.GELU(approximate="tanh"),
                               torch.nn.Linear(32, 32), torch.nn.SiLU(), torch.nn.ReLU(),
                               torch.nn.Linear(32, 4), torch.nn.Tanh())


def test_patch_model_swaps_reports_and_undoes_bit_for_bit(tmp_path):
    m = small_model()
    x = torch.randn(16, 8)
    before = m(x).detach()
    keys = {k: v.clone() for k, v in m.state_dict().items()}
    report = gt.patch_model(m)
    assert [(r.name, type(r.old).__name__, repr(r.new)) for r in report.replaced] == [
        ("1", "GELU", "GELU(approximate='none')"), ("3", "GELU", "GELU(approximate='tanh')"),
        ("5", "SiLU", "SiLU()"), ("6", "ReLU", "ReLU()")]
    assert [(s.name, type(s.module).__name__) for s in report.skipped] == [("8", "Tanh")]
    assert isinstance(m[1], gt.GELU)
    patched = m(x).detach()
    torch.testing.assert_close(patched, before, rtol=1e-5, atol=1e-6)
    # state_dict, torch.save, deepcopy, train/eval keep working
    assert list(m.state_dict()) == list(keys)
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    np.testing.assert_array_equal(bits(loaded(x)), bits(patched))
    np.testing.assert_array_equal(bits(copy.deepcopy(m)(x)), bits(patched))
    m.train()
    assert m[1].training
    m.eval()
    assert not m[1].training
    assert gt.patch_model(m).replaced == []                # patching twice changes nothing
    assert gt.unpatch_model(m) == ["1", "3", "5", "6"]
    assert type(m[1]) is torch.nn.GELU and not m[1].training
    np.testing.assert_array_equal(bits(m(x)), bits(before))
    # the unpatched copy restores too
    assert gt.unpatch_model(loaded) == ["1", "3", "5", "6"]
    np.testing.assert_array_equal(bits(loaded(x)), bits(before))


def test_patch_model_shared_module_and_errors():
    act = torch.nn.GELU()
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), act, torch.nn.Linear(4, 4), act)
    gt.patch_model(m)
    assert m[1] is m[3] and isinstance(m[1], gt.GELU)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        gt.patch_model(object())
    with pytest.raises(ValueError, match="replace_with must be None or one of"):
        gt.patch_model(m, replace_with="tanh")


def test_patch_model_replace_with_relu():
    m = small_model()
    report = gt.patch_model(m, replace_with="relu")
    assert all(type(r.new) is gt.ReLU for r in report.replaced) and len(report) == 4


# ------------------------------------------------------- transformers models --

transformers_needed = pytest.mark.skipif(
    not all(__import__("importlib").util.find_spec(m) for m in ("transformers",)),
    reason="transformers is not installed")


@transformers_needed
# the classes gelu_ext does not compute leave the model unpatched, which warns
# (tests/test_torch_patch.py)
@pytest.mark.filterwarnings("ignore:patch_model replaced nothing:UserWarning")
def test_every_hidden_act_class_mapped_or_reported():
    from transformers.activations import ACT2FN
    from gelu_ext._activation import supported_names
    for hf_name in ACT2FN:
        try:
            act = ACT2FN[hf_name]
        except Exception:                          # e.g. an activation needing a package
            continue
        m = torch.nn.Sequential(act)
        report = gt.patch_model(m)
        if hf_name in supported_names():
            assert len(report.replaced) == 1, hf_name
            x = torch.linspace(-6, 6, 301, dtype=torch.float64)
            np.testing.assert_allclose(m(x).numpy(), act(x).numpy(), rtol=1e-6, atol=1e-9)
        elif report.skipped:
            assert report.skipped[0].reason, hf_name
    m = torch.nn.Sequential(ACT2FN["gelu_10"])
    report = gt.patch_model(m)
    assert report.replaced == [] and "clips" in report.skipped[0].reason


def minilm_or_skip():
    pytest.importorskip("transformers")
    from gelu_ext.jobs import bert
    try:
        model_dir = bert.check_model_dir(bert.default_model_dir())
    except SystemExit as e:             # how both say the model package is missing
        pytest.skip(f"the all-MiniLM-L6-v2 wheel is not installed ({e})")
    import transformers
    transformers.logging.set_verbosity_error()
    model = transformers.BertModel.from_pretrained(str(model_dir), local_files_only=True,
                                                   attn_implementation="eager").eval()
    tok = bert.load_tokenizer(model_dir, 128)
    ids, mask, types = bert.tokenize(tok, bert.FIDELITY_SENTENCES)
    batch = {"input_ids": torch.from_numpy(np.asarray(ids, dtype=np.int64)),
             "attention_mask": torch.from_numpy(np.asarray(mask, dtype=np.int64)),
             "token_type_ids": torch.from_numpy(np.asarray(types, dtype=np.int64))}
    return model, batch, model_dir


def embed(model, batch):
    with torch.inference_mode():
        hidden = model(**batch).last_hidden_state
        m = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=1)


@pytest.mark.slow      # the real BERT
def test_real_minilm_patched_unpatched_saved(tmp_path):
    model, batch, _ = minilm_or_skip()
    before = embed(model, batch)
    report = gt.patch_model(model)
    assert len(report) == 6 and all(type(r.new) is gt.GELU for r in report.replaced)
    assert [s.name for s in report.skipped] == ["pooler.activation"]     # nn.Tanh
    calls = []
    hooks = [r.new.register_forward_hook(lambda *a: calls.append(1)) for r in report.replaced]
    after = embed(model, batch)
    assert len(calls) == 6
    for h in hooks:
        h.remove()
    assert (after - before).abs().max().item() <= 1e-6
    # save_pretrained from the patched model gives the original weights back
    model.save_pretrained(tmp_path / "saved")
    import transformers
    reloaded = transformers.BertModel.from_pretrained(str(tmp_path / "saved"),
                                                      attn_implementation="eager").eval()
    np.testing.assert_array_equal(bits(embed(reloaded, batch)), bits(before))
    assert gt.unpatch_model(model) == [r.name for r in report.replaced]
    np.testing.assert_array_equal(bits(embed(model, batch)), bits(before))


@pytest.mark.slow      # the real BERT
def test_real_minilm_relu_swap_breaks_the_geometry():
    """The article's point, in PyTorch: ReLU in place of GELU without
    retraining moves the embeddings far (the NumPy job measures mean cosine
    0.61 to the originals); the tanh approximation does not."""
    model, batch, _ = minilm_or_skip()
    before = embed(model, batch)
    gt.patch_model(model, replace_with="gelu_new")
    tanh = embed(model, batch)
    gt.unpatch_model(model)
    gt.patch_model(model, replace_with="relu")
    relu = embed(model, batch)
    cos_tanh, cos_relu = (tanh * before).sum(1), (relu * before).sum(1)
    assert cos_tanh.min().item() > 0.999
    assert cos_relu.mean().item() < 0.9


def tiny_llama():
    pytest.importorskip("transformers")
    import transformers
    cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=48,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=32)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(cfg)


def test_tiny_llama_gated_mlp_training_step():
    model = tiny_llama()
    twin = copy.deepcopy(model)
    report = gt.patch_model(model, gated_mlp=True)
    assert [type(r.new).__name__ for r in report.replaced] == ["GatedMLP", "GatedMLP"]
    assert list(model.state_dict()) == list(twin.state_dict())
    ids = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(1))
    losses = []
    for m in (model, twin):
        m.train()
        out = m(input_ids=ids, labels=ids)
        out.loss.backward()
        losses.append(out.loss.detach())
    torch.testing.assert_close(losses[0], losses[1], rtol=1e-5, atol=1e-6)
    for (n, p), (_, q) in zip(model.named_parameters(), twin.named_parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-6, msg=n)
    gt.unpatch_model(model)
    assert type(model.model.layers[0].mlp).__name__ == "LlamaMLP"


@pytest.mark.parametrize("module", ["gelu_ext.torch", "gelu_ext.torch.functional",
                                    "gelu_ext.torch._patch", "gelu_ext.torch._cpp"])
def test_docstring_examples(module):
    import doctest
    import importlib
    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


# ------------------------------------------------------------------ threads --

@pytest.mark.skipif(not gelu_ext._ufuncs._pool_threaded(), reason="built without the thread pool")
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_ops_follow_torch_num_threads_numpy_callers_keep_theirs(layout):
    from gelu_ext import _ufuncs
    x = make((512, 512), torch.float32, 0)          # 2^18 elements: threaded where allowed
    x = x if layout == "contiguous" else x.t()      # the fast path; the ufunc path
    saved = torch.get_num_threads()

    def threaded_calls(f):
        _ufuncs._pool_stats(reset=True)
        f()
        s = _ufuncs._pool_stats()
        return s["jobs"] + s["backoff"]            # a back-off is a threaded call run serially

    try:
        if _cpp_kernels():
            # the C++ kernels split work over torch's own threads: our pool
            # is never used, whatever either count says
            gelu_ext.set_num_threads(2)
            for n in (1, 2):
                torch.set_num_threads(n)
                assert threaded_calls(lambda: torch.ops.gelu_ext.gelu(x)) == 0
            assert threaded_calls(lambda: gelu_ext.fast_gelu(x.numpy())) == 1
            return
        gelu_ext.set_num_threads(2)
        torch.set_num_threads(1)
        assert threaded_calls(lambda: torch.ops.gelu_ext.gelu(x)) == 0
        assert threaded_calls(lambda: GF.gelu(x)) == 0
        assert threaded_calls(lambda: gelu_ext.fast_gelu(x.numpy())) == 1
        assert gelu_ext.get_num_threads() == 2
        gelu_ext.set_num_threads(1)
        torch.set_num_threads(2)
        assert threaded_calls(lambda: torch.ops.gelu_ext.gelu(x)) == 1
        assert threaded_calls(lambda: gelu_ext.fast_gelu(x.numpy())) == 0
    finally:
        torch.set_num_threads(saved)
        gelu_ext.set_num_threads(None)


# ------------------------------------------------ torch's own warnings --
# pyproject.toml's filterwarnings: a FutureWarning torch raises from its own
# modules (a newer torch deprecating what it still calls itself) is
# reported; the same warning from our code or the tests is an error.

def torch_warning(category, message, module):
    """``message`` as if ``module`` warned it; the warnings that were
    reported rather than raised."""
    with warnings.catch_warnings(record=True) as seen:      # keeps pytest's filters
        warnings.warn_explicit(message, category, module.replace(".", "/") + ".py", 1,
                               module=module, registry={})
    return [str(w.message) for w in seen]


def test_torchs_own_future_warning_is_reported_not_raised():
    assert torch_warning(FutureWarning, "`torch.jit.script` is deprecated", "torch.jit._script") == [
        "`torch.jit.script` is deprecated"]


@pytest.mark.parametrize("module", ["gelu_ext.torch._ops", "test_torch", "torchvision.ops"])
def test_a_future_warning_outside_torch_is_still_an_error(module):
    with pytest.raises(FutureWarning, match="deprecated"):
        torch_warning(FutureWarning, "deprecated", module)


def test_only_torchs_non_leaf_grad_warning_from_fake_tensors_is_reported():
    message = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed."
    assert torch_warning(UserWarning, message, "torch._subclasses.meta_utils") == [message]
    with pytest.raises(UserWarning):
        torch_warning(UserWarning, message, "gelu_ext.torch._ops")
    with pytest.raises(UserWarning):
        torch_warning(UserWarning, "another warning", "torch._subclasses.meta_utils")


# ---------------------------------------------------- private torch APIs --
# gelu_ext/torch/_private.py looks up every private torch API the layer
# uses, each with what happens where a torch lacks it.

def private_torch_names(path):
    """The dotted ``torch.…._name`` spellings in a module's code (comments
    and strings left out)."""
    import re
    import tokenize
    with open(path, "rb") as f:
        code = " ".join(t.string for t in tokenize.tokenize(f.readline)
                        if t.type in (tokenize.NAME, tokenize.OP))
    code = re.sub(r" ?\. ?", ".", code)
    return sorted(set(re.findall(r"\btorch(?:\.\w+)*\._(?!_)\w+", code)))      # dunders are public


@pytest.mark.parametrize("module", ["_ops", "_mode", "_cpp", "onnx", "_patch", "_routes", "nn",
                                    "functional", "_formulas", "__init__"])
def test_no_module_but_private_reaches_for_a_private_torch_name(module):
    import os
    path = os.path.join(os.path.dirname(gt.__file__), module + ".py")
    assert private_torch_names(path) == [], module


def test_the_check_sees_a_private_torch_name():
    import os
    assert {"torch._C", "torch._functorch", "torch.utils._python_dispatch"} <= set(private_torch_names(
        os.path.join(os.path.dirname(gt.__file__), "_private.py")))


def test_a_missing_private_api_is_an_import_error_naming_it_and_the_checked_releases():
    from gelu_ext.torch import _private
    with pytest.raises(ImportError, match=r"needs torch\._C\._no_such_api \(a test\), which torch "
                       r"\S+ does not have; gelu_ext\.torch was checked on torch 2\.10\.0"):
        _private._required(torch._C, "_no_such_api", "torch._C._no_such_api", "a test")


def test_the_python_fallback_of_any_requires_grad_answers_alike():
    from gelu_ext.torch import _private
    a, b = torch.ones(2), torch.ones(2, requires_grad=True)
    for args in [(a,), (a, b), (a, "none"), (b, "tanh"), ()]:
        assert _private._any_requires_grad_py(*args) == torch._C._any_requires_grad(*args), args
