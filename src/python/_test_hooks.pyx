# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""What only the tests and benchmarks call, apart from the ufuncs' module
(gelu_ext._ufuncs): the scalar twins of the kernels over arrays
(src/testing/gx_twins.c), built with the kernels' flags, so a vector path
can be checked against them bit for bit; the switches of the ufuncs'
dispatch and pool that results never depend on, and the pool's worker
count; a probe job on the ufuncs' thread pool (src/testing/gx_pool_probe.h).
The switches and the pool are _ufuncs' own, reached through its capsule
(src/testing/gx_hooks.h)."""
import numpy as np

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_Import

cnp.import_array()

cdef extern from "testing/gx_hooks.h" nogil:
    ctypedef void (*gx_pool_run_fn)(void *fn, void *ctx, Py_ssize_t n, Py_ssize_t chunk, int nthreads)
    ctypedef struct gx_test_hooks:
        void (*set_chunk)(Py_ssize_t n)
        void (*set_parallel_threshold)(Py_ssize_t n)
        int (*set_plain_loads)(int on)
        int (*set_bf16cvt)(int on)
        int (*pool_workers)()
        gx_pool_run_fn pool_run

cdef extern from "testing/gx_pool_probe.h" nogil:
    long gx_probe_run(gx_pool_run_fn run)
    long gx_probe_held()
    void gx_probe_release()

cdef const gx_test_hooks *_ufuncs = <const gx_test_hooks *>PyCapsule_Import(b"gelu_ext._ufuncs._gx_test_hooks", 0)
if _ufuncs == NULL:
    raise ImportError("gelu_ext._ufuncs exports no _gx_test_hooks: rebuild both extensions together")

cdef extern from "testing/gx_twins.h" nogil:
    ctypedef Py_ssize_t gx_intp
    int gx_twin8(const char *kernel, const float *x, const float *g, float *out,
                 unsigned char *ok, gx_intp n)


def twin8(kernel, x, g=None):
    """The scalar twins of the 8-piece tables over float32 array ``x`` (and
    ``g``: a derivative's g, a gated form's up) for the float32 split kernel
    ``kernel`` (an op name such as 'gelu_erf'): returns (out, covered), out
    the bits a path with those tables gives where ``covered``."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    gg = np.ascontiguousarray(x if g is None else g, dtype=np.float32)
    if gg.shape != x.shape:
        raise ValueError(f"g must have x's shape {x.shape}, got {gg.shape}")
    cdef cnp.ndarray out = np.empty_like(x)
    cdef cnp.ndarray ok = np.empty(x.shape, dtype=np.uint8)
    # (raw pointers of C-contiguous arrays, as the loops take them: typed
    # memoryviews would bring Cython's memoryview support, most of the
    # generated C, for this one helper)
    cdef cnp.ndarray xa = x, ga = gg
    key = kernel.encode()
    cdef int r = gx_twin8(key, <const float *>cnp.PyArray_DATA(xa), <const float *>cnp.PyArray_DATA(ga),
                          <float *>cnp.PyArray_DATA(out), <unsigned char *>cnp.PyArray_DATA(ok), x.size)
    if r < 0:
        raise ValueError(f"kernel must be an op with 8-piece tables, got {kernel!r}")
    if r == 1 and g is None:
        raise ValueError(f"{kernel} needs g")
    return out, ok.astype(bool)


def pool_probe_run():
    """Run a two-thread job on the ufuncs' pool whose worker holds its chunk
    until ``pool_probe_release()``, so the owner pulls it onto its core;
    returns the worker's thread id (0: none joined, -1: not Linux).  Call it
    on a thread of its own."""
    cdef long r
    with nogil:
        r = gx_probe_run(_ufuncs.pool_run)
    return r


def pool_probe_held():
    """The thread id of the worker holding the probe's chunk (0: none yet)."""
    return gx_probe_held()


def pool_probe_release():
    """Let the probe's worker finish its chunk."""
    gx_probe_release()


# ------------------------------------------- the ufuncs' switches and pool --

def set_chunk(Py_ssize_t n):
    """Elements a thread takes at a time (rounded down to a multiple of 64,
    at least 64); ``gelu_ext._ufuncs._get_chunk()`` reads it."""
    _ufuncs.set_chunk(n)


def set_parallel_threshold(Py_ssize_t n):
    """Elements below which a call stays on one thread (at least 1);
    ``gelu_ext._ufuncs._get_parallel_threshold()`` reads it."""
    _ufuncs.set_parallel_threshold(n)


cdef int _switch(int on) except -1:
    """on, if it is a switch's setting (0 or 1): the C setters read -1 as "leave it"."""
    if on != 0 and on != 1:
        raise ValueError(f"on must be 0 or 1, got {on}")
    return on


def set_plain_loads(int on):
    """Turn the plain-loads loop choices on (1) or off (0) whatever the
    CPU's vendor; returns the setting before.  ``gelu_ext._ufuncs._plain_loads()``
    says what they are and reads it; a change refills the dispatch tables."""
    return _ufuncs.set_plain_loads(_switch(on))


def set_bf16cvt(int on):
    """Round bfloat16 results with AVX512-BF16's vcvtneps2bf16 (1; only where
    the CPU has it, else it stays off) or with integer operations (0);
    returns the setting before.  ``gelu_ext._ufuncs._bf16cvt()`` reads it."""
    return _ufuncs.set_bf16cvt(_switch(on))


def pool_workers():
    """Worker threads alive now in the ufuncs' pool (0 until the first
    threaded call, in a forked child until its own, and after
    ``gelu_ext._ufuncs._pool_shutdown``)."""
    return _ufuncs.pool_workers()
