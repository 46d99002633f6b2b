/*
 * gx_k_ops.h -- each op's float32 and float64 kernel, per ISA
 * (included by gx_isa_kernels.h): a named function that calls a driver of
 * gx_k_drivers.h or gx_k_split.h with its element function, table row or base
 * kernel.  The 16-bit kernels are gx_k_16bit.h's, one per type for every op.
 *
 * A kernel's signature is gx_kernel's (gx_base.h); op, the op being run,
 * is for the 16-bit pipeline and is not read here.  The full formulas'
 * g is read by the derivatives' only.
 */
#ifndef GX_ISA
#error "src/kernels/gx_k_ops.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif

/* ReLU: streaming in prefetching blocks on large arrays, unless the CPU's
 * hardware prefetcher keeps up (the plain_loads choice, gx_unit_table.h) */
static void GX_FN(relu_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f32(in, out, n, 1, gx_relu_f32, NULL, !GX_FN(choices).plain_loads);
}
static void GX_FN(relu_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f64(in, out, n, 1, gx_relu_f64, NULL, !GX_FN(choices).plain_loads);
}
static void GX_FN(relu_grad_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f32(in, out, n, 2, NULL, gx_relu_grad_f32, !GX_FN(choices).plain_loads);
}
static void GX_FN(relu_grad_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f64(in, out, n, 2, NULL, gx_relu_grad_f64, !GX_FN(choices).plain_loads);
}

/* squared ReLU and ReLU6: as ReLU (memory-bound, no rounding beyond one) */
static void GX_FN(relu2_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f32(in, out, n, 1, gx_relu2_f32, NULL, !GX_FN(choices).plain_loads);
}
static void GX_FN(relu2_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f64(in, out, n, 1, gx_relu2_f64, NULL, !GX_FN(choices).plain_loads);
}
static void GX_FN(relu2_grad_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f32(in, out, n, 2, NULL, gx_relu2_grad_f32, !GX_FN(choices).plain_loads);
}
static void GX_FN(relu2_grad_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f64(in, out, n, 2, NULL, gx_relu2_grad_f64, !GX_FN(choices).plain_loads);
}
static void GX_FN(relu6_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f32(in, out, n, 1, gx_relu6_f32, NULL, !GX_FN(choices).plain_loads);
}
static void GX_FN(relu6_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f64(in, out, n, 1, gx_relu6_f64, NULL, !GX_FN(choices).plain_loads);
}
static void GX_FN(relu6_grad_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f32(in, out, n, 2, NULL, gx_relu6_grad_f32, !GX_FN(choices).plain_loads);
}
static void GX_FN(relu6_grad_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_stream_f64(in, out, n, 2, NULL, gx_relu6_grad_f64, !GX_FN(choices).plain_loads);
}

/* float64: the double-double formulas of gx_math.h, elementwise (gradients
 * multiply in double and round once); exact and tanh GELU in double lanes
 * from the tables of gx_lut64.h where they cover x (|x| <= 5), the general
 * formula elsewhere */
static GX_NOINLINE void GX_FN(gelu_erf_f64_full)(const double *x, const double *g, double *o, int n)
{
    gx_full_f64(x, o, n, gx_gelu_erf_f64);
}
static GX_NOINLINE void GX_FN(gelu_tanh_f64_full)(const double *x, const double *g, double *o, int n)
{
    gx_full_f64(x, o, n, gx_gelu_tanh_f64);
}
static void GX_FN(gelu_erf_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f64(in, out, n, GX_FN(lut64_fwd), &gx_lut64_erf, GX_FN(gelu_erf_f64_full));
}
static void GX_FN(gelu_tanh_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f64(in, out, n, GX_FN(lut64_fwd), &gx_lut64_tanh, GX_FN(gelu_tanh_f64_full));
}
/* the derivatives times g */
GX_INLINE double gx_gelu_erf_grad_g_f64(double x, double g) { return gx_gelu_erf_grad_f64(x) * g; }
GX_INLINE double gx_gelu_tanh_grad_g_f64(double x, double g) { return gx_gelu_tanh_grad_f64(x) * g; }
GX_INLINE double gx_silu_grad_g_f64(double x, double g) { return gx_silu_grad_f64(x) * g; }
GX_INLINE double gx_quick_gelu_grad_g_f64(double x, double g) { return gx_quick_gelu_grad_f64(x) * g; }
static void GX_FN(gelu_erf_grad_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_binary_f64(in, out, n, gx_gelu_erf_grad_g_f64);
}
static void GX_FN(gelu_tanh_grad_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_binary_f64(in, out, n, gx_gelu_tanh_grad_g_f64);
}
static void GX_FN(silu_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_unary_f64(in, out, n, gx_silu_f64);
}
static void GX_FN(quick_gelu_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_unary_f64(in, out, n, gx_quick_gelu_f64);
}
static void GX_FN(silu_grad_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_binary_f64(in, out, n, gx_silu_grad_g_f64);
}
static void GX_FN(quick_gelu_grad_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_binary_f64(in, out, n, gx_quick_gelu_grad_g_f64);
}

/* float32: the general formulas in double, rounded once, for the elements
 * the tables do not cover (the FULL column of GX_F32_SPLITS) */
static GX_NOINLINE void GX_FN(gelu_erf_f32_full)(const float *x, const float *g, float *o, int n)
{
    gx_full_f32(x, g, o, n, gx_gelu_erf_f32_tail, NULL);     /* x < -4.5, NaN only */
}
static GX_NOINLINE void GX_FN(gelu_tanh_f32_full)(const float *x, const float *g, float *o, int n)
{
    gx_full_f32(x, g, o, n, gx_gelu_tanh_f32, NULL);
}
static GX_NOINLINE void GX_FN(gelu_erf_grad_f32_full)(const float *x, const float *g, float *o, int n)
{
    gx_full_f32(x, g, o, n, NULL, gx_gelu_erf_grad_f32d);
}
static GX_NOINLINE void GX_FN(gelu_tanh_grad_f32_full)(const float *x, const float *g, float *o, int n)
{
    gx_full_f32(x, g, o, n, NULL, gx_gelu_tanh_grad_f32d);
}
static GX_NOINLINE void GX_FN(silu_f32_full)(const float *x, const float *g, float *o, int n)
{
    gx_full_f32(x, g, o, n, gx_silu_f32, NULL);
}
static GX_NOINLINE void GX_FN(quick_gelu_f32_full)(const float *x, const float *g, float *o, int n)
{
    gx_full_f32(x, g, o, n, gx_quick_gelu_f32, NULL);
}
static GX_NOINLINE void GX_FN(silu_grad_f32_full)(const float *x, const float *g, float *o, int n)
{
    gx_full_f32(x, g, o, n, NULL, gx_silu_grad_f32d);
}
static GX_NOINLINE void GX_FN(quick_gelu_grad_f32_full)(const float *x, const float *g, float *o, int n)
{
    gx_full_f32(x, g, o, n, NULL, gx_quick_gelu_grad_f32d);
}

/* The rows of GX_F32_SPLITS (gx_split_rows.h) as data, by op: each names its
 * table loop (and, ONE16, its 16-bit one-pass loops), table and formula. */
#ifdef GX_VEC16
#ifdef GX_HAVE_STORE_BN
#define GX_ONE_PASS_LOOPS(LOOP) GX_FN(LOOP##_f16), GX_FN(LOOP##_bf16), GX_FN(LOOP##_bf16_insn)
#else
#define GX_ONE_PASS_LOOPS(LOOP) GX_FN(LOOP##_f16), GX_FN(LOOP##_bf16), NULL
#endif
#else
#define GX_ONE_PASS_LOOPS(LOOP) NULL, NULL, NULL
#endif
#if defined(GX_VEC16) && GX_VF_W >= 16
#define GX_ONE_PASS_F16(LOOP) GX_FN(LOOP##_f16), NULL, NULL
#else
#define GX_ONE_PASS_F16(LOOP) NULL, NULL, NULL
#endif
/* the ONE16 column's values: 0, 1 (both types), F16 (float16 only) */
#define GX_ONE16_0(LOOP) NULL, NULL, NULL
#define GX_ONE16_1(LOOP) GX_ONE_PASS_LOOPS(LOOP)
#define GX_ONE16_F16(LOOP) GX_ONE_PASS_F16(LOOP)
#define GX_SPLIT_ROW(KERNEL, NIN, LOOP, FULL, GATE, ONE16, TAB32, TAB8)     \
    [GX_KID_##KERNEL] = { NIN, GATE, GX_FN(LOOP), &GX_F32_TABLE_OF(TAB32, TAB8), \
                          GX_FN(FULL##_f32_full), GX_ONE16_##ONE16(LOOP) },
static const gx_split_row GX_FN(split_rows)[GX_NOPS] = { GX_F32_SPLITS(GX_SPLIT_ROW) };
#undef GX_SPLIT_ROW
#undef GX_ONE_PASS_LOOPS
#undef GX_ONE_PASS_F16
#undef GX_ONE16_0
#undef GX_ONE16_1
#undef GX_ONE16_F16

/* The float32 split kernels: float32 lanes from the row's tables where
 * they cover x, its general formula for the rest. */
static void GX_FN(gelu_erf_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_GELU_ERF]);
}
static void GX_FN(gelu_tanh_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_GELU_TANH]);
}
static void GX_FN(gelu_erf_grad_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_GELU_ERF_GRAD]);
}
static void GX_FN(gelu_tanh_grad_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_GELU_TANH_GRAD]);
}
static void GX_FN(silu_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_SILU]);
}
static void GX_FN(quick_gelu_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_QUICK_GELU]);
}
static void GX_FN(silu_grad_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_SILU_GRAD]);
}
static void GX_FN(quick_gelu_grad_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_QUICK_GELU_GRAD]);
}
static void GX_FN(swiglu_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_SWIGLU]);
}
static void GX_FN(geglu_erf_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_GEGLU_ERF]);
}
static void GX_FN(geglu_tanh_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_split_f32(in, out, n, &GX_FN(split_rows)[GX_OP_GEGLU_TANH]);
}

/* the fused-bias forms: the base kernel on x + b, a block at a time */
static void GX_FN(gelu_erf_bias_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_biased_f32(in, out, n, op, 2, GX_FN(gelu_erf_f32));
}
static void GX_FN(gelu_tanh_bias_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_biased_f32(in, out, n, op, 2, GX_FN(gelu_tanh_f32));
}
static void GX_FN(gelu_erf_grad_bias_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_biased_f32(in, out, n, op, 3, GX_FN(gelu_erf_grad_f32));
}
static void GX_FN(gelu_tanh_grad_bias_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_biased_f32(in, out, n, op, 3, GX_FN(gelu_tanh_grad_f32));
}
static void GX_FN(gelu_erf_bias_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_biased_f64(in, out, n, op, 2, GX_FN(gelu_erf_f64));
}
static void GX_FN(gelu_tanh_bias_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_biased_f64(in, out, n, op, 2, GX_FN(gelu_tanh_f64));
}
static void GX_FN(gelu_erf_grad_bias_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_biased_f64(in, out, n, op, 3, GX_FN(gelu_erf_grad_f64));
}
static void GX_FN(gelu_tanh_grad_bias_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_biased_f64(in, out, n, op, 3, GX_FN(gelu_tanh_grad_f64));
}

/* the gate gradients: the base derivative at (gate, up * g), a block at a time */
static void GX_FN(swiglu_dgate_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_dgated_f32(in, out, n, op, GX_FN(silu_grad_f32));
}
static void GX_FN(geglu_erf_dgate_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_dgated_f32(in, out, n, op, GX_FN(gelu_erf_grad_f32));
}
static void GX_FN(geglu_tanh_dgate_f32)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_dgated_f32(in, out, n, op, GX_FN(gelu_tanh_grad_f32));
}
static void GX_FN(swiglu_dgate_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_dgated_f64(in, out, n, op, GX_FN(silu_grad_f64));
}
static void GX_FN(geglu_erf_dgate_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_dgated_f64(in, out, n, op, GX_FN(gelu_erf_grad_f64));
}
static void GX_FN(geglu_tanh_dgate_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_dgated_f64(in, out, n, op, GX_FN(gelu_tanh_grad_f64));
}
/* the gated forms in float64: the base kernel on a block, then the product
 * (float32: the split rows above) */
static void GX_FN(swiglu_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_gated_f64(in, out, n, op, GX_FN(silu_f64));
}
static void GX_FN(geglu_erf_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_gated_f64(in, out, n, op, GX_FN(gelu_erf_f64));
}
static void GX_FN(geglu_tanh_f64)(const void *const *in, void *out, gx_intp n, int op)
{
    gx_gated_f64(in, out, n, op, GX_FN(gelu_tanh_f64));
}

/* The float32 kernel of each op, for the 16-bit pipeline. */
#define GX_F32_ROW(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) [ID] = GX_FN(KERNEL##_f32),
static const gx_kernel GX_FN(f32_kernels)[GX_NOPS] = { GX_OPS(GX_F32_ROW) };
#undef GX_F32_ROW
