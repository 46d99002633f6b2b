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

/* Each op's kernels on this row, one initialiser per row of gx_ops.h;
 * bf16n (bfloat16 stored by the CPU's own conversion, GX_F32_STORE_BN) is
 * NULL on a row without it. */
#ifdef GX_F32_STORE_BN
#define GX_BF16N_KERNELS(KERNEL) GX_FN(KERNEL##_bf16n), GX_FN(KERNEL##_bf16n_amd)
#else
#define GX_BF16N_KERNELS(KERNEL) NULL, NULL
#endif
#define GX_KERNELS_ROW(ID, NAME, KERNEL, NIN, KIND, BASE, DOC)              \
    [ID] = { GX_FN(KERNEL##_f32), GX_FN(KERNEL##_f64), GX_FN(KERNEL##_f16), \
             GX_FN(KERNEL##_f16_amd), GX_FN(KERNEL##_bf16), GX_FN(KERNEL##_bf16_amd), \
             GX_BF16N_KERNELS(KERNEL) },
static const gx_op_kernels GX_FN(kernels)[GX_NOPS] = { GX_OPS(GX_KERNELS_ROW) };
#undef GX_KERNELS_ROW
#undef GX_BF16N_KERNELS
/* This row's dispatch table t under the CPU's loop choices c. */
static void GX_FN(fill)(gx_kernel t[GX_NOPS][GX_NDT], const gx_choices *c)
{
    for (int op = 0; op < GX_NOPS; op++) {
        const gx_op_kernels *k = &GX_FN(kernels)[op];
        t[op][GX_F32] = k->f32;
        t[op][GX_F64] = k->f64;
        t[op][GX_F16] = c->amd_loops ? k->f16_amd : k->f16;
        if (c->bf16cvt && k->bf16n)
            t[op][GX_BF16] = c->amd_loops ? k->bf16n_amd : k->bf16n;
        else
            t[op][GX_BF16] = c->amd_loops ? k->bf16_amd : k->bf16;
    }
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
