/*
 * gx_isa_compile.h -- the kernels of one row of GX_ISAS (gx_isas.h): the
 * includer sets GX_ISA_ROW to that row (GX_ISA_ROW0, ...); an empty row
 * compiles nothing.  Under the row's target pragma: its primitives header,
 * then the shared kernel files; after it (so that this code runs on any
 * CPU) the function that fills a dispatch table with the row's kernels.
 */
#if (0 GX_ISA_ROW(GX_ISA_COL_ONE))
#define GX_ISA GX_ISA_ROW(GX_ISA_COL_NAME)
#define GX_ISA_LEVEL GX_ISA_ROW(GX_ISA_COL_LEVEL)
#if GX_ISA_LEVEL > 0
#pragma GCC push_options
GX_PRAGMA(GCC target(GX_ISA_ROW(GX_ISA_COL_TARGET)))
#endif
#include GX_ISA_ROW(GX_ISA_COL_HEADER)
#include "gx_kernels_impl.h"
#if GX_ISA_LEVEL > 0
#pragma GCC pop_options
#endif

#define GX_FILL_ONE(ID, NAME, KERNEL, NIN, KIND, BASE, DOC)                 \
    t[ID][GX_F32] = GX_FN(KERNEL##_f32);                                    \
    t[ID][GX_F64] = GX_FN(KERNEL##_f64);                                    \
    t[ID][GX_F16] = GX_FN(KERNEL##_f16);                                    \
    t[ID][GX_BF16] = GX_FN(KERNEL##_bf16);
static void GX_FN(fill)(gx_kernel t[GX_NOPS][GX_NDT])
{
    GX_OPS(GX_FILL_ONE)
#ifdef GX_ISA_FILL
    GX_ISA_FILL(t, c);
#endif
}
#undef GX_FILL_ONE
#include "simd/end.h"
#undef GX_ISA_LEVEL
#undef GX_ISA
#endif
