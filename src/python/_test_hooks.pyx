# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""What only the tests call, apart from the ufuncs' module (gelu_ext._ufuncs):
the scalar twins of the kernels over arrays (src/testing/gx_twins.c), built
with the kernels' flags, so a vector path can be checked against them bit
for bit."""
import numpy as np

cimport numpy as cnp

cnp.import_array()

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
