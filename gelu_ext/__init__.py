"""gelu_ext: exact and fast GELU, tanh-GELU and ReLU for NumPy arrays.

The thin functions ``fast_gelu``, ``fast_gelu_grad``, ``relu`` and
``relu_grad`` are what most code calls.  Under them are real NumPy ufuncs
(``gelu_erf``, ``gelu_tanh``, ``relu``, the fused-bias ``*_bias`` forms and the
``*_backward`` gradients) that work on any shape, stride and dtype NumPy can
cast to a float, with ``out=``, ``where=`` and ``__array_ufunc__``.

>>> import numpy as np
>>> from gelu_ext import fast_gelu, relu
>>> fast_gelu(np.array([-1.0, 0.0, 2.0]))
array([-0.15865525,  0.        ,  1.95449974])
>>> relu(np.array([-1.0, 2.0]))
array([0., 2.])
"""
from ._ufuncs import (
    gelu_erf,
    gelu_tanh,
    relu,
    gelu_erf_bias,
    gelu_tanh_bias,
    relu_backward,
    gelu_erf_backward,
    gelu_tanh_backward,
    gelu_erf_bias_backward,
    gelu_tanh_bias_backward,
)
from ._api import fast_gelu, fast_gelu_grad, relu_grad
from ._config import show_config, get_num_threads, set_num_threads

__version__ = "0.1.0"

__all__ = [
    "fast_gelu",
    "fast_gelu_grad",
    "relu",
    "relu_grad",
    "gelu_erf",
    "gelu_tanh",
    "gelu_erf_bias",
    "gelu_tanh_bias",
    "relu_backward",
    "gelu_erf_backward",
    "gelu_tanh_backward",
    "gelu_erf_bias_backward",
    "gelu_tanh_bias_backward",
    "show_config",
    "get_num_threads",
    "set_num_threads",
]
