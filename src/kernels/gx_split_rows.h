/*
 * gx_split_rows.h -- the rows of the float32 split kernels: which tables and
 * table loop each op's float32 kernel runs (GX_F32_SPLITS), and each op's
 * number by its kernel name.  Read by the kernel files of every ISA unit and
 * by the scalar twins of the tests (src/testing/gx_twins.c).
 */
#ifndef GX_SPLIT_ROWS_H
#define GX_SPLIT_ROWS_H

#include "gx_ops.h"

/* The float32 split kernels (gx_k_ops.h, gx_k_16bit.h): float32
 * lanes from the tables where they cover x (gx_lut_ok: |x| <= 4.5, 8 or 4.7,
 * and for forward GELU every x >= -4.5), the general formula FULL for the
 * rest, so per element ok(x) ? the scalar twin of the path's tables : the
 * gx_math.h formula, whatever the split.  The one list of which tables and
 * loop each runs (generated from the spec: a family's Kernels give its
 * forward and derivative rows, a gated family's its base's tables); one row
 * per kernel:
 *   KERNEL  the op's kernel (gx_ops.h): gx_k_KERNEL_f32_ISA
 *   NIN     inputs: 1, or 2 (a derivative's g, a gated form's up)
 *   LOOP    its table loop (gx_loop_f32.h)
 *   FULL    whose general formula (FULL_f32_full, gx_k_ops.h) takes
 *           the rest
 *   GATE    1: a gated form, FULL(gate) * up (the loop multiplies itself)
 *   ONE16   1: its 16-bit kernels run LOOP on the 16-bit data in one pass
 *           (gx_k_16bit.h; a forward op only with the plain_loads choice,
 *           where it beats reading the result table: SiLU's cheap formula),
 *           F16: its float16 kernels only, and only where a vector holds
 *           16 floats (AVX-512).  Forward GELU: a float16 call touches up
 *           to 32 of the result table's lines per binade, 8 times a
 *           bfloat16 call's, and inside a model a matmul has just evicted
 *           them; the table wins warm, the one pass in the model (AVX2's
 *           8-lane loop loses there too, so its table stays; bench/README),
 *           0: they widen blocks or read the result table
 *   TAB32   its 32-piece table (gx_lut.h): the baseline and AVX-512 paths'
 *   TAB8    its 8-piece table (gx_lut8.h): the AVX2 and NEON paths'
 *           (GX_F32_TABLE_OF, gx_loop_f32.h, picks one per path; gx_twin8,
 *           src/testing/gx_twins.c, runs the scalar twins of TAB8 for the tests)
 * What LOOP computes follows from NIN and GATE: the forward formula (NIN 1),
 * the derivative times g (NIN 2), the forward formula times up (GATE).
 * lut_fwd and lut_gate test only x < -x (vf_bad_below, gx_loop_f32.h): their tables must be
 * forward GELU tables (xp = inf, GELU_FWD in src/tables/fit_lut.py); the
 * scalar twins test the whole range, so a mismatch shows as paths that
 * disagree. */
/* GX_F32_SPLITS(X): one X(KERNEL, NIN, LOOP, FULL, GATE, ONE16, TAB32, TAB8)
 * per row, generated from the op spec's FAMILIES (their Kernels) by
 * tools/gen_ops.py */
#include "gx_split_table.h"

/* Each op's number by its KERNEL column (gx_ops.h): GX_KID_gelu_erf_grad is
 * GX_OP_GELU_ERF_GRAD; lists keyed by kernel name index op tables with it. */
#define GX_KID_ROW_(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) GX_KID_##KERNEL = ID,
enum { GX_OPS(GX_KID_ROW_) };
#undef GX_KID_ROW_

#endif
