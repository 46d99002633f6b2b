/*
 * gx_twins.h -- the scalar twins of the kernels over arrays, for the tests
 * only (gelu_ext._test_hooks, src/python/_test_hooks.pyx): every vector path must give their
 * bits.  Defined in gx_twins.c.
 */
#ifndef GX_TWINS_H
#define GX_TWINS_H

#include "gx_base.h"

/* The scalar twins of the 8-piece float32 tables (gx_lut8.h) for the float32
 * split kernel named `kernel` (gelu_erf, silu_grad, swiglu, ...): out[i] as
 * a path with those tables computes it where ok[i] (the table covers x[i]).
 * Returns the number of inputs it reads beyond x (0 or 1: g, up), -1 for a
 * kernel without such a table. */
int gx_twin8(const char *kernel, const float *x, const float *g, float *out,
             unsigned char *ok, gx_intp n);

#endif
