"""The op spec (gelu_ext/_spec.py) is consistent, and what is generated from
it (src/gx_ops_table.h, the stubs' block, the PyTorch layer's routings,
functions and modules, the README's table) is up to date."""
import inspect
from pathlib import Path

import numpy as np
import pytest

import gelu_ext
from gelu_ext import _spec, _ufuncs
from helpers import python_child

ROOT = Path(__file__).resolve().parents[1]


def test_spec_is_consistent():
    assert _spec.check() == []


def test_check_names_a_missing_docstring(monkeypatch):
    """A family whose docstrings are not in _docs is reported by name (and
    the spec still imports), not a KeyError deep in the derivation."""
    from gelu_ext import _docs
    monkeypatch.delitem(_docs.UFUNC, "mish_grad")
    monkeypatch.delitem(_docs.MODULE, "Mish")
    bad = _spec.check()
    assert "mish_grad: no docstring in _docs.UFUNC" in bad
    assert "Mish: no docstring in _docs.MODULE" in bad


def test_generated_files_match_the_spec():
    gen = ROOT / "tools" / "gen_ops.py"
    if not gen.is_file():
        pytest.skip("tools/gen_ops.py is not here (tests run outside the repository)")
    r = python_child([str(gen), "--check"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_compiled_table_is_the_spec():
    """The built extension's op table is the spec's (a stale build fails)."""
    assert [(o.name, o.nin, o.kind, o.base) for o in _ufuncs.OPS.values()] == [
        (op.name, len(op.inputs), op.kind, op.base) for op in _spec.OPS]
    for op in _spec.OPS:
        assert _ufuncs.OPS[op.name].ufunc.__doc__.endswith(op.doc)


@pytest.mark.parametrize("op", _spec.OPS, ids=lambda op: op.name)
def test_every_op_is_a_public_ufunc_with_its_inputs_and_loops(op):
    """The compiled ufunc of each spec op: its name, its number of inputs,
    one output, a loop per float dtype (bfloat16's: tests/test_bfloat16.py),
    reached under its public name (a derivative's thin function computes it)
    and its 0.1.0 alias."""
    uf = _ufuncs.OPS[op.name].ufunc
    n = len(op.inputs)
    assert (uf.__name__, uf.nin, uf.nout) == (op.name, n, 1)
    assert {"e" * n + "->e", "f" * n + "->f", "d" * n + "->d"} <= set(uf.types)
    public = getattr(gelu_ext, op.name)
    if op.thin:
        args = [np.linspace(-4.0, 4.0, 9)] * n
        np.testing.assert_array_equal(public(*args), uf(*args))
    else:
        assert public is uf
    assert op.alias is None or getattr(gelu_ext, op.alias) is uf


def test_activations_name_existing_classes():
    """What patch_model puts in is a gelu_ext.torch.nn class (an activation
    names it by hand, apart from the torch ops that make the classes), and
    what it replaces is torch's."""
    torch = pytest.importorskip("torch")
    from gelu_ext.torch import nn
    for a in _spec.ACTIVATIONS:
        assert a.module in nn.__all__, a.public
        assert a.torch_class is None or isinstance(getattr(torch.nn, a.torch_class, None), type)


FORWARD = [t for t in _spec.TORCH_OPS if t.grad]


def _tensors(t, torch):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(3, 4, generator=g, dtype=torch.float64) * 3 for _ in t.args]


def _modes(t):
    return [("none",), ("tanh",)] if t.has_approximate else [()]


@pytest.mark.parametrize("t", [t for t in FORWARD if t.functional], ids=lambda t: t.name)
def test_functional_function_runs_its_op(t):
    """``gelu_ext.torch.functional.<name>``: found where pickle and
    TorchScript look for it; its tensors, then ``approximate``, reach the op
    (each mode gives the op's bits in that mode); ``inplace=True`` writes
    into its input; ``bias=`` runs the fused op."""
    torch = pytest.importorskip("torch")
    from gelu_ext.torch import functional
    fn = getattr(functional, t.functional)
    assert (fn.__module__, fn.__name__, fn.__qualname__) == (functional.__name__,) + (t.functional,) * 2
    op = getattr(torch.ops.gelu_ext, t.name)
    xs = _tensors(t, torch)
    for extra in _modes(t):
        want = op(*xs, *extra)
        assert torch.equal(fn(*xs, *extra), want)
        if t.inplace:
            y = xs[0].clone()
            assert fn(y, *extra, inplace=True) is y and torch.equal(y, want)
        if t.bias:
            b = xs[0][0] * 0.5
            assert torch.equal(fn(xs[0], *extra, bias=b), getattr(torch.ops.gelu_ext, t.bias)(xs[0], b, *extra))
    # named as torch.nn.functional names them: a plain op's tensor is "input"
    params = list(inspect.signature(fn).parameters)
    assert params[:len(t.args)] == (list(t.args) if t.kind == "gate" else ["input"])
    assert ("inplace" in params) == t.inplace and ("bias" in params) == (t.bias is not None)


@pytest.mark.parametrize("t", [t for t in FORWARD if t.module], ids=lambda t: t.name)
def test_nn_module_runs_its_op(t):
    """``gelu_ext.torch.nn.<Module>``: found where pickle and TorchScript
    look for it; built with each ``approximate`` (and ``inplace``), its
    forward gives the op's bits in that mode (in place: into its input)."""
    torch = pytest.importorskip("torch")
    from gelu_ext.torch import nn
    cls = getattr(nn, t.module)
    assert (cls.__module__, cls.__name__, cls.__qualname__) == (nn.__name__, t.module, t.module)
    op = getattr(torch.ops.gelu_ext, t.name)
    xs = _tensors(t, torch)
    for extra in _modes(t):
        want = op(*xs, *extra)
        assert torch.equal(cls(*extra)(*xs), want)
        if t.inplace:
            y = xs[0].clone()
            assert cls(*extra, inplace=True)(y) is y and torch.equal(y, want)
    forward = list(inspect.signature(cls.forward).parameters)[1:]
    assert forward == (list(t.args) if t.kind == "gate" else ["input"])


def test_torch_formulas_are_keyed_by_the_spec():
    """Each forward op has its torch formula (``torch_<op>``, the name its
    routing calls) and its ONNX graph; each second derivative the spec
    names has its torch expression."""
    pytest.importorskip("torch")
    from gelu_ext.torch import _formulas, onnx
    names = {t.name for t in FORWARD}
    assert set(_formulas.TORCH_FORMULAS) == names
    assert all(f is getattr(_formulas, "torch_" + n) for n, f in _formulas.TORCH_FORMULAS.items())
    assert set(_formulas.ONNX_GRAPHS) == names
    assert set(onnx._ONNXSCRIPT) == names
    d2 = {a for t in _spec.TORCH_OPS if t.d2 for a in t.d2.values()}
    assert set(_formulas.D2) == d2


@pytest.mark.parametrize("t", [t for t in FORWARD if t.functional], ids=lambda t: t.name)
def test_routing_scripts_and_takes_its_functions_parameters(t):
    """``_routes.<op>``, which the function and the module call (written by
    gen_ops.py): TorchScript compiles it, and it takes the function's
    parameters in their order, with their defaults, all positional."""
    torch = pytest.importorskip("torch")
    from gelu_ext.torch import _routes, functional
    routing = getattr(_routes, t.name)
    torch.jit.script(routing)
    fn = inspect.signature(getattr(functional, t.functional)).parameters.values()
    assert [(p.name, p.default) for p in inspect.signature(routing).parameters.values()] == [
        (p.name, p.default) for p in fn]
    assert {p.kind for p in inspect.signature(routing).parameters.values()} == {
        inspect.Parameter.POSITIONAL_OR_KEYWORD}
