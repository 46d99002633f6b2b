/*
 * gx_api.h -- the C API of the kernels, what src/python/_ufuncs.pyx (and
 * bench/bits_harness.c) call: the instruction set picked at run time, the
 * threaded calls (threads from gx_pool.c), their settings, and the op and
 * ISA tables' columns.  Defined in gx_dispatch.c.
 */
#ifndef GX_API_H
#define GX_API_H

#include "gx_base.h"
/* The operations (enum GX_OP_*, GX_NOPS) and their table. */
#include "gx_ops.h"
/* The instruction sets (enum GX_ISA_*, GX_NISA) and their table. */
#include "gx_isas.h"

/* The op table's columns (gx_ops.h), for code that cannot expand the macro
 * (Cython, bench/bits_harness.c). */
int gx_nops(void);
const char *gx_op_name(int op);   /* NULL outside 0 <= op < gx_nops() */
const char *gx_op_doc(int op);
int gx_nin(int op);               /* 0 outside the table */
int gx_op_base(int op);           /* -1 outside the table */
int gx_op_kind(int op);           /* GX_PLAIN ... GX_DGATE; -1 outside the table */
const char *gx_kind_name(int kind); /* "plain" ... "dgate"; NULL outside GX_PLAIN ... GX_DGATE */

/* The ISA table's columns (gx_isas.h), likewise. */
int gx_nisa(void);
const char *gx_isa_name(int isa);     /* NULL outside 0 <= isa < gx_nisa() */
const char *gx_isa_target(int isa);
const char *gx_isa_vreg(int isa);
int gx_isa_level(int isa);            /* -1 outside the table */
int gx_isa_cpu(int isa);              /* 1 if this CPU runs the path */
int gx_isa_f32_pieces(int isa);       /* its float32 tables: 8 (gx_lut8.h) or 32 (gx_lut.h) */

/* The data pointer of a ufunc loop (src/python/_ufuncs.pyx) carries (op, dt) as
 * (op << 2) | dt: dt in the low 2 bits. */
typedef char gx_ndt_fits_2_bits[GX_NDT <= 4 ? 1 : -1];
static inline intptr_t gx_loop_code(int op, int dt) { return ((intptr_t)op << 2) | dt; }
static inline int gx_loop_op(intptr_t code) { return (int)(code >> 2); }
static inline int gx_loop_dt(intptr_t code) { return (int)(code & 3); }

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
/* The loop choices (gx_choices in kernels/gx_unit_table.h): 1 on, 0 off, -1 ask; each
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

#endif
