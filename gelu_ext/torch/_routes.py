"""The routing of the forward ops, for eager, compiled and TorchScript code:
which tensors gelu_ext computes with (``ours``) and each op's call
(``ROUTES``), written in the TorchScript subset, with torch's own form of
each for the rest.

Design:

* ``torch.jit.script`` cannot compile ``functional.py`` (keyword-only
  arguments with defaults, ``isinstance`` checks on untyped arguments), and
  a module's ``forward`` that calls it fails to script.  So the choice
  between our op and torch's own function (``ours``) and each call live
  here, typed: ``ROUTES``, one function per forward op of the op spec's
  ``TORCH_OPS``, made by the factory of its form (``form_of``: its
  tensors, and whether it takes ``approximate``, ``inplace`` or ``bias``),
  so an in-place op is one by the spec's flag, not by its name.
  ``functional.py`` checks its arguments and calls them, and the modules of
  ``nn.py`` call them directly under ``torch.jit.is_scripting()`` (a branch
  the TorchScript compiler resolves statically, so the eager branch is
  never compiled).  One routing, so a scripted module gives the eager
  module's bits.
* The path for every tensor gelu_ext has no kernel for is the op written
  with torch's own functions, ``_formulas.TORCH_FORMULAS``.
"""
from typing import Optional

import torch

from .. import _spec
from ._formulas import TORCH_FORMULAS

_ops = torch.ops.gelu_ext


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


def _inplace_source(input: torch.Tensor) -> torch.Tensor:
    """What an in-place call's op reads: ``input``, or a copy of it where
    autograd records the call (the op saves its input for backward, and
    the copy back into ``input`` would otherwise overwrite what it saved).
    The copy back is ``Tensor.copy_``, recorded as torch's in-place ops
    are: a non-leaf input or a view of one is rebased, a leaf that requires
    grad is refused, a tensor some backward saved is caught by its version
    counter."""
    return input.clone() if torch.is_grad_enabled() and input.requires_grad else input


# One routing per forward op of the spec, by its form: a factory per form
# below, each making a typed function that TorchScript compiles (the op and
# torch's form are closure values it resolves), named after the op.

def _input(op, form):
    def route(input: torch.Tensor) -> torch.Tensor:
        if ours(input):
            return op(input)
        return form(input)
    return route


def _input_inplace(op, form):
    def route(input: torch.Tensor, inplace: bool) -> torch.Tensor:
        if not ours(input):
            return form(input, inplace)
        if inplace:
            return input.copy_(op(_inplace_source(input)))
        return op(input)
    return route


def _input_approximate_bias(op, form, bias_op, bias_form):
    def route(input: torch.Tensor, approximate: str,
              bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        if bias is None:
            if ours(input):
                return op(input, approximate)
            return form(input, approximate)
        if ours(input) and ours(bias):
            return bias_op(input, bias, approximate)
        return bias_form(input, bias, approximate)
    return route


def _gate_up(op, form):
    def route(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
        if ours(gate) and ours(up):
            return op(gate, up)
        return form(gate, up)
    return route


def _gate_up_approximate(op, form):
    def route(gate: torch.Tensor, up: torch.Tensor, approximate: str) -> torch.Tensor:
        if ours(gate) and ours(up):
            return op(gate, up, approximate)
        return form(gate, up, approximate)
    return route


def form_of(spec):
    """The form of forward op ``spec`` (a ``_spec.TorchOp``): how its
    function, module and routing take their arguments.  One of
    ``"input"``, ``"input, inplace"``, ``"input, approximate, bias"``,
    ``"gate, up"``, ``"gate, up, approximate"``."""
    if spec.kind == "gate":
        return "gate, up, approximate" if spec.has_approximate else "gate, up"
    if spec.kind == "plain" and spec.has_approximate and spec.bias and not spec.inplace:
        return "input, approximate, bias"
    if spec.kind == "plain" and not spec.has_approximate and not spec.bias:
        return "input, inplace" if spec.inplace else "input"
    raise ValueError(f"torch op {spec.name}: no function, module or routing for its form "
                     f"(kind {spec.kind!r}, approximate {spec.has_approximate}, "
                     f"inplace {spec.inplace}, bias {spec.bias!r})")


def _route(spec):
    op, form, shape = getattr(_ops, spec.name), TORCH_FORMULAS[spec.name], form_of(spec)
    if shape == "input, approximate, bias":
        route = _input_approximate_bias(op, form, getattr(_ops, spec.bias), TORCH_FORMULAS[spec.bias])
    else:
        route = {"input": _input, "input, inplace": _input_inplace, "gate, up": _gate_up,
                 "gate, up, approximate": _gate_up_approximate}[shape](op, form)
    route.__name__ = route.__qualname__ = spec.name
    return route


#: forward op name -> its routing: what ``functional`` calls after checking
#: the arguments, and a module's ``forward`` when scripted
ROUTES = {t.name: _route(t) for t in _spec.TORCH_OPS if t.functional}
