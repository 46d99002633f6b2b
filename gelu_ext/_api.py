"""The thin Python functions: validate the arguments, pick the ufunc, call it.

Everything about arrays (shapes, strides, broadcasting, casting, ``out=``,
overlap) is the ufunc machinery's job; nothing here loops over data.
``fast_gelu`` itself is compiled, in gelu_ext._ufuncs (why: see there),
with the GELU ufuncs by ``approximate`` and the fused-bias row path that
the functions here share.
"""
import numpy as np

from . import _spec, _ufuncs
from ._ufuncs import _fused, fast_gelu

# approximate -> (geglu, its gate gradient)
_GEGLU = {a: (_ufuncs.OPS["geglu" + base[4:]].ufunc, _ufuncs.OPS["geglu" + base[4:] + "_dgate"].ufunc)
          for a, base in _ufuncs.APPROXIMATE.items()}
# approximate -> (forward, forward with bias, grad, grad with bias), or the ValueError that says what is accepted
_pick = _ufuncs._gelu_ufuncs

# documented, doctested and pickled as this module's, beside the other thin functions
fast_gelu.__module__ = __name__


def fast_gelu_grad(x, grad=None, approximate="none", *, bias=None, out=None, where=True):
    """Backward pass of GELU: ``gelu'(x) * grad`` (``gelu'(x)`` if grad is None).

    For ``approximate='none'``, ``gelu'(x) = Phi(x) + x * phi(x)``; for
    ``'tanh'`` the derivative of the tanh formula.  With ``bias``, the
    derivative is taken at ``x + bias`` in one pass.  ``gelu'(+inf) = 1``,
    ``gelu'(-inf) = 0``.  ``out`` and ``where`` as for ``fast_gelu``.

    Examples
    --------
    >>> import numpy as np
    >>> fast_gelu_grad(np.array([0.0, 1.0]))
    array([0.5       , 1.08331547])
    """
    _, _, bwd, bwd_bias = _pick(approximate)
    if grad is None:
        # True casts to 1 exactly and is the lowest dtype there is, so the
        # result dtype is x's own (as np.tanh's), even for bool and int8.
        grad = True
    if bias is None:
        return bwd(x, grad, out=out, where=where)
    return _fused(bwd_bias, (x, grad), bias, out, where)


def _thin_grad(name, doc):
    """The thin function of derivative ufunc ``name`` (the spec's ``thin``):
    ``grad`` defaults to 1."""
    ufunc = getattr(_ufuncs, name)

    def thin(x, grad=None, *, out=None, where=True):
        if grad is None:
            grad = True    # see fast_gelu_grad
        return ufunc(x, grad, out=out, where=where)

    thin.__name__ = thin.__qualname__ = name
    thin.__doc__ = doc
    return thin


# relu_grad, silu_grad, quick_gelu_grad, ...: one per derivative with a thin function
globals().update({op.name: _thin_grad(op.name, op.thin) for op in _spec.OPS if op.thin})


def geglu(gate, up, approximate="none", *, out=None, where=True):
    """GEGLU: ``fast_gelu(gate, approximate) * up`` in one pass.

    Bit-identical to ``np.multiply(fast_gelu(gate, approximate), up)`` in
    float32 and float64 (and float16); ``gate`` and ``up`` broadcast like any
    binary ufunc.  A fused projection ``h`` of width ``2 d`` is split with two
    views, no copy: ``geglu(h[..., :d], h[..., d:])`` (check which half your
    model treats as the gate).

    Examples
    --------
    >>> import numpy as np
    >>> geglu(np.array([1.0, -1.0]), np.array([2.0, 2.0]))
    array([ 1.68268949, -0.31731051])
    """
    try:
        uf = _GEGLU[approximate][0]
    except (KeyError, TypeError):
        _pick(approximate)          # raises the ValueError
    return uf(gate, up, out=out, where=where)


def _out_pair(out):
    if out is None:
        return None, None
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError(f"out must be None or a pair (d_gate, d_up) of arrays or None, got {out!r}")
    return out


def _reduce_to(a, shape, out):
    """``a`` summed over the axes it was broadcast along, so that it has
    ``shape`` (as autograd does for a broadcast operand), into ``out`` if given."""
    # np.sum only (no ndarray methods): Dask arrays and xarray DataArrays
    # reduce their own way and stay what they are
    lead = len(np.shape(a)) - len(shape)
    if lead > 0:
        a = np.sum(a, axis=tuple(range(lead)))
    ones = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(a)[i] != 1)
    if ones:
        a = np.sum(a, axis=ones, keepdims=True)
    if out is None or out is a:
        return a
    np.copyto(out, a)
    return out


def _gated_grad(fwd, dgate, gate, up, grad, out):
    """(dgate(gate, up, grad), fwd(gate, grad)), each reduced to its operand's shape."""
    o_gate, o_up = _out_pair(out)
    full = np.broadcast_shapes(np.shape(gate), np.shape(up), np.shape(grad))
    # d_gate may go straight to its out only if that is not an input the
    # second call still reads (gate, grad) and needs no reduction
    direct = (o_gate is not None and np.shape(o_gate) == full
              and not any(np.may_share_memory(o_gate, a) for a in (gate, grad)))
    d_gate = dgate(gate, up, grad, out=o_gate if direct else None)
    d_up = fwd(gate, grad, out=o_up if o_up is not None and np.shape(o_up) == full else None)
    return (_reduce_to(d_gate, np.shape(gate), o_gate),
            _reduce_to(d_up, np.shape(up), o_up))


def swiglu_grad(gate, up, grad, *, out=None):
    """Backward pass of ``swiglu(gate, up) = silu(gate) * up``: ``(d_gate, d_up)``.

    ``d_gate = silu_grad(gate, up * grad)`` (``up * grad`` rounded to the
    dtype first, as autograd computes it) and ``d_up = silu(gate) * grad``,
    each bit-identical to that composition.  An operand broadcast against the
    others gets its gradient summed over the broadcast axes, so each result
    has its operand's shape.  ``out`` is None or a pair ``(d_gate, d_up)``
    (either may be None).

    Examples
    --------
    >>> import numpy as np
    >>> d_gate, d_up = swiglu_grad(np.array([0.0, 1.0]), np.array([2.0, 2.0]), np.array([1.0, 1.0]))
    >>> d_gate
    array([1.        , 1.85534102])
    >>> d_up
    array([0.        , 0.73105858])
    """
    return _gated_grad(_ufuncs.swiglu, _ufuncs.swiglu_dgate, gate, up, grad, out)


def geglu_grad(gate, up, grad, approximate="none", *, out=None):
    """Backward pass of ``geglu(gate, up, approximate)``: ``(d_gate, d_up)``,
    ``d_gate = fast_gelu_grad(gate, up * grad, approximate)`` and
    ``d_up = fast_gelu(gate, approximate) * grad``; see ``swiglu_grad``.

    Examples
    --------
    >>> import numpy as np
    >>> d_gate, d_up = geglu_grad(np.array([1.0]), np.array([2.0]), np.array([1.0]))
    >>> d_gate, d_up
    (array([2.16663094]), array([0.84134475]))
    """
    try:
        fwd, dgate = _GEGLU[approximate]
    except (KeyError, TypeError):
        _pick(approximate)          # raises the ValueError
    return _gated_grad(fwd, dgate, gate, up, grad, out)
