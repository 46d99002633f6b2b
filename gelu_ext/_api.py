"""The thin Python functions: validate the arguments, pick the ufunc, call it.

Everything about arrays (shapes, strides, broadcasting, casting, ``out=``,
overlap) is the ufunc machinery's job; nothing here loops over data.
"""
from . import _ufuncs

_APPROXIMATE = ("none", "tanh")

# approximate -> (forward, forward with bias, backward, backward with bias)
_UFUNCS = {
    "none": (_ufuncs.gelu_erf, _ufuncs.gelu_erf_bias,
             _ufuncs.gelu_erf_backward, _ufuncs.gelu_erf_bias_backward),
    "tanh": (_ufuncs.gelu_tanh, _ufuncs.gelu_tanh_bias,
             _ufuncs.gelu_tanh_backward, _ufuncs.gelu_tanh_bias_backward),
}


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
    ufuncs = _pick(approximate)
    # out=None is passed on only when given: keyword parsing is a measurable
    # share of a small call
    if bias is None:
        return ufuncs[0](x) if out is None else ufuncs[0](x, out=out)
    return ufuncs[1](x, bias, out=out)


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
    return bwd_bias(x, grad, bias, out=out)


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
    return _ufuncs.relu_backward(x, grad, out=out)
