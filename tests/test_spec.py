"""The op spec (gelu_ext/_spec.py) is consistent, and what is generated from
it (src/gx_ops_table.h, the stubs' block, the README's table) is up to date."""
import ast
import inspect
from pathlib import Path

import pytest

import gelu_ext
from gelu_ext import _spec, _ufuncs
from helpers import python_child

ROOT = Path(__file__).resolve().parents[1]


def test_spec_is_consistent():
    assert _spec.check() == []


def test_generated_files_match_the_spec():
    gen = ROOT / "src" / "tables" / "gen_ops.py"
    if not gen.is_file():
        pytest.skip("src/tables/gen_ops.py is not here (tests run outside the repository)")
    r = python_child([str(gen), "--check"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_compiled_table_is_the_spec():
    """The built extension's op table is the spec's (a stale build fails)."""
    assert [(o.name, o.nin, o.kind, o.base) for o in _ufuncs.OPS.values()] == [
        (op.name, len(op.inputs), op.kind, op.base) for op in _spec.OPS]
    for op in _spec.OPS:
        assert _ufuncs.OPS[op.name].ufunc.__doc__.endswith(op.doc)


def test_every_op_and_alias_is_public():
    for op in _spec.OPS:
        assert op.name in gelu_ext.__all__
        assert op.alias is None or getattr(gelu_ext, op.alias) is getattr(_ufuncs, op.name)


def test_torch_names_exist():
    torch = pytest.importorskip("torch")
    from gelu_ext.torch import functional, nn
    for t in _spec.TORCH_OPS:
        assert hasattr(torch.ops.gelu_ext, t.name)
        assert t.module is None or t.module in nn.__all__
        assert t.functional is None or t.functional in functional.__all__
    for a in _spec.ACTIVATIONS:
        assert a.module in nn.__all__
        assert a.torch_class is None or hasattr(torch.nn, a.torch_class)


FORWARD = [t for t in _spec.TORCH_OPS if t.grad]


@pytest.mark.parametrize("t", [t for t in FORWARD if t.functional], ids=lambda t: t.name)
def test_functional_function_is_made_from_its_spec_entry(t):
    pytest.importorskip("torch")
    from gelu_ext.torch import functional
    fn = getattr(functional, t.functional)
    assert (fn.__module__, fn.__name__, fn.__qualname__) == (functional.__name__,) + (t.functional,) * 2
    assert fn.__doc__ == t.doc and t.doc
    params = list(inspect.signature(fn).parameters)
    assert params[:len(t.args)] == (list(t.args) if t.kind == "gate" else ["input"])
    assert ("inplace" in params) == t.inplace
    assert ("approximate" in params) == t.has_approximate
    assert ("bias" in params) == (t.bias is not None)


@pytest.mark.parametrize("t", [t for t in FORWARD if t.module], ids=lambda t: t.name)
def test_nn_module_is_made_from_its_spec_entry(t):
    """Named where pickle and TorchScript look for it, with its spec's
    docstring and constructor arguments."""
    pytest.importorskip("torch")
    from gelu_ext.torch import nn
    cls = getattr(nn, t.module)
    assert (cls.__module__, cls.__name__, cls.__qualname__) == (nn.__name__, t.module, t.module)
    assert cls.__doc__ == t.module_doc and t.module_doc
    init = [p.name for p in inspect.signature(cls).parameters.values()
            if p.kind is p.POSITIONAL_OR_KEYWORD]        # (torch.nn.Module's: *args, **kwargs)
    assert init == ["approximate"] * t.has_approximate + ["inplace"] * t.inplace
    forward = list(inspect.signature(cls.forward).parameters)[1:]
    assert forward == (list(t.args) if t.kind == "gate" else ["input"])


def test_torch_formulas_are_keyed_by_the_spec():
    """Each forward op has its torch form and its ONNX graph; each second
    derivative the spec names has its torch expression."""
    pytest.importorskip("torch")
    from gelu_ext.torch import _forms, onnx
    names = {t.name for t in FORWARD}
    assert set(_forms.TORCH_FORMS) == names
    assert set(_forms.ONNX_GRAPHS) == names
    assert set(onnx._ONNXSCRIPT) == names
    d2 = {t.d2.format(k) for t in _spec.TORCH_OPS if t.d2 for k in ("erf", "tanh")}
    assert set(_forms.D2) == d2


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("module", ["functional", "nn"])
def test_type_checkers_see_the_runtime_signatures(module):
    """The block under ``TYPE_CHECKING`` that gen_ops.py writes (what a type
    checker or an editor reads) has the signatures the factories make."""
    pytest.importorskip("torch")
    import importlib
    mod = importlib.import_module(f"gelu_ext.torch.{module}")
    tree = ast.parse(inspect.getsource(mod))
    block = next(n for n in tree.body
                 if isinstance(n, ast.If) and getattr(n.test, "id", None) == "TYPE_CHECKING")
    seen = {}
    exec(compile(ast.Module(block.body, []), mod.__file__, "exec"), dict(vars(mod)), seen)
    assert sorted(seen) == sorted(mod.__all__ if module == "functional" else
                                  [t.module for t in FORWARD if t.module])
    for name, stub in seen.items():
        runtime = getattr(mod, name)
        if inspect.isclass(stub):
            assert _params(stub) == _params(runtime), name
            assert _params(stub.forward) == _params(runtime.forward), name
        else:
            assert _params(stub) == _params(runtime), name
