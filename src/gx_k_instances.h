/*
 * gx_k_instances.h -- which float32 and float64 kernel each op of gx_ops.h
 * runs, per ISA (included by gx_isa_kernels.h): the instance lists of the
 * loop forms (gx_k_forms.h) and of the split driver (gx_k_split.h).  The
 * 16-bit kernels are gx_k_16bit.h's, from GX_F32_SPLITS (gx_kdefs.h).
 */
#ifndef GX_ISA
#error "src/gx_k_instances.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif

/* ReLU: the streaming loop, and the plain loop of the amd_loops choice */
GX_STREAM(relu_f32, float, 1, x, g, GX_RELU(x))
GX_STREAM(relu_f64, double, 1, x, g, GX_RELU(x))
GX_STREAM(relu_grad_f32, float, 2, x, g, (x > 0 ? g : 0.0f))
GX_STREAM(relu_grad_f64, double, 2, x, g, (x > 0 ? g : 0.0))
GX_UNARY(relu_f32_plain, float, x, GX_RELU(x))
GX_UNARY(relu_f64_plain, double, x, GX_RELU(x))
GX_BINARY(relu_grad_f32_plain, float, x, g, (x > 0 ? g : 0.0f))
GX_BINARY(relu_grad_f64_plain, double, x, g, (x > 0 ? g : 0.0))
/* squared ReLU: the plain loops (16-bit: gx_k_16bit.h, as every op) */
GX_UNARY(relu2_f32, float, x, gx_relu2_f32(x))
GX_UNARY(relu2_f64, double, x, gx_relu2_f64(x))
GX_BINARY(relu2_grad_f32, float, x, g, gx_relu2_grad_f32(x, g))
GX_BINARY(relu2_grad_f64, double, x, g, gx_relu2_grad_f64(x, g))
/* ReLU6: the plain loops */
GX_UNARY(relu6_f32, float, x, GX_RELU6(x))
GX_UNARY(relu6_f64, double, x, GX_RELU6(x))
GX_BINARY(relu6_grad_f32, float, x, g, GX_RELU6_GRAD(x, g))
GX_BINARY(relu6_grad_f64, double, x, g, GX_RELU6_GRAD(x, g))

/* float64: the double-double formulas of gx_math.h, elementwise (gradients
 * multiply in double and round once); exact and tanh GELU in double lanes
 * from the tables of gx_lut64.h where they cover x (|x| <= 5), the general
 * formula elsewhere */
GX_FULL_FN(gelu_erf_f64, double, gx_gelu_erf_f64, 0)
GX_FULL_FN(gelu_tanh_f64, double, gx_gelu_tanh_f64, 0)
static void GX_FN(gelu_erf_f64)(const void *const *in, void *out, gx_intp n)
{
    GX_FN(split_f64)(in, out, n, 1, GX_FN(lut64_fwd), &gx_lut64_erf, GX_FN(gelu_erf_f64_full), 0);
}
static void GX_FN(gelu_tanh_f64)(const void *const *in, void *out, gx_intp n)
{
    GX_FN(split_f64)(in, out, n, 1, GX_FN(lut64_fwd), &gx_lut64_tanh, GX_FN(gelu_tanh_f64_full), 0);
}
GX_BINARY(gelu_erf_grad_f64, double, x, g, gx_gelu_erf_grad_f64(x) * g)
GX_BINARY(gelu_tanh_grad_f64, double, x, g, gx_gelu_tanh_grad_f64(x) * g)
GX_UNARY(silu_f64, double, x, gx_silu_f64(x))
GX_UNARY(quick_gelu_f64, double, x, gx_quick_gelu_f64(x))
GX_BINARY(silu_grad_f64, double, x, g, gx_silu_grad_f64(x) * g)
GX_BINARY(quick_gelu_grad_f64, double, x, g, gx_quick_gelu_grad_f64(x) * g)

/* float32: the general formulas in double, rounded once */
GX_FULL_FN(gelu_erf_f32, float, gx_gelu_erf_f32_tail, 0)    /* x < -4.5, NaN only */
GX_FULL_FN(gelu_tanh_f32, float, gx_gelu_tanh_f32, 0)
GX_FULL_FN(gelu_erf_grad_f32, float, gx_gelu_erf_grad_f32d, 1)
GX_FULL_FN(gelu_tanh_grad_f32, float, gx_gelu_tanh_grad_f32d, 1)
GX_FULL_FN(silu_f32, float, gx_silu_f32, 0)
GX_FULL_FN(quick_gelu_f32, float, gx_quick_gelu_f32, 0)
GX_FULL_FN(silu_grad_f32, float, gx_silu_grad_f32d, 1)
GX_FULL_FN(quick_gelu_grad_f32, float, gx_quick_gelu_grad_f32d, 1)

/* The float32 split kernels, one per row of GX_F32_SPLITS (gx_kdefs.h):
 * float32 lanes from the row's tables where they cover x, its general
 * formula for the rest. */
#define GX_SPLIT_ROW(KERNEL, NIN, LOOP, FULL, GATE, ONE16, TAB32, TAB8)     \
    static void GX_FN(KERNEL##_f32)(const void *const *in, void *out, gx_intp n) \
    {                                                                       \
        GX_FN(split_f32)(in, out, n, NIN, GX_FN(LOOP), &GX_F32_TABLE_OF(TAB32, TAB8), \
                         GX_FN(FULL##_f32_full), GATE);                     \
    }
GX_F32_SPLITS(GX_SPLIT_ROW)
#undef GX_SPLIT_ROW

/* the fused-bias forms: BASE on x + b, a block at a time */
#define GX_BIASED_ALL(T, SFX)                                               \
    GX_BIASED(gelu_erf_bias_##SFX, T, gelu_erf_##SFX, 2)                    \
    GX_BIASED(gelu_tanh_bias_##SFX, T, gelu_tanh_##SFX, 2)                  \
    GX_BIASED(gelu_erf_grad_bias_##SFX, T, gelu_erf_grad_##SFX, 3)          \
    GX_BIASED(gelu_tanh_grad_bias_##SFX, T, gelu_tanh_grad_##SFX, 3)
GX_BIASED_ALL(float, f32)
GX_BIASED_ALL(double, f64)
#undef GX_BIASED_ALL

/* the gate gradients: BASE(gate, up * g), a block at a time */
#define GX_DGATED_ALL(T, SFX)                                               \
    GX_DGATED(swiglu_dgate_##SFX, T, silu_grad_##SFX)                       \
    GX_DGATED(geglu_erf_dgate_##SFX, T, gelu_erf_grad_##SFX)                \
    GX_DGATED(geglu_tanh_dgate_##SFX, T, gelu_tanh_grad_##SFX)
GX_DGATED_ALL(float, f32)
GX_DGATED_ALL(double, f64)
#undef GX_DGATED_ALL
/* the gated forms in float64: BASE on a block, then the product (float32:
 * the split rows above) */
GX_GATED(swiglu_f64, double, silu_f64)
GX_GATED(geglu_erf_f64, double, gelu_erf_f64)
GX_GATED(geglu_tanh_f64, double, gelu_tanh_f64)

/* The float32 kernel of each op, for the 16-bit drivers. */
#define GX_F32_ROW(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) [ID] = GX_FN(KERNEL##_f32),
static const gx_kernel GX_FN(f32_kernels)[GX_NOPS] = { GX_OPS(GX_F32_ROW) };
#undef GX_F32_ROW
