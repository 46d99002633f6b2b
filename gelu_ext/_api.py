"""The thin Python functions: validate the arguments, pick the ufunc, call it.

Everything about arrays (shapes, strides, broadcasting, casting, ``out=``,
overlap) is the ufunc machinery's job; nothing here loops over data.
"""
import numpy as np

from . import _ufuncs

# approximate -> the op family of src/gx_ops.h
_APPROXIMATE = {"none": "gelu_erf", "tanh": "gelu_tanh"}

# approximate -> (forward, forward with bias, grad, grad with bias)
_UFUNCS = {a: tuple(_ufuncs.OPS[base + form].ufunc for form in ("", "_bias", "_grad", "_bias_grad"))
           for a, base in _APPROXIMATE.items()}


_ROW_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Rows shorter than this gain nothing from the row-threaded path.
_MIN_ROW = 64


def _bias_rows_ok(full, bias, out):
    """Can a fused-bias call run row by row on threads (``_ufuncs._bias_rows``)?

    The Transformer case -- C-ordered (..., features) operands and a
    (features,) bias, all one float dtype -- is where NumPy's iterator calls
    the inner loop once per row, too short to thread.  Anything else (other
    layouts, dtypes, subclasses, possible overlap) goes to the ufunc."""
    x = full[0]
    if type(x) is not np.ndarray or type(bias) is not np.ndarray:
        return False
    dt = x.dtype
    if (dt not in _ROW_DTYPES or bias.dtype != dt or bias.ndim != 1 or x.ndim < 1
            or x.shape[-1] != bias.shape[0] or bias.shape[0] < _MIN_ROW
            or not (x.flags.c_contiguous and bias.flags.c_contiguous)):
        return False
    for a in full[1:]:
        if type(a) is not np.ndarray or a.dtype != dt or a.shape != x.shape or not a.flags.c_contiguous:
            return False
    if out is None:
        return True
    if (type(out) is not np.ndarray or out.dtype != dt or out.shape != x.shape
            or not out.flags.c_contiguous or not out.flags.writeable):
        return False
    # in place on an input is fine (each element is read before it is
    # written); any other overlap is left to the ufunc's overlap handling
    return not any(a is not out and np.may_share_memory(out, a) for a in (*full, bias))


def _fused(ufunc, full, bias, out):
    if _bias_rows_ok(full, bias, out):
        return _ufuncs._bias_rows(ufunc.__name__, (*full, bias),
                                  np.empty_like(full[0]) if out is None else out)
    return ufunc(*full, bias, out=out)


def _pick(approximate):
    # One dict lookup on the hot path: a 16-element call must cost about what
    # np.tanh costs, so no isinstance chains before the common case.
    try:
        return _UFUNCS[approximate]
    except (KeyError, TypeError):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}") from None


def fast_gelu(x, approximate="none", *, bias=None, out=None):
    """Gaussian Error Linear Unit, elementwise.

    Parameters
    ----------
    x : array_like
        Input. Integers and booleans are computed in floating point as
        ``np.tanh`` does; float16 stays float16.
    approximate : {'none', 'tanh'}, optional
        ``'none'`` (default) is the exact GELU, ``x * Phi(x)`` with ``Phi`` the
        standard normal CDF (<= 1 ULP in float32, <= 2 ULP in float64).
        ``'tanh'`` is ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))``.
        Same names and meaning as PyTorch's ``F.gelu(x, approximate=...)``.
    bias : array_like, optional
        If given, computes ``gelu(x + bias)`` in one pass without building
        ``x + bias``; ``bias`` broadcasts against ``x`` (typically shape
        ``(features,)`` against ``(batch, features)``).  For float inputs
        bit-identical to ``fast_gelu(x + bias)``; integer and bool inputs are
        added in the result's float dtype (no integer wrap-around).
    out : ndarray, optional
        Where to write the result (may be ``x`` itself).

    Returns
    -------
    ndarray or scalar

    Examples
    --------
    >>> import numpy as np
    >>> fast_gelu(np.array([-1.0, 2.0]))
    array([-0.15865525,  1.95449974])
    >>> fast_gelu(np.float32(1.0), approximate="tanh")
    np.float32(0.841192)
    """
    # _pick inlined (one Python call less) and out=None passed on only when
    # given: on a 16-element call each is a measurable share of the time
    try:
        ufuncs = _UFUNCS[approximate]
    except (KeyError, TypeError):
        _pick(approximate)          # raises the ValueError
    if bias is None:
        return ufuncs[0](x) if out is None else ufuncs[0](x, out=out)
    return _fused(ufuncs[1], (x,), bias, out)


def fast_gelu_grad(x, grad=None, approximate="none", *, bias=None, out=None):
    """Backward pass of GELU: ``gelu'(x) * grad`` (``gelu'(x)`` if grad is None).

    For ``approximate='none'``, ``gelu'(x) = Phi(x) + x * phi(x)``; for
    ``'tanh'`` the derivative of the tanh formula.  With ``bias``, the
    derivative is taken at ``x + bias`` in one pass.  ``gelu'(+inf) = 1``,
    ``gelu'(-inf) = 0``.

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
        return bwd(x, grad, out=out)
    return _fused(bwd_bias, (x, grad), bias, out)


def relu_grad(x, grad=None, *, out=None):
    """Backward pass of ReLU: ``grad`` where ``x > 0``, else 0.

    The derivative at 0 is taken as 0, as PyTorch does; NaN in ``x`` gives 0.

    Examples
    --------
    >>> import numpy as np
    >>> relu_grad(np.array([-1.0, 0.0, 2.0]), np.array([5.0, 5.0, 5.0]))
    array([0., 0., 5.])
    """
    if grad is None:
        grad = True    # see fast_gelu_grad
    return _ufuncs.relu_grad(x, grad, out=out)
