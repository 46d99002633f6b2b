/*
 * gx_unit_table.h -- what an ISA unit (src/isa/<name>.c) hands the dispatch
 * layer: one table of its kernels (gx_isa_unit), filled by the unit's
 * gx_isa_kernels.h, and the loop choices its kernels read.  gx_dispatch.c
 * reads the tables; no code of a unit runs before it has checked the CPU.
 */
#ifndef GX_UNIT_TABLE_H
#define GX_UNIT_TABLE_H

#include "gx_base.h"
#include "gx_ops.h"
#include "gx_isas.h"

/* The CPU-dependent loop choices (gx_dispatch.c sets them from the CPU; the
 * private setters change them and refill every table); the same bits
 * either way.  Each ISA unit has its own copy, GX_FN(choices), which its
 * kernels read and gx_fill writes.
 * plain_loads: the CPU is served best by plain loads -- its gathers are
 *   slow and its hardware prefetcher keeps up with a stream without
 *   software prefetch: ReLU on large arrays in the plain loop, not in
 *   prefetching blocks; 16-bit forward result tables read one load per
 *   element, not gathered; forward SiLU on 16-bit data in one pass, not
 *   through its result table (gx_k_16bit.h).
 * bf16cvt: bfloat16 results rounded by the CPU's own conversion where the
 *   ISA has one (GX_HAVE_STORE_BN, gx_loop_f32.h). */
typedef struct {
    int plain_loads;
    int bf16cvt;
} gx_choices;

/* What an ISA unit (src/isa/<name>.c, one per row of GX_ISAS) exports, its
 * one visible name, gx_k_unit_<name>: the kernel of each op per dtype (the
 * float16 and bfloat16 ones are the unit's 16-bit pipeline, the same for
 * every op); its loop choices, which gx_fill sets before the kernels run;
 * the pieces of its float32 tables (8: gx_lut8.h, 32: gx_lut.h). */
typedef struct {
    gx_kernel ops[GX_NOPS][GX_NDT];
    gx_choices *choices;
    int f32_pieces;
} gx_isa_unit;
#define GX_ISA_UNIT_DECL(ID, NAME, LEVEL, CPU, TARGET, VREG) \
    extern const gx_isa_unit GX_PASTE3(gx_k, unit, NAME);
GX_ISAS(GX_ISA_UNIT_DECL)

#endif
