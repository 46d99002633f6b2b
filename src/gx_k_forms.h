/*
 * gx_k_forms.h -- the loop forms every dtype's kernels are made of, per ISA
 * (included by gx_isa_kernels.h): the elementwise loops around a formula of
 * gx_math.h that the compiler vectorises for the ISA (GX_UNARY, GX_BINARY),
 * the fused-bias and gated forms that run another kernel a block at a time
 * (GX_BIASED, GX_GATED, GX_DGATED) and ReLU's streaming loop (GX_STREAM).
 */
#ifndef GX_ISA
#error "src/gx_k_forms.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif
/* out[i] = EXPR, an expression in X = in[0][i] (GX_BINARY: and V = in[1][i]);
 * X and V name the variables the loop binds for it */
#define GX_UNARY(name, T, X, EXPR)                                          \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0];                                     \
        T *out = (T *)out_;                                                 \
        _Pragma("omp simd")                                                 \
        for (gx_intp i = 0; i < n; i++) { T X = xp[i]; out[i] = (EXPR); }   \
    }
#define GX_BINARY(name, T, X, V, EXPR)                                      \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0], *vp = (const T *)in[1];             \
        T *out = (T *)out_;                                                 \
        _Pragma("omp simd")                                                 \
        for (gx_intp i = 0; i < n; i++) {                                   \
            T X = xp[i], V = vp[i]; out[i] = (EXPR);                        \
        }                                                                   \
    }
/* The fused-bias form of kernel BASE (nin inputs counting the bias, which is
 * the last): s = (T)(x + b) -- in the array's own dtype, so the result is
 * bit-identical to the unfused BASE(x + b) -- is formed a block at a time in
 * a stack buffer that stays in L1, and BASE runs on it.  One formula, no
 * second copy of it, and BASE's own vectorisation (or split) is kept.  In
 * place is safe: a block of x is read before that block of out is written. */
#ifndef GX_BIAS_B
#define GX_BIAS_B 4096   /* a float32 BASE splits per call, and pays the */
#endif                   /* split's fixed cost once per call             */
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

/* The gated forms (gx_ops.h, GX_GATE and GX_DGATE), a block at a time in a
 * stack buffer, like GX_BIASED:
 *   GATE:   out = (T)BASE(gate) * up     -- bit-identical to the unfused
 *           np.multiply(BASE(gate), up): BASE's result is rounded to T first
 *   DGATE:  out = BASE(gate, (T)(up * g)) -- the unfused BASE(gate, up * g)
 * In place is safe: each block's inputs are read before its output is
 * written (BASE itself handles out == gate).  float32 GATE does not come
 * here: its table loop multiplies by up itself (the split driver with gate = 1). */
#ifndef GX_GATE_B
#define GX_GATE_B 4096   /* as GX_BIAS_B */
#endif
#define GX_GATED(name, T, BASE)                                             \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *gp = (const T *)in[0], *up = (const T *)in[1];             \
        T *out = (T *)out_;                                                 \
        T s[GX_GATE_B];                                                     \
        for (gx_intp i0 = 0; i0 < n; i0 += GX_GATE_B) {                     \
            const int m = (int)(n - i0 < GX_GATE_B ? n - i0 : GX_GATE_B);   \
            const void *p[1] = {gp + i0};                                   \
            GX_FN(BASE)(p, s, m);                                           \
            _Pragma("omp simd")                                             \
            for (int j = 0; j < m; j++) out[i0 + j] = s[j] * up[i0 + j];    \
        }                                                                   \
    }
#define GX_DGATED(name, T, BASE)                                            \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *gp = (const T *)in[0], *up = (const T *)in[1];             \
        const T *dp = (const T *)in[2];                                     \
        T *out = (T *)out_;                                                 \
        T s[GX_GATE_B];                                                     \
        for (gx_intp i0 = 0; i0 < n; i0 += GX_GATE_B) {                     \
            const int m = (int)(n - i0 < GX_GATE_B ? n - i0 : GX_GATE_B);   \
            _Pragma("omp simd")                                             \
            for (int j = 0; j < m; j++) s[j] = up[i0 + j] * dp[i0 + j];     \
            const void *p[2] = {gp + i0, s};                                \
            GX_FN(BASE)(p, out + i0, m);                                    \
        }                                                                   \
    }
/* ReLU runs at memory speed: arrays of GX_STREAM_MIN elements or more go a
 * block of GX_RELU_B elements at a time, the lines GX_PF_BYTES ahead of the
 * block prefetched first, then the block's vector loop; smaller ones (in
 * cache, where the blocks cost 5-10%) in one plain loop.  On CPUs where the
 * prefetch does not pay, the dispatch table takes the plain GX_UNARY /
 * GX_BINARY loop instead (the amd_loops choice, made by gx_fill in gx_kernels.c).
 * NIN = 2: G = in[1]; EXPR in X (= in[0]) and G, the names it passes. */
#ifndef GX_RELU_B
#define GX_RELU_B 64
#endif
#ifndef GX_STREAM_MIN
#define GX_STREAM_MIN 8192
#endif
#define GX_STREAM(name, T, NIN, X, G, EXPR)                                 \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0], *vp = (const T *)in[(NIN) - 1];     \
        T *out = (T *)out_;                                                 \
        if (n < GX_STREAM_MIN) {                                            \
            _Pragma("omp simd")                                             \
            for (gx_intp j = 0; j < n; j++) {                               \
                T X = xp[j], G = vp[j]; (void)G; out[j] = (EXPR);           \
            }                                                               \
            return;                                                         \
        }                                                                   \
        for (gx_intp i0 = 0; i0 < n; i0 += GX_RELU_B) {                     \
            const int m = (int)(n - i0 < GX_RELU_B ? n - i0 : GX_RELU_B);   \
            for (int l = 0; l < GX_RELU_B * (int)sizeof(T); l += 64) {       \
                GX_PREFETCH(xp + i0, GX_PF_BYTES + l);                      \
                if ((NIN) == 2) GX_PREFETCH(vp + i0, GX_PF_BYTES + l);      \
                GX_PREFETCH(out + i0, GX_PF_BYTES + l);                     \
            }                                                               \
            _Pragma("omp simd")                                             \
            for (int j = 0; j < m; j++) {                                   \
                T X = xp[i0 + j], G = vp[i0 + j]; (void)G; out[i0 + j] = (EXPR); \
            }                                                               \
        }                                                                   \
    }
