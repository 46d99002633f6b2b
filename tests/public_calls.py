"""How to call every public array function of gelu_ext: one table for the
tests that run them on other array types (Dask, xarray, a cluster).

The list is derived from ``gelu_ext.__all__`` so a new public name is covered
without anyone remembering to: every ufunc is called with its ``nin`` array
arguments; every other function needs a row in ``CALLS`` (how to call it, one
entry per way of calling it worth checking), and ``unknown_names()`` -- asserted empty by
tests/test_public_calls.py -- names any public function that has none.
"""
import numpy as np

import gelu_ext
from gelu_ext import _spec

# Public names that are not array functions.
NOT_ARRAY = frozenset({"show_config", "get_num_threads", "set_num_threads"})

# name -> {call id: call(f, x, g, b)}: x and g have the input's shape, b is a
# bias of shape (features,) that broadcasts against them.
CALLS = {
    "fast_gelu": {
        "exact": lambda f, x, g, b: f(x),
        "tanh": lambda f, x, g, b: f(x, "tanh"),
        "exact-bias": lambda f, x, g, b: f(x, bias=b),
        "tanh-bias": lambda f, x, g, b: f(x, approximate="tanh", bias=b),
    },
    "fast_gelu_grad": {
        "exact": lambda f, x, g, b: f(x),
        "exact-g": lambda f, x, g, b: f(x, g),
        "tanh-g": lambda f, x, g, b: f(x, g, "tanh"),
        "exact-g-bias": lambda f, x, g, b: f(x, g, bias=b),
        "tanh-bias": lambda f, x, g, b: f(x, None, "tanh", bias=b),
    },
    # the thin gradient functions of the spec (grad defaults to 1)
    **{op.name: {"x": lambda f, x, g, b: f(x), "g": lambda f, x, g, b: f(x, g)}
       for op in _spec.OPS if op.thin},
    # gated forms: gate x, up g (full shape: a broadcast up's gradient is a
    # sum, whose order Dask chooses, so not bit-identical; see test_dask.py)
    "geglu": {
        "exact": lambda f, x, g, b: f(x, g),
        "tanh": lambda f, x, g, b: f(x, g, "tanh"),
    },
    "swiglu_grad": {
        "grad": lambda f, x, g, b: f(x, g, g),
    },
    "geglu_grad": {
        "exact": lambda f, x, g, b: f(x, g, g),
        "tanh": lambda f, x, g, b: f(x, g, g, "tanh"),
    },
    # a function factory: the functions it returns, applied (each activation's first name)
    "activation": {a.hf_names[0]: (lambda name: lambda f, x, g, b: f(name)(x))(a.hf_names[0])
                   for a in _spec.ACTIVATIONS},
}


def _ufunc_call(nin):
    # x, then the gradient, then a bias (broadcast): the order of every
    # ufunc of src/gx_ops.h; for any other ufunc these are just valid inputs
    if nin == 1:
        return lambda f, x, g, b: f(x)
    if nin == 2:
        return lambda f, x, g, b: f(x, g)
    if nin == 3:
        return lambda f, x, g, b: f(x, g, b)
    raise ValueError(f"a ufunc with {nin} inputs: add a row for it to CALLS in tests/public_calls.py")


def unknown_names():
    """Public array functions nobody has said how to call."""
    return sorted(n for n in gelu_ext.__all__
                  if n not in NOT_ARRAY and n not in CALLS
                  and not isinstance(getattr(gelu_ext, n), np.ufunc))


def stale_names():
    """Rows of CALLS (or NOT_ARRAY) for names that are no longer public."""
    return sorted((set(CALLS) | NOT_ARRAY) - set(gelu_ext.__all__))


def public_calls():
    """[(id, function, call)] for every public array function of gelu_ext:
    each call of each CALLS row, and each public ufunc (aliases included)."""
    out = []
    for name in gelu_ext.__all__:
        f = getattr(gelu_ext, name)
        if name in CALLS:
            out += [(f"{name}-{how}", f, call) for how, call in CALLS[name].items()]
        elif isinstance(f, np.ufunc):
            out.append((name, f, _ufunc_call(f.nin)))
    return out


def make_inputs(dtype, shape=(256, 1024), seed=0):
    """x, g (shape ``shape``) and a bias b (shape ``shape[-1:]``) in ``dtype``:
    normal data with the special values and the negative tail sprinkled in,
    so bit-identity is checked where the kernels branch."""
    rng = np.random.default_rng(seed)
    x = (2 * rng.standard_normal(shape)).astype(dtype)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -40.0, -9.5, 1e-30, -1e-30, 7.0], dtype)
    flat = x.reshape(-1)
    k = min(8, flat.size // special.size)
    flat[rng.choice(flat.size, special.size * k, replace=False)] = np.repeat(special, k)
    g = rng.standard_normal(shape).astype(dtype)
    b = (0.5 * rng.standard_normal(shape[-1:])).astype(dtype)
    return x, g, b


def results(r):
    """A call's result as a tuple (the gated gradients return two arrays)."""
    return r if isinstance(r, tuple) else (r,)


def bits(a):
    """The array's bit patterns, so -0.0 != 0.0 and NaNs compare equal."""
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))
