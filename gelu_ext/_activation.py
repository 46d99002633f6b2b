"""``activation(name)``: gelu_ext's function for a Hugging Face activation name.

Design:

* One table, ``_HF_NAMES`` (``ACTIVATIONS`` of the op spec, ``_spec.py``):
  Hugging Face ``hidden_act`` / ``hidden_activation`` name -> the name of
  the public gelu_ext function that computes its formula.  The functions are looked up on the package when ``activation`` is called, so
  what it returns *is* the public object (``activation("silu") is
  gelu_ext.silu``), never a copy or a wrapper that could drift from it.
* The five tanh-GELU names get ``fast_gelu_tanh`` below: ``fast_gelu`` with
  ``approximate="tanh"`` bound, because ``fast_gelu`` itself would compute the
  exact GELU when called as ``f(x)``.
* Names are matched exactly, as transformers' ``ACT2FN`` does: a config that
  transformers would reject is rejected here too (with a hint when only the
  case differs).
"""

# Hugging Face name -> public gelu_ext name (_spec.ACTIVATIONS).  Formulas,
# as transformers 5.24's activations.py computes them:
#   gelu               GELUActivation: torch's F.gelu, exact x Phi(x)
#   gelu_python        x/2 (1 + erf(x / sqrt 2)): exact GELU, the textbook way
#   gelu_new           NewGELUActivation: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
#   gelu_pytorch_tanh  F.gelu(x, approximate="tanh"): the same formula
#   gelu_python_tanh   the same formula written in Python
#   gelu_accurate      AccurateGELUActivation: the same formula again, with
#                      sqrt(2/pi) = math.sqrt(2/math.pi) (the double nearest
#                      to it); "accurate" only relative to quick_gelu
#   gelu_fast          FastGELUActivation: x/2 (1 + tanh(0.7978845608 x (1 + 0.044715 x^2))),
#                      the tanh formula with sqrt(2/pi) truncated to 10 digits
#   quick_gelu         x sigmoid(1.702 x)
#   relu               nn.ReLU
#   relu2              ReLUSquaredActivation: square(relu(x)) (Primer)
#   relu6              nn.ReLU6: min(max(x, 0), 6)
#   silu, swish        F.silu / nn.SiLU: x sigmoid(x)
from ._spec import HF_NAMES as _HF_NAMES      # (the spec's ACTIVATIONS)


def fast_gelu_tanh(x, *, bias=None, out=None):
    """tanh-approximate GELU: ``fast_gelu(x, approximate="tanh", bias=bias, out=out)``.

    ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))``, what Hugging Face
    calls ``gelu_new``, ``gelu_pytorch_tanh``, ``gelu_python_tanh``,
    ``gelu_accurate`` and ``gelu_fast``; ``activation(name)`` returns this
    function for those names.

    Parameters
    ----------
    x : array_like
    bias : array_like, optional
        If given, computes the activation of ``x + bias`` in one pass.
    out : ndarray, optional

    Returns
    -------
    ndarray or scalar

    Examples
    --------
    >>> import numpy as np
    >>> from gelu_ext import activation
    >>> activation("gelu_new")(np.array([-1.0, 2.0]))
    array([-0.15880801,  1.95459769])
    """
    from ._api import fast_gelu
    return fast_gelu(x, "tanh", bias=bias, out=out)


def activation(name):
    """The gelu_ext function for a Hugging Face activation name.

    ``name`` is a model config's ``hidden_act`` (BERT, LLaMA, ...) or
    ``hidden_activation`` (Gemma): a key of transformers' ``ACT2FN``.  Only
    names whose formula gelu_ext computes are accepted.

    ==================================================  =======================
    name                                                returns
    ==================================================  =======================
    ``gelu``, ``gelu_python``                           ``fast_gelu`` (exact)
    ``gelu_new``, ``gelu_pytorch_tanh``,                ``fast_gelu_tanh``:
    ``gelu_python_tanh``, ``gelu_accurate``,            ``fast_gelu(x,
    ``gelu_fast``                                       approximate="tanh")``
    ``quick_gelu``                                      ``quick_gelu``
    ``relu``                                            ``relu``
    ``relu2``                                           ``relu2``
    ``relu6``                                           ``relu6``
    ``silu``, ``swish``                                 ``silu``
    ==================================================  =======================

    Every returned function takes ``f(x, *, out=None)``; ``fast_gelu`` and
    ``fast_gelu_tanh`` also take ``bias=`` (the fused ``f(x + bias)``).

    The tanh names are one formula written five ways in transformers.
    ``gelu_accurate`` is exactly the tanh formula (its constant is
    ``math.sqrt(2 / math.pi)``; "accurate" compares it with quick_gelu, not
    with the exact GELU).  ``gelu_fast`` writes ``sqrt(2/pi)`` as
    0.7978845608, which differs from sqrt(2/pi) = 0.79788456080286... by
    3.6e-12 relative (2.9e-12 absolute): 16,000 times below float32's
    half-ULP 6.0e-8.  On the result it moves tanh GELU by at most 2.4e-11
    relative for ``|x| <= 3`` and 5.1e-10 at ``x = -12``, so in float32 the
    two are the same function; in float64 ``gelu_fast`` is a slightly
    different function than the one computed here (about 1e5 float64 ULPs
    for ``|x| <= 3``, more in the negative tail, where the relative
    difference grows like ``|x|**3``).

    Names are case-sensitive, as in transformers (``"GELU"`` is rejected with
    a hint).

    Parameters
    ----------
    name : str

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        ``name`` is not one of the names above (the message lists them).
    TypeError
        ``name`` is not a str.

    Examples
    --------
    >>> import numpy as np
    >>> import gelu_ext
    >>> act = gelu_ext.activation("silu")
    >>> act is gelu_ext.silu
    True
    >>> gelu_ext.activation("gelu")(np.array([-1.0, 2.0]))
    array([-0.15865525,  1.95449974])
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (a Hugging Face hidden_act), "
                        f"got {type(name).__name__}: {name!r}")
    try:
        public = _HF_NAMES[name]
    except KeyError:
        hint = (f"; names are case-sensitive: did you mean {name.lower()!r}?"
                if name.lower() in _HF_NAMES else "")
        raise ValueError(f"name must be one of {', '.join(map(repr, _HF_NAMES))} "
                         f"(the Hugging Face activations gelu_ext computes), "
                         f"got {name!r}{hint}") from None
    import gelu_ext
    # fast_gelu_tanh is this module's; every other one is public
    return getattr(gelu_ext, public, None) or globals()[public]


def supported_names():
    """The names ``activation`` accepts, in its table's order."""
    return list(_HF_NAMES)
