"""gelu_ext's ops in ONNX: ``torch.onnx.export`` of a patched model gives a
graph of standard ONNX operators that any runtime runs.

Both exporters translate the ops without an extra argument::

    patch_model(model)
    torch.onnx.export(model, args, "model.onnx")           # dynamo (default)
    torch.onnx.export(model, args, "model.onnx", dynamo=False)   # TorchScript-based

Each forward op becomes its graph in ``_formulas.ONNX_GRAPHS``: ``gelu`` is
``Gelu(approximate=...)`` from opset 20 (below it, the erf formula
``0.5 x (1 + Erf(x / sqrt 2))`` or the tanh approximation), ``relu`` is ``Relu``,
``silu`` is ``x * Sigmoid(x)``; the fused ops add an ``Add`` or a ``Mul``.

The gradient ops have no ONNX graph: an exported graph is for inference.
The runtime's kernels are not gelu_ext's: the exported model computes at
their accuracy (ONNX Runtime 1.32's float32 ``Gelu``: 156 ULP in the negative
tail, README), not with gelu_ext's bits.

Design:

* torch 2.13 has no public registry that the dynamo exporter consults for a
  custom op: its supported hook is the per-call ``custom_translation_table``
  argument.  ``ONNX_TRANSLATIONS`` is that table (onnxscript functions, one
  per forward op), for ``torch.onnx.export(...,
  custom_translation_table=gelu_ext.torch.onnx.ONNX_TRANSLATIONS)``.
* For the call without arguments: before translating, the dynamo exporter
  decomposes every op it has no translation for with the entries of
  torch's (private) decomposition table (``_decomp.create_onnx_friendly_
  decomposition_table``).  While a dynamo export runs
  (``torch.onnx.is_in_onnx_export()``), each forward op's torch formula
  (``_formulas.TORCH_FORMULAS``) is put there, which the exporter then translates
  with torch's own table (``Gelu`` from opset 20, as above); the entries
  are taken out again by the first trace outside an export.  The hook is
  the ops' fake kernels (``_ops.FAKE_HOOKS``): the exporter runs them as
  torch.export traces the model, before it reads the table, and so does
  every other trace (``torch.compile``, ``torch.export``) before anything
  of its own reads it.  So ``import gelu_ext.torch`` changes nothing in
  torch, and nothing but the exporter ever sees the entries: inductor,
  which under ``CI`` refuses a fallback kernel for an op with a
  decomposition ("make_fallback(gelu_ext.gelu): a decomposition exists"),
  and ``ExportedProgram.run_decompositions()`` keep our ops
  (tests/test_torch.py, tests/test_torch_export.py).  Where the table is
  missing (``_private.decomposition_table``), or an ``ExportedProgram`` is
  exported (no trace runs before the exporter reads the table), the
  dynamo exporter says "No ONNX function found for gelu_ext.<op>": pass
  the table above.
* The TorchScript-based exporter (deprecated in torch, kept while it
  exists) looks symbolic functions up by op name:
  ``torch.onnx.register_custom_op_symbolic``, public, from opset 9 (Erf's):
  ``import gelu_ext.torch`` registers them there, a registry only that
  exporter reads (as ``torch.library`` holds the ops themselves).
* One ONNX graph per op (``_formulas.ONNX_GRAPHS``, beside the op's torch
  formula), written against a small emitter (``op``, ``const``, ``promote``,
  ``opset``) that each exporter fills (onnxscript for dynamo,
  ``GraphContext.op`` for TorchScript): the graph is written once for
  both.  The translations and registrations are made from the spec's
  forward ops.
* onnx and onnxscript are optional and heavy: nothing here imports them
  until an exporter calls a translation.  ``torch.onnx`` itself is part of
  torch and imports neither.
"""
import inspect

import torch

from ._formulas import ONNX_GRAPHS, TORCH_FORMULAS
from . import _ops
from ._ops import NS, OPS, _OPS
from . import _private

__all__ = ["ONNX_TRANSLATIONS", "register"]

_MIN_OPSET = 9          # the first opset with Erf


def _emit(e, name, args):
    """Op ``name``'s graph for ``args`` (its schema's arguments), with the
    emitter ``e``: tensors of mixed dtypes are first cast to the one torch
    promotes them to, in which our kernels compute too."""
    n = len(_OPS[name].args)
    tensors = e.promote(args[:n])
    return ONNX_GRAPHS[name](e, *tensors, *args[n:])


def _promote(dtypes):
    """The dtype our ops compute in for operands of ``dtypes`` (torch's promotion)."""
    out = dtypes[0]
    for d in dtypes[1:]:
        out = torch.promote_types(out, d)
    return out


# -------------------------------------------------------- dynamo: onnxscript --

class _OnnxScriptEmitter:
    """Emits through onnxscript into the dynamo exporter's graph."""

    def __init__(self):
        import onnxscript
        import onnx_ir
        self._ir = onnx_ir
        self._ops = onnxscript.opset18
        self._gelu_ops = onnxscript.opset20
        # The exporter records nodes with an onnxscript evaluator that knows
        # the opset being built; Gelu only where it exists.  Unknown: the
        # decomposition, valid in every opset.
        tracer = onnxscript.evaluator.default()
        self.opset = getattr(getattr(tracer, "opset", None), "version", 0) or 0

    def op(self, name, *inputs, **attrs):
        return getattr(self._gelu_ops if name == "Gelu" else self._ops, name)(*inputs, **attrs)

    def promote(self, xs):
        # (intermediate values have no dtype here, so constants take the inputs')
        self.dtype = self._ir.DataType[_IR_NAME[_promote([_FROM_IR_NAME[x.dtype.name] for x in xs])]]
        return [x if x.dtype == self.dtype else self._ops.Cast(x, to=self.dtype) for x in xs]

    def const(self, value):
        return self._ir.tensor(value, dtype=self.dtype)


_IR_NAME = {torch.float16: "FLOAT16", torch.bfloat16: "BFLOAT16", torch.float32: "FLOAT",
            torch.float64: "DOUBLE"}
_FROM_IR_NAME = {v: k for k, v in _IR_NAME.items()}


def _parameters(spec):
    """The op's schema as Python parameters: its tensors, then ``approximate``
    (a str annotation: an ONNX attribute to the dynamo exporter)."""
    P = inspect.Parameter
    params = [P(a, P.POSITIONAL_OR_KEYWORD) for a in spec.args]
    if spec.has_approximate:
        params.append(P("approximate", P.POSITIONAL_OR_KEYWORD, default="none", annotation=str))
    return params


def _onnxscript_function(name):
    """The dynamo exporter's translation of op ``name``: the exporter reads
    its signature, the op's arguments."""
    signature = inspect.Signature(_parameters(_OPS[name]))

    def translation(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return _emit(_OnnxScriptEmitter(), name, tuple(bound.arguments.values()))

    translation.__signature__ = signature
    translation.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()
                                   if p.annotation is not p.empty}
    translation.__name__ = translation.__qualname__ = f"_onnx_{name}"
    return translation


# one per forward op of the spec, each with its graph in _formulas.ONNX_GRAPHS
_ONNXSCRIPT = {t.name: _onnxscript_function(t.name) for t in _OPS.values() if t.grad}

#: ``{torch.ops.gelu_ext.<op>.default: onnxscript function}`` for every forward
#: op, for ``torch.onnx.export(..., custom_translation_table=...)``.
ONNX_TRANSLATIONS = {getattr(torch.ops.gelu_ext, name).default: fn for name, fn in _ONNXSCRIPT.items()}


# -------------------------------------------------------------- TorchScript --

class _TorchScriptEmitter:
    """Emits with the TorchScript-based exporter's ``GraphContext``."""

    _SUFFIX = {str: "_s", float: "_f", int: "_i"}

    def __init__(self, g):
        from torch.onnx import JitScalarType
        self._g, self._jst = g, JitScalarType
        self.opset = g.opset

    def op(self, name, *inputs, **attrs):
        return self._g.op(name, *inputs, **{k + self._SUFFIX[type(v)]: v for k, v in attrs.items()})

    def promote(self, xs):
        dtypes = [self._jst.from_value(x, self._jst.FLOAT).dtype() for x in xs]
        self.dtype = _promote(dtypes)
        to = self._jst.from_dtype(self.dtype).onnx_type()
        return [x if d == self.dtype else self._g.op("Cast", x, to_i=to) for x, d in zip(xs, dtypes)]

    def const(self, value):
        return self._g.op("Constant", value_t=torch.tensor(value, dtype=self.dtype))


def _torchscript_symbolic(name):
    from torch.onnx import symbolic_helper
    tensors = _OPS[name].args
    has_approximate = _OPS[name].has_approximate

    def symbolic(g, *args):
        return _emit(_TorchScriptEmitter(g), name, args)

    # parse_args pairs its descriptors with the function's parameters: the
    # op's own names, so its messages name them
    symbolic.__signature__ = inspect.Signature(
        [inspect.Parameter("g", inspect.Parameter.POSITIONAL_OR_KEYWORD), *_parameters(_OPS[name])])
    symbolic.__name__ = f"{name}_symbolic"
    return symbolic_helper.parse_args(*("v",) * len(tensors), *(("s",) if has_approximate else ()))(symbolic)


# ----------------------------------------------------------- registration --

_REGISTERED = []
_ADDED = {}         # op overload -> its torch formula, now in torch's decomposition table


def _export_scope():
    """The ops' fake kernels call this (Design): the forward ops' torch formulas in
    torch's decomposition table while a dynamo ONNX export runs, out of it
    at the first trace outside one."""
    if torch.onnx.is_in_onnx_export():
        if not _ADDED:
            table = _private.decomposition_table()
            if table is not None:
                for name, formula in TORCH_FORMULAS.items():
                    op = OPS[name].default
                    if op not in table:
                        table[op] = formula
                        _ADDED[op] = formula
    elif _ADDED:
        table = _private.decomposition_table()
        for op, formula in list(_ADDED.items()):
            if table is not None and table.get(op) is formula:
                del table[op]
            del _ADDED[op]


def register():
    """Make the TorchScript-based ``torch.onnx.export`` translate
    gelu_ext's ops, and the dynamo one find their torch formulas while it runs
    (Design).  ``import gelu_ext.torch`` calls it; calling it again does
    nothing."""
    if _REGISTERED:
        return
    _ops.FAKE_HOOKS.append(_export_scope)
    from torch.onnx import register_custom_op_symbolic
    for name in _ONNXSCRIPT:
        register_custom_op_symbolic(f"{NS}::{name}", _torchscript_symbolic(name), _MIN_OPSET)
    _REGISTERED.append(True)
