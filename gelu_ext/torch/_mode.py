"""``functional_mode``: gelu_ext's kernels under a model's functional call sites.

Design:

* ``patch_model`` swaps submodules; it cannot reach ``F.silu(x)`` written in
  a ``forward`` (LFM2's MLP, Whisper's conv stem, Mamba's mixer).  Those calls
  go through PyTorch's ``__torch_function__`` protocol, so a
  ``torch.overrides.TorchFunctionMode`` sees each one and can answer it with
  ``gelu_ext.torch.functional``'s function of the same name and signature
  (which owns the CPU checks, ``inplace`` and autograd).  No function or
  method of torch is rebound, so leaving the ``with`` block leaves nothing
  behind, and ``torch.compile`` traces the mode like any other.
* One table, ``_ROUTES``: torch's callable -> how to call ours, made from
  the op spec (``TORCH_OPS``): torch's functions with the names (and so the
  signatures) of ``gelu_ext.torch.functional``'s, and ``hardtanh`` for
  ReLU6.  What is not in it, and any call whose tensor is not a CPU tensor
  of a float dtype our ops take, is torch's own call, unchanged.
* ``_counting``: the other half of the story, a ``TorchDispatchMode`` that
  counts the aten activation ops and gelu_ext's ops actually run; the tests
  and ``PatchReport.check`` read it.
"""
from collections import Counter, defaultdict
from functools import partial

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from .. import _spec
from . import _ops, _routes
from ._private import TorchDispatchMode
from . import functional as GF

__all__ = ["functional_mode"]


def _hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    # nn.ReLU6 is a Hardtanh(0, 6): its forward calls F.hardtanh, not F.relu6
    if min_val == 0 and max_val == 6:
        return GF.relu6(input, inplace)
    return F.hardtanh(input, min_val, max_val, inplace)


def _torch_callables():
    """torch's callable -> ours, same arguments: each spec function that
    torch has under its name in torch.nn.functional, torch or as a Tensor
    method (models write ``x.relu()`` too), and an in-place op's
    ``<name>_`` spelling (torch.relu_ is F.relu_).  F.gelu refuses our
    ``bias=`` before the mode sees the call."""
    routes = {F.hardtanh: _hardtanh}
    for t in _spec.TORCH_OPS:
        if not t.functional:
            continue
        ours = getattr(GF, t.functional)
        for namespace in (F, torch, torch.Tensor):
            routes.setdefault(getattr(namespace, t.functional, None), ours)
            if t.inplace:
                routes.setdefault(getattr(namespace, t.functional + "_", None),
                                  partial(ours, inplace=True))
    routes.pop(None, None)
    return routes


_ROUTES = _torch_callables()


def _routable(args, kwargs):
    x = args[0] if args else kwargs.get("input")
    if not isinstance(x, torch.Tensor) or not _routes.ours(x):
        return False
    # without ml_dtypes our ops refuse bfloat16 (see _ops); torch can still compute it
    return x.dtype != torch.bfloat16 or _ops._bfloat16_dtype() is not None


class _FunctionalMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        ours = _ROUTES.get(func)
        if ours is not None and _routable(args, kwargs):
            return ours(*args, **kwargs)
        return func(*args, **kwargs)


def functional_mode():
    """A context manager under which torch's functions named like
    ``gelu_ext.torch.functional``'s (``torch.nn.functional.gelu``, ``silu``,
    ``relu``, ``relu6``, ``torch.relu`` and ``Tensor.relu``, and the
    in-place ``relu_`` of each), and ``hardtanh`` with bounds (0, 6) (what
    ``nn.ReLU6`` calls), run gelu_ext's ops (``gelu_ext.torch.functional``'s functions, same
    arguments, ``inplace`` included) on CPU tensors of float16, bfloat16,
    float32 and float64; any other call, tensor or device is torch's.

    It reaches what ``patch_model`` cannot: activations a model's ``forward``
    calls as functions (``F.silu(self.w1(x))``).  ``torch.nn.GELU``/``SiLU``/
    ``ReLU`` modules call those functions too, so inside the block they run
    our kernels without being replaced, and so does ``nn.ReLU6``.  It works eagerly and under
    ``torch.compile`` with ``fullgraph=True``, entered around the compiled
    call or inside the compiled function.

    Examples
    --------
    >>> import torch
    >>> import torch.nn.functional as F
    >>> from gelu_ext.torch import functional_mode
    >>> x = torch.tensor([-1.0, 2.0], dtype=torch.float64)
    >>> with functional_mode():
    ...     y = F.gelu(x)
    >>> y
    tensor([-0.1587,  1.9545], dtype=torch.float64)
    """
    return _FunctionalMode()


# aten ops that compute an activation gelu_ext has a kernel for: the spec's
# functions aten has, hardtanh (ReLU6's) and sigmoid (quick GELU and
# hand-written SiLU are x * sigmoid(...)), each with its in-place op
_TORCH_ACTIVATIONS = frozenset(
    name + suffix
    for name in ["hardtanh", "sigmoid"] + [t.functional for t in _spec.TORCH_OPS
                                           if t.functional and hasattr(torch.ops.aten, t.functional)]
    for suffix in ("", "_"))


class _counting(TorchDispatchMode):
    """Counts, by name, the aten activation ops (``torch_activations``) and
    gelu_ext's ops (``gelu_ext_ops``) that run inside the block; given
    ``where`` (a callable naming the place running now: ``PatchReport.check``
    passes the innermost module's name), also the aten ones by place
    (``torch_activations_in``)."""

    def __init__(self, where=None):
        super().__init__()
        self.torch_activations = Counter()
        self.gelu_ext_ops = Counter()
        self.torch_activations_in = defaultdict(Counter)
        self._where = where

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if func.namespace == _ops.NS:
            self.gelu_ext_ops[name] += 1
        elif func.namespace == "aten" and name in _TORCH_ACTIVATIONS:
            self.torch_activations[name] += 1
            if self._where is not None:
                self.torch_activations_in[self._where()][name] += 1
        return func(*args, **(kwargs or {}))
