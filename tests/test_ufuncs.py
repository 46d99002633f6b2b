"""Every ufunc x dtype x memory layout x ``out=`` mode against the float64 twin.

The ufuncs must behave like NumPy's own ``np.tanh``: result dtype,
broadcasting, any strides, 0-d and empty arrays, ``out=`` (given, in place,
partially overlapping), casting errors and ``TypeError`` for types without a
loop.  Values are checked against ``gelu_ext.testing`` (never against the
compiled code) within gelu_ext.testing's bounds; ReLU is bit-exact.

The quick tier (``-m "not slow"``): the three big matrices -- op x dtype x
layout x out= mode (3,385 cases), op x strided operand x dtype x length
around the gather chunk (960) and op x dtype x layout on large arrays (120)
-- run whole only in the full run.  The quick tier runs ``helpers.quick_tier``'s
subset of each (164, 85 and 60 cases), in which every pair of values occurs:
every op with every dtype, every op with every layout and out= mode, every
dtype with every layout and out= mode, every layout with every out= mode.
The matrices run on the default ISA path in both tiers; the other paths are
the ``isa`` fixture of the 16-bit tests below and of test_accuracy.py,
test_family.py and test_bfloat16.py, whose cases both tiers run whole.
"""
import numpy as np
import pytest

import gelu_ext
from gelu_ext import _ufuncs, testing
from gelu_ext.testing import assert_same_bits
from helpers import (ALL_DTYPES, FLOAT_DTYPES, SPECS_BY_NAME, UFUNC_IDS, UFUNCS,
                     assert_close_to_reference, dtype_id, quick_tier, result_dtype)

SPECS = SPECS_BY_NAME
# (fused-bias ufunc, the unfused one it must match bit for bit), from the op table
FUSED = [(u.name, u.base) for u in UFUNCS if u.bias and not u.grad]
FUSED_GRAD = [(u.name, u.base) for u in UFUNCS if u.bias and u.grad]
GATED = [u for u in UFUNCS if u.gated]

# --------------------------------------------------------------- values --

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, -0.7518, 1e-3, -5.5]


def make_values(dt, n, role, seed):
    """``n`` test values of dtype ``dt`` for one argument role.

    x covers [-6, 6] plus NaN, +-inf, +-0 and the derivative's zero crossing
    (floats); g and b are moderate so x + b and g * gelu'(x) stay finite."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind == "u":
        return rng.integers(0, 8, n).astype(dt)
    if dt.kind == "i":
        lo, hi = {"x": (-6, 7), "g": (-3, 4), "u": (-3, 4), "b": (-2, 3)}[role]
        return rng.integers(lo, hi, n).astype(dt)
    if role == "x":
        v = rng.uniform(-6.0, 6.0, n)
        k = min(n, len(SPECIALS))
        v[rng.permutation(n)[:k]] = SPECIALS[:k]
    elif role in ("g", "u"):
        v = rng.uniform(-3.0, 3.0, n)
    else:
        v = rng.uniform(-1.0, 1.0, n)
    return v.astype(dt)


# -------------------------------------------------------------- layouts --
# Each layout is (shape, storage elements needed, view of a 1-d storage at an
# element offset).  A partially overlapping ``out`` is the same view shifted by
# one element of x in the same storage.

LAYOUTS = {
    "contiguous": ((12,), 12, lambda st, o: st[o:o + 12]),
    "strided": ((12,), 36, lambda st, o: st[o:o + 36:3]),
    "negative_strides": ((12,), 12, lambda st, o: st[o:o + 12][::-1]),
    "fortran": ((3, 4), 12, lambda st, o: st[o:o + 12].reshape((3, 4), order="F")),
    "transposed": ((4, 2, 3), 24, lambda st, o: st[o:o + 24].reshape(2, 3, 4).transpose(2, 0, 1)),
    "0d": ((), 1, lambda st, o: st[o:o + 1].reshape(())),
    "empty": ((3, 0), 0, lambda st, o: st[o:o].reshape(3, 0)),
    "broadcast": None,      # (batch, features) against (features,) / a scalar, see below
}
PAD = 4
BATCH, FEATURES = 3, 4


def placed(vals, layout, dt):
    """``vals`` written into a fresh storage in ``layout``: (array, storage)."""
    shape, need, view = LAYOUTS[layout]
    st = np.zeros(need + PAD, dtype=dt)
    a = view(st, 0)
    a[...] = np.asarray(vals, dtype=dt)[:a.size].reshape(shape)
    return a, st


def build_args(spec, dt, layout):
    """The ufunc's inputs in ``layout`` and the storage holding x."""
    roles = spec.roles
    if layout == "broadcast":
        st = np.zeros(BATCH * FEATURES + PAD, dtype=dt)
        if spec.nin == 1:
            # a stride-0 input: one row read BATCH times
            st[:FEATURES] = make_values(dt, FEATURES, "x", 1)
            x = np.broadcast_to(st[:FEATURES], (BATCH, FEATURES))
        else:
            x = st[:BATCH * FEATURES].reshape(BATCH, FEATURES)
            x[...] = make_values(dt, BATCH * FEATURES, "x", 1).reshape(BATCH, FEATURES)
        args = [x]
        for i, role in enumerate(roles[1:], start=2):
            if role in ("g", "u"):
                args.append(np.dtype(dt).type(make_values(dt, 1, role, i)[0]))  # scalar grad / up
            else:
                args.append(make_values(dt, FEATURES, "b", i))                 # (features,) bias
        return args, st
    args, x_storage = [], None
    for i, role in enumerate(roles, start=1):
        a, st = placed(make_values(dt, 24, role, i), layout, dt)
        args.append(a)
        if i == 1:
            x_storage = st
    return args, x_storage


def out_view(layout, storage, offset, dt):
    """An output array in ``layout`` (C-contiguous (batch, features) for the
    broadcast layout) inside ``storage`` (new when None) at ``offset``."""
    if layout == "broadcast":
        if storage is None:
            storage = np.zeros(BATCH * FEATURES + PAD, dtype=dt)
        return storage[offset:offset + BATCH * FEATURES].reshape(BATCH, FEATURES)
    shape, need, view = LAYOUTS[layout]
    if storage is None:
        storage = np.zeros(need + PAD, dtype=dt)
    return view(storage, offset)


def matrix_cases():
    for spec in UFUNCS:
        for dt in ALL_DTYPES:
            floating = np.dtype(dt).kind == "f"
            for layout in LAYOUTS:
                for out in ("none", "given", "in_place", "overlapping"):
                    if out in ("in_place", "overlapping") and not floating:
                        continue        # out=x would need a float->int cast: see test_in_place_int_*
                    if out == "overlapping" and layout in ("0d", "empty"):
                        continue        # nothing to overlap
                    if out == "in_place" and layout == "broadcast" and spec.nin == 1:
                        continue        # a broadcast view is read-only
                    yield ((spec.name, dtype_id(dt), layout, out),
                           pytest.param(spec, dt, layout, out,
                                        id=f"{spec.name}-{dtype_id(dt)}-{layout}-out_{out}"))


# ---------------------------------------------------------- the matrix --

@pytest.mark.parametrize("spec, dt, layout, out", quick_tier(matrix_cases()))
def test_matches_reference(spec, dt, layout, out):
    args, x_storage = build_args(spec, dt, layout)
    before = [np.array(a, copy=True) for a in args]
    rdt = result_dtype(dt)
    if out == "none":
        got = spec.ufunc(*args)
    else:
        if out == "given":
            o = out_view(layout, None, 0, rdt)
        elif out == "in_place":
            o = args[0]
        else:
            # shifted by one element of x: half the elements overlap others
            o = out_view(layout, x_storage, 3 if layout == "strided" else 1, rdt)
            assert np.shares_memory(o, args[0])
        got = spec.ufunc(*args, out=o)
        assert got is o
    assert np.asarray(got).dtype == rdt
    assert_close_to_reference(spec, got, before)


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_result_dtype_is_np_tanh_dtype(spec, dt):
    args = [np.ones(3, dtype=dt)] * spec.nin
    assert spec.ufunc(*args).dtype == np.tanh(np.ones(3, dtype=dt)).dtype


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_0d_input_gives_numpy_scalar_like_np_tanh(spec, dt):
    args = [np.ones((), dtype=dt)] * spec.nin
    got = spec.ufunc(*args)
    assert type(got) is type(np.tanh(args[0]))


@pytest.mark.parametrize("a, b", [(np.float32, np.float64), (np.float16, np.float32),
                                  (np.float16, np.int8), (np.float32, np.int32),
                                  (np.int64, np.float16), (np.bool_, np.uint8)],
                         ids=lambda d: dtype_id(d))
@pytest.mark.parametrize("name", [n for n in UFUNC_IDS if SPECS[n].nin == 2])
def test_mixed_dtypes_promote_like_numpy_binary_ufuncs(name, a, b):
    x, y = np.ones(3, dtype=a), np.ones(3, dtype=b)
    assert SPECS[name].ufunc(x, y).dtype == np.arctan2(x, y).dtype


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("spec", [SPECS[n] for n in UFUNC_IDS if SPECS[n].grad], ids=lambda s: s.name)
def test_python_scalar_grad_keeps_the_array_dtype(spec, dt):
    # NEP 50: a Python float is "weak" and does not promote float16/float32
    args = [np.ones(3, dtype=dt), 2.0] + [np.zeros(3, dtype=dt)] * (spec.nin - 2)
    assert spec.ufunc(*args).dtype == dt


@pytest.mark.parametrize("dt", [d for d in ALL_DTYPES if np.dtype(d).kind != "f"], ids=dtype_id)
@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_in_place_on_non_float_input_is_a_casting_error(spec, dt):
    x = np.ones(4, dtype=dt)
    args = [x] + [np.ones(4, dtype=dt)] * (spec.nin - 1)
    with pytest.raises(TypeError, match=rf"Cannot cast ufunc '{spec.name}' output from "
                                        rf"dtype\('float\d+'\) to dtype\('{np.dtype(dt).name}'\)"):
        spec.ufunc(*args, out=x)


# ------------------------------------------------------------- out= rules --

@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_float64_result_into_float32_out_is_allowed_same_kind(spec):
    args, _ = build_args(spec, np.float64, "contiguous")
    o = np.empty(12, dtype=np.float32)
    assert spec.ufunc(*args, out=o) is o
    # NumPy computes in float64 and casts: the float64 result rounded once
    assert_same_bits(o, spec.ufunc(*args).astype(np.float32), spec.name)


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_float32_result_into_float64_out_is_the_float32_result_widened(spec):
    args, _ = build_args(spec, np.float32, "contiguous")
    o = np.empty(12, dtype=np.float64)
    spec.ufunc(*args, out=o)
    assert_same_bits(o, spec.ufunc(*args).astype(np.float64), spec.name)


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_float_result_into_int_out_raises(spec):
    args = [np.ones(4)] * spec.nin
    with pytest.raises(TypeError, match=rf"Cannot cast ufunc '{spec.name}' output from "
                                        r"dtype\('float64'\) to dtype\('int32'\) with casting "
                                        r"rule 'same_kind'"):
        spec.ufunc(*args, out=np.empty(4, dtype=np.int32))


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_float64_into_float32_out_raises_under_safe_casting(spec):
    args = [np.ones(4)] * spec.nin
    with pytest.raises(TypeError, match=r"Cannot cast ufunc .* to dtype\('float32'\) "
                                        r"with casting rule 'safe'"):
        spec.ufunc(*args, out=np.empty(4, dtype=np.float32), casting="safe")


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_wrong_out_shape_raises(spec):
    args = [np.ones(7)] * spec.nin
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes"):
        spec.ufunc(*args, out=np.empty(6))


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_out_smaller_than_broadcast_shape_raises(spec):
    args = [np.ones((3, 4))] * spec.nin
    with pytest.raises(ValueError, match=r"non-broadcastable output operand with shape \(4,\) "
                                         r"doesn't match the broadcast shape \(3,4\)"):
        spec.ufunc(*args, out=np.empty(4))


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_out_larger_than_inputs_broadcasts_them(spec):
    args, _ = build_args(spec, np.float64, "contiguous")
    o = np.empty((2, 12))
    spec.ufunc(*args, out=o)
    assert_same_bits(o[0], o[1], spec.name)
    assert_close_to_reference(spec, o[0], args)


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_where_leaves_masked_out_elements_untouched(spec):
    args, _ = build_args(spec, np.float64, "contiguous")
    mask = np.arange(12) % 2 == 0
    o = np.full(12, 123.0)
    spec.ufunc(*args, out=o, where=mask)
    assert np.all(o[~mask] == 123.0)
    assert_close_to_reference(spec, o[mask], [a[mask] for a in args])


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_dtype_argument_selects_the_float64_loop(spec):
    args, _ = build_args(spec, np.float32, "contiguous")
    got = spec.ufunc(*args, dtype=np.float64)
    assert got.dtype == np.float64
    assert_same_bits(got, spec.ufunc(*[a.astype(np.float64) for a in args]), spec.name)


# --------------------------------------------------------------- errors --

BAD_INPUTS = {
    "complex": np.ones(3, dtype=np.complex128),
    "object": np.array([1.0, 2.0, 3.0], dtype=object),
    "str": np.array(["a", "b", "c"]),
    "datetime": np.array(["2024-01-01"] * 3, dtype="datetime64[D]"),
}


@pytest.mark.parametrize("bad", list(BAD_INPUTS), ids=str)
@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
@pytest.mark.parametrize("position", ["first", "last"])
def test_unsupported_input_dtype_raises_type_error(spec, bad, position):
    args = [np.ones(3)] * spec.nin
    args[0 if position == "first" else -1] = BAD_INPUTS[bad]
    with pytest.raises(TypeError, match=rf"ufunc '{spec.name}' not supported for the input types"):
        spec.ufunc(*args)


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_wrong_number_of_arguments_raises(spec):
    with pytest.raises(TypeError, match=rf"{spec.name}\(\) takes from {spec.nin} to "
                                        rf"{spec.nin + 1} positional arguments but "
                                        rf"{spec.nin + 2} were given"):
        spec.ufunc(*([np.ones(2)] * (spec.nin + 2)))


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_op_table_row_is_consistent(spec):
    """src/gx_ops.h: inputs are x, then g for a derivative, then b for a
    fused bias, whose base op takes the same inputs but b; a gated op takes
    (gate, up) and runs its unary base, its gate gradient (gate, up, g) and
    runs a derivative; every function computed has a slow twin and bounds."""
    assert spec.nin == len(spec.roles)
    base = SPECS_BY_NAME[spec.base]
    if spec.gated:
        assert (base.kind, base.grad, spec.grad) == ("plain", spec.kind == "dgate", False)
        assert spec.name.endswith("_dgate") == (spec.kind == "dgate")
    else:
        assert spec.nin == 1 + spec.grad + spec.bias
        assert (base.base, base.bias, base.grad) == (spec.base, False, spec.grad)
    assert spec.base in testing.REFERENCE
    for dt in FLOAT_DTYPES:
        testing.bound(spec.base, dt, "bulk")            # raises KeyError if missing


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_ufunc_metadata(spec):
    uf = spec.ufunc
    assert isinstance(uf, np.ufunc)
    assert (uf.__name__, uf.nin, uf.nout) == (spec.name, spec.nin, 1)
    assert sorted(t[0] for t in uf.types) == sorted(["e", "f", "d"])
    assert uf.__doc__ and spec.name in uf.__doc__


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_array_ufunc_protocol_dispatches(spec):
    class Duck:
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            return ("dispatched", ufunc.__name__, method)

    args = [Duck()] + [np.ones(2)] * (spec.nin - 1)
    assert spec.ufunc(*args) == ("dispatched", spec.name, "__call__")


# -------------------------------------------- chunked strided inner loop --
# Strided operands are gathered in chunks of 512 elements (src/python/_ufuncs.pyx):
# lengths around the chunk size, with each operand in turn strided (the loop
# mixes contiguous and gathered operands), and a strided out.

CHUNK_LENGTHS = [511, 512, 513, 1537]


def strided_cases():
    for spec in UFUNCS:
        for which in ["all"] + [f"arg{k}" for k in range(spec.nin)] + ["out"]:
            for dt in FLOAT_DTYPES:
                for n in CHUNK_LENGTHS:
                    yield ((spec.name, which, dtype_id(dt), n),
                           pytest.param(spec, which, dt, n,
                                        id=f"{spec.name}-strided_{which}-{dtype_id(dt)}-n{n}"))


@pytest.mark.parametrize("spec, which, dt, n", quick_tier(strided_cases()))
def test_chunked_strided_path(spec, which, dt, n):
    roles = spec.roles
    flat = [make_values(dt, n, r, 10 + i) for i, r in enumerate(roles)]
    args = []
    for k, v in enumerate(flat):
        if which in ("all", f"arg{k}"):
            big = np.zeros(3 * n, dtype=dt)
            big[::3] = v
            args.append(big[::3])
        else:
            args.append(v.copy())
    big_out = np.full(2 * n, 7, dtype=dt)
    out = big_out[::2] if which in ("all", "out") else np.empty(n, dtype=dt)
    spec.ufunc(*args, out=out)
    assert_close_to_reference(spec, out, flat)
    if which in ("all", "out"):
        assert np.all(big_out[1::2] == 7), "wrote between the strided outputs"
    # the gathered path runs the same kernel as the contiguous one
    assert_same_bits(out, spec.ufunc(*flat), spec.name)


# ---------------------------------------------------------- large arrays --


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=dtype_id)
def test_relu_loops_both_ways(dt, plain_loads, isa):
    """ReLU and its derivative on arrays past GX_STREAM_MIN take the
    prefetching block loop or the plain loop, chosen per CPU at import
    (_ufuncs._plain_loads); both give torch.relu's bits (np.maximum's but
    -0.0 kept), NaN stays NaN and the derivative passes g at NaN x, whichever
    this machine uses by default."""
    rng = np.random.default_rng(5)
    n = (1 << 15) + 37
    x = rng.standard_normal(n).astype(dt)
    x[::997] = np.nan
    x[1::991] = -0.0
    g = rng.standard_normal(n).astype(dt)
    assert _ufuncs._plain_loads() == plain_loads
    got = gelu_ext.relu(x)
    grad = gelu_ext.relu_grad(x, g)
    with np.errstate(invalid="ignore"):
        assert_same_bits(got, np.where(x < 0, dt(0), x), "relu")
        assert_same_bits(grad, np.where(x <= 0, dt(0), g), "relu_grad")    # NaN x: g, as torch


LARGE = (1 << 17) + 5           # above the parallel threshold: the threaded path


def large_cases():
    for spec in UFUNCS:
        for dt in FLOAT_DTYPES:
            for layout in ["contiguous", "strided"]:
                yield ((spec.name, dtype_id(dt), layout),
                       pytest.param(spec, dt, layout, id=f"{spec.name}-{dtype_id(dt)}-{layout}"))


@pytest.mark.parametrize("spec, dt, layout", quick_tier(large_cases()))
def test_large_array_matches_reference(spec, dt, layout):
    roles = spec.roles
    flat = [make_values(dt, LARGE, r, 20 + i) for i, r in enumerate(roles)]
    args = flat if layout == "contiguous" else [np.repeat(v, 2)[::2] for v in flat]
    assert_close_to_reference(spec, spec.ufunc(*args), flat)


# ------------------------------------------------- fused == unfused, bitwise --

def fused_operands(dt, seed=5):
    """x and b over a wide range, plus sums that cancel, overflow the dtype or
    land on specials."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    x = rng.uniform(-8, 8, 4000)
    b = rng.uniform(-8, 8, 4000)
    b[:500] = -x[:500] + rng.normal(0, 1e-3, 500)       # x + b cancels
    x[500:600] = rng.uniform(-40, 40, 100)
    extra_x = [np.nan, np.inf, -np.inf, np.inf, 0.0, -0.0, -0.0, float(fi.max), -float(fi.max), 1.0]
    extra_b = [1.0, -1.0, 2.0, -np.inf, -0.0, -0.0, 0.0, float(fi.max), -float(fi.max), np.nan]
    x = np.concatenate([x, extra_x]).astype(dt)
    b = np.concatenate([b, extra_b]).astype(dt)
    g = rng.uniform(-3, 3, x.size).astype(dt)
    return x, b, g


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("fused, plain", FUSED, ids=[f for f, _ in FUSED])
def test_fused_bias_forward_is_bit_identical_to_unfused(fused, plain, dt):
    x, b, _ = fused_operands(dt)
    with np.errstate(over="ignore", invalid="ignore"):      # fi.max + fi.max, inf - inf
        s = x + b
    assert_same_bits(getattr(gelu_ext, fused)(x, b), getattr(gelu_ext, plain)(s), fused)


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("fused, plain", FUSED_GRAD, ids=[f for f, _ in FUSED_GRAD])
def test_fused_bias_backward_is_bit_identical_to_unfused(fused, plain, dt):
    x, b, g = fused_operands(dt)
    with np.errstate(over="ignore", invalid="ignore"):
        s = x + b
    assert_same_bits(getattr(gelu_ext, fused)(x, g, b), getattr(gelu_ext, plain)(s, g), fused)


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("fused, plain", FUSED, ids=[f for f, _ in FUSED])
def test_fused_bias_broadcasts_features_against_batch(fused, plain, dt):
    x = make_values(dt, 6 * 5, "x", 3).reshape(6, 5)
    b = make_values(dt, 5, "b", 4)
    assert_same_bits(getattr(gelu_ext, fused)(x, b), getattr(gelu_ext, plain)(x + b), fused)


# ------------------------------------------- 16-bit derivatives, one pass --

F16_ALL = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


@pytest.mark.parametrize("name", [u.name for u in UFUNCS if u.grad and not u.bias and not u.gated])
def test_every_float16_input_of_a_derivative_is_the_float32_result_rounded_once(name, isa):
    """The float16 derivatives run the float32 table loop on 16-bit data
    directly (widened and rounded back in registers, AVX2/AVX-512) or through
    a widened block (baseline): either way each result is the float32
    kernel's on the widened operands, rounded once.  Every float16 x, with
    gradients that are ordinary, huge (1e4: products beyond float16) and the
    special values; allocated, given out= and in place on x and on g."""
    f = SPECS[name].ufunc
    rng = np.random.default_rng(11)
    grads = [rng.standard_normal(F16_ALL.size).astype(np.float16),
             (1e4 * rng.standard_normal(F16_ALL.size)).astype(np.float16),
             np.resize(np.array(SPECIALS + [65504.0, -65504.0], np.float16), F16_ALL.size)]
    for g in grads:
        with np.errstate(all="ignore"):
            want = f(F16_ALL.astype(np.float32), g.astype(np.float32)).astype(np.float16)
            assert_same_bits(f(F16_ALL, g), want, f"{name} on {isa}")
            o = np.empty_like(F16_ALL)
            assert f(F16_ALL, g, out=o) is o
            assert_same_bits(o, want, f"{name} on {isa}, out=")
            x, gg = F16_ALL.copy(), g.copy()
            assert_same_bits(f(x, gg, out=x), want, f"{name} on {isa}, in place on x")
            x, gg = F16_ALL.copy(), g.copy()
            assert_same_bits(f(x, gg, out=gg), want, f"{name} on {isa}, in place on g")


@pytest.mark.parametrize("name", [u.name for u in UFUNCS if u.grad and not u.bias and not u.gated])
def test_every_bfloat16_input_of_a_derivative_is_the_float32_result_rounded_once(name, isa, bf16cvt):
    """As the float16 test above, for bfloat16 (ml_dtypes): every x, with
    ordinary, huge and special gradients, the bfloat16 results rounded by
    integer operations and by AVX512-BF16's instruction (bf16cvt; it flushes
    float32 subnormals, which the loop must route around: the subnormal x and
    results are among the inputs)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = ml_dtypes.bfloat16
    f = SPECS[name].ufunc
    xs = np.arange(1 << 16, dtype=np.uint16).view(bf)
    rng = np.random.default_rng(12)
    grads = [rng.standard_normal(xs.size).astype(bf),
             (1e30 * rng.standard_normal(xs.size)).astype(bf),
             np.resize(np.array(SPECIALS + [3.0e38, -3.0e38, 1e-39, -1e-39], np.float32).astype(bf), xs.size)]
    for g in grads:
        with np.errstate(all="ignore"):
            want = f(xs.astype(np.float32), g.astype(np.float32)).astype(bf)
            what = f"{name} on {isa}, bf16 insn {bf16cvt}"
            assert_same_bits(f(xs, g), want, what)
            o = np.empty_like(xs)
            assert f(xs, g, out=o) is o
            assert_same_bits(o, want, f"{what}, out=")
            x, gg = xs.copy(), g.copy()
            assert_same_bits(f(x, gg, out=x), want, f"{what}, in place on x")
            assert_same_bits(f(xs[3:-2], g[3:-2]), want[3:-2], f"{what}, offset")


@pytest.mark.parametrize("name", [u.name for u in UFUNCS
                                  if not u.grad and not u.bias and not u.gated])
def test_every_16bit_input_of_a_forward_op_is_the_float32_result_rounded_once(name, isa, plain_loads, bf16cvt):
    """The forward ops on float16 (and bfloat16, where ml_dtypes is
    installed) read a result table made by the float32 kernel (with gathers,
    or on AMD, _ufuncs._plain_loads, one load per element), or (SiLU on AMD,
    AVX2/AVX-512) run the float32 table loop on the 16-bit data in one pass:
    either way each result is the float32 kernel's on the widened input,
    rounded once.  Every 16-bit
    x; allocated, given out= and in place, and at an odd offset (a partial
    last vector and unaligned loads)."""
    f = SPECS[name].ufunc
    types = [F16_ALL]
    try:
        import ml_dtypes
        types.append(np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16))
    except ImportError:
        pass
    for x in types:
        with np.errstate(all="ignore"):
            want = f(x.astype(np.float32)).astype(x.dtype)
            what = f"{name} {x.dtype} on {isa}, plain loads {plain_loads}, bf16 insn {bf16cvt}"
            assert_same_bits(f(x), want, what)
            o = np.empty_like(x)
            assert f(x, out=o) is o
            assert_same_bits(o, want, f"{what}, out=")
            xx = x.copy()
            assert_same_bits(f(xx, out=xx), want, f"{what}, in place")
            assert_same_bits(f(x[3:-2]), want[3:-2], f"{what}, offset")
