"""Typed use of gelu_ext's public API, checked by mypy --strict against the
stubs (gelu_ext/__init__.pyi): run ``mypy`` from the repository root (the
configuration is in pyproject.toml) or tests/test_typing.py.  Never executed.

Each ``assert_type`` pins a return type; each ``# type: ignore[...]`` marks a
call the stubs must reject (``warn_unused_ignores`` makes an accepted one an
error).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from typing_extensions import assert_type

import gelu_ext
from gelu_ext import fast_gelu, fast_gelu_grad, relu_grad


def f32(n: int) -> NDArray[np.float32]:
    # declared, not inferred: NumPy >= 2.3's stubs also type the shape
    # (linspace gives ndarray[tuple[int], ...]), which out= would carry
    return np.zeros(n, dtype=np.float32)


x, g, b, out = f32(9), f32(9), f32(9), f32(9)

# arrays and sequences in, an ndarray out
assert_type(fast_gelu(x), NDArray[np.floating[Any]])
assert_type(fast_gelu(x, "tanh"), NDArray[np.floating[Any]])
assert_type(fast_gelu(x, approximate="none", bias=b), NDArray[np.floating[Any]])
assert_type(fast_gelu([0.5, -1.0]), NDArray[np.floating[Any]])
assert_type(fast_gelu_grad(x), NDArray[np.floating[Any]])
assert_type(fast_gelu_grad(x, g, "tanh", bias=b), NDArray[np.floating[Any]])
assert_type(fast_gelu_grad(x, None, "tanh"), NDArray[np.floating[Any]])
assert_type(relu_grad(x, g), NDArray[np.floating[Any]])

# scalars in, a NumPy scalar out
assert_type(fast_gelu(1.0), np.floating[Any])
assert_type(fast_gelu(np.float32(1.0), "tanh"), np.floating[Any])
assert_type(fast_gelu_grad(0.5, 2.0), np.floating[Any])
assert_type(relu_grad(3), np.floating[Any])

# out= gives that array back, with its type
assert_type(fast_gelu(x, out=out), NDArray[np.float32])
assert_type(fast_gelu(x, "tanh", bias=b, out=out), NDArray[np.float32])
assert_type(fast_gelu_grad(x, g, out=out), NDArray[np.float32])
assert_type(relu_grad(x, g, out=out), NDArray[np.float32])
# where= as a ufunc takes it, with or without out=
assert_type(fast_gelu(x, bias=b, out=out, where=x > 0), NDArray[np.float32])
assert_type(fast_gelu_grad(x, g, where=[True, False]), NDArray[np.floating[Any]])
assert_type(gelu_ext.silu_grad(x, out=out, where=True), NDArray[np.float32])
assert_type(gelu_ext.geglu(x, g, where=x > 0), NDArray[np.floating[Any]])


class Lazy:
    """Stands for a Dask array or an xarray DataArray: its own __array_ufunc__."""

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Lazy:
        return self


assert_type(fast_gelu(Lazy()), Any)
assert_type(fast_gelu(x, bias=Lazy()), Any)
assert_type(fast_gelu_grad(Lazy(), Lazy(), "tanh"), Any)
assert_type(relu_grad(Lazy()), Any)

# SiLU, quick GELU and the gated forms (gradients of the gated ones: a pair)
assert_type(gelu_ext.silu_grad(x, g), NDArray[np.floating[Any]])
assert_type(gelu_ext.quick_gelu_grad(x, out=out), NDArray[np.float32])
assert_type(gelu_ext.geglu(x, g, "tanh"), NDArray[np.floating[Any]])
assert_type(gelu_ext.swiglu_grad(x, g, g), tuple[NDArray[np.floating[Any]], NDArray[np.floating[Any]]])
assert_type(gelu_ext.geglu_grad(x, b, g, "tanh", out=(out, None)),
            tuple[NDArray[np.floating[Any]], NDArray[np.floating[Any]]])
assert_type(gelu_ext.geglu_grad(Lazy(), x, g), tuple[Any, Any])
act = gelu_ext.activation("gelu_new")
y = act(x)
assert_type(gelu_ext.silu, np.ufunc)
assert_type(gelu_ext.geglu_erf_dgate, np.ufunc)

# the ufuncs
u: np.ufunc = gelu_ext.gelu_erf
assert_type(gelu_ext.gelu_tanh_bias_grad, np.ufunc)
assert_type(gelu_ext.relu_backward, np.ufunc)
assert gelu_ext.gelu_erf_bias.nin == 2

# configuration
assert_type(gelu_ext.get_num_threads(), int)
gelu_ext.set_num_threads(2)
gelu_ext.set_num_threads(np.int64(2))
gelu_ext.set_num_threads(None)
cfg: dict[str, Any] = gelu_ext.show_config(print_=False)
version: str = gelu_ext.__version__

# what the stubs reject
fast_gelu(x, "fast")  # type: ignore[call-overload]
fast_gelu(x, approximate="erf")  # type: ignore[call-overload]
fast_gelu(x, "tanh", b)  # type: ignore[call-overload]
fast_gelu_grad(x, g, "none", b)  # type: ignore[call-overload]
relu_grad(x, g, out)  # type: ignore[call-overload]
gelu_ext.set_num_threads("2")  # type: ignore[arg-type]
gelu_ext.show_config(True, True)  # type: ignore[call-arg]
gelu_ext.geglu(x, g, "fast")  # type: ignore[call-overload]
gelu_ext.swiglu_grad(x, g)  # type: ignore[call-overload]
gelu_ext.geglu_grad(x, g, g, out=out)  # type: ignore[call-overload]
gelu_ext.swiglu_grad(x, g, g, where=x > 0)  # type: ignore[call-overload]
gelu_ext.activation(1)  # type: ignore[arg-type]
gelu_ext.no_such_function  # type: ignore[attr-defined]
