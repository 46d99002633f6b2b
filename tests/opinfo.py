"""Op records for the tests, in the manner of PyTorch's OpInfo: one record
per op of the spec (``gelu_ext/_spec.py``) with what a test needs of it.

Design:
- A test draws its ops from here by what they are (a selection of
  ``OPINFOS`` or ``torch_ops()``), never from a list of names, so an op added
  to the spec is tested wherever it fits; a test that picks one op for a
  reason names it and says why.
- Records join the spec with the built extension (``gelu_ext._ufuncs.OPS``)
  and the oracles (``gelu_ext.testing``), so a spec op without its ufunc, or
  the reverse, fails ``tests/test_spec.py`` rather than vanishing from here.
- torch is imported only by the torch helpers, when a torch test calls them.
"""
from typing import Callable, NamedTuple, Optional

import gelu_ext
from gelu_ext import _spec, _ufuncs, testing

MODES = ("none", "tanh")      # the ``approximate`` argument's values


class OpInfo(NamedTuple):
    """One ufunc: its spec row, its compiled ufunc, its oracles."""
    name: str
    ufunc: object
    nin: int
    kind: str                   # _spec.KINDS: plain, bias, gate, dgate
    base: str                   # the op whose formula it runs
    is_grad: bool               # a derivative: inputs (x, g)
    grad: Optional[str]         # a plain forward op's derivative ufunc
    public: Callable            # gelu_ext.<name>: the ufunc, or a derivative's thin function
    reference: Optional[Callable]   # gelu_ext.testing's float64 twin
    oracle: Optional[Callable]      # gelu_ext.testing's mpmath oracle
    exact: bool                 # correctly rounded
    alias: Optional[str]        # its 0.1.0 name
    spec: _spec.Op

    def __repr__(self):
        return f"OpInfo({self.name})"


OPINFOS = [OpInfo(op.name, _ufuncs.OPS[op.name].ufunc, len(op.inputs), op.kind, op.base,
                  op.is_grad, op.grad, getattr(gelu_ext, op.name),
                  testing.REFERENCE.get(op.name), testing.MP_REFERENCE.get(op.name), op.exact,
                  op.alias, op)
           for op in _spec.OPS]
OPINFO = {o.name: o for o in OPINFOS}


def ids(records):
    """pytest ids: the records' names."""
    return [r.name for r in records]


# the selections the op tests draw from
PLAIN = [o for o in OPINFOS if o.kind == "plain"]                 # f(x) and f'(x) g
TWINNED = [o for o in PLAIN if o.reference is not None]           # held to a float64 twin
ORACLED = [o for o in OPINFOS if o.oracle is not None]            # held to mpmath
PLAIN_FORWARD = [o for o in PLAIN if not o.is_grad]


# ------------------------------------------------------------- torch --

def torch_ops(forward=None):
    """The spec's torch ops (forward ones, gradient ones, or all), each with
    the extra arguments of one call: ``approximate`` alternates between
    "none" and "tanh" over the ops that take it, in spec order, so each
    mode meets forward, bias, gated and gradient ops at one call per op."""
    out, k = {}, 0
    for t in _spec.TORCH_OPS:
        extra = ()
        if t.has_approximate:
            extra, k = (MODES[k % 2],), k + 1
        if forward is None or bool(t.grad) == forward:
            out[t.name] = extra
    return out


def torch_op_modes(forward=None, kind=None, nargs=None):
    """(id, name, extra) for every mode of every torch op selected (forward
    or gradient, by kind, by number of tensor arguments): ids "gelu",
    "gelu tanh"."""
    for t in _spec.TORCH_OPS:
        if forward is not None and bool(t.grad) != forward:
            continue
        if (kind is not None and t.kind != kind) or (nargs is not None and len(t.args) != nargs):
            continue
        for mode in (MODES if t.has_approximate else (None,)):
            yield (t.name if mode in (None, "none") else f"{t.name} {mode}", t.name,
                   () if mode is None else (mode,))


class FunctionalCase(NamedTuple):
    """One call of a ``gelu_ext.torch.functional`` function and the same
    call of torch's own formula of its op (``gelu_ext.torch._formulas``, written
    with torch's functions: independent of gelu_ext's kernels)."""
    id: str
    op: str                     # the torch op it runs
    ours: Callable
    theirs: Callable
    nargs: int
    inplace: bool


def functional_cases(inplace=True, scale=4.0):
    """Every forward op with a functional function, in every mode, with
    ``bias=`` where it takes one, and in place where it takes ``inplace``.
    A one-tensor op's operand is multiplied by ``scale`` on the way in
    (None: passed as it is): by 4, ReLU6 also sees its flat part beyond 6,
    and an in-place call works on a non-leaf, as inside a model."""
    from gelu_ext.torch import _formulas
    from gelu_ext.torch import functional as GF
    for t in _spec.TORCH_OPS:
        if not (t.grad and t.functional):
            continue
        fn, formula = getattr(GF, t.functional), _formulas.TORCH_FORMULAS[t.name]
        for mode in (MODES if t.has_approximate else (None,)):
            kw = {} if mode is None else {"approximate": mode}
            tag = t.name + ("" if mode in (None, "none") else f" {mode}")
            n = len(t.args)
            one = scale if n == 1 else None
            yield FunctionalCase(tag, t.name, _scaled(fn, kw, one), _scaled(formula, kw, one), n, False)
            if t.bias:
                bias_formula = _formulas.TORCH_FORMULAS[t.bias]
                yield FunctionalCase(tag + " bias", t.bias, _scaled(fn, kw, None, bias=True),
                                     _scaled(bias_formula, kw, None), 2, False)
            if t.inplace and inplace:
                kw_in = dict(kw, inplace=True)
                yield FunctionalCase(tag + " inplace", t.name, _scaled(fn, kw_in, one),
                                     _scaled(formula, kw_in, one), n, True)


def _scaled(f, kw, scale, bias=False):
    """f(x * scale, *rest, **kw), the second operand passed as bias= if ``bias``."""
    def call(x, *rest):
        x = x if scale is None else x * scale
        if bias:
            return f(x, bias=rest[0], **kw)
        return f(x, *rest, **kw)
    return call


def torch_formula(ufunc):
    """torch's own formula (``gelu_ext.torch._formulas``) of the plain forward op
    that runs ufunc ``ufunc``, with its ``approximate`` bound: one tensor in,
    one out."""
    from gelu_ext.torch import _formulas
    for t in _spec.TORCH_OPS:
        for mode in _spec.MODES:
            if t.grad and t.kind == "plain" and t.ufunc(mode) == ufunc:
                extra = (mode,) if t.has_approximate else ()
                return lambda z, f=_formulas.TORCH_FORMULAS[t.name], e=extra: f(z, *e)
    raise LookupError(f"no plain torch op runs {ufunc}")
