"""gelu_ext: exact and fast GELU, tanh-GELU, ReLU, SiLU, quick GELU and the
gated SwiGLU/GEGLU for NumPy arrays.

The thin functions (``fast_gelu``, ``relu``, ``silu``, ``swiglu``, ...,
each with its ``*_grad``) are what most code calls.  Under them are real
NumPy ufuncs, one per op of the op spec (``gelu_ext/_spec.py``; the README's
table lists them): each activation, its fused-bias and gated variants and
their derivatives, the older ones also under their 0.1.0 ``*_backward``
names.  They work on any shape, stride and dtype NumPy can cast to a float,
with ``out=``, ``where=`` and ``__array_ufunc__``.  ``activation(name)`` maps a Hugging Face model config's
activation name (``"gelu_new"``, ``"silu"``, ...) to the function computing it.

>>> import numpy as np
>>> from gelu_ext import fast_gelu, relu
>>> fast_gelu(np.array([-1.0, 0.0, 2.0]))
array([-0.15865525,  0.        ,  1.95449974])
>>> relu(np.array([-1.0, 2.0]))
array([0., 2.])
"""
from . import _checkout

# a checkout that was never built hands over to the installed package; the
# lines below then bind its names on this module object, which is dropped
_checkout.hand_over(__name__, __path__)

from . import _spec, _ufuncs
from . import _api
from ._api import fast_gelu, fast_gelu_grad, geglu, swiglu_grad, geglu_grad
from ._activation import activation
from ._config import show_config, get_num_threads, set_num_threads

# Every op of the spec (gelu_ext/_spec.py), and each derivative of release
# 0.1.0 under its name there too (``gelu_erf_backward`` is ``gelu_erf_grad``).
# The derivatives with a thin function (grad defaults to 1) are that function.
_THIN = [op.name for op in _spec.OPS if op.thin]
_UFUNC_NAMES = [name for name in _ufuncs.OPS if name not in _THIN]
_ALIASES = [op.alias for op in _spec.OPS if op.alias]
globals().update({n: getattr(_ufuncs, n) for n in _UFUNC_NAMES})
globals().update({op.alias: getattr(_ufuncs, op.name) for op in _spec.OPS if op.alias})
globals().update({n: getattr(_api, n) for n in _THIN})

__version__ = "0.1.0"

__all__ = ["fast_gelu", "fast_gelu_grad", *_THIN, "geglu", "swiglu_grad", "geglu_grad",
           *_UFUNC_NAMES, *_ALIASES,
           "activation", "show_config", "get_num_threads", "set_num_threads"]
