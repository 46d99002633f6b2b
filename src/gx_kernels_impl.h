/*
 * gx_kernels_impl.h -- included once per instruction set by gx_kernels.c with
 * GX_ISA set to the suffix and the target pragma in force.  Each kernel is the
 * same loop around the one formula in gx_math.h, so the compiler vectorises it
 * for that ISA; nothing here is ISA-specific source.
 */
#define GX_PASTE3_(a, b, c) a##_##b##_##c
#define GX_PASTE3(a, b, c) GX_PASTE3_(a, b, c)
#define GX_FN(name) GX_PASTE3(gx_k, name, GX_ISA)

/* out[i] = EXPR, with x = in[0][i] (and g = in[1][i], b = in[nin-1][i]) */
#define GX_UNARY(name, T, EXPR)                                             \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0];                                     \
        T *out = (T *)out_;                                                 \
        _Pragma("omp simd")                                                 \
        for (gx_intp i = 0; i < n; i++) { T x = xp[i]; out[i] = (EXPR); }   \
    }
#define GX_BINARY(name, T, V, EXPR)                                         \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0], *vp = (const T *)in[1];             \
        T *out = (T *)out_;                                                 \
        _Pragma("omp simd")                                                 \
        for (gx_intp i = 0; i < n; i++) {                                   \
            T x = xp[i], V = vp[i]; out[i] = (EXPR);                        \
        }                                                                   \
    }
/* The fused-bias form of kernel BASE (nin inputs counting the bias, which is
 * the last): s = (T)(x + b) -- in the array's own dtype, so the result is
 * bit-identical to the unfused BASE(x + b) -- is formed a block at a time in
 * a stack buffer that stays in L1, and BASE runs on it.  One formula, no
 * second copy of it, and BASE's own vectorisation (or split) is kept.  In
 * place is safe: a block of x is read before that block of out is written. */
#ifndef GX_BIAS_B
#define GX_BIAS_B 256
#endif
#define GX_BIASED(name, T, BASE, NIN)                                       \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0], *bp = (const T *)in[(NIN) - 1];     \
        T *out = (T *)out_;                                                 \
        T s[GX_BIAS_B];                                                     \
        for (gx_intp i0 = 0; i0 < n; i0 += GX_BIAS_B) {                     \
            const int m = (int)(n - i0 < GX_BIAS_B ? n - i0 : GX_BIAS_B);   \
            _Pragma("omp simd")                                             \
            for (int j = 0; j < m; j++) s[j] = (T)(xp[i0 + j] + bp[i0 + j]); \
            const void *p[2] = {s, (NIN) == 3 ? (const void *)((const T *)in[1] + i0) : 0}; \
            GX_FN(BASE)(p, out + i0, m);                                    \
        }                                                                   \
    }

/* out[i] = OK(x) ? FAST(x) : FULL(x), i.e. the same bits as the elementwise
 * select, without computing both formulas for every element (a vectorised
 * select would).  Per block of GX_SPLIT_B elements: flag the !OK elements
 * (NaN included); if they are the minority, FAST runs vectorised on the whole
 * block and the flagged elements are packed into a buffer, FULL runs
 * vectorised on it and the results are put back; otherwise the same with the
 * roles swapped.  Packing visits only the packed elements (GX_SPLIT_PATCH),
 * and the packed buffer is padded to whole groups of 8, so no slow scalar
 * remainder loop runs.  Which formula an element gets depends on its value only (not on the
 * block or thread split).  In place (out == in) the block's input is copied
 * first; NumPy never passes partially overlapping arrays. */
#ifndef GX_SPLIT_B
#define GX_SPLIT_B 256     /* a multiple of 64 */
#endif
/* ob[j] = F(xs[j]) for the j < m with flag[j] == want (F: an array function).
 * The flags of 64 elements become one 64-bit mask and only its set bits are
 * visited (count trailing zeros): the work follows the number of packed
 * elements, with one unpredictable branch per 64 (a test per element costs
 * as much as the formula saved). */
#define GX_SPLIT_PATCH(T, F, want)                                          \
    do {                                                                    \
        int k = 0;                                                          \
        for (int g = 0; g < m; g += 64) {                                   \
            uint64_t mk = 0;                                                \
            for (int q = 0; q < 8; q++)                                     \
                mk |= (uint64_t)gx_flag_mask(flag + g + 8 * q) << (8 * q);  \
            if (!(want)) mk = ~mk;                                          \
            if (m - g < 64) mk &= ((uint64_t)1 << (m - g)) - 1u;            \
            while (mk) {                                                    \
                const int j = g + GX_CTZ64(mk);                             \
                idx[k] = j; pb[k] = xs[j]; k++;                             \
                mk &= mk - 1u;                                              \
            }                                                               \
        }                                                                   \
        const int k8 = (k + 7) & ~7;                                        \
        for (int j = k; j < k8; j++) pb[j] = 0;                             \
        F(pb, rb, k8);                                                      \
        for (int j = 0; j < k; j++) ob[idx[j]] = rb[j];                     \
    } while (0)
/* The two loops are separate functions that are never inlined: each then
 * gets the registers to itself (inlined into one body, the general formula's
 * constants spilled to the stack and its loop ran 20% slower). */
#if defined(__GNUC__) || defined(__clang__)
#define GX_NOINLINE __attribute__((noinline))
#else
#define GX_NOINLINE
#endif
#define GX_UNARY_SPLIT(name, T, OK, FAST, FULL)                             \
    static GX_NOINLINE void GX_FN(name##_fast)(const T *x, T *o, int n)     \
    {                                                                       \
        _Pragma("omp simd")                                                 \
        for (int j = 0; j < n; j++) o[j] = FAST(x[j]);                      \
    }                                                                       \
    static GX_NOINLINE void GX_FN(name##_full)(const T *x, T *o, int n)     \
    {                                                                       \
        _Pragma("omp simd")                                                 \
        for (int j = 0; j < n; j++) o[j] = FULL(x[j]);                      \
    }                                                                       \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0];                                     \
        T *out = (T *)out_;                                                 \
        T xb[GX_SPLIT_B], pb[GX_SPLIT_B], rb[GX_SPLIT_B];                   \
        unsigned char flag[GX_SPLIT_B + 64];                                \
        int idx[GX_SPLIT_B];                                                \
        for (gx_intp i0 = 0; i0 < n; i0 += GX_SPLIT_B) {                    \
            const int m = (int)(n - i0 < GX_SPLIT_B ? n - i0 : GX_SPLIT_B); \
            T *ob = out + i0;                                               \
            const T *xs = xp + i0;                                          \
            if ((const T *)ob == xs) {                                      \
                memcpy(xb, xs, (size_t)m * sizeof(T));                      \
                xs = xb;                                                    \
            }                                                               \
            int nbad = 0;                                                   \
            _Pragma("omp simd reduction(+:nbad)")                           \
            for (int j = 0; j < m; j++) {                                   \
                flag[j] = !OK(xs[j]); nbad += flag[j];                      \
            }                                                               \
            for (int j = m; j < ((m + 63) & ~63); j++) flag[j] = 0;         \
            if (2 * nbad <= m) {                                            \
                GX_FN(name##_fast)(xs, ob, m);                              \
                if (nbad) GX_SPLIT_PATCH(T, GX_FN(name##_full), 1);         \
            } else {                                                        \
                GX_FN(name##_full)(xs, ob, m);                              \
                if (nbad < m) GX_SPLIT_PATCH(T, GX_FN(name##_fast), 0);     \
            }                                                               \
        }                                                                   \
    }

/* Gradients multiply in double and round once (float32 uses the
 * float32-grade derivative, in double). */
#define GX_DEFINE_ALL(T, SFX, GELU_TANH, ERF_GRAD, TANH_GRAD)               \
    GX_UNARY(relu_##SFX, T, GX_RELU(x))                                     \
    GX_UNARY(gelu_tanh_##SFX, T, GELU_TANH(x))                              \
    GX_BINARY(relu_grad_##SFX, T, g, (x > 0 ? g : (T)0))                    \
    GX_BINARY(gelu_erf_grad_##SFX, T, g,                                    \
              (T)(ERF_GRAD(x) * (double)g))                                 \
    GX_BINARY(gelu_tanh_grad_##SFX, T, g,                                   \
              (T)(TANH_GRAD(x) * (double)g))

GX_DEFINE_ALL(float, f32, gx_gelu_tanh_f32,
              gx_gelu_erf_grad_f32d, gx_gelu_tanh_grad_f32d)
GX_DEFINE_ALL(double, f64, gx_gelu_tanh_f64,
              gx_gelu_erf_grad_f64, gx_gelu_tanh_grad_f64)
/* exact GELU: float32 splits its array between the central and the general
 * formula of gx_gelu_erf_f32 (same bits as calling it per element) */
GX_UNARY_SPLIT(gelu_erf_f32, float, gx_gelu_erf_f32_central_ok,
               gx_gelu_erf_f32_central, gx_gelu_erf_f32_full)
GX_UNARY(gelu_erf_f64, double, gx_gelu_erf_f64(x))

#define GX_BIASED_ALL(T, SFX)                                               \
    GX_BIASED(gelu_erf_bias_##SFX, T, gelu_erf_##SFX, 2)                    \
    GX_BIASED(gelu_tanh_bias_##SFX, T, gelu_tanh_##SFX, 2)                  \
    GX_BIASED(gelu_erf_grad_bias_##SFX, T, gelu_erf_grad_##SFX, 3)          \
    GX_BIASED(gelu_tanh_grad_bias_##SFX, T, gelu_tanh_grad_##SFX, 3)
GX_BIASED_ALL(float, f32)
GX_BIASED_ALL(double, f64)


#undef GX_UNARY
#undef GX_BINARY
#undef GX_BIASED
#undef GX_BIASED_ALL
#undef GX_UNARY_SPLIT
#undef GX_SPLIT_PATCH
#undef GX_DEFINE_ALL
#undef GX_FN
