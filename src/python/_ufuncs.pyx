# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""NumPy ufuncs for GELU (exact and tanh), ReLU, SiLU, quick GELU, the fused
bias and gated forms and the gradients.

Design:
- Every ufunc is a row of the op table (src/gx_ops.h): ``_register`` loops
  over it at import, so no ufunc is written out here; ``OPS`` hands the
  table to Python.
- Each operation is a real ufunc with loops for float16, float32 and float64,
  so NumPy does what NumPy users know: broadcasting, any strides, ``out=``,
  in-place and overlap handling, casting (ints and bools follow ``np.tanh``),
  ``__array_ufunc__`` dispatch.  Our code is only the inner loop.
- bfloat16 is not a NumPy type: when ``ml_dtypes`` imports, every ufunc also
  gets a loop for its bfloat16 (``PyUFunc_RegisterLoopForType``, all operands
  bfloat16), the same inner loop as the others.  ml_dtypes stays optional:
  without it nothing changes and bfloat16 is never mentioned again; and
  gelu_ext does not import it (a second, for nothing, where no bfloat16
  array is in use): the loops register as ml_dtypes imports, whoever
  imports it (``_AfterMlDtypes``).
- The inner loop hands contiguous runs straight to the C kernels (which are
  vectorised per ISA and threaded, see gx_dispatch.c).  Strided and broadcast
  runs are gathered in chunks of ``_CHUNK`` elements into stack
  buffers, computed by the same contiguous kernel, and scattered back: one
  formula for every layout, no second implementation to keep in step.
- ``reduce``, ``accumulate``, ``reduceat``, ``outer`` and ``at`` are NumPy's
  definitions: an output that overlaps an input (the layout of the first
  three methods, ``_overlap``) is computed one element at a time, in order,
  so a reduction is the left fold a Python loop over the ufunc computes,
  to the bit; an ``out=`` that is an input shifted back takes chunks with
  their inputs copied first.
- NumPy releases the GIL around these loops (no object dtypes are involved).
- ``fast_gelu`` is the one thin function here, compiled for its call cost
  (see its section), with what it needs: the GELU ufuncs by
  ``approximate`` and the fused-bias row path.  This module imports nothing
  of the gelu_ext package; the package imports it.
"""
from collections import namedtuple
import importlib.util
import sys

import numpy as np

cimport numpy as cnp
from libc.stdint cimport intptr_t
from libc.string cimport memcpy
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.pycapsule cimport PyCapsule_New

cdef extern from "numpy/arrayobject.h":
    # (numpy's .pxd leaves it commented out)
    object PyArray_NewFromDescr(PyTypeObject *subtype, cnp.dtype descr, int nd,
                                cnp.npy_intp *dims, cnp.npy_intp *strides, void *data,
                                int flags, PyObject *obj)

cnp.import_array()
cnp.import_ufunc()

cdef extern from "runtime/gx_pool.h" nogil:
    int gx_pool_default_threads()
    int gx_pool_threaded()
    int gx_pool_workers()
    void gx_pool_shutdown()
    enum: GX_POOL_NSTATS
    void gx_pool_stats(long long out[GX_POOL_NSTATS], int reset)
    const char *gx_pool_stat_name(int i)
    ctypedef Py_ssize_t gx_pool_intp
    ctypedef void (*gx_pool_fn)(void *ctx, gx_pool_intp lo, gx_pool_intp hi)
    void gx_pool_run(gx_pool_fn fn, void *ctx, gx_pool_intp n, gx_pool_intp chunk, int nthreads)

cdef extern from "dispatch/gx_api.h" nogil:
    ctypedef Py_ssize_t gx_intp
    enum: GX_NOPS
    int GX_F32, GX_F64, GX_F16, GX_BF16
    int gx_nops()
    const char *gx_op_name(int op)
    const char *gx_op_doc(int op)
    int gx_nin(int op)
    int gx_op_base(int op)
    int gx_op_kind(int op)
    const char *gx_kind_name(int kind)
    int gx_nisa()
    const char *gx_isa_name(int isa)
    const char *gx_isa_target(int isa)
    const char *gx_isa_vreg(int isa)
    int gx_isa_level(int isa)
    int gx_isa_f32_pieces(int isa)
    int gx_best_isa()
    int gx_get_isa()
    int gx_set_isa(int isa)
    int gx_get_num_threads()
    void gx_set_num_threads(int n)
    int gx_set_thread_num_threads(int n)
    gx_intp gx_get_parallel_threshold()
    gx_intp gx_get_op_parallel_threshold(int op)
    size_t gx_itemsize(int dt)
    intptr_t gx_loop_code(int op, int dt)
    int gx_loop_op(intptr_t code)
    int gx_loop_dt(intptr_t code)
    int gx_set_plain_loads(int on)
    int gx_set_bf16cvt(int on)
    gx_intp gx_get_chunk()
    void gx_set_chunk(gx_intp n)
    void gx_set_parallel_threshold(gx_intp n)
    void gx_apply(int op, int dt, const void **inp, void *out, gx_intp n)
    void gx_apply_bias_rows(int op, int dt, const void **inp, void *out,
                            gx_intp rows, gx_intp cols)

cdef extern from "dispatch/gx_capi.h" nogil:
    ctypedef struct gx_capi:
        pass
    const gx_capi gx_capi_table

cdef extern from "testing/gx_hooks.h" nogil:
    ctypedef struct gx_test_hooks:
        void (*set_chunk)(gx_intp n)
        void (*set_parallel_threshold)(gx_intp n)
        int (*set_plain_loads)(int on)
        int (*set_bf16cvt)(int on)
        int (*pool_workers)()
        void (*pool_run)(gx_pool_fn fn, void *ctx, gx_pool_intp n, gx_pool_intp chunk, int nthreads)

cdef enum:
    _CHUNK = 512


cdef inline void _gather(char *dst, const char *src, cnp.npy_intp step,
                         cnp.npy_intp m, size_t isz) noexcept nogil:
    cdef cnp.npy_intp i
    for i in range(m):
        memcpy(dst + i * isz, src + i * step, isz)


cdef inline bint _apart(const char *a, cnp.npy_intp sa, const char *b, cnp.npy_intp sb,
                        cnp.npy_intp n, size_t isz) noexcept nogil:
    """Whether n elements from a (step sa) and n from b (step sb) occupy
    disjoint bytes, judged by the address ranges they span."""
    cdef const char *a_lo = a + (sa * (n - 1) if sa < 0 else 0)
    cdef const char *a_hi = a + (sa * (n - 1) if sa > 0 else 0) + isz
    cdef const char *b_lo = b + (sb * (n - 1) if sb < 0 else 0)
    cdef const char *b_hi = b + (sb * (n - 1) if sb > 0 else 0) + isz
    return a_hi <= b_lo or b_hi <= a_lo


cdef enum:
    _APART = 0          # no input shares the output's memory but element for element
    _COPY_AHEAD = 1     # an input is the output some elements on, in the loop's direction
    _IN_ORDER = 2       # any other sharing: one element at a time, in order


cdef int _overlap(char **args, cnp.npy_intp *steps, cnp.npy_intp n, int nin,
                  size_t isz) noexcept nogil:
    """How the output shares memory with the inputs, if at all.

    NumPy copies operands that overlap before it calls a loop, except where
    a loop that reads and writes one element at a time, in order, cannot
    tell: an input that is the output shifted *ahead* (``f(a[1:],
    out=a[:-1])``), and the methods: for ``reduce`` and ``reduceat`` the
    output is the first input with step 0, for ``accumulate`` that input
    one element *behind*, and each element must see the one written before
    it.  A vector loop reads ahead of what it writes and rewrites a tail
    window, so it gets each of these wrong.  An input ahead is safe in
    chunks whose inputs are copied before their outputs are written
    (_COPY_AHEAD); anything else runs element by element (_IN_ORDER)."""
    cdef int k, how = _APART
    cdef cnp.npy_intp so = steps[nin], d
    if n < 2:
        return _APART
    if (so if so >= 0 else -so) < <cnp.npy_intp>isz:
        return _IN_ORDER                # the output overlaps itself
    for k in range(nin):
        if (args[k] == args[nin] and steps[k] == so) or _apart(args[k], steps[k], args[nin], so, n, isz):
            continue
        d = args[k] - args[nin]
        if steps[k] != so or d % so != 0 or d // so <= 0:
            return _IN_ORDER
        how = _COPY_AHEAD
    return how


cdef void _loop(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps,
                void *data) noexcept nogil:
    """Inner loop for every dtype: data encodes (op, dtype); float16 and
    bfloat16 run the float32 kernels in C (gx_k_16bit.h, GX_FN(run_16bit))."""
    cdef intptr_t code = <intptr_t>data
    cdef int op = gx_loop_op(code), dt = gx_loop_dt(code)
    cdef int nin = gx_nin(op), k
    cdef size_t isz = gx_itemsize(dt)
    cdef cnp.npy_intp n = dims[0], start, m, i
    cdef bint contiguous = True
    cdef const void *inp[3]
    cdef double buf[4][_CHUNK]          # 8-byte slots; 4- and 2-byte types use the first part
    cdef char *outp

    cdef int overlap = _overlap(args, steps, n, nin, isz)
    if overlap == _IN_ORDER:
        # one element per kernel call, as a Python loop over the ufunc
        # computes it (a scalar call is a call of n = 1): the same bits
        for k in range(nin):
            inp[k] = buf[k]
        for i in range(n):
            for k in range(nin):
                memcpy(buf[k], args[k] + i * steps[k], isz)
            gx_apply(op, dt, inp, buf[3], 1)
            memcpy(args[nin] + i * steps[nin], buf[3], isz)
        return

    for k in range(nin + 1):
        if steps[k] != <cnp.npy_intp>isz:
            contiguous = False
    if contiguous and overlap == _APART:
        for k in range(nin):
            inp[k] = args[k]
        gx_apply(op, dt, inp, args[nin], n)
        return

    start = 0
    while start < n:
        m = min(<cnp.npy_intp>_CHUNK, n - start)
        for k in range(nin):
            if steps[k] == <cnp.npy_intp>isz and overlap == _APART:
                inp[k] = args[k] + start * steps[k]
            else:
                _gather(<char *>buf[k], args[k] + start * steps[k], steps[k], m, isz)
                inp[k] = buf[k]
        if steps[nin] == <cnp.npy_intp>isz:
            gx_apply(op, dt, inp, args[nin] + start * isz, m)
        else:
            gx_apply(op, dt, inp, buf[3], m)
            outp = args[nin] + start * steps[nin]
            for k in range(m):
                memcpy(outp + k * steps[nin], <char *>buf[3] + k * isz, isz)
        start += m


# ------------------------------------------------------------ registration --

cdef cnp.PyUFuncGenericFunction _funcs[GX_NOPS][3]
cdef void *_data[GX_NOPS][3]
cdef char _types[GX_NOPS][12]      # 3 dtypes x (at most 3 inputs + 1 output): gx_dispatch.c checks nin


cdef object _make(int op):
    """The ufunc of row ``op`` of src/gx_ops.h."""
    cdef int nin = gx_nin(op), j, k
    cdef char codes[3]
    cdef int dts[3]
    codes[0] = cnp.NPY_FLOAT16
    codes[1] = cnp.NPY_FLOAT
    codes[2] = cnp.NPY_DOUBLE
    dts[0], dts[1], dts[2] = GX_F16, GX_F32, GX_F64
    for j in range(3):
        _funcs[op][j] = <cnp.PyUFuncGenericFunction>_loop
        _data[op][j] = <void *>gx_loop_code(op, dts[j])
        for k in range(nin + 1):
            _types[op][j * (nin + 1) + k] = codes[j]
    # the name and doc are the table's static C strings, alive as long as the module
    return cnp.PyUFunc_FromFuncAndData(
        _funcs[op], _data[op], _types[op], 3, nin, 1, cnp.PyUFunc_None,
        gx_op_name(op), gx_op_doc(op), 0)




class Op(namedtuple("Op", "name nin kind base ufunc")):
    """One row of src/gx_ops.h.  ``base`` is the name of the op whose formula
    this one runs (its own name for a plain op); ``kind`` says how:
    ``"bias"`` base(x + b (, g)), ``"gate"`` base(gate) * up,
    ``"dgate"`` base(gate, up * g)."""
    __slots__ = ()

    @property
    def bias(self):
        """The last input is a bias added to x."""
        return self.kind == "bias"

    @property
    def gated(self):
        """Inputs (gate, up) or (gate, up, g): a gated form of base."""
        return self.kind in ("gate", "dgate")

    @property
    def grad(self):
        """A derivative: the input after x is the incoming gradient."""
        return self.name.endswith("_grad")


def _register():
    """Make every op's ufunc a module attribute and return the table.  (The
    package, gelu_ext/__init__.py, also names the derivatives of release
    0.1.0 by their old names, the spec's ``alias``.)"""
    ops = {}
    for op in range(gx_nops()):
        name = gx_op_name(op).decode()
        uf = _make(op)
        ops[name] = Op(name, gx_nin(op), gx_kind_name(gx_op_kind(op)).decode(), gx_op_name(gx_op_base(op)).decode(), uf)
        globals()[name] = uf
    return ops


OPS = _register()          # name -> Op, in table order
_OP_ID = {name: i for i, name in enumerate(OPS)}


# ----------------------------------------------- bfloat16 (ml_dtypes) --

def _import_bfloat16(module=None):
    """(ml_dtypes.bfloat16's dtype, None), or (None, why not).  module: ml_dtypes
    itself, when the import hook below hands it over."""
    try:
        if module is None:
            import ml_dtypes as module
        return np.dtype(module.bfloat16), None
    except ImportError:
        return None, "ml_dtypes not installed (pip install 'gelu_ext[bfloat16]')"
    except Exception as e:      # installed but broken (e.g. built for another NumPy)
        return None, f"import ml_dtypes failed: {type(e).__name__}: {e}"


def _register_bfloat16(dt):
    """Give every ufunc a loop for dt, ml_dtypes' bfloat16 (all operands
    bfloat16).

    NumPy's type resolver tries the loops registered for a user type first
    when an operand has that type, so bfloat16 inputs stay bfloat16 (as
    ``np.tanh``, whose bfloat16 loop ml_dtypes registers the same way) and
    a bfloat16/float32 mix runs the float32 loop, as for ml_dtypes' own
    binary ufuncs."""
    cdef int types[4]
    cdef int num, op, k
    num = dt.num
    for name, o in OPS.items():
        op = _OP_ID[name]
        for k in range(o.nin + 1):
            types[k] = num
        cnp.PyUFunc_RegisterLoopForType(<cnp.ufunc>o.ufunc, num,
                                        <cnp.PyUFuncGenericFunction>_loop, types,
                                        <void *>gx_loop_code(op, GX_BF16))


def _bfloat16(module=None):
    """The bfloat16 loops, registered once: (ml_dtypes.bfloat16's dtype, None)
    or (None, why not).  Imports ml_dtypes if nothing has yet (show_config,
    the benchmarks); module: ml_dtypes, from the finder below."""
    global BFLOAT16, _BFLOAT16_MISSING
    if BFLOAT16 is None:
        dt, why = _import_bfloat16(module)  # an import here may register first (the finder)
        if BFLOAT16 is None:
            if dt is not None:
                _register_bfloat16(dt)
            BFLOAT16, _BFLOAT16_MISSING = dt, why
    return BFLOAT16, _BFLOAT16_MISSING


class _AfterMlDtypes:
    """A sys.meta_path finder that registers the bfloat16 loops as ml_dtypes
    finishes its first import, whoever imports it.  ml_dtypes takes ~1 s to
    import, most of what ``import gelu_ext`` would cost if it imported it,
    and a bfloat16 array cannot exist before it has been imported:
    registering then costs nothing to anyone else."""

    def find_spec(self, name, path=None, target=None):
        if name != "ml_dtypes":
            return None
        sys.meta_path.remove(self)      # once; and the finders below find it
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                _bfloat16(module)
            spec.loader.exec_module = exec_module
        return spec


def _watch_bfloat16():
    """At import: the loops now if ml_dtypes is imported already, the reason
    if it is not installed, else the finder above (BFLOAT16 None meanwhile)."""
    try:
        installed = importlib.util.find_spec("ml_dtypes") is not None
    except (ImportError, ValueError):
        installed = False
    if "ml_dtypes" in sys.modules or not installed:
        _bfloat16()
    else:
        sys.meta_path.insert(0, _AfterMlDtypes())


BFLOAT16 = None
_BFLOAT16_MISSING = "ml_dtypes installed but not imported yet (its loops register when it is)"
_watch_bfloat16()


# ------------------------------------------------- fused bias, row by row --

_ROW_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Rows shorter than this gain nothing from the row-threaded path.
_MIN_ROW = 64


def _bias_rows_ok(full, bias, out):
    """Can a fused-bias call run row by row on threads (``_bias_rows``)?

    The Transformer case -- C-ordered (..., features) operands and a
    (features,) bias, all one float dtype -- is where NumPy's iterator calls
    the inner loop once per row, too short to thread.  Anything else (other
    layouts, dtypes, subclasses, possible overlap) goes to the ufunc."""
    x = full[0]
    if type(x) is not np.ndarray or type(bias) is not np.ndarray:
        return False
    dt = x.dtype
    # (x.shape[x.ndim - 1]: wraparound=False leaves a negative index undefined)
    if (dt not in _ROW_DTYPES or bias.dtype != dt or bias.ndim != 1 or x.ndim < 1
            or x.shape[x.ndim - 1] != bias.shape[0] or bias.shape[0] < _MIN_ROW
            or not (x.flags.c_contiguous and bias.flags.c_contiguous)):
        return False
    for a in full[1:]:
        if type(a) is not np.ndarray or a.dtype != dt or a.shape != x.shape or not a.flags.c_contiguous:
            return False
    if out is None:
        return True
    if (type(out) is not np.ndarray or out.dtype != dt or out.shape != x.shape
            or not out.flags.c_contiguous or not out.flags.writeable):
        return False
    # in place on an input is fine (each element is read before it is
    # written); any other overlap is left to the ufunc's overlap handling
    return not any(a is not out and np.may_share_memory(out, a) for a in (*full, bias))


def _bias_rows(str name, tuple ins, cnp.ndarray out):
    """Run the fused-bias ufunc ``name`` on C-contiguous float32/float64
    operands of one dtype: ``ins`` are the full-shape inputs and then the
    bias, a 1-d array as long as their last axis; ``out`` has their shape.

    The caller (``_fused``) checks all of that and overlap (``_bias_rows_ok``);
    this only threads over the rows, which the ufunc's own loop cannot."""
    if not OPS[name].bias:
        raise ValueError(f"_bias_rows runs the fused-bias ops, got {name!r}")
    cdef int op = _OP_ID[name], k
    cdef int nin = gx_nin(op)
    cdef int dt = GX_F64 if out.dtype.itemsize == 8 else GX_F32
    cdef cnp.ndarray a
    cdef const void *inp[3]
    cdef gx_intp cols = (<cnp.ndarray>ins[nin - 1]).shape[0]
    cdef gx_intp rows = out.size // cols if cols else 0
    for k in range(nin):
        a = <cnp.ndarray>ins[k]
        inp[k] = cnp.PyArray_DATA(a)
    if rows == 0:
        return out
    with nogil:
        gx_apply_bias_rows(op, dt, inp, cnp.PyArray_DATA(out), rows, cols)
    return out


def _fused(ufunc, tuple full, bias, out, where):
    """``ufunc(*full, bias, out=out, where=where)`` for a fused-bias ufunc:
    threaded over the rows where ``_bias_rows_ok``, else the ufunc itself."""
    # the row-threaded path writes every element: a mask goes to the ufunc
    if where is True and _bias_rows_ok(full, bias, out):
        return _bias_rows(ufunc.__name__, (*full, bias), np.empty_like(full[0]) if out is None else out)
    return ufunc(*full, bias, out=out, where=where)


# ------------------------------------------- arrays over others' memory --

def _array_at(intptr_t address, tuple shape, tuple strides, cnp.dtype dtype, object base):
    """A writeable ndarray of ``dtype`` over ``address`` with ``shape`` and
    ``strides`` (in elements), keeping ``base`` (the memory's owner) alive.

    gelu_ext.torch runs the ufuncs over tensors through this, not
    ``Tensor.numpy()``, which marks the tensor's storage non-resizable for
    good: after one call, a user's input and our output could no longer be
    ``resize_``d.  The caller passes a dense CPU tensor's own geometry, so
    every element addressed lies inside its storage."""
    cdef int nd = len(shape), k
    cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]
    cdef cnp.npy_intp steps[cnp.NPY_MAXDIMS]
    if nd > cnp.NPY_MAXDIMS or len(strides) != nd:
        raise ValueError(f"_array_at: {nd} dimensions and {len(strides)} strides "
                         f"(at most {cnp.NPY_MAXDIMS}, and as many strides as dimensions)")
    for k in range(nd):
        dims[k] = shape[k]
        steps[k] = strides[k] * dtype.itemsize
    Py_INCREF(dtype)        # PyArray_NewFromDescr steals a reference to it
    arr = PyArray_NewFromDescr(<PyTypeObject *>cnp.ndarray, dtype, nd, dims, steps,
                               <void *>address, cnp.NPY_ARRAY_WRITEABLE, NULL)
    Py_INCREF(base)         # and PyArray_SetBaseObject one to its base
    cnp.PyArray_SetBaseObject(<cnp.ndarray>arr, base)
    return arr


# ---------------------------------------------------------- configuration --

# the rows of src/gx_isas.h this build has, in order of preference
ISA_NAMES = tuple(gx_isa_name(i).decode() for i in range(gx_nisa()))


_DT_CODES = {"float16": GX_F16, "bfloat16": GX_BF16, "float32": GX_F32, "float64": GX_F64}


def _loop_code(str name, str dtype):
    """The code of ufunc ``name``'s inner loop for ``dtype`` (a name of
    ``_DT_CODES``), for ``_apply_at``: the ``data`` its ufunc loop gets."""
    return gx_loop_code(_OP_ID[name], _DT_CODES[dtype])


def _apply_at(intptr_t code, tuple ins, intptr_t out, gx_intp n, int nthreads):
    """The inner loop ``code`` (``_loop_code``) over ``n`` contiguous elements
    at the addresses ``ins`` into ``out``, on ``nthreads`` threads (0: the
    process-wide count): what the ufunc's loop does for a contiguous run
    (gx_apply), without the ufunc machinery around it (~2 us a call).

    gelu_ext.torch calls it for dense contiguous tensors of the loop's dtype,
    with a new output, so every address is inside live storage; the caller
    keeps the tensors alive over the call."""
    cdef int op = gx_loop_op(code), dt = gx_loop_dt(code), nin = gx_nin(op), k, was
    cdef const void *inp[3]
    if len(ins) != nin:
        raise ValueError(f"_apply_at: {gx_op_name(op).decode()} takes {nin} inputs, got {len(ins)}")
    for k in range(nin):
        inp[k] = <const void *><intptr_t>ins[k]
    if n <= 0:
        return
    if n <= 500:        # as NumPy: keep the GIL where releasing costs more than the call
        was = gx_set_thread_num_threads(nthreads)
        gx_apply(op, dt, inp, <void *>out, n)
        gx_set_thread_num_threads(was)
        return
    with nogil:
        was = gx_set_thread_num_threads(nthreads)
        gx_apply(op, dt, inp, <void *>out, n)
        gx_set_thread_num_threads(was)


# The kernels for C/C++ code that runs them itself (src/dispatch/gx_capi.h: the C++
# CPU kernels of gelu_ext.torch's ops): compiled once, here, so the ISA
# choice and the bits are the ufuncs'.  The table is static: the capsule
# needs no destructor.
_gx_capi = PyCapsule_New(<void *>&gx_capi_table, b"gelu_ext._ufuncs._gx_capi", NULL)


def _isa_table():
    """name -> (level, GCC target flags, a regular expression for its vector
    registers in objdump's output) for every row of src/gx_isas.h this build
    has."""
    return {ISA_NAMES[i]: (gx_isa_level(i), gx_isa_target(i).decode(), gx_isa_vreg(i).decode())
            for i in range(gx_nisa())}


def _f32_pieces(name):
    """The float32 tables ISA path ``name`` reads: 8 (src/math/gx_lut8.h) or 32
    (src/math/gx_lut.h); a path gives the bits of that file's scalar twins."""
    if name not in ISA_NAMES:
        raise ValueError(f"isa must be one of {ISA_NAMES}, got {name!r}")
    return gx_isa_f32_pieces(ISA_NAMES.index(name))


def _best_isa():
    return ISA_NAMES[gx_best_isa()]


def _compiled_isas():
    """The paths this build has: every row of src/gx_isas.h for its architecture."""
    return ISA_NAMES


def _get_isa():
    return ISA_NAMES[gx_get_isa()]


def _set_isa(name):
    """Use the kernels compiled for ISA ``name`` (at most the CPU's best)."""
    if name not in ISA_NAMES:
        raise ValueError(f"isa must be one of {ISA_NAMES}, got {name!r}")
    if gx_set_isa(ISA_NAMES.index(name)) != 0:
        raise ValueError(f"isa {name!r} is not available on this CPU/build; "
                         f"the best here is {_best_isa()!r}")


def _pool_threaded():
    """True if built with the thread pool (POSIX or Windows threads; else every call is serial)."""
    return bool(gx_pool_threaded())


def _pool_shutdown():
    """End the pool's worker threads and wait until they have (registered
    with ``atexit`` at import, so a process exits with no worker running).
    Every threaded call after it runs on its caller; a second call does
    nothing."""
    with nogil:
        gx_pool_shutdown()


import atexit
atexit.register(_pool_shutdown)

# What gelu_ext._test_hooks sets and reads of this module's dispatch and
# pool (src/testing/gx_hooks.h): static, so the capsule needs no destructor.
cdef gx_test_hooks _test_hooks
_test_hooks.set_chunk = gx_set_chunk
_test_hooks.set_parallel_threshold = gx_set_parallel_threshold
_test_hooks.set_plain_loads = gx_set_plain_loads
_test_hooks.set_bf16cvt = gx_set_bf16cvt
_test_hooks.pool_workers = gx_pool_workers
_test_hooks.pool_run = gx_pool_run
_gx_test_hooks = PyCapsule_New(<void *>&_test_hooks, b"gelu_ext._ufuncs._gx_test_hooks", NULL)


def _default_num_threads():
    return gx_pool_default_threads() if gx_pool_threaded() else 1


def _get_chunk():
    return gx_get_chunk()


def _plain_loads():
    """1 if the loop choices for CPUs whose gathers are slow and whose
    hardware prefetcher needs no software prefetch are on (ReLU's plain loop
    instead of prefetching blocks, 16-bit forward result tables read one
    load per element instead of with gathers, SiLU in one pass), else 0.
    On for AMD CPUs (CPUID vendor) at import; gelu_ext._test_hooks sets it."""
    return gx_set_plain_loads(-1)


def _bf16cvt():
    """1 if bfloat16 results of the table loops are rounded by AVX512-BF16's
    vcvtneps2bf16, else 0.  On where the CPU has it; gelu_ext._test_hooks
    sets it."""
    return gx_set_bf16cvt(-1)


def _pool_stats(bint reset=False):
    """Pool counters (see gx_pool.h) as a dict; ``reset`` zeroes them."""
    cdef long long v[GX_POOL_NSTATS]
    cdef int i
    gx_pool_stats(v, reset)
    return {gx_pool_stat_name(i).decode(): v[i] for i in range(GX_POOL_NSTATS)}


def _get_num_threads():
    return gx_get_num_threads()


def _set_num_threads(int n):
    gx_set_num_threads(n)


def _set_thread_num_threads(int n):
    """This thread's own count for its calls, ahead of ``_set_num_threads``'
    (0: none); returns the one it replaces.  gelu_ext.torch sets it around
    an op to torch's count; NumPy callers' count stays as it was."""
    return gx_set_thread_num_threads(n)


def _get_parallel_threshold():
    return gx_get_parallel_threshold()


def _op_parallel_threshold(str name):
    """Elements below which a call of op ``name`` stays on one thread."""
    return gx_get_op_parallel_threshold(_OP_ID[name])


gx_get_isa()   # build the dispatch tables now, while the GIL is held


# -------------------------------------------------------------- fast_gelu --
# gelu_ext.fast_gelu is this function, compiled: a Python-level def with
# keyword-only parameters costs ~80 ns a call in CPython (the slow argument
# path), a sixth of a 16-element call, which is to stay within 1.5x
# np.tanh's.  The common case (a known approximate, no bias, no where) is
# one dict lookup and the ufunc call.

# approximate (as F.gelu's) -> the GELU op family of src/gx_ops.h
APPROXIMATE = {"none": "gelu_erf", "tanh": "gelu_tanh"}
# approximate -> (forward, forward with bias, grad, grad with bias)
GELU_UFUNCS = {a: tuple(OPS[base + suffix].ufunc for suffix in ("", "_bias", "_grad", "_bias_grad"))
               for a, base in APPROXIMATE.items()}
cdef dict _FORWARD = {a: ufuncs[0] for a, ufuncs in GELU_UFUNCS.items()}


def _gelu_ufuncs(approximate):
    """``GELU_UFUNCS[approximate]``, or the ValueError that says what is accepted."""
    try:
        return GELU_UFUNCS[approximate]
    except (KeyError, TypeError):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}") from None


def fast_gelu(x, approximate="none", *, bias=None, out=None, where=True):
    """Gaussian Error Linear Unit, elementwise.

    Parameters
    ----------
    x : array_like
        Input. Integers and booleans are computed in floating point as
        ``np.tanh`` does; float16 stays float16.
    approximate : {'none', 'tanh'}, optional
        ``'none'`` (default) is the exact GELU, ``x * Phi(x)`` with ``Phi`` the
        standard normal CDF (<= 1 ULP in float32, <= 2 ULP in float64).
        ``'tanh'`` is ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))``.
        Same names and meaning as PyTorch's ``F.gelu(x, approximate=...)``.
    bias : array_like, optional
        If given, computes ``gelu(x + bias)`` in one pass without building
        ``x + bias``; ``bias`` broadcasts against ``x`` (typically shape
        ``(features,)`` against ``(batch, features)``).  For float inputs
        bit-identical to ``fast_gelu(x + bias)``; integer and bool inputs are
        added in the result's float dtype (no integer wrap-around).
    out : ndarray, optional
        Where to write the result (may be ``x`` itself).
    where : array_like of bool, optional
        As for any ufunc: the result is computed where True (broadcast
        against the inputs) and left alone elsewhere; without ``out`` those
        elements are uninitialised memory (a ufunc called with
        ``out=None``, so no warning says so).

    Returns
    -------
    ndarray or scalar

    Examples
    --------
    >>> import numpy as np
    >>> fast_gelu(np.array([-1.0, 2.0]))
    array([-0.15865525,  1.95449974])
    >>> fast_gelu(np.float32(1.0), approximate="tanh")
    np.float32(0.841192)
    """
    try:
        uf = _FORWARD.get(approximate)
    except TypeError:           # unhashable: _gelu_ufuncs says why
        uf = None
    if uf is None or bias is not None or where is not True:
        ufuncs = _gelu_ufuncs(approximate)
        if bias is None:
            return ufuncs[0](x, out=out, where=where)
        return _fused(ufuncs[1], (x,), bias, out, where)
    # out=None is passed on only when given: on a 16-element call it is a
    # measurable share of the time
    if out is None:
        return uf(x)
    return uf(x, out=out)
