"""NumPy's ufunc methods on every ufunc: ``reduce``, ``accumulate``,
``reduceat``, ``outer`` and ``at`` compute NumPy's definitions, or NumPy
refuses them.

None of our ufuncs is associative (``swiglu(swiglu(a, b), c)`` is not
``swiglu(a, swiglu(b, c))``), so a reduction is the left fold NumPy defines:
``r = a[0]; r = f(r, a[1]); ...``, and ``accumulate`` keeps every step.  The
reference is that fold written as a Python loop calling the ufunc on one
element at a time; a scalar call runs the same kernel, so the bits must be
equal, on every dtype and ISA path.  Unary ufuncs take ``at`` only, and the
three-input ones no method: NumPy refuses the rest itself.

In a reduction NumPy hands the loop an output that *is* its first input
(step 0); in an accumulation, that input one element on: the layouts a vector
loop gets wrong.  ``test_fuzz.py`` draws these methods over random layouts.
"""
import numpy as np
import pytest

from gelu_ext import _test_hooks, _ufuncs
from gelu_ext.testing import assert_same_bits
from helpers import METHODS, method_dtypes, on_isa, py_method, quick_tier, usable_isas

BINARY = [op for op in _ufuncs.OPS.values() if op.nin == 2]
UNARY = [op for op in _ufuncs.OPS.values() if op.nin == 1]
TERNARY = [op for op in _ufuncs.OPS.values() if op.nin == 3]
DTYPES = method_dtypes()


def _values(dtype, shape, seed=0):
    """Values spanning both tails and the bulk, exactly representable in dtype."""
    rng = np.random.default_rng(seed)
    return (rng.normal(scale=3.0, size=shape)).astype(np.float32).astype(dtype)


def _call(name, uf, a, b, extra):
    if name == "reduce":
        return uf.reduce(a, **extra)
    if name == "accumulate":
        return uf.accumulate(a, **extra)
    if name == "reduceat":
        return uf.reduceat(a, extra["indices"])
    if name == "outer":
        return uf.outer(a, b)
    out = a.copy()
    uf.at(out, extra["indices"], b)
    return out


CASES = {
    "reduce": [{}, {"axis": 0}, {"axis": 1}, {"axis": -1, "keepdims": True}],
    "accumulate": [{}, {"axis": 0}, {"axis": 1}],
    "reduceat": [{"indices": [0, 3, 1, 5]}],
    "outer": [{}],
    "at": [{"indices": [0, 0, 2, 5, 0, 2]}],
}


def binary_method_cases():
    """op x method x dtype; the quick tier runs the pairwise subset."""
    return quick_tier(((op.name, m, str(dt)), pytest.param(op, m, dt, id=f"{op.name}-{m}-{dt}"))
                      for op in BINARY for m in METHODS for dt in DTYPES)


@pytest.mark.parametrize("op, method, dtype", binary_method_cases())
def test_binary_method_is_the_python_fold(op, method, dtype):
    """Every binary ufunc, method and dtype, on every ISA path, gives the
    bits of the Python loop over the ufunc on that path (paths of different
    table schemes differ in last bits, helpers.scheme_reference)."""
    for isa in usable_isas():
        for k, extra in enumerate(CASES[method]):
            a = _values(dtype, (7, 6) if "axis" in extra else (7,), seed=k)
            b = _values(dtype, (6,) if method == "at" else (5,), seed=k + 10)
            got = on_isa(isa, _call, method, op.ufunc, a, b, extra)
            want = on_isa(isa, lambda: py_method(op.ufunc, method, a, b, **extra))
            assert_same_bits(got, want, f"{op.name}.{method}({extra}) on {isa}")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", UNARY, ids=lambda o: o.name)
def test_unary_at_applies_repeated_indices_in_turn(op, dtype):
    a = _values(dtype, (6,))
    idx = [1, 1, 1, 4, 0, 4]
    for isa in usable_isas():
        want = on_isa(isa, lambda: py_method(op.ufunc, "at", a, None, indices=idx))
        got = a.copy()
        on_isa(isa, op.ufunc.at, got, idx)
        assert_same_bits(got, want, f"{op.name}.at on {isa}")


@pytest.mark.parametrize("method", ["reduce", "accumulate", "reduceat", "outer"])
@pytest.mark.parametrize("op", UNARY + TERNARY, ids=lambda o: o.name)
def test_methods_numpy_refuses_name_themselves(op, method):
    """Only binary ufuncs reduce, accumulate or take an outer product: NumPy
    says so, naming the method, and writes nothing."""
    a = np.ones(4)
    args = (a, [0, 2]) if method == "reduceat" else ((a, a) if method == "outer" else (a,))
    word = {"outer": "outer product"}.get(method, method)
    with pytest.raises(ValueError, match=f"{word} only supported for binary functions"):
        getattr(op.ufunc, method)(*args)
    assert (a == 1).all()


@pytest.mark.parametrize("op", TERNARY, ids=lambda o: o.name)
def test_three_input_at_is_refused(op):
    a = np.ones(4)
    with pytest.raises(ValueError, match="Only unary and binary ufuncs supported"):
        op.ufunc.at(a, [0], np.ones(1))
    assert (a == 1).all()


def test_accumulate_is_the_fold_not_uninitialised_memory():
    """swiglu.accumulate(ones(5)): 1, silu(1), silu(silu(1)), ...: each step
    reads the one written before it, never an element not yet written."""
    uf = _ufuncs.OPS["swiglu"].ufunc
    r = [1.0]
    for _ in range(4):
        r.append(float(uf(r[-1], 1.0)))
    np.testing.assert_array_equal(uf.accumulate(np.ones(5)), r)
    assert uf.reduce(np.ones(5)) == r[-1]
    np.testing.assert_allclose(r, [1, 0.7310585786300049, 0.4935, 0.3064, 0.1765], rtol=1e-3)


def test_reduce_of_an_empty_axis_raises_and_initial_starts_the_fold():
    uf = _ufuncs.OPS["gelu_erf_grad"].ufunc
    with pytest.raises(ValueError, match="zero-size array to reduction operation gelu_erf_grad"):
        uf.reduce(np.ones(0))
    a = _values(np.float64, (5,))
    want = 0.5
    for v in a:
        want = uf(want, v)
    assert_same_bits(uf.reduce(a, initial=0.5), np.float64(want))


def test_reduce_over_two_axes_is_refused():
    """A fold has an order, so NumPy reduces one axis at a time."""
    uf = _ufuncs.OPS["swiglu"].ufunc
    with pytest.raises(ValueError, match="not reorderable"):
        uf.reduce(np.ones((3, 3)), axis=(0, 1))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_long_reductions_on_threads_are_the_fold(dtype, threads):
    """Long enough to run threaded: the fold along axis 1 (output step 0)
    and along axis 0 (output and first input the same row, element for
    element: the fast path) both give the Python loop's bits."""
    uf = _ufuncs.OPS["gelu_erf_bias"].ufunc
    a = _values(dtype, (3, 300), seed=3) / 8
    saved = _ufuncs._get_parallel_threshold()
    _test_hooks.set_parallel_threshold(64)
    _ufuncs._set_num_threads(threads)
    try:
        for axis in (0, 1):
            for method in ("reduce", "accumulate"):
                assert_same_bits(getattr(uf, method)(a, axis=axis),
                                 py_method(uf, method, a, None, axis=axis), f"{method} axis={axis}")
    finally:
        _test_hooks.set_parallel_threshold(saved)
        _ufuncs._set_num_threads(0)


def overlap_cases():
    """op x layout x dtype; the quick tier runs the pairwise subset."""
    layouts = ["shifted_back", "shifted_on", "stride0_out", "reversed_out"]
    return quick_tier(((op.name, lay, str(dt)), pytest.param(op, lay, dt, id=f"{op.name}-{lay}-{dt}"))
                      for op in BINARY + UNARY for lay in layouts for dt in DTYPES)


@pytest.mark.parametrize("op, layout, dtype", overlap_cases())
def test_overlapping_out_gives_the_non_overlapping_result(op, layout, dtype):
    """An ``out=`` sharing memory with an input, whatever the offset, step
    or direction, gives what a separate output would have held (long enough
    to cross the strided loop's 512-element chunks)."""
    base = _values(dtype, (1200,), seed=5)
    other = _values(dtype, (1199,), seed=6)
    buf = base.copy()
    x = buf[1:] if layout != "shifted_on" else buf[:-1]
    args = (x, other) if op.nin == 2 else (x,)
    if layout == "stride0_out":
        out = np.lib.stride_tricks.as_strided(buf[5:], shape=(1199,), strides=(0,))
    elif layout == "reversed_out":
        out = buf[::-1][:1199]
    else:
        out = buf[:-1] if layout == "shifted_back" else buf[1:]
    want = op.ufunc(*[np.array(v) for v in args])
    got = op.ufunc(*args, out=out)
    if layout == "stride0_out":
        assert_same_bits(got[0], want[-1])     # every element written in turn: the last stays
    else:
        assert_same_bits(got, want)
