"""The op spec: every op of gelu_ext, once.

Design:

* Plain data, standard library only: the generator ``tools/gen_ops.py``
  loads this file by its path at build time (no compiled part, no NumPy, no
  torch), and the package imports it at run time; both read the same rows.
* Three tables, each a tuple of named records:
  ``OPS``          one ``Op`` per ufunc (the C op table, ``src/gx_ops_table.h``,
                   is generated from it: name, kernel, inputs, kind, base,
                   docstring), with what the Python layer and the tests need
                   of it: its derivative, the thin Python function of a
                   derivative, its 0.1.0 alias, its float64 twin and mpmath
                   oracle (functions of ``gelu_ext.testing``, named here so
                   that this module imports neither), its bounds;
  ``ACTIVATIONS``  one ``Activation`` per function a model names: its Hugging
                   Face names, the public function ``activation()`` returns,
                   the ``gelu_ext.torch.nn`` module ``patch_model`` puts in
                   and the ``torch.nn`` class it replaces;
  ``TORCH_OPS``    one ``TorchOp`` per ``torch.ops.gelu_ext`` op: schema,
                   ufuncs, form, gradient op, first and second derivatives of
                   its double backward; for a forward op, its
                   ``gelu_ext.torch.functional`` function and ``nn`` class
                   (names, docstrings, the ``inplace`` flag, the op a
                   ``bias=`` runs), which ``gelu_ext.torch`` makes from it
                   with the TorchScript routing and the ONNX registrations.
* What is not data stays code, once per op: the formula in C
  (``src/math/gx_math.h``) and its float64 twin (``gelu_ext/testing.py``),
  its kernel (``src/kernels/gx_k_ops.h``), and its formulas in torch's
  and ONNX's terms (``gelu_ext/torch/_forms.py``: torch's own form, the
  second derivative, the ONNX graph), each table keyed by the names here.
* Adding an op: those, its entries here and its own tests; then
  ``python tools/gen_ops.py --write`` (the C table, the stubs, the
  names of ``gelu_ext.torch.functional`` and ``nn``, the README's table).
"""
from typing import NamedTuple, Optional

KINDS = ("plain", "bias", "gate", "dgate")      # src/gx_ops.h's GX_PLAIN ... GX_DGATE, in order
DTYPES = ("float16", "bfloat16", "float32", "float64")


class Bound(NamedTuple):
    """``value`` in ``unit``: "ULP" of the exact result, "ULP(s)" of the
    derivative's scale s, or "rel" (relative to max(|exact|, s), and never
    below 1 ULP: subnormal results cannot be relatively accurate, but must not
    be flushed to 0 early)."""
    value: float
    unit: str


class Op(NamedTuple):
    """One ufunc: one row of the C op table and what Python knows of it."""
    name: str                   # public ufunc name; a derivative ends in "_grad"
    kind: str                   # one of KINDS: how the inputs reach base
    inputs: tuple               # input names: x (, g) (, b); gate, up (, g)
    base: str                   # the op whose formula this one runs (itself if plain)
    doc: str                    # the ufunc's docstring (NumPy prepends the signature)
    kernel: str = ""            # kernel name in gx_k_ops.h ("" = name)
    grad: Optional[str] = None  # the ufunc of its derivative (plain forward ops)
    thin: Optional[str] = None  # a derivative's thin public function's docstring
    alias: Optional[str] = None  # a second public name (the 0.1.0 name)
    reference: Optional[str] = None     # gelu_ext.testing's float64 twin
    oracle: Optional[str] = None        # gelu_ext.testing's mpmath oracle
    bounds: tuple = ()          # ((dtype, region, Bound), ...)
    exact: bool = False         # correctly rounded: the twin's bits, rounded once

    @property
    def c_id(self):
        return "GX_OP_" + self.name.upper()

    @property
    def c_kernel(self):
        return self.kernel or self.name

    @property
    def is_grad(self):
        return self.name.endswith("_grad")


def _bounds(f32, f64, half, unit="ULP"):
    """Bounds rows: f32 and f64 a value (region "all") or {region: Bound};
    float16 and bfloat16 ``half`` ULP (results are float32 results rounded once)."""
    rows = []
    for dt, b in (("float32", f32), ("float64", f64)):
        if isinstance(b, dict):
            rows += [(dt, region, v) for region, v in b.items()]
        else:
            rows.append((dt, "all", Bound(b, unit)))
    rows += [(dt, "all", Bound(half, unit)) for dt in ("float16", "bfloat16")]
    return tuple(rows)


_ULP1 = "<= 1 ULP in float32, <= 2 ULP in float64, tail included."
_SIG = _bounds(1, 2, 1)
_SIG_GRAD = _bounds(2, 4, 1, "ULP(s)")
_TANH_GRAD = _bounds({"bulk": Bound(2, "ULP(s)"), "tail": Bound(1e-5, "rel")},
                     {"bulk": Bound(4, "ULP(s)"), "tail": Bound(1e-13, "rel")}, 1, "ULP(s)")


def _mp(name):
    return {"reference": "ref_" + name, "oracle": "mp_" + name}


OPS = (
    Op("relu", "plain", ("x",), "relu",
       "max(x, 0) elementwise, as torch.relu; NaN and -0.0 stay as they are.",
       grad="relu_grad", reference="ref_relu", bounds=_bounds(0, 0, 0), exact=True),
    Op("relu2", "plain", ("x",), "relu2",
       "squared ReLU, relu(x)^2 (Primer), elementwise, correctly rounded;\n"
       "NaN stays NaN, x <= 0 gives 0.0.",
       grad="relu2_grad", reference="ref_relu2", bounds=_bounds(0.5, 0.5, 0.5), exact=True),
    Op("relu6", "plain", ("x",), "relu6",
       "ReLU6, min(max(x, 0), 6) elementwise, as torch.nn.ReLU6; NaN and -0.0\n"
       "stay as they are.",
       grad="relu6_grad", reference="ref_relu6", bounds=_bounds(0, 0, 0), exact=True),
    Op("gelu_erf", "plain", ("x",), "gelu_erf",
       "Exact GELU, x * Phi(x) with Phi the standard normal CDF, elementwise.\n" + _ULP1,
       grad="gelu_erf_grad", **_mp("gelu_erf"), bounds=_bounds(1, 2, 1)),
    Op("gelu_tanh", "plain", ("x",), "gelu_tanh",
       "tanh-approximate GELU, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).",
       grad="gelu_tanh_grad", **_mp("gelu_tanh"),
       bounds=_bounds({"bulk": Bound(2, "ULP"), "tail": Bound(1e-5, "rel")},
                      {"bulk": Bound(2, "ULP"), "tail": Bound(1e-13, "rel")}, 1)),
    Op("silu", "plain", ("x",), "silu",
       "SiLU (swish), x * sigmoid(x), elementwise.\n" + _ULP1,
       grad="silu_grad", **_mp("silu"), bounds=_SIG),
    Op("quick_gelu", "plain", ("x",), "quick_gelu",
       "quick GELU, x * sigmoid(1.702 x) (CLIP), elementwise.\n" + _ULP1,
       grad="quick_gelu_grad", **_mp("quick_gelu"), bounds=_SIG),
    Op("gelu_erf_bias", "bias", ("x", "b"), "gelu_erf",
       "gelu_erf(x + b) in one pass; bit-identical to the unfused form."),
    Op("gelu_tanh_bias", "bias", ("x", "b"), "gelu_tanh",
       "gelu_tanh(x + b) in one pass; bit-identical to the unfused form."),
    Op("swiglu", "gate", ("gate", "up"), "silu",
       "SwiGLU, silu(gate) * up in one pass; bit-identical to the unfused\n"
       "np.multiply(silu(gate), up) in float32 and float64."),
    Op("geglu_erf", "gate", ("gate", "up"), "gelu_erf",
       "GEGLU, gelu_erf(gate) * up in one pass; bit-identical to the unfused\n"
       "form in float32 and float64."),
    Op("geglu_tanh", "gate", ("gate", "up"), "gelu_tanh",
       "GEGLU with tanh GELU, gelu_tanh(gate) * up in one pass; bit-identical\n"
       "to the unfused form in float32 and float64."),
    Op("relu_grad", "plain", ("x", "g"), "relu_grad",
       "g where x > 0, else 0 (0 at x == 0; g for NaN x, as PyTorch).",
       alias="relu_backward", reference="ref_relu_grad", bounds=_bounds(0, 0, 0, "ULP"),
       exact=True,
       thin='''Backward pass of ReLU: ``grad`` where ``x > 0``, else 0.

    The derivative at 0 is taken as 0, as PyTorch does; NaN in ``x`` gives 0.

    Examples
    --------
    >>> import numpy as np
    >>> relu_grad(np.array([-1.0, 0.0, 2.0]), np.array([5.0, 5.0, 5.0]))
    array([0., 0., 5.])
    '''),
    Op("relu2_grad", "plain", ("x", "g"), "relu2_grad",
       "2x g where x > 0, else 0 (NaN for NaN x, as PyTorch), correctly rounded.",
       reference="ref_relu2_grad", bounds=_bounds(0.5, 0.5, 0.5), exact=True,
       thin='''Backward pass of squared ReLU, ``relu(x)**2``: ``2 x grad`` where
    ``x > 0``, else 0 (NaN in ``x`` gives NaN, as PyTorch), rounded once.

    Examples
    --------
    >>> import numpy as np
    >>> relu2_grad(np.array([-1.0, 0.0, 3.0]), np.array([5.0, 5.0, 5.0]))
    array([ 0.,  0., 30.])
    '''),
    Op("relu6_grad", "plain", ("x", "g"), "relu6_grad",
       "g where 0 < x < 6, else 0 (0 for NaN x, as PyTorch's ReLU6).",
       reference="ref_relu6_grad", bounds=_bounds(0, 0, 0), exact=True,
       thin='''Backward pass of ReLU6: ``grad`` where ``0 < x < 6``, else 0.

    As PyTorch's ``hardtanh_backward``: 0 at both kinks and for NaN ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> relu6_grad(np.array([-1.0, 3.0, 6.0]), np.array([5.0, 5.0, 5.0]))
    array([0., 5., 0.])
    '''),
    Op("gelu_erf_grad", "plain", ("x", "g"), "gelu_erf_grad",
       "(Phi(x) + x phi(x)) * g: the backward pass of exact GELU.",
       alias="gelu_erf_backward", **_mp("gelu_erf_grad"), bounds=_bounds(2, 4, 1, "ULP(s)")),
    Op("gelu_tanh_grad", "plain", ("x", "g"), "gelu_tanh_grad",
       "d/dx gelu_tanh(x) * g: the backward pass of tanh GELU.",
       alias="gelu_tanh_backward", **_mp("gelu_tanh_grad"), bounds=_TANH_GRAD),
    Op("silu_grad", "plain", ("x", "g"), "silu_grad",
       "(s + x s (1 - s)) * g, s = sigmoid(x): the backward pass of SiLU.",
       **_mp("silu_grad"), bounds=_SIG_GRAD,
       thin='''Backward pass of SiLU: ``silu'(x) * grad`` (``silu'(x)`` if grad is None).

    ``silu'(x) = s + x s (1 - s)`` with ``s = sigmoid(x)``: <= 2 ULP in float32
    in ULPs of the larger of the two terms (silu' crosses zero near
    x = -1.278), <= 4 in float64.  ``silu'(+inf) = 1``, ``silu'(-inf) = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> silu_grad(np.array([0.0, 1.0]))
    array([0.5       , 0.92767051])
    '''),
    Op("quick_gelu_grad", "plain", ("x", "g"), "quick_gelu_grad",
       "(s + 1.702 x s (1 - s)) * g, s = sigmoid(1.702 x): the backward pass\nof quick GELU.",
       **_mp("quick_gelu_grad"), bounds=_SIG_GRAD,
       thin='''Backward pass of quick GELU, ``x sigmoid(1.702 x)``: its derivative
    ``s + 1.702 x s (1 - s)`` (``s = sigmoid(1.702 x)``) times ``grad``.

    Examples
    --------
    >>> import numpy as np
    >>> quick_gelu_grad(np.array([0.0]))
    array([0.5])
    '''),
    Op("gelu_erf_bias_grad", "bias", ("x", "g", "b"), "gelu_erf_grad",
       "gelu_erf_grad(x + b, g) in one pass.", kernel="gelu_erf_grad_bias",
       alias="gelu_erf_bias_backward"),
    Op("gelu_tanh_bias_grad", "bias", ("x", "g", "b"), "gelu_tanh_grad",
       "gelu_tanh_grad(x + b, g) in one pass.", kernel="gelu_tanh_grad_bias",
       alias="gelu_tanh_bias_backward"),
    Op("swiglu_dgate", "dgate", ("gate", "up", "g"), "silu_grad",
       "silu_grad(gate, up * g): the gate's gradient of swiglu(gate, up)."),
    Op("geglu_erf_dgate", "dgate", ("gate", "up", "g"), "gelu_erf_grad",
       "gelu_erf_grad(gate, up * g): the gate's gradient of geglu_erf."),
    Op("geglu_tanh_dgate", "dgate", ("gate", "up", "g"), "gelu_tanh_grad",
       "gelu_tanh_grad(gate, up * g): the gate's gradient of geglu_tanh."),
)
OP = {op.name: op for op in OPS}


class Activation(NamedTuple):
    """A function models name: what ``activation()`` returns for its Hugging
    Face names and what ``patch_model`` puts in for them."""
    public: str                 # the gelu_ext function (gelu_ext.<public>, else _activation.<public>)
    op: str                     # the ufunc computing it
    hf_names: tuple             # transformers' ACT2FN / ACT2CLS names, matched exactly
    module: str                 # the gelu_ext.torch.nn class put in
    module_args: tuple = ()     # ((argument, value), ...) it is built with
    copy: tuple = ()            # arguments taken from the replaced module where it has them
    torch_class: Optional[str] = None   # the torch.nn class replaced by class
    class_copy: tuple = ()      # more arguments taken from an instance of torch_class
    gate: Optional[tuple] = None        # (gate, approximate) of its fused gated MLP, if any


ACTIVATIONS = (
    Activation("fast_gelu", "gelu_erf", ("gelu", "gelu_python"), "GELU", (("approximate", "none"),),
               torch_class="GELU", class_copy=("approximate",), gate=("gelu", "none")),
    Activation("fast_gelu_tanh", "gelu_tanh", ("gelu_new", "gelu_pytorch_tanh", "gelu_python_tanh",
                                  "gelu_accurate", "gelu_fast"),
               "GELU", (("approximate", "tanh"),), gate=("gelu", "tanh")),
    Activation("quick_gelu", "quick_gelu", ("quick_gelu",), "QuickGELU"),
    Activation("relu", "relu", ("relu",), "ReLU", copy=("inplace",), torch_class="ReLU"),
    Activation("relu2", "relu2", ("relu2",), "ReLUSquared"),
    Activation("relu6", "relu6", ("relu6",), "ReLU6", copy=("inplace",), torch_class="ReLU6"),
    Activation("silu", "silu", ("silu", "swish"), "SiLU", copy=("inplace",), torch_class="SiLU",
               gate=("silu", "none")),
)
HF_NAMES = {hf: a.public for a in ACTIVATIONS for hf in a.hf_names}
ACTIVATION = {a.public: a for a in ACTIVATIONS}


class TorchOp(NamedTuple):
    """One ``torch.ops.gelu_ext`` op.  ``ufuncs``: (ufunc, operand indices)
    per output, a ufunc name with ``{}`` standing for ``erf``/``tanh`` by the
    ``approximate`` argument.  A forward op names its gradient op (``grad``);
    a gradient op has none and is differentiable through ``d1`` (the
    elementwise first-derivative op, f'(x) g) and ``d2`` (the activation whose
    second derivative, a torch expression of ``gelu_ext.torch._forms``, the
    double backward uses); a gated op's ``gated`` is its forward op.
    A forward op with ``module``/``functional`` gets them in
    ``gelu_ext.torch.nn``/``functional``, shaped by its form: its tensors
    (``input`` for a plain op, as torch.nn.functional names it), then
    ``approximate`` where the schema has it, ``inplace`` where the flag is
    set, ``bias=`` where ``bias`` names the fused op it runs."""
    name: str
    schema: str                 # after the name: "(Tensor x) -> Tensor"
    kind: str                   # "plain" f(x), "bias" f(x + b), "gate" f(gate) * up
    ufuncs: tuple
    args: tuple                 # the tensor arguments' names
    grad: Optional[str] = None  # forward ops: the gradient op their backward calls
    d1: Optional[str] = None    # the first-derivative op f'(x) g
    d2: Optional[str] = None    # the activation (ufunc name, "{}" for erf/tanh) of f''
    gated: Optional[str] = None  # a gated gradient op's forward op
    module: Optional[str] = None     # its gelu_ext.torch.nn class
    functional: Optional[str] = None  # its gelu_ext.torch.functional function
    doc: str = ""               # the functional function's docstring
    module_doc: str = ""        # the nn class's docstring
    inplace: bool = False       # function and module take torch.nn's inplace flag
    bias: Optional[str] = None  # the fused op the function's bias= keyword runs

    @property
    def has_approximate(self):
        return "approximate" in self.schema

    @property
    def single(self):
        return "-> Tensor" in self.schema


_UNARY = "(Tensor x) -> Tensor"
_GRAD = "(Tensor x, Tensor grad) -> Tensor"
_A = ", str approximate='none'"

TORCH_OPS = (
    # forward ops
    TorchOp("gelu", f"(Tensor x{_A}) -> Tensor", "plain", (("gelu_{}", (0,)),), ("x",),
            grad="gelu_grad", d1="gelu_grad", module="GELU", functional="gelu", bias="gelu_bias",
            module_doc="``torch.nn.GELU(approximate=...)`` on gelu_ext's kernels (exact: <= 1 ULP "
                       "in float32).",
            doc='''GELU of ``input``, as ``torch.nn.functional.gelu``: exact ``x Phi(x)``
    (<= 1 ULP in float32, also in the negative tail) or the tanh form.

    ``bias`` (gelu_ext's addition) computes ``gelu(input + bias)`` in one pass,
    ``bias`` broadcasting against ``input``; its gradient is summed over the
    broadcast axes.

    Examples
    --------
    >>> import torch
    >>> from gelu_ext.torch import functional as GF
    >>> GF.gelu(torch.tensor([-1.0, 2.0], dtype=torch.float64))
    tensor([-0.1587,  1.9545], dtype=torch.float64)
    '''),
    TorchOp("gelu_bias", f"(Tensor x, Tensor bias{_A}) -> Tensor", "bias",
            (("gelu_{}_bias", (0, 1)),), ("x", "bias"), grad="gelu_bias_grad", d1="gelu_grad"),
    TorchOp("relu", _UNARY, "plain", (("relu", (0,)),), ("x",), grad="relu_grad",
            d1="relu_grad", module="ReLU", functional="relu", inplace=True,
            module_doc="``torch.nn.ReLU(inplace=...)`` on gelu_ext's kernel.",
            doc="ReLU, ``max(input, 0)``, as ``torch.nn.functional.relu``."),
    TorchOp("relu2", _UNARY, "plain", (("relu2", (0,)),), ("x",), grad="relu2_grad",
            d1="relu2_grad", module="ReLUSquared", functional="relu2",
            module_doc="``relu(x) ** 2`` (Primer, Nemotron; transformers' "
                       "``ReLUSquaredActivation``).",
            doc="Squared ReLU, ``relu(input) ** 2`` (Primer; Hugging Face's ``relu2``)."),
    TorchOp("relu6", _UNARY, "plain", (("relu6", (0,)),), ("x",), grad="relu6_grad",
            d1="relu6_grad", module="ReLU6", functional="relu6", inplace=True,
            module_doc="``torch.nn.ReLU6(inplace=...)`` on gelu_ext's kernel.",
            doc="ReLU6, ``min(max(input, 0), 6)``, as ``torch.nn.functional.relu6``."),
    TorchOp("silu", _UNARY, "plain", (("silu", (0,)),), ("x",), grad="silu_grad",
            d1="silu_grad", module="SiLU", functional="silu", inplace=True,
            module_doc="``torch.nn.SiLU(inplace=...)`` on gelu_ext's kernel.",
            doc="SiLU (swish), ``input * sigmoid(input)``, as ``torch.nn.functional.silu``."),
    TorchOp("quick_gelu", _UNARY, "plain", (("quick_gelu", (0,)),), ("x",),
            grad="quick_gelu_grad", d1="quick_gelu_grad", module="QuickGELU",
            functional="quick_gelu",
            module_doc="``x * sigmoid(1.702 x)`` (CLIP's activation, Hugging Face's "
                       "``quick_gelu``).",
            doc="Quick GELU, ``input * sigmoid(1.702 input)`` (CLIP; Hugging Face's "
                "``quick_gelu``)."),
    TorchOp("swiglu", "(Tensor gate, Tensor up) -> Tensor", "gate", (("swiglu", (0, 1)),),
            ("gate", "up"), grad="swiglu_grad", d1="silu_grad", module="SwiGLU",
            functional="swiglu",
            module_doc="``forward(gate, up) = silu(gate) * up`` in one pass.",
            doc='''SwiGLU in one pass: ``silu(gate) * up`` (LLaMA's MLP:
    ``down_proj(swiglu(gate_proj(x), up_proj(x)))``); ``gate`` and ``up``
    broadcast, and a broadcast operand's gradient is summed back to its shape.'''),
    TorchOp("geglu", f"(Tensor gate, Tensor up{_A}) -> Tensor", "gate", (("geglu_{}", (0, 1)),),
            ("gate", "up"), grad="geglu_grad", d1="gelu_grad", module="GEGLU",
            functional="geglu",
            module_doc="``forward(gate, up) = gelu(gate, approximate) * up`` in one pass.",
            doc="GEGLU in one pass: ``gelu(gate, approximate) * up``; see ``swiglu``."),
    # gradient ops: d(input) at the broadcast shape of all operands
    TorchOp("gelu_grad", f"(Tensor x, Tensor grad{_A}) -> Tensor", "plain",
            (("gelu_{}_grad", (0, 1)),), ("x", "grad"), d1="gelu_grad", d2="gelu_{}"),
    TorchOp("gelu_bias_grad", f"(Tensor x, Tensor bias, Tensor grad{_A}) -> Tensor", "bias",
            (("gelu_{}_bias_grad", (0, 2, 1)),), ("x", "bias", "grad"), d1="gelu_grad",
            d2="gelu_{}"),
    TorchOp("relu_grad", _GRAD, "plain", (("relu_grad", (0, 1)),), ("x", "grad"),
            d1="relu_grad", d2="relu"),
    TorchOp("relu2_grad", _GRAD, "plain", (("relu2_grad", (0, 1)),), ("x", "grad"),
            d1="relu2_grad", d2="relu2"),
    TorchOp("relu6_grad", _GRAD, "plain", (("relu6_grad", (0, 1)),), ("x", "grad"),
            d1="relu6_grad", d2="relu6"),
    TorchOp("silu_grad", _GRAD, "plain", (("silu_grad", (0, 1)),), ("x", "grad"),
            d1="silu_grad", d2="silu"),
    TorchOp("quick_gelu_grad", _GRAD, "plain", (("quick_gelu_grad", (0, 1)),), ("x", "grad"),
            d1="quick_gelu_grad", d2="quick_gelu"),
    # gated: (d_gate, d_up) = (dgate(gate, up, grad), act(gate) * grad)
    TorchOp("swiglu_grad", "(Tensor gate, Tensor up, Tensor grad) -> (Tensor, Tensor)", "gate",
            (("swiglu_dgate", (0, 1, 2)), ("swiglu", (0, 2))), ("gate", "up", "grad"),
            d1="silu_grad", d2="silu", gated="swiglu"),
    TorchOp("geglu_grad", f"(Tensor gate, Tensor up, Tensor grad{_A}) -> (Tensor, Tensor)",
            "gate", (("geglu_{}_dgate", (0, 1, 2)), ("geglu_{}", (0, 2))),
            ("gate", "up", "grad"), d1="gelu_grad", d2="gelu_{}", gated="geglu"),
)
TORCH_OP = {t.name: t for t in TORCH_OPS}


def check():
    """Problems in the tables (each names the entry): [] when consistent."""
    bad = []
    for op in OPS:
        if op.kind not in KINDS:
            bad.append(f"{op.name}: kind {op.kind!r} is not one of {KINDS}")
        if op.base not in OP:
            bad.append(f"{op.name}: base {op.base!r} is not an op")
        for field in ("grad",):
            v = getattr(op, field)
            if v is not None and v not in OP:
                bad.append(f"{op.name}: {field} {v!r} is not an op")
        if op.thin is not None and not op.is_grad:
            bad.append(f"{op.name}: a thin function is for a derivative")
        if not 1 <= len(op.inputs) <= 3:
            bad.append(f"{op.name}: {len(op.inputs)} inputs (1 to 3)")
    for t in TORCH_OPS:
        for uf, idx in t.ufuncs:
            for k in (("erf", "tanh") if "{}" in uf else ("",)):
                if uf.format(k) not in OP:
                    bad.append(f"torch op {t.name}: ufunc {uf.format(k)!r} is not an op")
            if max(idx) >= len(t.args):
                bad.append(f"torch op {t.name}: operand {max(idx)} of {len(t.args)}")
        for field in ("grad", "d1", "gated"):
            v = getattr(t, field)
            if v is not None and v not in TORCH_OP:
                bad.append(f"torch op {t.name}: {field} {v!r} is not a torch op")
        if t.grad is None and t.d2 is None:
            bad.append(f"torch op {t.name}: a gradient op needs d2")
    for a in ACTIVATIONS:
        if a.op not in OP:
            bad.append(f"activation {a.public}: op {a.op!r} is not an op")
    return bad
