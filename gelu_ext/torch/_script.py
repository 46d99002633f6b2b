"""The forward ops in the TorchScript subset, and torch's own form of each.

Design:

* ``torch.jit.script`` cannot compile ``functional.py`` (keyword-only
  arguments with defaults, ``isinstance`` checks on untyped arguments), and
  a module's ``forward`` that calls it fails to script.  So the choice
  between our op and torch's own function (``ours``) and each call live
  here, typed, one function per forward op; ``functional.py`` checks its
  arguments and calls them, and the modules of ``nn.py`` call them
  directly under ``torch.jit.is_scripting()`` (a branch the TorchScript
  compiler resolves statically, so the eager branch is never compiled).
  One routing, so a scripted module gives the eager module's bits.
* ``TORCH_FORMS`` is each forward op written with torch's own functions:
  the off-CPU path here, and the decomposition the dynamo ONNX exporter
  applies to an op it has no translation for (``gelu_ext.torch.onnx``).
"""
from typing import Optional

import torch
import torch.nn.functional as F

_ops = torch.ops.gelu_ext


# ------------------------------------------------- torch's own form of each --

def torch_gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    return F.gelu(x, approximate=approximate)


def torch_gelu_bias(x: torch.Tensor, bias: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    return F.gelu(x + bias, approximate=approximate)


def torch_relu(x: torch.Tensor) -> torch.Tensor:
    return F.relu(x)


def torch_relu2(x: torch.Tensor) -> torch.Tensor:
    return torch.square(F.relu(x))


def torch_relu6(x: torch.Tensor) -> torch.Tensor:
    return F.relu6(x)


def torch_silu(x: torch.Tensor) -> torch.Tensor:
    return F.silu(x)


def torch_quick_gelu(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(1.702 * x)


def torch_swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return F.silu(gate) * up


def torch_geglu(gate: torch.Tensor, up: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    return F.gelu(gate, approximate=approximate) * up


# forward op name -> torch's form (same arguments as the op's schema)
TORCH_FORMS = {
    "gelu": torch_gelu, "gelu_bias": torch_gelu_bias, "relu": torch_relu, "relu2": torch_relu2, "relu6": torch_relu6, "silu": torch_silu,
    "quick_gelu": torch_quick_gelu, "swiglu": torch_swiglu, "geglu": torch_geglu,
}


# ------------------------------------------- which calls are ours, and the calls --
# functional.py checks its arguments and calls these; the modules call them
# directly when scripted.  One routing for eager, compiled and scripted code.

def ours(t: torch.Tensor) -> bool:
    """Whether gelu_ext computes with ``t``: a dense CPU tensor of a float
    dtype.  Everything else -- other devices (meta included; a FakeTensor of
    a CPU tensor is on the CPU, so torch.compile and torch.export trace our
    op), integer, bool, complex and quantized dtypes, sparse and nested
    tensors -- goes to torch's own function, and gets exactly what torch
    gives it (relu of an int64 tensor, gelu of one raises torch's error)."""
    dt = t.dtype
    return (t.is_cpu and t.layout == torch.strided and not t.is_nested
            and (dt == torch.float32 or dt == torch.bfloat16 or dt == torch.float16
                 or dt == torch.float64))


def _inplace(input: torch.Tensor, op: str) -> torch.Tensor:
    """``input`` overwritten by ``op(input)``, with torch's in-place autograd
    behaviour (``Tensor.copy_`` is recorded as torch's in-place ops are: a
    non-leaf input or a view of one is rebased, a leaf that requires grad is
    refused, a tensor some backward saved is caught by its version counter).
    Where autograd records the call, the op reads a copy of ``input``: the op
    saves its input for backward, and the copy back would otherwise
    overwrite what it saved."""
    src = input.clone() if torch.is_grad_enabled() and input.requires_grad else input
    if op == "relu":
        result = _ops.relu(src)
    elif op == "relu6":
        result = _ops.relu6(src)
    else:
        result = _ops.silu(src)
    return input.copy_(result)


def gelu(input: torch.Tensor, approximate: str, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    if bias is None:
        if ours(input):
            return _ops.gelu(input, approximate)
        return torch_gelu(input, approximate)
    if ours(input) and ours(bias):
        return _ops.gelu_bias(input, bias, approximate)
    return torch_gelu_bias(input, bias, approximate)


def relu(input: torch.Tensor, inplace: bool) -> torch.Tensor:
    if not ours(input):
        return F.relu(input, inplace=inplace)
    return _inplace(input, "relu") if inplace else _ops.relu(input)


def relu2(input: torch.Tensor) -> torch.Tensor:
    if ours(input):
        return _ops.relu2(input)
    return torch_relu2(input)


def relu6(input: torch.Tensor, inplace: bool) -> torch.Tensor:
    if not ours(input):
        return F.relu6(input, inplace=inplace)
    return _inplace(input, "relu6") if inplace else _ops.relu6(input)


def silu(input: torch.Tensor, inplace: bool) -> torch.Tensor:
    if not ours(input):
        return F.silu(input, inplace=inplace)
    return _inplace(input, "silu") if inplace else _ops.silu(input)


def quick_gelu(input: torch.Tensor) -> torch.Tensor:
    if ours(input):
        return _ops.quick_gelu(input)
    return torch_quick_gelu(input)


def swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    if ours(gate) and ours(up):
        return _ops.swiglu(gate, up)
    return torch_swiglu(gate, up)


def geglu(gate: torch.Tensor, up: torch.Tensor, approximate: str) -> torch.Tensor:
    if ours(gate) and ours(up):
        return _ops.geglu(gate, up, approximate)
    return torch_geglu(gate, up, approximate)
