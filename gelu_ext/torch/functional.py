"""Functions with ``torch.nn.functional``'s names and signatures, on gelu_ext's ops.

A dense (strided) CPU tensor of a float dtype (float16, bfloat16, float32,
float64) runs ``torch.ops.gelu_ext.*`` (autograd, ``torch.compile`` and
``torch.export`` included).  Every other tensor goes to torch's own function,
so it gets exactly what torch gives it: a tensor on another device (CUDA, MPS,
meta, ...), an integer, bool or complex tensor (``relu`` of an int64 tensor
works, ``gelu`` of one raises torch's error), and sparse, quantized and nested
tensors.  gelu_ext has no kernels for any of those.

``inplace=True`` (``relu``, ``silu``) computes into a new tensor and copies it
back into ``input`` (``Tensor.copy_``, recorded by autograd as torch's
in-place ops are): the values torch's in-place form gives and its autograd
behaviour (a non-leaf input or a view of one is rebased, a leaf that requires
grad is refused, a tensor some backward saved is caught by its version
counter), not its memory saving.  Where autograd records the call, the op
reads a copy of ``input``: the op saves its input for backward, and the
copy back would otherwise overwrite what it saved.
"""
import torch
import torch.nn.functional as F

from ._ops import check_approximate

__all__ = ["gelu", "relu", "silu", "quick_gelu", "swiglu", "geglu"]

_ops = torch.ops.gelu_ext


_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _ours(*tensors):
    """Whether gelu_ext's ops compute this call: every operand a dense CPU
    tensor of a float dtype.  device.type is "cpu" for FakeTensors of CPU
    tensors too (torch.compile, torch.export), so tracing sees our op; a meta
    tensor goes to torch.  Quantized tensors have a quantized dtype, so the
    dtype test leaves them to torch; nested (jagged) tensors report a strided
    layout, so they are tested by name."""
    return all(t.device.type == "cpu" and t.layout == torch.strided and t.dtype in _FLOATS
               and not t.is_nested for t in tensors)


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
    if bias is None:
        if not _ours(input):
            return F.gelu(input, approximate=approximate)
        return _ops.gelu(input, approximate)
    _check_tensor("bias", bias)
    if not _ours(input, bias):
        return F.gelu(input + bias, approximate=approximate)
    return _ops.gelu_bias(input, bias, approximate)


def _elementwise(op, torch_fn, input, inplace):
    """``op(input)`` (copied back into ``input`` for ``inplace``); torch's
    own ``torch_fn`` off the CPU."""
    _check_tensor("input", input)
    if not _ours(input):
        return torch_fn(input, inplace=inplace)
    if not inplace:
        return op(input)
    recorded = torch.is_grad_enabled() and input.requires_grad
    return input.copy_(op(input.clone() if recorded else input))


def relu(input, inplace=False):
    """ReLU, ``max(input, 0)``, as ``torch.nn.functional.relu``."""
    return _elementwise(_ops.relu, F.relu, input, inplace)


def silu(input, inplace=False):
    """SiLU (swish), ``input * sigmoid(input)``, as ``torch.nn.functional.silu``."""
    return _elementwise(_ops.silu, F.silu, input, inplace)


def quick_gelu(input):
    """Quick GELU, ``input * sigmoid(1.702 input)`` (CLIP; Hugging Face's ``quick_gelu``)."""
    _check_tensor("input", input)
    if not _ours(input):
        return input * torch.sigmoid(1.702 * input)
    return _ops.quick_gelu(input)


def swiglu(gate, up):
    """SwiGLU in one pass: ``silu(gate) * up`` (LLaMA's MLP:
    ``down_proj(swiglu(gate_proj(x), up_proj(x)))``); ``gate`` and ``up``
    broadcast, and a broadcast operand's gradient is summed back to its shape."""
    _check_tensor("gate", gate)
    _check_tensor("up", up)
    if not _ours(gate, up):
        return F.silu(gate) * up
    return _ops.swiglu(gate, up)


def geglu(gate, up, approximate="none"):
    """GEGLU in one pass: ``gelu(gate, approximate) * up``; see ``swiglu``."""
    _check_tensor("gate", gate)
    _check_tensor("up", up)
    check_approximate(approximate)
    if not _ours(gate, up):
        return F.gelu(gate, approximate=approximate) * up
    return _ops.geglu(gate, up, approximate)

