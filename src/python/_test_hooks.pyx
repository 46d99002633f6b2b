# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""What only the tests call, apart from the ufuncs' module (gelu_ext._ufuncs):
the scalar twins of the kernels over arrays (src/testing/gx_twins.c), built
with the kernels' flags, so a vector path can be checked against them bit
for bit; a probe job on the ufuncs' thread pool (src/testing/gx_pool_probe.h)."""
import numpy as np

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_Import

cnp.import_array()

cdef extern from "testing/gx_pool_probe.h" nogil:
    ctypedef void (*gx_pool_run_fn)(void *fn, void *ctx, Py_ssize_t n, Py_ssize_t chunk, int nthreads)
    long gx_probe_run(gx_pool_run_fn run)
    long gx_probe_held()
    void gx_probe_release()

# gx_pool_run of gelu_ext._ufuncs: the probe runs on the pool the ufuncs use
cdef gx_pool_run_fn _pool_run = <gx_pool_run_fn>PyCapsule_Import(b"gelu_ext._ufuncs._gx_pool_run", 0)

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
        r = gx_probe_run(_pool_run)
    return r


def pool_probe_held():
    """The thread id of the worker holding the probe's chunk (0: none yet)."""
    return gx_probe_held()


def pool_probe_release():
    """Let the probe's worker finish its chunk."""
    gx_probe_release()
