"""gelu_ext: exact and fast GELU, tanh-GELU and ReLU for NumPy arrays.

The thin functions ``fast_gelu``, ``fast_gelu_grad``, ``relu`` and
``relu_grad`` are what most code calls.  Under them are real NumPy ufuncs
(``gelu_erf``, ``gelu_tanh``, ``relu``, the fused-bias ``*_bias`` forms and the
``*_grad`` gradients, also named ``*_backward``) that work on any shape,
stride and dtype NumPy can cast to a float, with ``out=``, ``where=`` and
``__array_ufunc__``.

>>> import numpy as np
>>> from gelu_ext import fast_gelu, relu
>>> fast_gelu(np.array([-1.0, 0.0, 2.0]))
array([-0.15865525,  0.        ,  1.95449974])
>>> relu(np.array([-1.0, 2.0]))
array([0., 2.])
"""
from . import _ufuncs
from ._api import fast_gelu, fast_gelu_grad, relu_grad
from ._config import show_config, get_num_threads, set_num_threads

# Every op of src/gx_ops.h, and each derivative under its 0.1.0 name too
# (``gelu_erf_backward`` is ``gelu_erf_grad``).  relu_grad is the thin function.
_UFUNC_NAMES = [name for name in _ufuncs.OPS if name != "relu_grad"]
_ALIASES = [n[:-len("_grad")] + "_backward" for n in _ufuncs.OPS if _ufuncs.OPS[n].grad]
globals().update({n: getattr(_ufuncs, n) for n in _UFUNC_NAMES + _ALIASES})

__version__ = "0.1.0"

__all__ = ["fast_gelu", "fast_gelu_grad", "relu_grad", *_UFUNC_NAMES, *_ALIASES,
           "show_config", "get_num_threads", "set_num_threads"]
