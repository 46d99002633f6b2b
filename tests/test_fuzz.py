"""Property-based fuzzing of every public function and every ufunc.

Each generated example is a call with random dtypes, shapes (0-d, empty, up to
4-d, and long 1-d/2-d runs that cross the 512-element chunk of the strided
loop), layouts (Fortran, strided, negative strides, zero-stride broadcasts,
byte-swapped, unaligned), ``out=`` forms (none, given, larger, in place,
partially overlapping, another float dtype, ``where=``), ISA path, thread count
and parallel threshold (lowered so that tiny arrays take the threaded path).
At most one fault is injected (unsupported input dtype, non-broadcasting
bias/grad, wrong out shape, wrong out dtype, read-only out).

The test predicts the outcome from NumPy's documented rules, not from the
package: either the result matches the slow twin within the documented
bounds (gelu_ext.testing.assert_matches_reference: BOUNDS for float32, 1 ULP
of the rounded twin for float16, the twin's own 1e-12 for float64) and the
fused-bias forms are bit-identical to the unfused ones, or the documented
exception is raised and nothing was written (``out`` is filled with a
sentinel first and compared byte for byte).  On success, ``out``'s buffer
outside the written view is checked untouched too, which catches a strided
scatter writing past its view.
"""
import dataclasses
import math
import os

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
pytest.importorskip("mpmath")       # the float64 oracle where the twin underflows
pytest.importorskip("scipy")        # the float64 twin is only 1e-13 accurate with ndtr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gelu_ext
from gelu_ext import testing
from gelu_ext.testing import assert_same_bits
from gelu_ext import _spec, _test_hooks, _ufuncs
import helpers


# GELU_EXT_FUZZ_EXAMPLES=5000 for a longer soak (e.g. under bench/sanitize.sh)
FUZZ = settings(max_examples=int(os.environ.get("GELU_EXT_FUZZ_EXAMPLES", "200")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
LOOP_DTYPES = (F16, F32, F64)
SUPPORTED = ["float16", "float32", "float64", ">f4", ">f8", "int8", "int16", "int32",
             "int64", "uint8", "uint16", "uint64", "bool"]
UNSUPPORTED = ["complex64", "complex128", "object", "<U8", "datetime64[s]", "timedelta64[ms]"]
BAD_OUT_DTYPES = ["int32", "int64", "uint8", "int8", "bool"]
SENTINEL = -7.25                      # exact in every float dtype; 7 for ints, True for bool


# ------------------------------------------------------------- operations --

@dataclasses.dataclass(frozen=True)
class Op:
    """One way of calling the package.  ``inputs`` names the array operands
    (x, g = incoming gradient, b = bias); ``kind`` selects the reference;
    ``unfused`` recomputes a bias form from x + b without the bias."""
    name: str
    inputs: tuple
    kind: str
    call: object
    ufunc: bool = False
    unfused: object = None
    compose: object = None      # a gated form: its unfused composition, bit for bit

    def __repr__(self):
        return self.name


def _public_ops():
    fg, fgg = gelu_ext.fast_gelu, gelu_ext.fast_gelu_grad
    ops = []
    for a in ("none", "tanh"):
        k = "gelu_erf" if a == "none" else "gelu_tanh"
        ops += [
            Op(f"fast_gelu[{a}]", ("x",), k, lambda v, out, a=a: fg(v["x"], a, out=out)),
            Op(f"fast_gelu[{a},bias]", ("x", "b"), k,
               lambda v, out, a=a: fg(v["x"], a, bias=v["b"], out=out),
               unfused=lambda v, a=a: fg(v["x"], a)),
            Op(f"fast_gelu_grad[{a}]", ("x",), k + "_grad",
               lambda v, out, a=a: fgg(v["x"], approximate=a, out=out)),
            Op(f"fast_gelu_grad[{a},grad]", ("x", "g"), k + "_grad",
               lambda v, out, a=a: fgg(v["x"], v["g"], a, out=out)),
            Op(f"fast_gelu_grad[{a},bias]", ("x", "b"), k + "_grad",
               lambda v, out, a=a: fgg(v["x"], approximate=a, bias=v["b"], out=out),
               unfused=lambda v, a=a: fgg(v["x"], approximate=a)),
            Op(f"fast_gelu_grad[{a},grad,bias]", ("x", "g", "b"), k + "_grad",
               lambda v, out, a=a: fgg(v["x"], v["g"], a, bias=v["b"], out=out),
               unfused=lambda v, a=a: fgg(v["x"], v["g"], a)),
        ]
    # each derivative's thin function (grad defaults to 1), from the spec
    for op in _spec.OPS:
        if op.thin:
            thin = getattr(gelu_ext, op.name)
            ops += [
                Op(op.name, ("x",), op.name, lambda v, out, f=thin: f(v["x"], out=out)),
                Op(op.name + "[grad]", ("x", "g"), op.name,
                   lambda v, out, f=thin: f(v["x"], v["g"], out=out)),
            ]
    # each gated op's public function in each mode, bit for bit its composition
    mul = np.multiply
    for t in _spec.TORCH_OPS:
        if t.kind != "gate" or not t.grad:
            continue
        fn = getattr(gelu_ext, t.name)
        for mode in (("none", "tanh") if t.has_approximate else (None,)):
            extra = () if mode is None else (mode,)
            base = _ufuncs.OPS[_ufuncs.OPS[t.ufunc(mode)].base]
            ops.append(Op(t.name + (f"[{mode}]" if mode else ""), ("x", "u"), base.name,
                          lambda v, out, fn=fn, e=extra: fn(v["x"], v["u"], *e, out=out),
                          compose=lambda v, b=base.ufunc: mul(b(v["x"]), v["u"])))
    return ops


def _ufunc_ops():
    """Every ufunc of the op table (src/gx_ops.h), called with its inputs."""
    ops = []
    for spec in _ufuncs.OPS.values():
        names = ("x",) + (("g",) if spec.grad else ()) + (("b",) if spec.bias else ())
        plain = _ufuncs.OPS[spec.base].ufunc if spec.bias else None
        if spec.gated:
            names = ("x", "u") + (("g",) if spec.kind == "dgate" else ())
            base = _ufuncs.OPS[spec.base].ufunc

            def compose(v, base=base, dgate=spec.kind == "dgate"):
                if dgate:
                    return base(v["x"], np.multiply(v["u"], v["g"]))
                return np.multiply(base(v["x"]), v["u"])

            def call(v, out, where=True, uf=spec.ufunc, names=names):
                return uf(*[v[n] for n in names], out=out, where=where)
            ops.append(Op(spec.name, names, spec.base, call, ufunc=True, compose=compose))
            continue

        def call(v, out, where=True, uf=spec.ufunc, names=names):
            return uf(*[v[n] for n in names], out=out, where=where)

        def unfused(v, plain=plain, names=names):
            return plain(*[v[n] for n in names if n != "b"])
        ops.append(Op(spec.name, names, spec.base, call, ufunc=True,
                      unfused=unfused if plain is not None else None))
    return ops


PUBLIC_OPS = _public_ops()
UFUNC_OPS = _ufunc_ops()


# ------------------------------------------------------------------ cases --

@dataclasses.dataclass
class Case:
    op: Op
    seed: int
    shapes: dict          # input name -> shape
    dtypes: dict          # input name -> dtype string
    layouts: dict         # input name -> layout
    out: str              # none|given|bigger|inplace|overlap|bad_shape|bad_dtype|readonly
    out_dtype: str
    out_layout: str
    where: bool
    isa: str
    threads: object
    threshold: object


LAYOUTS = ["C", "C", "F", "strided", "neg", "bcast", "swapped", "unaligned"]
OUT_LAYOUTS = ["C", "F", "strided", "neg"]


def _available_isas():
    best = _ufuncs.ISA_NAMES.index(_ufuncs._best_isa())
    return [n for i, n in enumerate(_ufuncs.ISA_NAMES) if i <= best and n in _ufuncs._compiled_isas()]


@st.composite
def cases(draw, ops):
    op = draw(st.sampled_from(ops))
    fault = draw(st.sampled_from(["none"] * 8 + ["in_dtype", "in_shape", "out_shape",
                                                 "out_dtype", "readonly"]))
    if draw(st.integers(0, 5)) == 0:        # long runs: chunk boundaries of the strided loop
        full = draw(st.sampled_from([(511,), (512,), (513,), (1100,), (2, 600), (600, 3)]))
    else:
        full = tuple(draw(st.lists(st.integers(1, 5), max_size=4)))
        if full and draw(st.integers(0, 9)) == 0:
            i = draw(st.integers(0, len(full) - 1))
            full = full[:i] + (0,) + full[i + 1:]
    shapes, dtypes, layouts = {}, {}, {}
    for n in op.inputs:
        s = full
        if n != "x" or draw(st.integers(0, 3)) == 0:   # operands broadcast against x
            s = s[draw(st.integers(0, len(s))):]
            s = tuple(1 if draw(st.integers(0, 3)) == 0 else d for d in s)
        shapes[n] = s
        dtypes[n] = draw(st.sampled_from(SUPPORTED))
        layouts[n] = draw(st.sampled_from(LAYOUTS))
    others = [n for n in op.inputs if n != "x"]
    if fault == "in_dtype":
        dtypes[draw(st.sampled_from(op.inputs))] = draw(st.sampled_from(UNSUPPORTED))
    elif fault == "in_shape" and others:
        # a random shape: usually does not broadcast with x, the oracle decides
        shapes[draw(st.sampled_from(others))] = tuple(draw(st.lists(st.integers(0, 6),
                                                                     min_size=1, max_size=3)))
    out_kind = {"out_shape": "bad_shape", "out_dtype": "bad_dtype",
                "readonly": "readonly"}.get(fault)
    if out_kind is None:
        out_kind = draw(st.sampled_from(["none", "none", "given", "given", "bigger",
                                         "inplace", "overlap"]))
    out_dtype = (draw(st.sampled_from(BAD_OUT_DTYPES)) if out_kind == "bad_dtype" else
                 draw(st.sampled_from(["loop"] * 6 + ["float16", "float32", "float64",
                                                      ">f8", "complex128"])))
    return Case(op=op, seed=draw(st.integers(0, 2**32 - 1)), shapes=shapes, dtypes=dtypes,
                layouts=layouts, out=out_kind, out_dtype=out_dtype,
                out_layout=draw(st.sampled_from(OUT_LAYOUTS)),
                where=op.ufunc and draw(st.integers(0, 3)) == 0,
                isa=draw(st.sampled_from(_available_isas())),
                threads=draw(st.sampled_from([None, 1, 2, 3])),
                threshold=draw(st.sampled_from([None, None, 1, 7, 100])))


# ------------------------------------------------------------ array makers --

def _values(rng, dtype, shape, role):
    """C-contiguous values of ``dtype``: floats mix the bulk, the tails and
    special values; the incoming gradient stays finite and below max/4 so a
    product cannot overflow on one side of the comparison only."""
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = (int(info.min), int(info.max)) if rng.integers(0, 2) else (-50, 50)
        return rng.integers(max(lo, int(info.min)), min(hi, int(info.max)), size=shape,
                            endpoint=True, dtype=dtype.newbyteorder("="))
    if dtype.kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    if dtype.kind == "O":
        return np.array(rng.normal(size=shape).tolist(), dtype=object).reshape(shape)
    if dtype.kind == "U":
        return rng.normal(size=shape).astype(str).astype(dtype)
    if dtype.kind in "mM":
        return rng.integers(0, 10**6, size=shape).astype(dtype)
    fi = np.finfo(dtype)
    if role in ("g", "u"):
        v = rng.normal(size=n) * rng.choice([1.0, 1e3, 1e-3])
        big = float(fi.max) / 4
        specials = [np.nan, 0.0, -0.0, big, -big, float(fi.smallest_subnormal)]
    else:
        v = rng.normal(size=n) * rng.choice([1.0, 3.0, 10.0, 40.0])
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, float(fi.max), -float(fi.max),
                    float(fi.smallest_normal), -float(fi.smallest_subnormal), -0.7518,
                    -5.0, -14.0, -38.5, 1e-300, 6.0]
    pick = rng.random(n) < 0.15
    v[pick] = rng.choice(np.array(specials), size=int(pick.sum()))
    with np.errstate(over="ignore", under="ignore"):
        return v.astype(dtype).reshape(shape)


def _full(shape, dtype, order="C"):
    dtype = np.dtype(dtype)
    fill = SENTINEL if dtype.kind in "fc" else (True if dtype.kind == "b" else 7)
    return np.full(shape, fill, dtype=dtype, order=order)


def _view_fn(layout, shape):
    """(base shape, base order, function base -> view of ``shape``).  The
    function only slices and reshapes, so applied to an index array it tells
    which base elements the view covers."""
    nd = len(shape)
    if layout == "F":
        return shape, "F", lambda a: a
    if layout == "strided":
        if nd == 0:
            return (3,), "C", lambda a: a[1:2].reshape(())
        return tuple(2 * d + 1 for d in shape), "C", lambda a: a[(slice(1, None, 2),) * nd]
    if layout == "neg":
        if nd == 0:
            return (2,), "C", lambda a: a[1:2].reshape(())
        base = tuple(d + 1 for d in shape)
        return base, "C", lambda a: a[(slice(None, None, -1),) * nd][tuple(slice(0, d) for d in shape)]
    return shape, "C", lambda a: a


def _make_input(rng, name, shape, dtype, layout):
    dtype = np.dtype(dtype)
    if layout == "bcast" and shape:
        small = tuple(1 if rng.integers(0, 2) else d for d in shape)
        return np.broadcast_to(_values(rng, dtype, small, name), shape)
    if layout == "swapped" and dtype.kind in "fiu" and dtype.itemsize > 1:
        return _values(rng, dtype, shape, name).astype(dtype.newbyteorder())
    if layout == "unaligned" and dtype.kind in "fiu" and dtype.itemsize > 1:
        v = _values(rng, dtype, shape, name)
        raw = np.empty(v.nbytes + 1, np.uint8)[1:]
        a = raw.view(dtype).reshape(shape)
        a[...] = v
        return a
    base_shape, order, fn = _view_fn(layout if layout in ("F", "strided", "neg") else "C", shape)
    base = np.empty(base_shape, dtype=dtype, order=order)
    a = fn(base)
    a[...] = _values(rng, dtype, shape, name)
    return a


def loop_dtype(dtypes):
    """The ufunc loop NumPy picks: the first of float16/32/64 that every input
    casts to safely (``np.tanh``'s rule), None when there is none."""
    for dt in LOOP_DTYPES:
        if all(np.can_cast(np.dtype(d), dt, "safe") for d in dtypes):
            return dt
    return None


# --------------------------------------------------------------- checking --

class _Config:
    """Apply a case's ISA / thread count / parallel threshold; restore after."""

    def __init__(self, case):
        self.case = case

    def __enter__(self):
        self.saved = (_ufuncs._get_isa(), _ufuncs._get_parallel_threshold())
        _ufuncs._set_isa(self.case.isa)
        gelu_ext.set_num_threads(self.case.threads)
        if self.case.threshold is not None:
            _test_hooks.set_parallel_threshold(self.case.threshold)

    def __exit__(self, *exc):
        _ufuncs._set_isa(self.saved[0])
        _test_hooks.set_parallel_threshold(self.saved[1])
        gelu_ext.set_num_threads(None)


def run_case(case):
    rng = np.random.default_rng(case.seed)
    op = case.op
    dts = dict(case.dtypes)
    dt = loop_dtype(dts.values())
    try:
        R = np.broadcast_shapes(*case.shapes.values())
    except ValueError:
        R = None

    # in place / overlapping: x is the loop dtype and the full shape, written by us
    out_kind = case.out
    if out_kind in ("inplace", "overlap") and (dt is None or R is None or 0 in R or not R):
        out_kind = "given"
    if out_kind in ("inplace", "overlap"):
        dts["x"] = dt.str
    arrays = {}
    for n in op.inputs:
        shape = R if out_kind in ("inplace", "overlap") and n == "x" else case.shapes[n]
        layout = case.layouts[n]
        if n == "x" and out_kind in ("inplace", "overlap"):
            layout = "C" if out_kind == "overlap" else layout.replace("bcast", "C")
            layout = "C" if layout in ("swapped", "unaligned") else layout
        arrays[n] = _make_input(rng, n, shape, dts[n], layout)

    out, base, view_fn, overlap_base = None, None, None, None
    od = None if case.out_dtype == "loop" else np.dtype(case.out_dtype)
    if out_kind == "inplace":
        out = arrays["x"]
    elif out_kind == "overlap":
        N = math.prod(R)
        k = int(rng.integers(1, N + 1)) if N > 1 else 1
        overlap_base = _full((N + k,), dt)
        overlap_base[:N] = arrays["x"].ravel()
        arrays["x"] = overlap_base[:N].reshape(R)
        out = overlap_base[k:k + N].reshape(R)
    elif out_kind != "none":
        shape = R if R is not None else case.shapes["x"]
        if out_kind == "bigger":
            shape = (2,) + tuple(shape)
        elif out_kind == "bad_shape":
            shape = tuple(shape)[1:] if len(shape) else None
        if shape is None:               # a 0-d result: every out shape broadcasts
            out_kind, shape = "given", ()
        odt = od or dt or F64
        bshape, order, view_fn = _view_fn(case.out_layout, tuple(shape))
        base = _full(bshape, odt, order)
        out = view_fn(base)
        if out_kind == "readonly":
            out.flags.writeable = False     # the view was taken before: mark it too
            base.flags.writeable = False
    where = True
    # (NumPy itself warns ComplexWarning for where= with a complex out: it
    # reads out through the loop dtype; not ours to test)
    if case.where and out_kind in ("given", "bigger") and R is not None and out.dtype.kind != "c":
        where = rng.integers(0, 2, size=np.shape(out)).astype(bool)

    inputs_before = {n: np.array(a, copy=True) for n, a in arrays.items()}
    out_before = None if out is None else np.array(out, copy=True)
    base_before = None if base is None else base.copy()

    def call(out_arg):
        kw = {"where": where} if where is not True else {}
        narrow = out_arg is not None and dt is not None and out_arg.dtype.itemsize < dt.itemsize \
            and out_arg.dtype.kind == "f"
        with np.errstate(over="ignore" if narrow else "warn"):   # NumPy's own cast to out
            return op.call(arrays, out_arg, **kw)

    # ---------------------------------------------------- expected failures
    expect = None
    if dt is None:
        expect = (TypeError, "not supported for the input types")
    elif R is None:
        expect = (ValueError, "could not be broadcast")
    elif out_kind == "bad_shape":
        expect = (ValueError, "non-broadcastable output|could not be broadcast")
    elif out_kind == "bad_dtype":
        expect = (TypeError, "Cannot cast ufunc .* output")
    elif out_kind == "readonly":
        expect = (ValueError, "read-only")
    with _Config(case):
        if expect is not None:
            with pytest.raises(expect[0], match=expect[1]):
                call(out)
            if out is not None:
                assert out.tobytes() == out_before.tobytes(), "a rejected out was written to"
            for n, a in arrays.items():
                assert np.asarray(a).tobytes() == inputs_before[n].tobytes()
            return "raised"

        plain = np.asarray(op.call({n: inputs_before[n] for n in arrays}, None))
        res = call(out)

    # -------------------------------------------------------- the values
    assert plain.dtype == dt and plain.shape == R
    with np.errstate(all="ignore"):
        cast = {n: inputs_before[n].astype(dt) for n in arrays}
        xs = cast["x"] + cast["b"] if "b" in cast else cast["x"]     # the sum in dt, as unfused
        xs = np.broadcast_to(xs, R).astype(np.float64)
        gs = np.broadcast_to(cast["g"], R).astype(np.float64) if "g" in cast else np.float64(1.0)
    if op.compose is not None:
        # gated: the unfused composition in dt, bit for bit (its base op is
        # held to the reference by the plain ops' cases)
        with np.errstate(all="ignore"), _Config(case):
            assert_same_bits(plain, np.broadcast_to(np.asarray(op.compose(cast)).astype(dt), R))
    else:
        testing.assert_matches_reference(op.kind, plain, xs, gs if "g" in cast else None)
    if op.unfused is not None:
        with np.errstate(all="ignore"):
            summed = {n: a for n, a in cast.items() if n != "b"}
            summed["x"] = cast["x"] + cast["b"]
        with _Config(case):
            assert_same_bits(plain, np.asarray(op.unfused(summed)))

    for n, a in arrays.items():             # inputs unchanged unless they are out
        if out_kind not in ("inplace", "overlap") or n != "x":
            assert np.asarray(a).tobytes() == inputs_before[n].tobytes(), f"input {n} modified"

    if out is None:
        assert isinstance(res, (np.ndarray, np.generic))
        assert_same_bits(np.asarray(res), plain)
        return "ok"
    assert res is out
    with np.errstate(all="ignore"):
        want = np.broadcast_to(plain, out.shape).astype(out.dtype)
    if where is not True:
        want = want.copy()
        want[~where] = out_before[~where]
    assert_same_bits(out, want)
    if base is not None:                    # nothing written outside the view
        idx = view_fn(np.arange(base.size).reshape(base.shape))
        outside = np.ones(base.size, bool)
        outside[idx.ravel()] = False
        assert base.ravel()[outside].tobytes() == base_before.ravel()[outside].tobytes(), \
            "written outside out's view"

    if overlap_base is not None:
        k = overlap_base.size - out.size
        if k:
            assert_same_bits(overlap_base[:k], inputs_before["x"].ravel()[:k])
    return "ok"


# ------------------------------------------------------------------ tests --

@FUZZ
@given(cases(PUBLIC_OPS))
def test_public_functions_match_reference_or_raise_cleanly(case):
    hypothesis.event(f"{case.out}: {run_case(case)}")


@FUZZ
@given(cases(UFUNC_OPS))
def test_ufuncs_match_reference_or_raise_cleanly(case):
    hypothesis.event(f"{case.out}: {run_case(case)}")


# ------------------------------------------------------------ ufunc methods --
# reduce, accumulate, reduceat, outer and at of every binary ufunc (and at of
# the unary ones) on random dtypes, layouts, out= forms, paths and thread
# counts: the bits of NumPy's definition, a Python loop over the ufunc
# (helpers.py_method), computed on the same path.

METHOD_OPS = [op for op in _ufuncs.OPS.values() if op.nin <= 2]


@dataclasses.dataclass(frozen=True)
class MethodCase:
    op: object
    method: str
    dtype: object
    seed: int
    shape: tuple
    layout: str           # C|F|strided|neg
    axis: int
    keepdims: bool
    initial: object
    out: str              # none|given|inplace (accumulate's out=a)
    indices: tuple
    isa: str
    threads: object
    threshold: object


@st.composite
def method_cases(draw):
    op = draw(st.sampled_from(METHOD_OPS))
    method = "at" if op.nin == 1 else draw(st.sampled_from(helpers.METHODS))
    one_d = method in ("reduceat", "outer", "at")
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=1 if one_d else 3)))
    if draw(st.integers(0, 7)) == 0:        # long runs: chunk boundaries, threads
        shape = draw(st.sampled_from([(600,), (1100,)] if one_d else [(600,), (2, 600), (600, 2)]))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[0]
    indices = tuple(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=8)))
    return MethodCase(
        op=op, method=method, dtype=draw(st.sampled_from(helpers.method_dtypes())),
        seed=draw(st.integers(0, 2**32 - 1)), shape=shape,
        layout=draw(st.sampled_from(["C", "F", "strided", "neg"])), axis=axis,
        keepdims=draw(st.booleans()), initial=draw(st.sampled_from([None, None, 0.5, -2.0])),
        out=draw(st.sampled_from(["none", "given", "inplace"])), indices=indices,
        isa=draw(st.sampled_from(_available_isas())), threads=draw(st.sampled_from([None, 1, 2])),
        threshold=draw(st.sampled_from([None, 1, 64])))


def _laid_out(a, layout):
    """``a``'s values in a view of the given layout."""
    if layout == "F":
        return np.asfortranarray(a)
    if layout in ("strided", "neg"):
        big = np.zeros(tuple(2 * d for d in a.shape), a.dtype)
        view = big[tuple(slice(None, None, 2) for _ in a.shape)]
        if layout == "neg":
            view = view[tuple(slice(None, None, -1) for _ in a.shape)]
        view[...] = a
        return view
    return a


def run_method_case(case):
    rng = np.random.default_rng(case.seed)
    uf = case.op.ufunc
    vals = rng.normal(scale=4.0, size=case.shape).astype(np.float32).astype(case.dtype)
    a = _laid_out(vals, case.layout)
    nb = len(case.indices) if case.method == "at" else min(case.shape[0], 7)   # outer's second axis
    b = _laid_out(rng.normal(scale=4.0, size=(nb,)).astype(np.float32).astype(case.dtype), case.layout)
    with _Config(case):
        if case.method == "reduce":
            kw = {"axis": case.axis, "keepdims": case.keepdims}
            if case.initial is not None:
                kw["initial"] = case.initial
            want = helpers.py_method(uf, "reduce", vals, **kw)
            if case.out == "given":
                out = np.empty(np.shape(want), case.dtype)
                got = uf.reduce(a, out=out, **kw)
                assert got is out
            else:
                got = uf.reduce(a, **kw)
        elif case.method == "accumulate":
            want = helpers.py_method(uf, "accumulate", vals, axis=case.axis)
            if case.out == "inplace":
                got = uf.accumulate(a, axis=case.axis, out=a)
                assert got is a
            elif case.out == "given":
                got = uf.accumulate(a, axis=case.axis, out=_laid_out(np.empty_like(vals), case.layout))
            else:
                got = uf.accumulate(a, axis=case.axis)
        elif case.method == "reduceat":
            want = helpers.py_method(uf, "reduceat", vals, indices=list(case.indices))
            got = uf.reduceat(a, list(case.indices))
        elif case.method == "outer":
            want = helpers.py_method(uf, "outer", vals, b)
            got = uf.outer(a, b)
        else:
            want = helpers.py_method(uf, "at", vals, b if case.op.nin == 2 else None,
                                     indices=list(case.indices))
            got = a
            if case.op.nin == 2:
                uf.at(got, list(case.indices), b)
            else:
                uf.at(got, list(case.indices))
    assert_same_bits(got, want, f"{case.op.name}.{case.method}")


@FUZZ
@given(method_cases())
def test_ufunc_methods_are_the_python_fold(case):
    run_method_case(case)
    hypothesis.event(f"{case.method}")


BAD_APPROXIMATE = st.one_of(
    st.sampled_from(["", "NONE", "Tanh", "exact", "tanh ", "erf", None, 0, 1.0, b"none",
                     ("none",)]),
    st.text(max_size=6).filter(lambda s: s not in ("none", "tanh")))


@settings(max_examples=100, deadline=None)
@given(approximate=BAD_APPROXIMATE,
       which=st.sampled_from(["fast_gelu", "fast_gelu+bias", "fast_gelu_grad",
                              "fast_gelu_grad+grad+bias"]))
def test_bad_approximate_raises_before_writing(approximate, which):
    x = np.linspace(-3, 3, 7)
    out = _full(x.shape, F64)
    kw = {"bias": np.ones(7)} if "bias" in which else {}
    with pytest.raises(ValueError, match=r"approximate must be 'none' or 'tanh', got"):
        if which.startswith("fast_gelu_grad"):
            gelu_ext.fast_gelu_grad(x, np.ones(7) if "grad" in which[5:] else None,
                                    approximate, out=out, **kw)
        else:
            gelu_ext.fast_gelu(x, approximate, out=out, **kw)
    assert (out == SENTINEL).all()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=20),
       st.sampled_from(["none", "tanh"]))
def test_python_lists_and_scalars_are_float64(values, approximate):
    got = gelu_ext.fast_gelu(values, approximate)
    assert_same_bits(got, gelu_ext.fast_gelu(np.array(values, dtype=np.float64), approximate))
    for v in values[:3]:
        s = gelu_ext.fast_gelu(v, approximate)
        assert isinstance(s, np.float64)
        assert_same_bits(np.asarray(s), gelu_ext.fast_gelu(np.array([v]), approximate)[0:1].reshape(()))


# ------------------------------------------------- cases found by the fuzzer --
# The float64 tanh forms in about [-21.55, -21.16]: exp(-w) overflows there
# although the true value is a normal or subnormal number, not 0.

@pytest.mark.parametrize("x", [-21.16, -21.3, -21.5])
def test_tanh_float64_not_flushed_to_zero_early(x):
    got = float(gelu_ext.fast_gelu(np.float64(x), "tanh"))
    exact = testing.mp_gelu_tanh(x)
    assert float(exact) != 0.0
    assert testing.ulp_error(got, exact, np.float64) <= 2
    exact, scale = testing.mp_gelu_tanh_grad(x)
    got = float(gelu_ext.fast_gelu_grad(np.float64(x), approximate="tanh"))
    assert testing.ulp_error(got, exact, np.float64, scale=scale) <= 4


# grad=None must not stand for a Python int 1, which promotes bool to int64
# and so to float64
@pytest.mark.parametrize("fn", [lambda x: gelu_ext.fast_gelu_grad(x),
                                lambda x: gelu_ext.fast_gelu_grad(x, approximate="tanh"),
                                lambda x: gelu_ext.relu_grad(x)],
                         ids=["fast_gelu_grad", "fast_gelu_grad-tanh", "relu_grad"])
def test_grad_of_bool_without_grad_keeps_forward_dtype(fn):
    x = np.array([True, False])
    assert fn(x).dtype == gelu_ext.fast_gelu(x).dtype == np.float16
