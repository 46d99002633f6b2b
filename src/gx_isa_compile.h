/*
 * gx_isa_compile.h -- the kernels of one row of GX_ISAS (gx_isas.h): the
 * includer sets GX_ISA_ROW to that row (GX_ISA_ROW0, ...); an empty row
 * compiles nothing.  Under the row's target (GX_TARGET_PUSH, gx_kdefs.h):
 * its primitives header, then the shared kernel files; after it (so that
 * this code runs on any CPU) the function that fills a dispatch table with
 * the row's kernels for the CPU's loop choices (gx_choices, gx_kdefs.h).
 */
#if (0 GX_ISA_ROW(GX_ISA_COL_ONE))
#define GX_ISA GX_ISA_ROW(GX_ISA_COL_NAME)
#define GX_ISA_LEVEL GX_ISA_ROW(GX_ISA_COL_LEVEL)
#if GX_ISA_LEVEL > 0 && !defined(GX_ISA_NO_TARGET_PRAGMA)
GX_TARGET_PUSH(GX_ISA_ROW(GX_ISA_COL_TARGET))
#endif
#include GX_ISA_ROW(GX_ISA_COL_HEADER)
#include "gx_loops.h"           /* the table loops */
#include "gx_k_forms.h"         /* elementwise, fused and streaming loop forms */
#include "gx_k_split.h"         /* the split driver */
#include "gx_k_instances.h"     /* each op's float32 and float64 kernels */
#include "gx_k_16bit.h"         /* each op's float16 and bfloat16 kernels */
#if GX_ISA_LEVEL > 0 && !defined(GX_ISA_NO_TARGET_PRAGMA)
GX_TARGET_POP
#endif

#ifdef GX_F32_STORE_BN
#define GX_FILL_BF16(KERNEL)                                                \
    (c->bf16cvt ? (c->amd_loops ? GX_FN(KERNEL##_bf16n_amd) : GX_FN(KERNEL##_bf16n)) \
                : (c->amd_loops ? GX_FN(KERNEL##_bf16_amd) : GX_FN(KERNEL##_bf16)))
#else
#define GX_FILL_BF16(KERNEL) (c->amd_loops ? GX_FN(KERNEL##_bf16_amd) : GX_FN(KERNEL##_bf16))
#endif
#define GX_FILL_ONE(ID, NAME, KERNEL, NIN, KIND, BASE, DOC)                 \
    t[ID][GX_F32] = GX_FN(KERNEL##_f32);                                    \
    t[ID][GX_F64] = GX_FN(KERNEL##_f64);                                    \
    t[ID][GX_F16] = c->amd_loops ? GX_FN(KERNEL##_f16_amd) : GX_FN(KERNEL##_f16); \
    t[ID][GX_BF16] = GX_FILL_BF16(KERNEL);
static void GX_FN(fill)(gx_kernel t[GX_NOPS][GX_NDT], const gx_choices *c)
{
    GX_OPS(GX_FILL_ONE)
    if (c->amd_loops) {         /* ReLU: the plain loop */
        t[GX_OP_RELU][GX_F32] = GX_FN(relu_f32_plain);
        t[GX_OP_RELU][GX_F64] = GX_FN(relu_f64_plain);
        t[GX_OP_RELU_GRAD][GX_F32] = GX_FN(relu_grad_f32_plain);
        t[GX_OP_RELU_GRAD][GX_F64] = GX_FN(relu_grad_f64_plain);
    }
#ifdef GX_ISA_FILL
    GX_ISA_FILL(t, c);
#endif
}
#undef GX_FILL_ONE
#undef GX_FILL_BF16
/* which float32 tables the row's table loops read: 8 (gx_lut8.h, a header
 * that defines GX_F32_TABLES8) or 32 (gx_lut.h); its scalar twins are those
 * of the same file */
#ifdef GX_F32_TABLES8
static const int GX_FN(f32_pieces) = 8;
#else
static const int GX_FN(f32_pieces) = 32;
#endif
#include "simd/end.h"
/* the loop forms; the split's GX_PACK_SLACK depends on the row */
#undef GX_UNARY
#undef GX_BINARY
#undef GX_BIASED
#undef GX_GATED
#undef GX_DGATED
#undef GX_STREAM
#undef GX_PACK_U
#undef GX_PACK_SLACK
#undef GX_FULL_FN
#undef GX_ISA_LEVEL
#undef GX_ISA
#endif
