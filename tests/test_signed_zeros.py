"""Signed zeros: every zero a ufunc returns has the sign the
README's rules give it, for every op of the table, on every ISA path this
CPU runs, in every dtype.  (float32 gelu_erf, silu and swiglu returned +0
for -0 on aarch64: the scalar table twin's sign followed what the compiler
made of -fma; see gx_lut_fwd in src/math/gx_lut.h.  A GELU_EXT_MARCH_NATIVE=1
build did the same on x86.)

The rule, one for all ops: a zero result has the sign of the exact value of
what the op computes, zeros being signed as IEEE arithmetic signs them:
- the GELU family f(x) = x * (a positive factor): f(+-0) = +-0, f(-inf) = -0,
  and an f(x < 0) that underflows is -0: the sign of x;
- ReLU and ReLU6: +0 for every x < 0 and x itself for x = +-0 (as torch's
  relu and relu6, clamps); squared ReLU +0 for every x <= 0; a gradient g
  where x is inside the op's linear range, else +0 (as PyTorch);
- a gradient f'(x) * g: sign(f'(x)) xor sign(g), with f'(+-0) = 1/2,
  f'(+inf) = 1 and f'(-inf) = +0 (the README's GELU'(-inf) = 0), and for
  other x the sign of the exact f'(x) (mpmath: the float64 twin underflows
  to an unsigned-looking 0 far in the tail, mpmath does not);
- the fused-bias forms: f(x + b) with x + b rounded in the dtype first
  ((+0) + (-0) = +0, 1 + (-1) = +0, (-0) + (-0) = -0);
- the gated forms: f(gate) * up, and f'(gate) * (up * g), up * g rounded in
  the dtype first.
The inputs are every combination of x in XS with the other inputs in OTHERS
(+-0, +-1 and the smallest subnormal of either sign, whose products
underflow), once with the table formula covering most of the array and once
behind a run of x that only the general formula takes (the split driver's
two ways of patching a block, src/kernels/gx_k_split.h).
"""
import itertools
import math

import numpy as np
import pytest

from gelu_ext import _spec, _ufuncs, testing
from helpers import UFUNC_IDS, UFUNCS
from opinfo import PLAIN_FORWARD, ids

KEEPS_ZERO_SIGN = [o for o in PLAIN_FORWARD if o.reference is not None and np.signbit(o.reference(-0.0))]

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

DTYPES = [np.float16, np.float32, np.float64] + ([ml_dtypes.bfloat16] if ml_dtypes else [])
DTYPE_IDS = [np.dtype(d).name for d in DTYPES]
# -20 and -1e4 underflow the forward ops (and the gradients times g) in the
# narrower dtypes; -3 lies beyond every derivative's zero crossing
XS = [0.0, -0.0, math.inf, -math.inf, "sub", "-sub", "tiny", "-tiny", 1.0, -1.0, 3.0, -3.0, -20.0, -1e4]
OTHERS = [0.0, -0.0, 1.0, -1.0, "sub", "-sub"]
GENERAL_X = -50.0       # outside every float32 table (|x| <= 8): the general formula


def value(v, dt):
    """v in dtype dt; "sub" / "tiny" are dt's smallest subnormal / normal."""
    if isinstance(v, str):
        fi = ml_dtypes.finfo(dt) if ml_dtypes and np.dtype(dt) == np.dtype(ml_dtypes.bfloat16) else np.finfo(dt)
        mag = fi.smallest_subnormal if v.endswith("sub") else fi.smallest_normal
        return -mag if v.startswith("-") else mag
    return np.array(v).astype(dt)


def operands(spec, dt, layout):
    """The inputs of every combination (x in XS, the rest in OTHERS)."""
    grids = [XS] + [OTHERS] * (spec.nin - 1)
    rows = list(itertools.product(*grids))
    cols = [np.array([value(r[k], dt) for r in rows], dtype=dt) for k in range(spec.nin)]
    if layout == "general-majority":
        pad = 3 * len(rows)     # a majority of each block leaves the table loop
        neutral = {"b": 0.0, "g": 1.0, "u": 1.0}
        cols = [np.concatenate([np.full(pad, GENERAL_X if role == "x" else neutral[role], dtype=dt), c])
                for role, c in zip(spec.roles, cols)]
    return cols


_FPRIME_NEG = {}


def fprime_negative(name, x):
    """Whether the derivative `name` (a base op, *_grad) is negative at x
    (a float): by the rules at +-0 and +-inf, by mpmath elsewhere."""
    if x == 0 or math.isinf(x):
        return False            # 1/2, 1 and +0
    key = (name, x)
    if key not in _FPRIME_NEG:
        v = testing.MP_REFERENCE[name](x)[0]
        assert v != 0, f"{name}'({x!r}) is 0: not a point whose sign is known"
        _FPRIME_NEG[key] = bool(v < 0)
    return _FPRIME_NEG[key]


def expected_negative(spec, args, dt):
    """Per element, whether a zero result must be -0 (the rules above)."""
    with np.errstate(all="ignore"):
        wide = [np.asarray(a).astype(np.float64) for a in args]
        if spec.bias:           # x + b rounded in the dtype
            x = (np.asarray(args[0]) + np.asarray(args[-1])).astype(dt).astype(np.float64)
        else:
            x = wide[0]
        sign = np.signbit
        base = spec.base
        if _spec.OP[base].exact:         # the twin's zeros (ReLU's: +0, or g's sign)
            ref = testing.REFERENCE[base]
            return sign(ref(x, wide[1]) if spec.grad else ref(x))
        if spec.kind == "gate":
            return sign(x) ^ sign(wide[1])
        if spec.kind == "dgate":
            ug = (np.asarray(args[1]) * np.asarray(args[2])).astype(dt).astype(np.float64)
            fneg = np.array([fprime_negative(base, float(v)) for v in x])
            return fneg ^ sign(ug)
        if spec.grad:
            fneg = np.array([fprime_negative(base, float(v)) for v in x])
            return fneg ^ sign(wide[1])
        return sign(x)


@pytest.mark.parametrize("layout", ["table-majority", "general-majority"])
@pytest.mark.parametrize("dt", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("spec", UFUNCS, ids=UFUNC_IDS)
def test_zero_results_have_the_documented_sign(spec, dt, layout, isa):
    args = operands(spec, dt, layout)
    with np.errstate(all="ignore"):
        got = spec.ufunc(*args)
    assert got.dtype == np.dtype(dt)
    got64 = got.astype(np.float64)
    zero = got64 == 0
    assert zero.any(), "the inputs must produce zeros"
    want_neg = expected_negative(spec, args, dt)
    bad = zero & (np.signbit(got64) != want_neg)
    if bad.any():
        i = int(np.argmax(bad))
        inputs = ", ".join(f"{r}={a[i]!r}" for r, a in zip(spec.roles, args))
        raise AssertionError(f"{spec.name} {np.dtype(dt).name} on {_ufuncs._get_isa()}: "
                             f"{int(bad.sum())} zeros of the wrong sign; first: ({inputs}) -> "
                             f"{got[i]!r}, expected {'-' if want_neg[i] else '+'}0")


@pytest.mark.parametrize("dt", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", ids(KEEPS_ZERO_SIGN))
def test_forward_keeps_the_sign_of_zero(name, dt, isa):
    """The README's promise in its plainest form: gelu(+-0) = +-0, and
    relu(+-0) = +-0 as torch.relu gives it; for every forward op whose twin
    keeps the sign (relu2(-0) = +0, as torch's square does)."""
    x = np.array([0.0, -0.0] * 40, dtype=dt)       # whole vectors and a tail
    got = _ufuncs.OPS[name].ufunc(x).astype(np.float64)
    assert (got == 0).all()
    assert (np.signbit(got) == np.signbit(x.astype(np.float64))).all()
