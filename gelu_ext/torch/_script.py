"""The forward ops in the TorchScript subset, and torch's own form of each.

Design:

* ``torch.jit.script`` cannot compile ``functional.py`` (keyword-only
  arguments with defaults, ``isinstance`` checks on untyped arguments), and
  a module's ``forward`` that calls it fails to script.  The modules of
  ``nn.py`` therefore take, under ``torch.jit.is_scripting()`` (a branch
  the TorchScript compiler resolves statically, so the eager branch is never
  compiled), the functions below: typed, one per forward op, with eager's
  choice -- ``torch.ops.gelu_ext.<op>`` on a CPU tensor, torch's own form
  otherwise -- and eager's ``inplace`` (the result copied back into
  ``input``).  Same ops, so a scripted module gives the eager module's bits.
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
    "gelu": torch_gelu, "gelu_bias": torch_gelu_bias, "relu": torch_relu, "silu": torch_silu,
    "quick_gelu": torch_quick_gelu, "swiglu": torch_swiglu, "geglu": torch_geglu,
}


# --------------------------------------------- scriptable twins of functional --

def gelu(input: torch.Tensor, approximate: str, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    if bias is None:
        if input.is_cpu:
            return _ops.gelu(input, approximate)
        return torch_gelu(input, approximate)
    if input.is_cpu and bias.is_cpu:
        return _ops.gelu_bias(input, bias, approximate)
    return torch_gelu_bias(input, bias, approximate)


def relu(input: torch.Tensor, inplace: bool) -> torch.Tensor:
    if not input.is_cpu:
        return F.relu(input, inplace=inplace)
    result = _ops.relu(input)
    return input.copy_(result) if inplace else result


def silu(input: torch.Tensor, inplace: bool) -> torch.Tensor:
    if not input.is_cpu:
        return F.silu(input, inplace=inplace)
    result = _ops.silu(input)
    return input.copy_(result) if inplace else result


def quick_gelu(input: torch.Tensor) -> torch.Tensor:
    if input.is_cpu:
        return _ops.quick_gelu(input)
    return torch_quick_gelu(input)


def swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    if gate.is_cpu and up.is_cpu:
        return _ops.swiglu(gate, up)
    return torch_swiglu(gate, up)


def geglu(gate: torch.Tensor, up: torch.Tensor, approximate: str) -> torch.Tensor:
    if gate.is_cpu and up.is_cpu:
        return _ops.geglu(gate, up, approximate)
    return torch_geglu(gate, up, approximate)
