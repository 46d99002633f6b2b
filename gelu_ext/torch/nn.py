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

__all__ = ["GELU", "ReLU", "ReLUSquared", "ReLU6", "SiLU", "QuickGELU", "SwiGLU", "GEGLU", "GatedMLP"]


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


class ReLUSquared(torch.nn.Module):
    """``relu(x) ** 2`` (Primer, Nemotron; transformers' ``ReLUSquaredActivation``)."""

    def forward(self, input):
        if torch.jit.is_scripting():
            return _script.relu2(input)
        return GF.relu2(input)


class ReLU6(_InplaceActivation):
    """``torch.nn.ReLU6(inplace=...)`` on gelu_ext's kernel."""

    def forward(self, input):
        if torch.jit.is_scripting():
            return _script.relu6(input, self.inplace)
        return GF.relu6(input, self.inplace)


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


def _gated(gate, approximate, g, u):
    return GF.swiglu(g, u) if gate == "silu" else GF.geglu(g, u, approximate)


def _check_gate(gate, approximate):
    if gate not in ("silu", "gelu"):
        raise ValueError(f"gate must be 'silu' or 'gelu', got {gate!r}")
    check_approximate(approximate)


class PackedGatedMLP(torch.nn.Module):
    """Phi-3's gated MLP, gate and up in one Linear:
    ``gate, up = gate_up_proj(x).chunk(2, -1)``, then
    ``down_proj(up * act(gate))``, the activation and the product fused.

    The product is commutative in IEEE arithmetic, so ``swiglu(gate, up)``
    over the two chunk views gives the bits of ``up * silu(gate)``.  Holds
    the original block's ``gate_up_proj`` and ``down_proj`` under their names
    (same ``state_dict``); ``patch_model(..., gated_mlp=True)`` builds it.
    """

    def __init__(self, gate_up_proj, down_proj, gate="silu", approximate="none"):
        super().__init__()
        _check_gate(gate, approximate)
        self.gate_up_proj, self.down_proj = gate_up_proj, down_proj
        self.gate = gate
        self.approximate = approximate

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(_gated(self.gate, self.approximate, gate, up))

    def extra_repr(self):
        return f"gate={self.gate!r}, approximate={self.approximate!r}"


class GatedActDense(torch.nn.Module):
    """T5's gated feed-forward (``T5DenseGatedActDense``, flan-T5's
    gated-gelu): ``wo(dropout(act(wi_0(x)) * wi_1(x)))``, the activation and
    the product fused.

    ``cast_to_wo`` keeps T5's step before ``wo``: the hidden states are cast
    to ``wo.weight``'s dtype when it differs and is not int8 (flan-T5-xxl
    keeps ``wo`` in float32 under float16).  Holds the original block's
    ``wi_0``, ``wi_1``, ``wo`` and ``dropout`` under their names.
    """

    def __init__(self, wi_0, wi_1, wo, dropout, gate="gelu", approximate="tanh", cast_to_wo=True):
        super().__init__()
        _check_gate(gate, approximate)
        self.wi_0, self.wi_1, self.wo, self.dropout = wi_0, wi_1, wo, dropout
        self.gate = gate
        self.approximate = approximate
        self.cast_to_wo = cast_to_wo

    def forward(self, hidden_states):
        h = self.dropout(_gated(self.gate, self.approximate,
                                self.wi_0(hidden_states), self.wi_1(hidden_states)))
        if self.cast_to_wo:
            w = self.wo.weight
            if isinstance(w, torch.Tensor) and h.dtype != w.dtype and w.dtype != torch.int8:
                h = h.to(w.dtype)
        return self.wo(h)

    def extra_repr(self):
        return (f"gate={self.gate!r}, approximate={self.approximate!r}, "
                f"cast_to_wo={self.cast_to_wo}")


__all__ += ["PackedGatedMLP", "GatedActDense"]
