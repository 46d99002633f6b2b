"""Modules named like ``torch.nn``'s, computing with gelu_ext's ops.

They hold no parameters or buffers, so a model's ``state_dict`` is the same
with them as with the modules they replace; they pickle, ``deepcopy`` and
``torch.compile``/``torch.export``/``torch.jit.script`` like any module (a
scripted module needs ``gelu_ext.torch`` imported where it is loaded, which
defines the ops it calls).
"""
import torch

from . import functional as GF
from . import _script
from ._ops import check_approximate

__all__ = ["GELU", "ReLU", "SiLU", "QuickGELU", "SwiGLU", "GEGLU", "GatedMLP"]


class GELU(torch.nn.Module):
    """``torch.nn.GELU(approximate=...)`` on gelu_ext's kernels (exact: <= 1 ULP in float32)."""

    def __init__(self, approximate="none"):
        super().__init__()
        check_approximate(approximate)
        self.approximate = approximate

    def forward(self, input):
        if torch.jit.is_scripting():        # see _script: functional is not scriptable
            return _script.gelu(input, self.approximate)
        return GF.gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class _InplaceActivation(torch.nn.Module):
    """An activation with torch.nn's ``inplace`` flag (see functional)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_InplaceActivation):
    """``torch.nn.ReLU(inplace=...)`` on gelu_ext's kernel."""

    def forward(self, input):
        if torch.jit.is_scripting():
            return _script.relu(input, self.inplace)
        return GF.relu(input, self.inplace)


class SiLU(_InplaceActivation):
    """``torch.nn.SiLU(inplace=...)`` on gelu_ext's kernel."""

    def forward(self, input):
        if torch.jit.is_scripting():
            return _script.silu(input, self.inplace)
        return GF.silu(input, self.inplace)


class QuickGELU(torch.nn.Module):
    """``x * sigmoid(1.702 x)`` (CLIP's activation, Hugging Face's ``quick_gelu``)."""

    def forward(self, input):
        if torch.jit.is_scripting():
            return _script.quick_gelu(input)
        return GF.quick_gelu(input)


class SwiGLU(torch.nn.Module):
    """``forward(gate, up) = silu(gate) * up`` in one pass."""

    def forward(self, gate, up):
        if torch.jit.is_scripting():
            return _script.swiglu(gate, up)
        return GF.swiglu(gate, up)


class GEGLU(torch.nn.Module):
    """``forward(gate, up) = gelu(gate, approximate) * up`` in one pass."""

    def __init__(self, approximate="none"):
        super().__init__()
        check_approximate(approximate)
        self.approximate = approximate

    def forward(self, gate, up):
        if torch.jit.is_scripting():
            return _script.geglu(gate, up, self.approximate)
        return GF.geglu(gate, up, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class GatedMLP(torch.nn.Module):
    """A LLaMA-style gated MLP, ``down_proj(act(gate_proj(x)) * up_proj(x))``,
    with the activation and the product fused (``swiglu`` or ``geglu``).

    It holds the original block's ``gate_proj``, ``up_proj`` and ``down_proj``
    modules themselves (same names, so the same ``state_dict`` keys and the
    same parameter objects); ``patch_model(..., gated_mlp=True)`` builds it.
    """

    def __init__(self, gate_proj, up_proj, down_proj, gate="silu", approximate="none"):
        super().__init__()
        if gate not in ("silu", "gelu"):
            raise ValueError(f"gate must be 'silu' or 'gelu', got {gate!r}")
        check_approximate(approximate)
        self.gate_proj, self.up_proj, self.down_proj = gate_proj, up_proj, down_proj
        self.gate = gate
        self.approximate = approximate

    def forward(self, x):
        g, u = self.gate_proj(x), self.up_proj(x)
        if torch.jit.is_scripting():
            h = _script.swiglu(g, u) if self.gate == "silu" else _script.geglu(g, u, self.approximate)
        else:
            h = GF.swiglu(g, u) if self.gate == "silu" else GF.geglu(g, u, self.approximate)
        return self.down_proj(h)

    def extra_repr(self):
        return (f"gate={self.gate!r}" if self.gate == "silu"
                else f"gate='gelu', approximate={self.approximate!r}")
