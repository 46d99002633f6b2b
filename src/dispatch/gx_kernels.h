/*
 * gx_kernels.h -- the array kernels behind the ufuncs: one contiguous kernel
 * per (operation, dtype, instruction set), a table that picks the instruction
 * set at run time, and the threaded driver (threads from gx_pool.c).  Used by src/python/_ufuncs.pyx.
 */
#ifndef GX_KERNELS_H
#define GX_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef ptrdiff_t gx_intp;   /* same width as npy_intp on every platform NumPy supports */

/* The operations (enum GX_OP_*, GX_NOPS) and their table. */
#include "gx_ops.h"
/* The instruction sets (enum GX_ISA_*, GX_NISA) and their table. */
#include "gx_isas.h"

/* GX_F16: uint16_t IEEE half; GX_BF16: uint16_t bfloat16 (the upper half of a
 * float32, ml_dtypes.bfloat16). */
enum { GX_F32 = 0, GX_F64 = 1, GX_F16 = 2, GX_BF16 = 3, GX_NDT = 4 };

/* Bytes per element of dtype dt. */
static inline size_t gx_itemsize(int dt)
{
    return dt == GX_F64 ? 8 : (dt == GX_F16 || dt == GX_BF16) ? 2 : 4;
}

/* The data pointer of a ufunc loop (src/python/_ufuncs.pyx) carries (op, dt) as
 * (op << 2) | dt: dt in the low 2 bits. */
typedef char gx_ndt_fits_2_bits[GX_NDT <= 4 ? 1 : -1];
static inline intptr_t gx_loop_code(int op, int dt) { return ((intptr_t)op << 2) | dt; }
static inline int gx_loop_op(intptr_t code) { return (int)(code >> 2); }
static inline int gx_loop_dt(intptr_t code) { return (int)(code & 3); }

/* A contiguous kernel: in[k] points at n elements of input k, out at n outputs.
 * out may be the very same buffer as an input (in place), never a partial overlap.
 * op: the op it runs (gx_ops.h), which the 16-bit kernels, one per type for
 * every op, read; a float32 or float64 kernel is one op's and ignores it. */
typedef void (*gx_kernel)(const void *const *in, void *out, gx_intp n, int op);

int gx_best_isa(void);          /* the last row of GX_ISAS this CPU runs */
int gx_get_isa(void);
int gx_set_isa(int isa);        /* returns 0, or -1 if this CPU does not run it */

int gx_get_num_threads(void);   /* threads a large call will use */
void gx_set_num_threads(int n); /* 0: the default, gx_pool_default_threads() */
/* The calling thread's own count, ahead of gx_set_num_threads' for its calls
 * only (0: none); returns the one it replaces.  gelu_ext.torch sets it around
 * an op to torch.get_num_threads(), leaving NumPy callers' count alone. */
int gx_set_thread_num_threads(int n);
gx_intp gx_get_parallel_threshold(void);
void gx_set_parallel_threshold(gx_intp n);
gx_intp gx_get_op_parallel_threshold(int op);   /* op's: ReLU's is a multiple of the above */
/* The loop choices (gx_choices in gx_kdefs.h): 1 on, 0 off, -1 ask; each
 * returns the old setting, and a change refills the dispatch tables. */
int gx_set_plain_loads(int on); /* plain loads over gathers and software prefetch */
int gx_set_bf16cvt(int on);     /* AVX512-BF16 rounding of bfloat16 results (where the CPU has it) */
gx_intp gx_get_chunk(void);     /* elements a thread takes at a time */
void gx_set_chunk(gx_intp n);   /* rounded down to a multiple of 64, at least 64 */

/* Run op over n contiguous elements, threaded above the threshold. */
void gx_apply(int op, int dt, const void *const *in, void *out, gx_intp n);

/* The fused-bias ops on C-ordered (rows, cols) operands whose last input, the
 * bias, is one row of cols elements: NumPy's iterator would call the inner
 * loop once per row (too short to thread); this threads over rows. */
void gx_apply_bias_rows(int op, int dt, const void *const *in, void *out,
                        gx_intp rows, gx_intp cols);

/* The scalar twins of the 8-piece float32 tables (gx_lut8.h) for the float32
 * split kernel named `kernel` (gelu_erf, silu_grad, swiglu, ...): out[i] as
 * a path with those tables computes it where ok[i] (the table covers x[i]).
 * Returns the number of inputs it reads beyond x (0 or 1: g, up), -1 for a
 * kernel without such a table.  For the tests. */
int gx_twin8(const char *kernel, const float *x, const float *g, float *out,
             unsigned char *ok, gx_intp n);

/* float16 <-> float32, round to nearest even (NaN and inf kept). */
float gx_half_to_float(uint16_t h);
uint16_t gx_float_to_half(float f);

/* bfloat16 <-> float32.  Widening is exact: the bfloat16 bits are the upper
 * 16 bits of the float32.  Narrowing rounds to nearest even by adding
 * 0x7fff + (the kept part's lowest bit) before the shift: a carry out of the
 * mantissa steps the exponent, which is the right answer (up to inf above
 * the largest bfloat16, from the largest subnormal to the smallest normal),
 * and -0.0, subnormals and inf come out right with no branch.  Only NaN needs
 * its own case (the add could carry it into inf or the sign): its sign and
 * top payload bits are kept and it is made quiet.  Plain integer operations,
 * so the loops that call these vectorise on every ISA path with the same
 * bits (gx_k_16bit.h, b2f/f2b). */
static inline float gx_bfloat16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t gx_float_to_bfloat16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t q = (u >> 16) | 0x40u;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? q : r);
}

#endif
