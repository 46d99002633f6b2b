"""The textbook GELU, 0.5 x (1 + erf(x / sqrt 2)), as a plain C loop over
libm's erff / erf: a benchmark row (what the brief's "Cython kernels using libm
erf" would give), so that its speed and its tail error stand beside the
library's.  Not part of the API; the benchmarks import it when it is built.

It cancels for x < 0 (1 + erf -> 0): off by millions of ULP below x ~ -5 and
0 below x ~ -5.5 (float32) / -8.3 (float64)."""
from libc.math cimport erf, erff, M_SQRT1_2
cimport numpy as cnp

cnp.import_array()


cdef void _f32(const float *x, float *o, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef float c = <float>M_SQRT1_2
    for i in range(n):
        o[i] = <float>0.5 * x[i] * (<float>1.0 + erff(x[i] * c))


cdef void _f64(const double *x, double *o, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        o[i] = 0.5 * x[i] * (1.0 + erf(x[i] * M_SQRT1_2))


def gelu_textbook(cnp.ndarray x, cnp.ndarray out):
    """out[...] = 0.5 x (1 + erf(x / sqrt 2)) for C-contiguous float32 or
    float64 ``x`` and ``out`` of the same dtype and size; returns ``out``."""
    cdef Py_ssize_t n = x.size
    cdef void *px = cnp.PyArray_DATA(x)
    cdef void *po = cnp.PyArray_DATA(out)
    cdef bint f32 = x.dtype.char == "f"
    if x.dtype != out.dtype or x.dtype.char not in "fd":
        raise TypeError(f"x and out must both be float32 or float64, got {x.dtype} and {out.dtype}")
    if x.size != out.size or not (x.flags.c_contiguous and out.flags.c_contiguous):
        raise ValueError("x and out must be C-contiguous and of the same size")
    with nogil:
        if f32:
            _f32(<const float *>px, <float *>po, n)
        else:
            _f64(<const double *>px, <double *>po, n)
    return out
