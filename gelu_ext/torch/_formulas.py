"""Each op's formula in torch's and in ONNX's terms: what the PyTorch layer
cannot take from the compiled kernels or derive from the op spec.

Design:

* Three tables, one entry per op each, keyed by the spec's names
  (``gelu_ext/_spec.py``; ``tests/test_spec.py`` checks the keys):
  ``TORCH_FORMULAS``  forward op -> ``torch_<op>``, the op written with
                      torch's own functions, TorchScript-typed, with the op
                      schema's arguments (an in-place op's also takes
                      torch's ``inplace`` flag): the path for tensors
                      gelu_ext has no kernel for (``_routes``, which calls
                      it by that name) and the decomposition the dynamo
                      ONNX exporter applies (``onnx``);
  ``D2``              activation (a ufunc name of a ``TorchOp.d2``) -> its
                      second derivative, a torch expression: gelu_ext has
                      no kernels for second derivatives, and the gradient
                      ops' double backward (``_ops``) needs them;
  ``ONNX_GRAPHS``     forward op -> its ONNX graph, written once against the
                      small emitter of ``onnx`` (``op``, ``const``,
                      ``opset``) that both exporters fill.
* Everything else of an op in ``gelu_ext.torch`` (the ops, their autograd,
  the functions, the modules, the routing, the ONNX registrations) is made
  or generated from the spec; adding a forward op adds one entry to each
  table here.
"""
import torch
import torch.nn.functional as F

_INV_SQRT_2PI = 0.3989422804014327          # 1/sqrt(2 pi)
_SQRT_2 = 1.4142135623730951
_K, _C, _Q = 0.7978845608028654, 0.044715, 1.702     # sqrt(2/pi), the tanh cubic's, quick GELU's
_GELU_OPSET = 20        # the first ONNX opset with Gelu
_MISH_OPSET = 18        # ... with Mish


# ---------------------------------------------- torch's own formula of each --

def torch_gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    return F.gelu(x, approximate=approximate)


def torch_gelu_bias(x: torch.Tensor, bias: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    return F.gelu(x + bias, approximate=approximate)


def torch_relu(x: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    return F.relu(x, inplace=inplace)


def torch_relu2(x: torch.Tensor) -> torch.Tensor:
    return torch.square(F.relu(x))


def torch_relu6(x: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    return F.relu6(x, inplace=inplace)


def torch_silu(x: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    return F.silu(x, inplace=inplace)


def torch_quick_gelu(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(1.702 * x)


def torch_mish(x: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    return F.mish(x, inplace=inplace)


def torch_swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return F.silu(gate) * up


def torch_geglu(gate: torch.Tensor, up: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    return F.gelu(gate, approximate=approximate) * up


TORCH_FORMULAS = {
    "gelu": torch_gelu, "gelu_bias": torch_gelu_bias, "relu": torch_relu, "relu2": torch_relu2,
    "relu6": torch_relu6, "silu": torch_silu, "quick_gelu": torch_quick_gelu, "mish": torch_mish,
    "swiglu": torch_swiglu, "geglu": torch_geglu,
}


# ------------------------------------------------- second derivatives --
# Computed in float32 at least (``_ops._second``): a few ULP, not the
# <= 1 ULP of the kernels.

def _d2_erf(x):        # GELU'' = phi(x) (2 - x^2)
    return torch.exp(-0.5 * x * x) * _INV_SQRT_2PI * (2.0 - x * x)


def _d2_tanh(x):       # u = K(x + C x^3), t = tanh u: (1-t^2) u' + x/2 (1-t^2) (u'' - 2 t u'^2)
    x2 = x * x
    du = _K * (1.0 + 3.0 * _C * x2)
    t = torch.tanh(_K * (x + _C * x * x2))
    s2 = 1.0 - t * t
    return s2 * du + 0.5 * x * s2 * (6.0 * _K * _C * x - 2.0 * t * du * du)


def _d2_sigmoid_family(k):   # (x sigmoid(k x))'' = k s (1-s) (2 + k x (1 - 2 s))
    def d2(x):
        sg = torch.sigmoid(k * x)
        return k * sg * (1.0 - sg) * (2.0 + k * x * (1.0 - 2.0 * sg))
    return d2


def _d2_piecewise_linear(x):    # relu, relu6: 0 wherever defined
    return torch.zeros_like(x)


def _d2_relu2(x):      # (relu(x)^2)'' = 2 for x > 0, else 0
    return torch.where(x > 0, 2.0, 0.0).to(x.dtype)


def _d2_mish(x):      # t = tanh(softplus x), s = sigmoid x: s (1-t^2) (2 + x (1-s) - 2 x t s)
    s = torch.sigmoid(x)
    t = torch.tanh(F.softplus(x))
    return s * (1.0 - t * t) * (2.0 + x * (1.0 - s) - 2.0 * x * t * s)


D2 = {"gelu_erf": _d2_erf, "gelu_tanh": _d2_tanh, "relu": _d2_piecewise_linear,
      "relu2": _d2_relu2, "relu6": _d2_piecewise_linear,
      "silu": _d2_sigmoid_family(1.0), "quick_gelu": _d2_sigmoid_family(_Q), "mish": _d2_mish}


# ------------------------------------------------------------ ONNX graphs --
# builder(emitter, *tensors, [approximate]), arguments as the op's schema;
# the tensors are already of one dtype (``onnx._emit``).

def _gelu(e, x, approximate):
    if e.opset >= _GELU_OPSET:
        return e.op("Gelu", x, approximate=approximate)
    if approximate == "tanh":       # 0.5 x (1 + tanh(K (x + C x^3)))
        x3 = e.op("Mul", e.op("Mul", x, x), x)
        inner = e.op("Mul", e.op("Add", x, e.op("Mul", x3, e.const(_C))), e.const(_K))
        t = e.op("Tanh", inner)
    else:                           # 0.5 x (1 + erf(x / sqrt 2))
        t = e.op("Erf", e.op("Div", x, e.const(_SQRT_2)))
    return e.op("Mul", e.op("Mul", x, e.const(0.5)), e.op("Add", t, e.const(1.0)))


def _sigmoid_gate(e, x, k=None):
    """x sigmoid(k x): silu (k None) and quick GELU."""
    s = e.op("Sigmoid", x if k is None else e.op("Mul", x, e.const(k)))
    return e.op("Mul", x, s)


def _mish(e, x):
    if e.opset >= _MISH_OPSET:
        return e.op("Mish", x)
    return e.op("Mul", x, e.op("Tanh", e.op("Softplus", x)))


def _square(e, r):
    return e.op("Mul", r, r)


def _clip6(e, r):
    """min(r, 6), NaN kept: Where, as Min takes no constant in onnxscript's
    variadic binding and Clip's bounds are attributes before opset 11."""
    six = e.const(6.0)
    return e.op("Where", e.op("Greater", r, six), six, r)


ONNX_GRAPHS = {
    "gelu": lambda e, x, approximate="none": _gelu(e, x, approximate),
    "gelu_bias": lambda e, x, bias, approximate="none": _gelu(e, e.op("Add", x, bias), approximate),
    "relu": lambda e, x: e.op("Relu", x),
    "relu2": lambda e, x: _square(e, e.op("Relu", x)),
    "relu6": lambda e, x: _clip6(e, e.op("Relu", x)),
    "silu": lambda e, x: _sigmoid_gate(e, x),
    "quick_gelu": lambda e, x: _sigmoid_gate(e, x, _Q),
    "mish": lambda e, x: _mish(e, x),
    "swiglu": lambda e, gate, up: e.op("Mul", _sigmoid_gate(e, gate), up),
    "geglu": lambda e, gate, up, approximate="none": e.op("Mul", _gelu(e, gate, approximate), up),
}
