/*
 * gx_isa_kernels.h -- the kernels of one ISA unit (src/isa/<name>.c, which
 * defines GX_ISA and includes gx_isa_unit.h and its primitives header
 * first), gathered in the unit's one exported name, the data table
 * gx_k_unit_<isa> (gx_unit_table.h), from which gx_dispatch.c fills the dispatch
 * tables.
 */
#ifndef GX_ISA
#error "src/kernels/gx_isa_kernels.h is not standalone: an ISA unit (src/isa/<name>.c) includes it"
#endif
/* The unit's loop choices (gx_unit_table.h): written by gx_fill before any of
 * its kernels runs, read by them per call. */
static gx_choices GX_FN(choices);

#include "gx_loop_f32.h"        /* the float32-lane table loops */
#include "gx_loop_f64.h"        /* the float64-lane table loop */
#include "gx_k_drivers.h"       /* elementwise, fused and streaming loop drivers */
#include "gx_k_split.h"         /* the split drivers */
#include "gx_k_ops.h"           /* each op's float32 and float64 kernels */
#include "gx_k_16bit.h"         /* the float16 and bfloat16 kernels */

/* The unit's kernels, the one name it exports (gx_unit_table.h, gx_isa_unit):
 * data only, so no code of the unit runs before gx_dispatch.c has checked
 * that the CPU has its ISA (the dispatch tables are filled there, by
 * gx_fill, compiled with the build's own flags).  One row per row of
 * gx_ops.h. */
#define GX_KERNELS_ROW(ID, NAME, KERNEL, NIN, KIND, BASE, DOC)              \
    [ID] = { [GX_F32] = GX_FN(KERNEL##_f32), [GX_F64] = GX_FN(KERNEL##_f64), \
             [GX_F16] = GX_FN(f16_kernel), [GX_BF16] = GX_FN(bf16_kernel) },
const gx_isa_unit GX_FN(unit) = {
    .ops = { GX_OPS(GX_KERNELS_ROW) },
    .choices = &GX_FN(choices),
    /* which float32 tables the unit's table loops read (the header's
     * GX_F32_PIECES): 8 (gx_lut8.h) or 32 (gx_lut.h); its scalar twins are
     * those of the same file */
    .f32_pieces = GX_F32_PIECES,
};
#undef GX_KERNELS_ROW
