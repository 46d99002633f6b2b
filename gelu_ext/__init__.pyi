# Type stubs for gelu_ext's public names, read by mypy, pyright and
# editors; the package ships py.typed.  Every name of gelu_ext.__all__ is
# declared here and nothing else public (tests/test_typing.py checks both
# ways), so a new public function needs its stub.
#
# Return types follow NumPy's own ufunc stubs: NumPy arrays and sequences in,
# an ndarray out; Python/NumPy scalars in, a NumPy scalar out; ``out=`` given,
# that array out.  Anything else with ``__array_ufunc__`` (Dask, xarray, ...)
# returns its own type, which a stub cannot name: ``Any``.  The scalar overload
# overlaps the array one (a scalar is also valid where an array is); mypy takes
# the first that matches, as for NumPy's own stubs, hence the ignores.
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

_Approximate = Literal["none", "tanh"]
_ArrayT = TypeVar("_ArrayT", bound=np.ndarray[Any, Any])
# what NumPy converts to an array by itself (int and bool count as float)
_Scalar = float | np.floating[Any] | np.integer[Any] | np.bool_
_NumPyIn = np.ndarray[Any, Any] | Sequence[Any] | _Scalar

class _SupportsArrayUFunc(Protocol):
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any: ...

_AnyIn = ArrayLike | _SupportsArrayUFunc
# a ufunc's where=: booleans broadcast against the inputs
_Where = ArrayLike

__version__: str

@overload
def fast_gelu(x: _Scalar, approximate: _Approximate = "none", *,  # type: ignore[overload-overlap]
              bias: _Scalar | None = None, out: None = None, where: _Where = True) -> np.floating[Any]: ...
@overload
def fast_gelu(x: _NumPyIn, approximate: _Approximate = "none", *, bias: _NumPyIn | None = None,
              out: None = None, where: _Where = True) -> NDArray[np.floating[Any]]: ...
@overload
def fast_gelu(x: _AnyIn, approximate: _Approximate = "none", *, bias: _AnyIn | None = None,
              out: _ArrayT, where: _Where = True) -> _ArrayT: ...
@overload
def fast_gelu(x: _AnyIn, approximate: _Approximate = "none", *, bias: _AnyIn | None = None,
              out: None = None, where: _Where = True) -> Any: ...

@overload
def fast_gelu_grad(x: _Scalar, grad: _Scalar | None = None,  # type: ignore[overload-overlap]
                   approximate: _Approximate = "none", *,
                   bias: _Scalar | None = None, out: None = None, where: _Where = True) -> np.floating[Any]: ...
@overload
def fast_gelu_grad(x: _NumPyIn, grad: _NumPyIn | None = None, approximate: _Approximate = "none", *,
                   bias: _NumPyIn | None = None, out: None = None,
                   where: _Where = True) -> NDArray[np.floating[Any]]: ...
@overload
def fast_gelu_grad(x: _AnyIn, grad: _AnyIn | None = None, approximate: _Approximate = "none", *,
                   bias: _AnyIn | None = None, out: _ArrayT, where: _Where = True) -> _ArrayT: ...
@overload
def fast_gelu_grad(x: _AnyIn, grad: _AnyIn | None = None, approximate: _Approximate = "none", *,
                   bias: _AnyIn | None = None, out: None = None, where: _Where = True) -> Any: ...

@overload
def geglu(gate: _Scalar, up: _Scalar, approximate: _Approximate = "none", *,  # type: ignore[overload-overlap]
          out: None = None, where: _Where = True) -> np.floating[Any]: ...
@overload
def geglu(gate: _NumPyIn, up: _NumPyIn, approximate: _Approximate = "none", *,
          out: None = None, where: _Where = True) -> NDArray[np.floating[Any]]: ...
@overload
def geglu(gate: _AnyIn, up: _AnyIn, approximate: _Approximate = "none", *, out: _ArrayT,
          where: _Where = True) -> _ArrayT: ...
@overload
def geglu(gate: _AnyIn, up: _AnyIn, approximate: _Approximate = "none", *, out: None = None,
          where: _Where = True) -> Any: ...

# the gated gradients return (d_gate, d_up); out is None or such a pair
_OutPair = tuple[np.ndarray[Any, Any] | None, np.ndarray[Any, Any] | None] | None

@overload
def swiglu_grad(gate: _Scalar, up: _Scalar, grad: _Scalar, *,  # type: ignore[overload-overlap]
                out: None = None) -> tuple[np.floating[Any], np.floating[Any]]: ...
@overload
def swiglu_grad(gate: _NumPyIn, up: _NumPyIn, grad: _NumPyIn, *,
                out: _OutPair = None) -> tuple[NDArray[np.floating[Any]], NDArray[np.floating[Any]]]: ...
@overload
def swiglu_grad(gate: _AnyIn, up: _AnyIn, grad: _AnyIn, *, out: _OutPair = None) -> tuple[Any, Any]: ...

@overload
def geglu_grad(gate: _Scalar, up: _Scalar, grad: _Scalar,  # type: ignore[overload-overlap]
               approximate: _Approximate = "none", *,
               out: None = None) -> tuple[np.floating[Any], np.floating[Any]]: ...
@overload
def geglu_grad(gate: _NumPyIn, up: _NumPyIn, grad: _NumPyIn, approximate: _Approximate = "none", *,
               out: _OutPair = None) -> tuple[NDArray[np.floating[Any]], NDArray[np.floating[Any]]]: ...
@overload
def geglu_grad(gate: _AnyIn, up: _AnyIn, grad: _AnyIn, approximate: _Approximate = "none", *,
               out: _OutPair = None) -> tuple[Any, Any]: ...

def activation(name: str) -> Callable[..., Any]: ...

# -- generated by tools/gen_ops.py from gelu_ext/_spec.py --
# the thin gradient functions: grad defaults to 1
@overload
def relu_grad(x: _Scalar, grad: _Scalar | None = None, *,  # type: ignore[overload-overlap]
    out: None = None, where: _Where = True) -> np.floating[Any]: ...
@overload
def relu_grad(x: _NumPyIn, grad: _NumPyIn | None = None, *,
    out: None = None, where: _Where = True) -> NDArray[np.floating[Any]]: ...
@overload
def relu_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: _ArrayT,
    where: _Where = True) -> _ArrayT: ...
@overload
def relu_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: None = None,
    where: _Where = True) -> Any: ...
@overload
def relu2_grad(x: _Scalar, grad: _Scalar | None = None, *,  # type: ignore[overload-overlap]
    out: None = None, where: _Where = True) -> np.floating[Any]: ...
@overload
def relu2_grad(x: _NumPyIn, grad: _NumPyIn | None = None, *,
    out: None = None, where: _Where = True) -> NDArray[np.floating[Any]]: ...
@overload
def relu2_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: _ArrayT,
    where: _Where = True) -> _ArrayT: ...
@overload
def relu2_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: None = None,
    where: _Where = True) -> Any: ...
@overload
def relu6_grad(x: _Scalar, grad: _Scalar | None = None, *,  # type: ignore[overload-overlap]
    out: None = None, where: _Where = True) -> np.floating[Any]: ...
@overload
def relu6_grad(x: _NumPyIn, grad: _NumPyIn | None = None, *,
    out: None = None, where: _Where = True) -> NDArray[np.floating[Any]]: ...
@overload
def relu6_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: _ArrayT,
    where: _Where = True) -> _ArrayT: ...
@overload
def relu6_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: None = None,
    where: _Where = True) -> Any: ...
@overload
def silu_grad(x: _Scalar, grad: _Scalar | None = None, *,  # type: ignore[overload-overlap]
    out: None = None, where: _Where = True) -> np.floating[Any]: ...
@overload
def silu_grad(x: _NumPyIn, grad: _NumPyIn | None = None, *,
    out: None = None, where: _Where = True) -> NDArray[np.floating[Any]]: ...
@overload
def silu_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: _ArrayT,
    where: _Where = True) -> _ArrayT: ...
@overload
def silu_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: None = None,
    where: _Where = True) -> Any: ...
@overload
def quick_gelu_grad(x: _Scalar, grad: _Scalar | None = None, *,  # type: ignore[overload-overlap]
    out: None = None, where: _Where = True) -> np.floating[Any]: ...
@overload
def quick_gelu_grad(x: _NumPyIn, grad: _NumPyIn | None = None, *,
    out: None = None, where: _Where = True) -> NDArray[np.floating[Any]]: ...
@overload
def quick_gelu_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: _ArrayT,
    where: _Where = True) -> _ArrayT: ...
@overload
def quick_gelu_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: None = None,
    where: _Where = True) -> Any: ...
@overload
def mish_grad(x: _Scalar, grad: _Scalar | None = None, *,  # type: ignore[overload-overlap]
    out: None = None, where: _Where = True) -> np.floating[Any]: ...
@overload
def mish_grad(x: _NumPyIn, grad: _NumPyIn | None = None, *,
    out: None = None, where: _Where = True) -> NDArray[np.floating[Any]]: ...
@overload
def mish_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: _ArrayT,
    where: _Where = True) -> _ArrayT: ...
@overload
def mish_grad(x: _AnyIn, grad: _AnyIn | None = None, *, out: None = None,
    where: _Where = True) -> Any: ...
# the ufuncs: x; x, b; gate, up; x, g; x, g, b; gate, up, g
relu: np.ufunc
relu2: np.ufunc
relu6: np.ufunc
gelu_erf: np.ufunc
gelu_tanh: np.ufunc
silu: np.ufunc
quick_gelu: np.ufunc
mish: np.ufunc
gelu_erf_bias: np.ufunc
gelu_tanh_bias: np.ufunc
swiglu: np.ufunc
geglu_erf: np.ufunc
geglu_tanh: np.ufunc
gelu_erf_grad: np.ufunc
gelu_tanh_grad: np.ufunc
gelu_erf_bias_grad: np.ufunc
gelu_tanh_bias_grad: np.ufunc
swiglu_dgate: np.ufunc
geglu_erf_dgate: np.ufunc
geglu_tanh_dgate: np.ufunc
# the gradient ufuncs under their 0.1.0 names (the same objects)
relu_backward: np.ufunc
gelu_erf_backward: np.ufunc
gelu_tanh_backward: np.ufunc
gelu_erf_bias_backward: np.ufunc
gelu_tanh_bias_backward: np.ufunc
# -- end of the generated block --

def show_config(print_: bool = True) -> dict[str, Any]: ...
def get_num_threads() -> int: ...
def set_num_threads(n: int | np.integer[Any] | None) -> None: ...
