"""Every ISA path against the scalar twins of its float32 tables.

The float32 table loops of a path read either the 32-piece tables of
src/math/gx_lut.h (baseline, AVX-512) or the 8-piece tables of src/math/gx_lut8.h
(AVX2, and NEON on aarch64): each is one scheme with its own scalar twins,
and the two give different last bits (both within the bounds:
bench/results/ulp_exhaustive.txt proves each path).  Here:

* an 8-piece path gives, where its table covers x, exactly the bits of
  the 8-piece twins (``_test_hooks.twin8``), and elsewhere (the general formula
  of src/math/gx_math.h, shared by every path) the baseline's bits;
* a 32-piece path gives the baseline's bits everywhere (the baseline *is*
  the 32-piece twins);
* the twins themselves are checked against the reference (mpmath-free:
  gelu_ext.testing's float64 twins) with the bounds of testing.BOUNDS.

The inputs: a dense grid over every table's range and its edges (+-X, the
clamp at 6, tiny and subnormal x), normal samples and the special values.
"""
import numpy as np
import pytest

import gelu_ext
from gelu_ext import _spec, _test_hooks, _ufuncs, testing
from helpers import on_isa

# the float32 split kernels (one per op with a table), and whether the op
# takes a second input (a derivative's g, a gated form's up)
KERNELS = [op for op in _ufuncs.OPS.values() if op.name in _spec.SPLIT]


def _inputs():
    rng = np.random.default_rng(8)
    edges = []
    for X in (4.5, 6.0, 8.0, 8.0 / 1.702):
        v = np.float32(X)
        edges += [np.nextafter(v, np.float32(0)), v, np.nextafter(v, np.float32(np.inf))]
    x = np.concatenate([
        np.linspace(-9, 9, 200001),
        rng.standard_normal(50000) * 3,
        [e * s for e in edges for s in (1, -1)],
        [0.0, -0.0, 1e-45, -1e-45, 1e-38, -1e-38, 1e-30, -1e-30, 1e-10, -1e-10,
         np.inf, -np.inf, np.nan, 1e30, -1e30],
    ]).astype(np.float32)
    g = rng.standard_normal(x.size).astype(np.float32)
    g[::97] = 0.0
    g[1::97] = -0.0
    g[2::97] = np.inf
    g[3::97] = -np.inf
    g[4::97] = np.nan
    return x, g


X, G = _inputs()


def _run(op):
    return op.ufunc(X, G) if op.nin == 2 else op.ufunc(X)


@pytest.mark.parametrize("op", KERNELS, ids=lambda o: o.name)
def test_path_gives_its_twins_bits(op, isa):
    got = _run(op)
    base = on_isa("baseline", _run, op)
    if _ufuncs._f32_pieces(isa) == 32:
        testing.assert_same_bits(got, base, f"{op.name} on {isa}")
        return
    twin, covered = _test_hooks.twin8(op.name, X, G if op.nin == 2 else None)
    testing.assert_same_bits(got[covered], twin[covered], f"{op.name} on {isa}, table")
    testing.assert_same_bits(got[~covered], base[~covered], f"{op.name} on {isa}, general formula")


@pytest.mark.parametrize("op", [o for o in KERNELS if o.kind == "plain"], ids=lambda o: o.name)
def test_the_8_piece_twins_hold_the_bounds(op):
    """The twins are a formula of their own: their errors against the
    float64 reference stay within the op's bound where they cover x."""
    g = np.ones_like(X) if op.nin == 2 else None
    twin, covered = _test_hooks.twin8(op.name, X, g)
    x = X[covered]
    testing.assert_matches_reference(op.name, twin[covered], x, None if g is None else g[covered])


def test_twin8_rejects_what_it_does_not_know():
    with pytest.raises(ValueError, match="kernel must be an op with 8-piece tables, got 'relu'"):
        _test_hooks.twin8("relu", X[:4])
    with pytest.raises(ValueError, match="gelu_erf_grad needs g"):
        _test_hooks.twin8("gelu_erf_grad", X[:4])


def test_every_path_names_its_tables():
    assert {_ufuncs._f32_pieces(n) for n in _ufuncs._compiled_isas()} <= {8, 32}
    assert _ufuncs._f32_pieces("baseline") == 32
    with pytest.raises(ValueError, match="isa must be one of"):
        _ufuncs._f32_pieces("sse9")


def test_show_config_names_the_tables_of_the_path_in_use(isa):
    want = {8: "8-piece", 32: "32-piece"}[_ufuncs._f32_pieces(isa)]
    assert gelu_ext.show_config(print_=False)["f32_tables"].startswith(want)
