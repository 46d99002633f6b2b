"""gelu_ext.torch leaving eager PyTorch: ``torch.onnx.export`` and ``torch.jit.script``.

ONNX: a patched model (and the functional functions) exports, with either
exporter and no extra argument, to a graph of standard ONNX operators only
(``Gelu`` where the opset has it, its erf formula or tanh approximation below), which ONNX
Runtime runs to the eager model's values (float rounding apart: its kernels
are not ours).  ``ONNX_TRANSLATIONS``, the table for ``custom_translation_table``,
does the same.

TorchScript: each module, and a patched model, scripts; the scripted module
gives the eager module's bits (same ops) and survives ``torch.jit.save`` /
``torch.jit.load``.

The dynamo exporter takes seconds per model (the first call in a process
also imports onnxscript and builds its registry): all but one of those
exports are ``slow``, as are BERT and the fresh interpreters.
"""
import functools
import io
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="gelu_ext.torch needs PyTorch (pip install '.[torch]')")

import gelu_ext.torch as gt                                # noqa: E402
from gelu_ext.torch import functional as GF                # noqa: E402
from gelu_ext.torch import _ops                            # noqa: E402
from gelu_ext.torch._formulas import TORCH_FORMULAS       # noqa: E402
from helpers import python_child                           # noqa: E402

# torch 2.13's dynamo exporter trips over its own pytree deprecation (a
# FutureWarning, which the suite's "error" filter would make fatal): not ours.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:`isinstance\(treespec, LeafSpec\)` is deprecated:FutureWarning")

FORWARD_OPS = [t.name for t in _ops._spec.TORCH_OPS if t.grad]
TS_DEPRECATED = "legacy TorchScript-based ONNX export"
# ONNX Runtime's float32 kernels against ours (<= 1 ULP): relative in the
# bulk, absolute in the tails, where its Gelu is 156 ULP off (README)
RTOL, ATOL = 1e-5, 1e-6


def onnx_deps():
    pytest.importorskip("onnx")
    pytest.importorskip("onnxscript")
    return pytest.importorskip("onnxruntime")


class EveryOp(torch.nn.Module):
    """Every forward op: the torch.nn activations ``patch_model`` swaps (each
    torch class of the spec, and GELU's tanh approximation), gelu_ext's gated
    modules, and every function of the spec (with approximate="tanh" and
    bias= where it takes them)."""

    def __init__(self):
        super().__init__()
        self.gate, self.up = torch.nn.Linear(8, 16), torch.nn.Linear(8, 16)
        self.bias = torch.nn.Parameter(torch.randn(16))
        self.acts = torch.nn.ModuleList(
            [getattr(torch.nn, a.torch_class)() for a in _ops._spec.ACTIVATIONS if a.torch_class]
            + [torch.nn.GELU("tanh")])
        self.swiglu, self.geglu = gt.SwiGLU(), gt.GEGLU("tanh")

    def forward(self, x):
        g, u = self.gate(x), self.up(x)
        h = self.swiglu(g, u) + self.geglu(g, u)
        for t in _ops._spec.TORCH_OPS:
            if t.functional:
                fn, tensors = getattr(GF, t.functional), ((g, u) if t.kind == "gate" else (u,))
                for extra in (((), ("tanh",)) if t.has_approximate else ((),)):
                    h = h + fn(*tensors, *extra)
                    if t.bias:
                        h = h + fn(*tensors, *extra, bias=self.bias)
        return torch.stack([act(h) for act in self.acts])


def patched_every_op():
    torch.manual_seed(0)
    m = EveryOp().eval()
    report = gt.patch_model(m)
    assert len(report) == len(m.acts), report
    return m, (torch.randn(5, 8),)


def onnx_ops(model_proto):
    """{(domain, op_type)} of the graph's nodes ('' is the standard domain)."""
    return {(n.domain, n.op_type) for n in model_proto.graph.node}


def run_onnx(model_proto, args):
    ort = onnx_deps()
    session = ort.InferenceSession(model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)}
    return session.run(None, feeds)[0]


def export_dynamo(model, args, **kwargs):
    onnx_deps()
    return torch.onnx.export(model, args, dynamo=True, verbose=False, **kwargs).model_proto


def export_torchscript(model, args, opset):
    onnx = pytest.importorskip("onnx")
    buf = io.BytesIO()
    with pytest.warns(DeprecationWarning, match=TS_DEPRECATED):
        torch.onnx.export(model, args, buf, dynamo=False, opset_version=opset)
    return onnx.load_from_string(buf.getvalue())


def assert_standard_and_equal(model_proto, model, args, opset):
    ops = onnx_ops(model_proto)
    assert {d for d, _ in ops} == {""}, ops                 # no gelu_ext domain
    names = {o for _, o in ops}
    if opset >= 20:
        assert "Gelu" in names and "Erf" not in names, names
    else:
        assert "Gelu" not in names and {"Erf", "Tanh"} <= names, names
    if opset >= 18:
        assert "Mish" in names, names
    else:
        assert "Mish" not in names and "Softplus" in names, names
    assert {"Relu", "Sigmoid", "Mul"} <= names, names
    with torch.no_grad():
        expected = model(*args).numpy()
    np.testing.assert_allclose(run_onnx(model_proto, args), expected, rtol=RTOL, atol=ATOL)


# -------------------------------------------------------------- ONNX export --

def default_opset(model_proto):
    return next(o.version for o in model_proto.opset_import if o.domain == "")


def test_dynamo_export_of_a_patched_model_needs_no_argument():
    # at this torch's default opset (below 20 before torch 2.9): Gelu or its formulas
    m, args = patched_every_op()
    proto = export_dynamo(m, args)
    assert_standard_and_equal(proto, m, args, opset=default_opset(proto))


@pytest.mark.slow
def test_dynamo_export_below_opset_20_uses_the_erf_and_tanh_formulas():
    m, args = patched_every_op()
    assert_standard_and_equal(export_dynamo(m, args, opset_version=18), m, args, opset=18)


@pytest.mark.slow
@pytest.mark.parametrize("opset", [18, 20], ids=["opset18", "opset20"])
def test_dynamo_export_with_the_translation_table(opset):
    from gelu_ext.torch.onnx import ONNX_TRANSLATIONS
    called = set()

    def counted(op, fn):
        @functools.wraps(fn)            # the exporter reads fn's signature
        def wrapper(*args, **kwargs):
            called.add(op)
            return fn(*args, **kwargs)
        return wrapper

    table = {op: counted(op, fn) for op, fn in ONNX_TRANSLATIONS.items()}
    m, args = patched_every_op()
    proto = export_dynamo(m, args, opset_version=opset, custom_translation_table=table)
    assert called == set(ONNX_TRANSLATIONS)
    assert_standard_and_equal(proto, m, args, opset=opset)


# torch's own deprecation inside its pytree, raised as the exporter copies
# the program (attributed to copyreg, so not caught by the torch filter)
@pytest.mark.filterwarnings("default:.isinstance.treespec, LeafSpec.. is deprecated:FutureWarning")
@pytest.mark.slow                       # a dynamo ONNX export: a second or more
def test_an_exported_program_exports_with_the_translation_table():
    """An ExportedProgram is no trace the exporter runs (the ops' torch formulas
    are not in torch's table then): the table argument is the way."""
    from gelu_ext.torch.onnx import ONNX_TRANSLATIONS
    m, args = patched_every_op()
    ep = torch.export.export(m, args)
    proto = export_dynamo(ep, args, opset_version=20, custom_translation_table=ONNX_TRANSLATIONS)
    assert_standard_and_equal(proto, m, args, opset=20)


@pytest.mark.parametrize("opset", [17, 20], ids=["opset17", "opset20"])
def test_torchscript_exporter_of_a_patched_model(opset):
    m, args = patched_every_op()
    assert_standard_and_equal(export_torchscript(m, args, opset), m, args, opset=opset)


def test_translation_table_covers_every_forward_op():
    from gelu_ext.torch.onnx import ONNX_TRANSLATIONS
    forward = {name for name, spec in _ops._OPS.items() if spec.grad is not None}
    assert forward == set(FORWARD_OPS)
    assert set(ONNX_TRANSLATIONS) == {_ops.OPS[name].default for name in FORWARD_OPS}


class MixedDtypes(torch.nn.Module):
    def forward(self, x, bias):
        return GF.gelu(x, bias=bias) + GF.swiglu(x, bias)


@pytest.mark.parametrize("exporter", ["torchscript", pytest.param("dynamo", marks=pytest.mark.slow),
                                      pytest.param("table", marks=pytest.mark.slow)])
def test_mixed_dtypes_are_promoted_as_the_ops_promote_them(exporter):
    """float16 x with a float32 bias computes in float32, in ONNX too.
    (float32 and float64 would do as well, but ONNX Runtime has no float64 Erf.)"""
    args = (torch.randn(3, 4, dtype=torch.float16), torch.randn(4))
    m = MixedDtypes().eval()
    if exporter == "torchscript":
        proto = export_torchscript(m, args, 20)
    else:
        from gelu_ext.torch.onnx import ONNX_TRANSLATIONS
        proto = export_dynamo(m, args, custom_translation_table=ONNX_TRANSLATIONS if exporter == "table" else None)
    got = run_onnx(proto, args)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, m(*args).numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.slow                       # a fresh interpreter importing torch: seconds
def test_importing_gelu_ext_torch_imports_neither_onnx_nor_onnxscript(tmp_path):
    code = "import sys, gelu_ext.torch; print(sorted({'onnx', 'onnxscript', 'onnx_ir'} & set(sys.modules)))"
    r = python_child(["-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "[]", (r.stdout, r.stderr[-2000:])


def formulas_in_torchs_table():
    from torch._decomp import decomposition_table
    return sorted(str(op) for op in decomposition_table if str(op).startswith("gelu_ext."))


@pytest.mark.slow                       # a fresh interpreter importing torch: seconds
def test_import_leaves_torchs_decomposition_table_alone(tmp_path):
    code = ("import torch._decomp as d, gelu_ext.torch; "
            "print([str(op) for op in d.decomposition_table if str(op).startswith('gelu_ext.')])")
    r = python_child(["-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "[]", (r.stdout, r.stderr[-2000:])


@pytest.mark.slow                       # a dynamo ONNX export: a second or more
def test_the_formulas_are_in_torchs_table_only_while_an_onnx_export_runs():
    m, args = patched_every_op()
    export_dynamo(m, args)
    assert formulas_in_torchs_table() == sorted(f"gelu_ext.{name}.default" for name in TORCH_FORMULAS)
    torch.export.export(m, args)            # the next trace outside an export
    assert formulas_in_torchs_table() == []


def test_the_exporters_decomposition_leaves_torch_export_alone():
    """The torch formulas registered for the ONNX exporter are not applied by
    torch.export's own decompositions: an ExportedProgram keeps our ops."""
    m = torch.nn.Sequential(torch.nn.Linear(8, 8), gt.GELU(), gt.SiLU()).eval()
    ep = torch.export.export(m, (torch.randn(2, 8),)).run_decompositions()
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert {"gelu_ext.gelu.default", "gelu_ext.silu.default"} <= targets, targets


def tiny_bert():
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=37, vocab_size=100)
    torch.manual_seed(0)
    model = transformers.BertModel(config).eval()
    ids = torch.randint(0, 100, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.long)
    with torch.no_grad():
        unpatched = model(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
    report = gt.patch_model(model)
    assert [type(r.new) for r in report.replaced] == [gt.GELU, gt.GELU], report
    return model, (ids, mask), unpatched


class LastHiddenState(torch.nn.Module):
    """BERT called with tensors only: the TorchScript exporter traces
    positional arguments, which BertModel.forward's signature mixes up."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, ids, mask):
        return self.bert(input_ids=ids, attention_mask=mask).last_hidden_state


@pytest.mark.slow
# what the TorchScript exporter says of transformers' own code (traced Python
# conditions, advanced indexing), not of ours
@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")
@pytest.mark.filterwarnings("ignore:Exporting aten..index operator:UserWarning")
@pytest.mark.parametrize("exporter", ["dynamo", "torchscript"])
def test_patched_bert_exports_and_runs_as_the_unpatched_model(exporter):
    model, args, unpatched = tiny_bert()
    if exporter == "dynamo":
        proto = export_dynamo(model, args)
    else:
        proto = export_torchscript(LastHiddenState(model), args, 17)
    assert {d for d, _ in onnx_ops(proto)} == {""}
    np.testing.assert_allclose(run_onnx(proto, args), unpatched, rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------- TorchScript --

def linear():
    return torch.nn.Linear(8, 8)


def spec_modules():
    """Each module of the spec's forward ops, built as it can be: plain,
    with approximate="tanh", with inplace=True."""
    out = {}
    for t in _ops._spec.TORCH_OPS:
        if t.module:
            cls = getattr(gt, t.module)
            out[t.module] = cls
            if t.has_approximate:
                out[t.module + "-tanh"] = functools.partial(cls, "tanh")
            if t.inplace:
                out[t.module + "-inplace"] = functools.partial(cls, inplace=True)
    return out


MODULES = {
    **spec_modules(),
    # the fused gated MLP with each gate an activation of the spec names
    **{f"GatedMLP-{g}" + ("" if a == "none" else f"-{a}"):
       (lambda g=g, a=a: gt.GatedMLP(linear(), linear(), linear(), gate=g, approximate=a))
       for g, a in dict.fromkeys(act.gate for act in _ops._spec.ACTIVATIONS if act.gate)},
}
GATED = tuple(t.module for t in _ops._spec.TORCH_OPS if t.module and t.kind == "gate")
INPLACE_MODULES = [n for n in MODULES if n.endswith("-inplace")]


def inputs_for(name, dtype=torch.float32, device="cpu"):
    gen = torch.Generator().manual_seed(1)
    x = (torch.randn(4, 8, generator=gen, dtype=dtype) * 4).to(device)
    return (x, torch.randn(8, generator=gen, dtype=dtype).to(device)) if name.startswith(GATED) else (x,)


def bits(t):
    return t.detach().view(torch.int32 if t.dtype == torch.float32 else torch.int64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", MODULES)
def test_scripted_module_gives_the_eager_bits(name, dtype):
    torch.manual_seed(0)
    eager = MODULES[name]().to(dtype)
    scripted = torch.jit.script(eager)
    expected = eager(*(a.clone() for a in inputs_for(name, dtype)))
    got = scripted(*(a.clone() for a in inputs_for(name, dtype)))
    assert torch.equal(bits(got), bits(expected))


@pytest.mark.parametrize("name", INPLACE_MODULES)
def test_scripted_inplace_writes_into_its_input_as_eager(name):
    x = inputs_for(name)[0]
    expected = MODULES[name]()(x.clone())
    got = torch.jit.script(MODULES[name]())(x)
    assert got.data_ptr() == x.data_ptr() and torch.equal(x, expected)


@pytest.mark.parametrize("name", INPLACE_MODULES)
def test_scripted_inplace_under_autograd_gives_eagers_gradient(name):
    """In a scripted model too, an in-place call leaves backward intact."""
    def grad(module):
        torch.manual_seed(0)
        lin = torch.nn.Linear(4, 6).double()
        x = torch.randn(3, 4, dtype=torch.float64)
        module(lin(x)).sum().backward()
        return lin.weight.grad

    torch.testing.assert_close(grad(torch.jit.script(MODULES[name]())), grad(MODULES[name]()),
                               rtol=0, atol=0)


@pytest.mark.parametrize("name", [n for n in MODULES if not n.startswith("GatedMLP")])
def test_scripted_module_off_the_cpu_takes_torchs_function(name):
    """A meta tensor (as a CUDA one would) goes to torch's own function."""
    args = inputs_for(name, device="meta")
    got = torch.jit.script(MODULES[name]())(*args)
    assert got.device.type == "meta" and got.shape == MODULES[name]()(*args).shape


def llama_like():
    """A LLaMA-style gated MLP block between two layers (patched with gated_mlp=True)."""
    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj, self.up_proj, self.down_proj = linear(), linear(), linear()
            self.act_fn = torch.nn.SiLU()

        def forward(self, x):
            return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))

    return torch.nn.Sequential(linear(), torch.nn.GELU(), MLP(), torch.nn.ReLU(), linear(),
                               torch.nn.GELU("tanh"))


@pytest.mark.parametrize("gated_mlp", [False, True], ids=["activations", "gated-mlp"])
def test_patched_model_scripts_and_round_trips(gated_mlp):
    torch.manual_seed(0)
    m = llama_like()
    assert len(gt.patch_model(m, gated_mlp=gated_mlp)) == 4
    x = torch.randn(3, 8)
    scripted = torch.jit.script(m)
    assert torch.equal(bits(scripted(x)), bits(m(x)))
    buf = io.BytesIO()
    torch.jit.save(scripted, buf)
    buf.seek(0)
    assert torch.equal(bits(torch.jit.load(buf)(x)), bits(m(x)))


def test_patched_model_still_unpatches_after_scripting():
    m = llama_like()
    gt.patch_model(m)
    torch.jit.script(m)
    assert sorted(gt.unpatch_model(m)) == ["1", "2.act_fn", "3", "5"]


@pytest.mark.slow
def test_scripted_model_loads_in_a_fresh_process(tmp_path):
    m = llama_like()
    gt.patch_model(m, gated_mlp=True)
    x = torch.randn(3, 8)
    torch.jit.save(torch.jit.script(m), str(tmp_path / "m.pt"))
    torch.save((x, m(x).detach()), tmp_path / "xy.pt")
    code = textwrap.dedent(f"""
        import torch, gelu_ext.torch
        m = torch.jit.load({str(tmp_path / 'm.pt')!r})
        x, y = torch.load({str(tmp_path / 'xy.pt')!r})
        assert torch.equal(m(x), y)
        print("ok")
    """)
    r = python_child(["-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


class NotScriptable(torch.nn.Module):
    """A model whose own code TorchScript rejects (``*args``), holding our module."""

    def __init__(self):
        super().__init__()
        self.act = gt.GELU()

    def forward(self, *xs):
        return self.act(xs[0])


def test_scripting_again_after_a_failure_works():
    """A model that fails to script (in its own code) leaves nothing behind
    that breaks the next script of our modules ("Can't redefine method")."""
    for _ in range(2):
        with pytest.raises(Exception, match="variable number of arguments"):
            torch.jit.script(NotScriptable())
    for _ in range(2):
        m = torch.nn.Sequential(gt.GELU(), gt.SiLU())
        x = torch.randn(4)
        assert torch.equal(torch.jit.script(m)(x), m(x))
