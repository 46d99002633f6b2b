"""Test-only helpers shared by the test files (``import helpers``: pyproject's
``pythonpath`` puts tests/ on sys.path, so this works in every import mode).

Design:
- The oracle is ``gelu_ext.testing`` (the slow twin and the bounds), never
  the compiled code: every expected value is computed in float64 (or mpmath)
  and only then rounded to the dtype under test.
- ``UFUNCS`` describes every ufunc once, straight from the op table
  (``gelu_ext._ufuncs.OPS``, i.e. src/gx_ops.h), so a new op is tested
  without touching the tests' lists.
- Child interpreters start through ``python_child`` only: see there.
"""
import heapq
import os
import subprocess
import sys
import tempfile
from typing import NamedTuple

import numpy as np
import pytest

import gelu_ext
from gelu_ext import _ufuncs, testing

# --------------------------------------------------------------- dtypes --

FLOAT_DTYPES = [np.float16, np.float32, np.float64]
OTHER_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.bool_]
ALL_DTYPES = FLOAT_DTYPES + OTHER_DTYPES


def dtype_id(dt):
    return np.dtype(dt).name


def result_dtype(dt):
    """What NumPy's own ``np.tanh`` returns for ``dt``: the dtype our ufuncs
    must return too (ints and bools go to the smallest float that holds them)."""
    return np.tanh(np.ones(1, dtype=dt)).dtype


# ------------------------------------------------------------- ufuncs --

class UfuncSpec(NamedTuple):
    """One ufunc of the op table: its inputs are x, then g if ``grad``, then
    b if ``bias``; ``base`` is the function it computes at x (+ b).  A gated
    op (``kind`` "gate" or "dgate") takes (gate, up) or (gate, up, g) and is
    ``base(gate) * up`` or ``base(gate, up * g)``."""
    name: str
    nin: int
    base: str
    grad: bool
    bias: bool
    ufunc: object
    kind: str = "plain"

    @property
    def roles(self):
        """The inputs' roles in order: x (or the gate), g, b, u (up)."""
        if self.kind == "gate":
            return ["x", "u"]
        if self.kind == "dgate":
            return ["x", "u", "g"]
        return ["x"] + (["g"] if self.grad else []) + (["b"] if self.bias else [])

    @property
    def gated(self):
        return self.kind in ("gate", "dgate")


UFUNCS = [UfuncSpec(op.name, op.nin, op.base, op.grad, op.bias, op.ufunc, op.kind)
          for op in _ufuncs.OPS.values()]
UFUNC_IDS = [u.name for u in UFUNCS]
SPECS_BY_NAME = {u.name: u for u in UFUNCS}


def loop_inputs(spec, args, out_dtype=None):
    """(x, g, dtype): the point the kernel evaluates (x + b added in the loop
    dtype for the fused forms: bit-identical to the unfused op on x + b),
    the incoming gradient (None if not a derivative) and the result dtype,
    following NumPy's casting (``np.tanh``'s rule)."""
    arrs = [np.asarray(a) for a in args]
    loop = np.result_type(*[result_dtype(a.dtype) for a in arrs])
    shape = np.broadcast_shapes(*[a.shape for a in arrs])
    with np.errstate(all="ignore"):
        cast = [np.broadcast_to(a.astype(loop), shape) for a in arrs]
        x = (cast[0] + cast[-1]).astype(loop) if spec.bias else cast[0]
    return x, (cast[1] if spec.grad else None), np.dtype(loop if out_dtype is None else out_dtype)


def gated_unfused(spec, args, dtype):
    """What gated ufunc ``spec`` must equal bit for bit: the unfused
    composition of its base ufunc with NumPy's multiply, in ``dtype``."""
    base = SPECS_BY_NAME[spec.base].ufunc
    a = [np.asarray(v).astype(dtype) for v in args]
    with np.errstate(all="ignore"):
        if spec.kind == "gate":
            return np.multiply(base(a[0]), a[1])
        return base(a[0], np.multiply(a[1], a[2]))


def assert_close_to_reference(spec, got, args):
    """``got`` is what ``spec.ufunc(*args)`` must return: within
    gelu_ext.testing's bounds of the slow twin (bit-exact for ReLU; the gated
    forms bit-identical to the unfused composition, whose base op is held to
    the twin by its own checks)."""
    got = np.asarray(got)
    x, g, dt = loop_inputs(spec, args, got.dtype)
    assert got.dtype == dt, (got.dtype, dt)
    if spec.gated:
        arrs = [np.asarray(a) for a in args]
        loop = np.result_type(*[result_dtype(a.dtype) for a in arrs])
        want = gated_unfused(spec, arrs, loop).astype(dt)
        testing.assert_same_bits(got, np.broadcast_to(want, got.shape), spec.name)
        testing.assert_matches_reference(spec.base, SPECS_BY_NAME[spec.base].ufunc(
            *([x] + ([np.ones_like(x)] if spec.kind == "dgate" else []))), x,
            np.ones_like(x) if spec.kind == "dgate" else None)
        return
    testing.assert_matches_reference(spec.base, got, x, g)


# -------------------------------------------------------- ufunc methods --
# NumPy's definitions of the methods of a binary ufunc, written as Python
# loops that call the ufunc on one element at a time: the reference for
# reduce, accumulate, reduceat, outer and at (tests/test_ufunc_methods.py,
# tests/test_fuzz.py).

METHODS = ["reduce", "accumulate", "reduceat", "outer", "at"]


def method_dtypes():
    """Every loop dtype: float16, float32, float64, and bfloat16 where
    ml_dtypes imports."""
    bf16, _ = _ufuncs._bfloat16()
    return [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)] + \
        ([bf16] if bf16 is not None else [])


def _fold(uf, v, initial=None):
    """Every step of the left fold of 1-d ``v`` by ``uf``."""
    r = v[0] if initial is None else uf(v.dtype.type(initial), v[0])
    steps = [r]
    for e in v[1:]:
        r = uf(r, e)
        steps.append(r)
    return steps


def py_method(uf, method, a, b=None, axis=0, keepdims=False, indices=None, initial=None):
    """``getattr(uf, method)`` by its definition in NumPy's documentation:
    ``uf.reduce(a, axis, keepdims=, initial=)``, ``uf.accumulate(a, axis)``,
    ``uf.reduceat(a, indices)`` (1-d), ``uf.outer(a, b)`` (1-d), and the
    array ``uf.at(a.copy(), indices, b)`` leaves."""
    a = np.asarray(a)
    with np.errstate(all="ignore"):
        if method in ("reduce", "accumulate"):
            moved = np.moveaxis(a, axis, -1)
            steps = np.empty(moved.shape, a.dtype)
            for i in np.ndindex(moved.shape[:-1]):
                steps[i] = _fold(uf, moved[i], initial)
            if method == "accumulate":
                return np.moveaxis(steps, -1, axis)
            r = steps[..., -1]
            return np.expand_dims(r, axis) if keepdims else r
        if method == "reduceat":
            ends = list(indices[1:]) + [len(a)]
            return np.array([_fold(uf, a[i:j])[-1] if i < j else a[i]
                             for i, j in zip(indices, ends)], dtype=a.dtype)
        if method == "outer":
            return np.array([[uf(x, y) for y in b] for x in a], dtype=a.dtype)
        if method == "at":
            out = a.copy()
            for k, i in enumerate(indices):
                out[i] = uf(out[i], b[k]) if b is not None else uf(out[i])
            return out
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


# ------------------------------------------------------ child processes --

# First line of a child Python that checks process-wide behaviour (the thread
# count's default, fork, GELU_EXT_ISA, what an import or a job needs) on
# float32/float64 only: importing ml_dtypes costs ~0.45 s of CPU per process,
# four times the rest of `import gelu_ext`, and its bfloat16 loops have no
# part in what these children check (test_bfloat16.py checks an import
# without it on purpose).
WITHOUT_ML_DTYPES = "import sys; sys.modules['ml_dtypes'] = None   # no bfloat16 loops: faster import\n"


# --------------------------------------------------------- ISA / threads --

def usable_isas():
    """ISA paths compiled in and runnable on this CPU (what _set_isa accepts)."""
    before = _ufuncs._get_isa()
    ok = []
    try:
        for name in _ufuncs._compiled_isas():
            try:
                _ufuncs._set_isa(name)
            except ValueError:
                continue
            ok.append(name)
    finally:
        _ufuncs._set_isa(before)
    return ok


def scheme_reference(isa):
    """The first usable path whose float32 table loops read the same tables
    as ``isa`` (``_ufuncs._f32_pieces``: 8 or 32): paths of one scheme give
    the same bits, paths of different schemes differ in last bits
    (src/math/gx_lut8.h)."""
    pieces = _ufuncs._f32_pieces(isa)
    return next(n for n in usable_isas() if _ufuncs._f32_pieces(n) == pieces)


def on_isa(name, fn, *args):
    """fn(*args) computed on ISA path ``name``, the path in force restored."""
    before = _ufuncs._get_isa()
    _ufuncs._set_isa(name)
    try:
        return fn(*args)
    finally:
        _ufuncs._set_isa(before)


# ------------------------------------------------------- the quick tier --
# `pytest -m "not slow"` must run in well under a minute on 2 cores and still
# exercise every op, dtype, layout and path.  A big parameter matrix (op x
# dtype x layout x out= ...) runs whole only in the full run; in the quick
# tier it runs a fixed subset in which every PAIR of parameter values that
# occurs in the matrix occurs at least once: every op with every dtype, every
# op with every layout, every dtype with every out= mode, and so on.  A loop
# bug shows up on one such pair almost always (a dtype on a layout, an op on a
# path); the triples beyond the pairs are the full run's.

def pairwise_cover(rows):
    """Indices of a subset of ``rows`` (tuples of hashable labels, one per
    dimension) that holds every pair of labels some row holds at two
    positions.  Greedy (each step takes the row covering the most pairs not
    yet covered, the first such row on ties) and deterministic: the same rows
    give the same subset, on any machine and in any run."""
    pairs = [frozenset(((i, a), (j, b)) for i, a in enumerate(r) for j, b in enumerate(r) if i < j)
             for r in rows]
    uncovered = set().union(*pairs)
    # lazy greedy: a row's gain only falls as rows are taken, so a popped
    # row whose recomputed gain still tops the heap is the best one
    heap = [(-len(p), k) for k, p in enumerate(pairs)]
    heapq.heapify(heap)
    chosen = set()
    while uncovered:
        _, k = heapq.heappop(heap)
        gain = len(pairs[k] & uncovered)
        if heap and (-gain, k) > heap[0]:
            heapq.heappush(heap, (-gain, k))
            continue
        chosen.add(k)
        uncovered -= pairs[k]
    return chosen


def quick_tier(cases):
    """``cases``: (labels, pytest.param) pairs, labels a tuple with one
    hashable value per dimension of the matrix.  Returns the params, with
    those outside ``pairwise_cover`` of the labels marked slow (they run in
    the full run only)."""
    cases = list(cases)
    keep = pairwise_cover([labels for labels, _ in cases])
    return [p if k in keep else pytest.param(*p.values, marks=[*p.marks, pytest.mark.slow], id=p.id)
            for k, (_, p) in enumerate(cases)]


# ------------------------------------------------------------ children --
# `python -c` and `python -m` put the working directory first on the child's
# sys.path: a child started in the checkout imports the source tree's
# gelu_ext/, which has no compiled extension unless one was built in place,
# instead of the package this process tests.  So every test starts its
# Python children here, in a directory whose gelu_ext/, if it has one, is
# this process's (tests/test_children.py checks that such a child imports
# the parent's gelu_ext, and that no test starts one another way).

def child_cwd(cwd=None):
    """``cwd`` (default: the temporary directory) as the working directory
    of a child Python; ValueError where a gelu_ext/ other than this
    process's would shadow the package there."""
    cwd = tempfile.gettempdir() if cwd is None else os.fspath(cwd)
    shadow = os.path.join(cwd, "gelu_ext")
    ours = os.path.dirname(os.path.abspath(gelu_ext.__file__))
    if os.path.isdir(shadow) and os.path.realpath(shadow) != os.path.realpath(ours):
        raise ValueError(f"a child Python started in {cwd} would import {shadow}, not the tested {ours}")
    return cwd


def python_child(args, *, cwd=None, prefix=(), popen=False, imports_gelu_ext=True, **kwargs):
    """``subprocess.run([*prefix, sys.executable, *args], **kwargs)``
    (``subprocess.Popen`` with popen=True) in ``child_cwd(cwd)``; a tool
    that reads the checkout and never imports gelu_ext (mypy) says so with
    imports_gelu_ext=False and may start anywhere."""
    start = subprocess.Popen if popen else subprocess.run
    cwd = child_cwd(cwd) if imports_gelu_ext else cwd
    return start([*prefix, sys.executable, *args], cwd=cwd, **kwargs)
