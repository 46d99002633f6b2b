"""Functions with ``torch.nn.functional``'s names and signatures, on gelu_ext's ops.

A dense (strided) CPU tensor of a float dtype (float16, bfloat16, float32,
float64) runs ``torch.ops.gelu_ext.*`` (autograd, ``torch.compile`` and
``torch.export`` included).  Every other tensor goes to torch's own function,
so it gets exactly what torch gives it: a tensor on another device (CUDA, MPS,
meta, ...), an integer, bool or complex tensor (``relu`` of an int64 tensor
works, ``gelu`` of one raises torch's error), and sparse, quantized and nested
tensors.  gelu_ext has no kernels for any of those.

``inplace=True`` (``relu``, ``relu6``, ``silu``) computes into a new tensor and copies it
back into ``input`` (``Tensor.copy_``, recorded by autograd as torch's
in-place ops are): the values torch's in-place form gives and its autograd
behaviour (a non-leaf input or a view of one is rebased, a leaf that requires
grad is refused, a tensor some backward saved is caught by its version
counter), not its memory saving.

Each function checks its arguments and calls its twin in ``_script``, where
the choice between our op and torch's function is made (the same code runs
eager, compiled and in TorchScript).
"""
import torch

from . import _script
from ._ops import check_approximate

__all__ = ["gelu", "relu", "relu2", "relu6", "silu", "quick_gelu", "swiglu", "geglu"]


def _check_tensor(name, t):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")


def gelu(input, approximate="none", *, bias=None):
    """GELU of ``input``, as ``torch.nn.functional.gelu``: exact ``x Phi(x)``
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
    """
    _check_tensor("input", input)
    check_approximate(approximate)
    if bias is not None:
        _check_tensor("bias", bias)
    return _script.gelu(input, approximate, bias)


def relu(input, inplace=False):
    """ReLU, ``max(input, 0)``, as ``torch.nn.functional.relu``."""
    _check_tensor("input", input)
    return _script.relu(input, inplace)


def relu2(input):
    """Squared ReLU, ``relu(input) ** 2`` (Primer; Hugging Face's ``relu2``)."""
    _check_tensor("input", input)
    return _script.relu2(input)


def relu6(input, inplace=False):
    """ReLU6, ``min(max(input, 0), 6)``, as ``torch.nn.functional.relu6``."""
    _check_tensor("input", input)
    return _script.relu6(input, inplace)


def silu(input, inplace=False):
    """SiLU (swish), ``input * sigmoid(input)``, as ``torch.nn.functional.silu``."""
    _check_tensor("input", input)
    return _script.silu(input, inplace)


def quick_gelu(input):
    """Quick GELU, ``input * sigmoid(1.702 input)`` (CLIP; Hugging Face's ``quick_gelu``)."""
    _check_tensor("input", input)
    return _script.quick_gelu(input)


def swiglu(gate, up):
    """SwiGLU in one pass: ``silu(gate) * up`` (LLaMA's MLP:
    ``down_proj(swiglu(gate_proj(x), up_proj(x)))``); ``gate`` and ``up``
    broadcast, and a broadcast operand's gradient is summed back to its shape."""
    _check_tensor("gate", gate)
    _check_tensor("up", up)
    return _script.swiglu(gate, up)


def geglu(gate, up, approximate="none"):
    """GEGLU in one pass: ``gelu(gate, approximate) * up``; see ``swiglu``."""
    _check_tensor("gate", gate)
    _check_tensor("up", up)
    check_approximate(approximate)
    return _script.geglu(gate, up, approximate)
