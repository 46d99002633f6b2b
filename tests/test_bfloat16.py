"""bfloat16 in, bfloat16 out, when ml_dtypes is installed.

Every ufunc of the op table gets a bfloat16 loop at import
(src/python/_ufuncs.pyx, ``_register_bfloat16``): the float32 kernel on the widened
input (exact), rounded once to bfloat16, nearest even
(src/kernels/gx_k_16bit.h, ``GX_FN(run_16bit)``).  bfloat16 has 65,536 values, so
accuracy, special values, ISA paths and the rounding are checked on all of
them.  The reference for accuracy:

* everyday (``test_every_input_*``): gelu_ext.testing's float64 twin
  (``REFERENCE``), ~1e-12 relative where it matters -- some 10^9 times finer
  than a bfloat16 ULP -- and fast;
* ``slow`` (``test_every_finite_input_against_mpmath``): the mpmath oracle
  at 60 digits on every finite input, ~30 s for the four GELU functions,
  too slow for the everyday run.

Both measure the error against the exact value, not against a rounded one:
ml_dtypes' own float64 -> bfloat16 cast rounds through float32 (twice).
"""

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

import gelu_ext  # noqa: E402
from gelu_ext import _spec, _test_hooks, _ufuncs, testing  # noqa: E402
from gelu_ext.testing import assert_same_bits  # noqa: E402
from helpers import (SPECS_BY_NAME, UFUNC_IDS, UFUNCS, gated_unfused, on_isa, python_child,  # noqa: E402
                     scheme_reference)
from opinfo import ORACLED, TWINNED, ids  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
# every bfloat16 bit pattern, in bit order: +0 ... +inf, NaNs, -0 ... -inf, NaNs
ALL = np.arange(1 << 16, dtype=np.uint16).view(BF16)
# the ops held to a bound in ULPs rather than to the twin's bits (those are
# test_every_input_with_gradient_and_bias_within_bounds's)
ULP_FORWARD = [o for o in ORACLED if not o.is_grad]
ULP_GRAD = [o for o in ORACLED if o.is_grad]


def widen(a):
    """bfloat16 -> float64, exact; a signalling NaN among ALL makes
    ml_dtypes flag 'invalid', which says nothing here."""
    with np.errstate(invalid="ignore"):
        return np.asarray(a).astype(np.float64)


def operands(spec, seed=0):
    """The ufunc's inputs: x = every bfloat16, g ~ U(-3, 3) and b ~ U(-1, 1)
    in bfloat16 (g and b also hit their special values)."""
    rng = np.random.default_rng(seed)
    g = rng.uniform(-3, 3, ALL.size)
    b = rng.uniform(-1, 1, ALL.size)
    g[:6] = b[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]
    roles = {"x": ALL, "g": g.astype(BF16), "b": b.astype(BF16), "u": g[::-1].astype(BF16)}
    return [roles[r] for r in spec.roles]


def kernel_point(spec, args):
    """What the kernel evaluates at: x, or x + b rounded to bfloat16 (the
    fused forms round the sum first, as for float16)."""
    if not spec.bias:
        return args[0]
    with np.errstate(all="ignore"):
        return args[0] + args[-1]       # ml_dtypes: in float32, rounded once


def test_registered_when_ml_dtypes_imports():
    assert _ufuncs.BFLOAT16 == BF16
    cfg = gelu_ext.show_config(print_=False)
    assert "bfloat16" in cfg["dtypes"] and ml_dtypes.__version__ in cfg["dtypes"]


def _fresh_python(code, cwd):
    """What `python -c code` prints, run in cwd."""
    return python_child(["-c", code], capture_output=True, text=True, check=True, cwd=cwd).stdout


@pytest.mark.parametrize("first", ["gelu_ext", "ml_dtypes", "show_config"])
def test_loops_register_whichever_imports_first(tmp_path, first):
    """gelu_ext does not import ml_dtypes (a second of import time for
    nothing where no bfloat16 array is in use); the loops register as
    ml_dtypes imports: after gelu_ext, before it, or through show_config,
    which imports it to say what there is."""
    before = {"gelu_ext": "import gelu_ext\n"
                          "assert 'ml_dtypes' not in sys.modules\n"
                          "assert 'not imported yet' in gelu_ext._ufuncs._BFLOAT16_MISSING\n",
              "ml_dtypes": "import ml_dtypes\n",
              "show_config": "import gelu_ext\n"
                             "assert 'bfloat16 (ml_dtypes' in gelu_ext.show_config(print_=False)['dtypes']\n"}
    code = ("import sys\n" + before[first] +
            "import numpy as np, gelu_ext, ml_dtypes\n"
            "from gelu_ext import _ufuncs\n"
            "assert _ufuncs.BFLOAT16 == np.dtype(ml_dtypes.bfloat16), _ufuncs._BFLOAT16_MISSING\n"
            "y = gelu_ext.fast_gelu(np.array([-1.0, 2.0], ml_dtypes.bfloat16))\n"
            "assert y.dtype == ml_dtypes.bfloat16, y.dtype\n"
            "print(y.astype(np.float32).tolist())\n")
    assert _fresh_python(code, tmp_path).strip() == "[-0.158203125, 1.953125]"


def test_without_ml_dtypes_gelu_ext_imports_and_says_so(tmp_path):
    """ml_dtypes is optional: a process where it cannot be imported gets the
    other loops, and show_config says why there is no bfloat16."""
    code = ("import importlib.abc, sys\n"
            "class NoMlDtypes(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name.split('.')[0] == 'ml_dtypes':\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, NoMlDtypes())\n"
            "import numpy as np, gelu_ext\n"
            "from gelu_ext import _ufuncs\n"
            "assert _ufuncs.BFLOAT16 is None\n"
            "assert gelu_ext.fast_gelu(np.ones(3, np.float16)).dtype == np.float16\n"
            "print(gelu_ext.show_config(print_=False)['dtypes'])\n")
    assert "no bfloat16: ml_dtypes not installed" in _fresh_python(code, tmp_path)


# --------------------------------------------------------------- dtypes --

@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_result_is_bfloat16_like_np_tanh(spec):
    args = [np.ones(3, BF16)] * spec.nin
    assert np.tanh(args[0]).dtype == BF16
    assert spec.ufunc(*args).dtype == BF16
    assert type(spec.ufunc(*[a[0] for a in args])) is type(np.tanh(args[0][0]))


def test_thin_functions_keep_bfloat16():
    x = np.linspace(-3, 3, 12).astype(BF16).reshape(3, 4)
    b = np.ones(4, BF16)
    for approximate in ("none", "tanh"):
        assert gelu_ext.fast_gelu(x, approximate).dtype == BF16
        assert gelu_ext.fast_gelu(x, approximate, bias=b).dtype == BF16
        assert gelu_ext.fast_gelu_grad(x, approximate=approximate).dtype == BF16
        assert gelu_ext.fast_gelu_grad(x, x, approximate, bias=b).dtype == BF16
    assert gelu_ext.relu(x).dtype == BF16
    assert gelu_ext.relu_grad(x).dtype == BF16
    assert gelu_ext.relu_grad(x, x).dtype == BF16


# (other operand, result): whatever NumPy's resolver picks, which is what
# np.arctan2 gives with ml_dtypes' own bfloat16 loop.  bfloat16 has no common
# type with float16 or int32, so the first loop both cast to safely runs; a
# Python float is not "weak" for a user dtype (NEP 50 covers NumPy's own).
MIXED = [(np.ones(3, np.float32), np.float32), (np.ones(3, np.float64), np.float64),
         (np.ones(3, np.float16), np.float32), (np.ones(3, np.int8), BF16),
         (np.ones(3, np.bool_), BF16), (np.ones(3, np.uint8), BF16), (np.ones(3, np.int16), np.float32),
         (np.ones(3, np.int32), np.float64), (2.0, np.float32), (np.float32(2.0), np.float32),
         (True, BF16), (2, None)]
# None: the Python int's promotion with a user dtype changed in NumPy 2.1
# (bfloat16 there, float32 in 2.0): whatever this NumPy's resolver picks


MIXED_IDS = [(o.dtype.name if isinstance(o, np.ndarray) else f"{type(o).__name__}_scalar")
             for o, _ in MIXED]


@pytest.mark.parametrize("other, want", MIXED, ids=MIXED_IDS)
@pytest.mark.parametrize("spec", [u for u in UFUNCS if u.nin == 2], ids=lambda u: u.name)
def test_mixed_operands_follow_numpy_promotion(spec, other, want):
    x = np.array([-2.5, 0.75, 3.0], BF16)
    got = spec.ufunc(x, other)
    if want is None:
        want = np.arctan2(x, other).dtype
    if isinstance(other, float) and np.arctan2(x, other).dtype == BF16:
        # ml_dtypes 0.7 (NumPy >= 2.5) makes a Python float weak next to
        # bfloat16 for NumPy's own ufuncs (np.arctan2(x, 2.0) is bfloat16);
        # a ufunc with plain registered loops, like ours, still resolves to
        # the float32 loop.  Either way the result is that loop's.
        assert got.dtype in (BF16, np.dtype(np.float32))
        want = got.dtype
    else:
        assert got.dtype == np.arctan2(x, other).dtype == np.dtype(want)
    # and it is that loop's result: the operands cast to it first
    assert_same_bits(got, spec.ufunc(x.astype(want), np.asarray(other).astype(want)), spec.name)


# -------------------------------------------------------- every input --

@pytest.mark.parametrize("op", ULP_FORWARD, ids=ids(ULP_FORWARD))
def test_every_input_forward_within_its_bound(op):
    got = op.ufunc(ALL)
    err = testing.ulp_error(got, op.reference(widen(ALL)), BF16)
    bound = testing.bound(op.name, BF16).value
    i = int(np.argmax(err))
    assert err[i] <= bound, f"{op.name}: {err[i]:.4f} ULP at x={widen(ALL[i])!r}"


@pytest.mark.parametrize("op", ULP_GRAD, ids=ids(ULP_GRAD))
def test_every_input_derivative_within_its_bound(op):
    """g = 1: the derivative itself, in ULPs of its scale s = max of its two
    terms (the float32 tests' measure; gelu' crosses zero)."""
    x = widen(ALL)
    got = op.ufunc(ALL, np.ones(1, BF16))
    err = testing.ulp_error(got, op.reference(x), BF16, scale=testing.grad_scale(op.name, x))
    bound = testing.bound(op.name, BF16).value
    i = int(np.argmax(err))
    assert err[i] <= bound, f"{op.name}: {err[i]:.4f} ULP(s) at x={x[i]!r}"


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_every_input_with_gradient_and_bias_within_bounds(spec):
    """Every ufunc, every x, with random bfloat16 g and b: BOUNDS against
    the twin at the point the kernel saw (x + b rounded to bfloat16);
    ReLU and its gradient bit-exact."""
    args = operands(spec)
    got = spec.ufunc(*args)
    assert got.dtype == BF16
    if spec.gated:      # bit-identical to the unfused composition in bfloat16
        assert_same_bits(got, gated_unfused(spec, args, BF16), spec.name)
        return
    testing.assert_matches_reference(spec.base, got, widen(kernel_point(spec, args)),
                                     widen(args[1]) if spec.grad else None)


@pytest.mark.slow
@pytest.mark.parametrize("op", ORACLED, ids=ids(ORACLED))
def test_every_finite_input_against_mpmath(op):
    """Every finite bfloat16 within its bound of the mpmath value (ULP(s)
    for the derivatives), on the ISA path in use."""
    name = op.name
    x = widen(ALL)
    x = x[np.isfinite(x)]
    xs = x.astype(BF16)
    ref = [op.oracle(v) for v in x]
    if op.is_grad:
        got = getattr(_ufuncs, name)(xs, np.ones(1, BF16))
        exact = np.array([r[0] for r in ref], dtype=object)
        scale = np.array([r[1] for r in ref], dtype=object)
        err = testing.ulp_error(got, exact, BF16, scale=scale)
    else:
        got = getattr(_ufuncs, name)(xs)
        err = testing.ulp_error(got, np.array(ref, dtype=object), BF16)
    i = int(np.argmax(err))
    assert err[i] <= testing.bound(name, BF16).value, f"{name}: {err[i]:.4f} at x={x[i]!r}"


# ---------------------------------------------- special values, rounding --

SPECIAL_X = [-np.inf, np.inf, np.nan, -0.0, 0.0]


@pytest.mark.parametrize("op", TWINNED, ids=ids(TWINNED))
def test_special_values_as_the_twin_and_as_float32(op):
    """+-inf, NaN and +-0 (a derivative with g = 1): the twin's value
    rounded to bfloat16, zeros' signs included, and the float32 loop's
    result rounded."""
    uf = op.ufunc
    x = np.array(SPECIAL_X, BF16)
    args = [x] if uf.nin == 1 else [x, np.ones(x.size, BF16)]
    got = uf(*args)
    with np.errstate(all="ignore"):
        want = op.reference(np.array(SPECIAL_X))
    assert_same_bits(got, np.asarray(want, np.float64).astype(BF16), op.name)
    assert_same_bits(got, uf(*[a.astype(np.float32) for a in args]).astype(BF16), op.name)


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_every_nan_gives_a_quiet_nan_without_warning(spec):
    """All 254 bfloat16 NaNs, signalling ones included (warnings are errors
    in this suite: the loop raises none)."""
    nans = ALL[np.isnan(widen(ALL))]
    assert nans.size == 254
    args = [nans] + [np.ones(nans.size, BF16)] * (spec.nin - 1)
    bits = spec.ufunc(*args).view(np.uint16)
    op = _spec.OP[spec.name]
    twin = testing.REFERENCE.get(spec.name) if op.exact else None
    want = (twin(widen(nans), np.ones(nans.size)) if op.is_grad else twin(widen(nans))) if twin else None
    if want is not None and not np.isnan(want).any():     # a derivative that is 0 at NaN
        assert np.all(bits == np.asarray(want, np.float64).astype(BF16).view(np.uint16)), spec.name
    else:
        assert np.all((bits & 0x7F80) == 0x7F80) and np.all(bits & 0x0040), spec.name


@pytest.mark.parametrize("spec", [u for u in UFUNCS if not u.gated], ids=lambda u: u.name)
def test_same_bits_as_float32_ufunc_rounded_by_ml_dtypes(spec, isa):
    """The result is the path's float32 kernel's, rounded once: ml_dtypes'
    own float32 -> bfloat16 cast (an independent rounding) gives the same
    bits, on every input (fused forms: on the bfloat16 sum x + b)."""
    args = operands(spec, seed=1)
    got = spec.ufunc(*args)
    f32 = [kernel_point(spec, args).astype(np.float32)] + [a.astype(np.float32) for a in args[1:]]
    base = SPECS_BY_NAME[spec.base].ufunc
    with np.errstate(invalid="ignore"):
        want = base(*f32[:base.nin]).astype(BF16)
    assert_same_bits(got, want, spec.name)


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_same_bits_on_every_path_of_a_table_scheme(spec, isa):
    """Paths that read the same float32 tables give the same bits (the
    scheme's first path is the reference: baseline for the 32-piece tables)."""
    args = operands(spec, seed=2)
    want = on_isa(scheme_reference(isa), spec.ufunc, *args)
    assert_same_bits(spec.ufunc(*args), want, f"{spec.name} {isa}")


@pytest.mark.parametrize("spec", [u for u in UFUNCS if u.bias], ids=lambda u: u.name)
def test_fused_bias_is_bit_identical_to_unfused_on_the_bfloat16_sum(spec):
    args = operands(spec, seed=3)
    unfused = SPECS_BY_NAME[spec.base].ufunc
    assert_same_bits(spec.ufunc(*args), unfused(kernel_point(spec, args), *args[1:-1]), spec.name)


# -------------------------------------------------- layouts and threads --

@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_out_given_and_in_place(spec):
    args = [a[:3000].copy() for a in operands(spec, seed=4)]
    want = spec.ufunc(*args)
    o = np.empty(3000, BF16)
    assert spec.ufunc(*args, out=o) is o
    assert_same_bits(o, want, spec.name)
    assert spec.ufunc(*args, out=args[0]) is args[0]
    assert_same_bits(args[0], want, spec.name)


def test_float32_into_bfloat16_out_is_rounded_once():
    x = widen(ALL).astype(np.float32)
    o = np.empty(ALL.size, BF16)
    gelu_ext.fast_gelu(x, out=o)
    with np.errstate(invalid="ignore"):
        assert_same_bits(o, gelu_ext.fast_gelu(x).astype(BF16))


# Strided operands and outputs are gathered in chunks of 512 elements
# (src/python/_ufuncs.pyx, _loop): lengths around it, each operand strided in turn.
@pytest.mark.parametrize("n", [511, 513, 1537], ids=lambda n: f"n{n}")
@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_strided_operands_and_out(spec, n):
    flat = [a[:n].copy() for a in operands(spec, seed=5)]
    want = spec.ufunc(*flat)
    for which in list(range(spec.nin)) + ["out", "all"]:
        args = []
        for k, v in enumerate(flat):
            if which in (k, "all"):
                big = np.zeros(3 * n, BF16)
                big[::3] = v
                args.append(big[::3])
            else:
                args.append(v)
        big_out = np.full(2 * n, 7, BF16)
        out = big_out[::2] if which in ("out", "all") else np.empty(n, BF16)
        spec.ufunc(*args, out=out)
        assert_same_bits(out, want, f"{spec.name} strided {which}")
        if which in ("out", "all"):
            assert np.all(widen(big_out[1::2]) == 7)


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_non_contiguous_layouts(spec):
    x = operands(spec, seed=6)
    a = [v[:24].copy() for v in x]
    want = spec.ufunc(*a).reshape(2, 3, 4)
    rev = [v[::-1] for v in a]
    assert_same_bits(spec.ufunc(*rev), want.ravel()[::-1], f"{spec.name} reversed")
    t = [v.reshape(4, 3, 2).transpose(2, 1, 0) for v in a]
    assert_same_bits(spec.ufunc(*t), want.reshape(4, 3, 2).transpose(2, 1, 0), f"{spec.name} transposed")


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_threaded_calls_give_the_serial_bits(spec, restore_threads):
    """Large bfloat16 calls run on the pool like float32 (gx_apply, chunks
    of itemsize 2): the bits do not depend on the thread count."""
    n = (1 << 17) + 5
    rng = np.random.default_rng(7)
    args = [(2 * rng.standard_normal(n)).astype(BF16) for _ in range(spec.nin)]
    gelu_ext.set_num_threads(1)
    serial = spec.ufunc(*args)
    gelu_ext.set_num_threads(2)
    _test_hooks.set_parallel_threshold(1024)
    assert_same_bits(spec.ufunc(*args), serial, spec.name)
    strided = [np.repeat(a, 2)[::2] for a in args]
    assert_same_bits(spec.ufunc(*strided), serial, f"{spec.name} strided")


# ------------------------------------------------------------ bad input --

BAD_INPUTS = {
    "complex": np.ones(3, dtype=np.complex128),
    "object": np.array([1.0, 2.0, 3.0], dtype=object),
    "str": np.array(["a", "b", "c"]),
    "datetime": np.array(["2024-01-01"] * 3, dtype="datetime64[D]"),
}


@pytest.mark.parametrize("bad", list(BAD_INPUTS))
@pytest.mark.parametrize("spec", [u for u in UFUNCS if u.nin >= 2], ids=lambda u: u.name)
def test_unsupported_operand_with_bfloat16_raises_type_error(spec, bad):
    args = [np.ones(3, BF16)] * spec.nin
    args[-1] = BAD_INPUTS[bad]
    with pytest.raises(TypeError, match=rf"ufunc '{spec.name}' not supported for the input types"):
        spec.ufunc(*args)


@pytest.mark.parametrize("out_dtype", [np.int32, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_bfloat16_result_into_unsafe_out_raises_and_writes_nothing(spec, out_dtype):
    """NumPy's casting rule decides: where bfloat16 -> out_dtype is not a
    same_kind cast the call raises and writes nothing; where it is (float16
    from ml_dtypes 0.7 on) the bfloat16 result is cast into out, as for any
    ufunc."""
    args = [np.ones(4, BF16)] * spec.nin
    o = np.zeros(4, out_dtype)
    if np.can_cast(BF16, out_dtype, "same_kind"):
        assert spec.ufunc(*args, out=o) is o
        assert_same_bits(o, spec.ufunc(*args).astype(out_dtype), spec.name)
        return
    with pytest.raises(TypeError, match=rf"Cannot cast ufunc '{spec.name}' output from "
                                        rf"dtype\(bfloat16\) to dtype\('{np.dtype(out_dtype).name}'\)"):
        spec.ufunc(*args, out=o)
    assert np.all(o == 0)


@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_float64_into_bfloat16_out_raises_under_safe_casting(spec):
    args = [np.ones(4)] * spec.nin
    with pytest.raises(TypeError, match=r"Cannot cast ufunc .* to dtype\(bfloat16\) with casting rule 'safe'"):
        spec.ufunc(*args, out=np.empty(4, BF16), casting="safe")
