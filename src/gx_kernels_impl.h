/*
 * gx_kernels_impl.h -- included once per instruction set by gx_kernels.c with
 * GX_ISA set to the suffix and the target pragma in force.  Each kernel is the
 * same loop around the one formula in gx_math.h, so the compiler vectorises it
 * for that ISA; nothing here is ISA-specific source.
 */

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
#define GX_BIAS_B 4096   /* a float32 BASE splits per call, and pays the    */
#endif                   /* split's fixed cost once per call (measured at a */
                         /* 4096 split block; not remeasured at 8192)       */
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
 * here: its table loop multiplies by up itself (GX_SPLIT with GATE = 1). */
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

/* The table loops (lut_fwd, lut_grad, sig_*, their 16-bit forms, lut64_fwd) */
#include "gx_loops.h"

/* The float32 kernels: out[i] = the table formula where it covers x[i],
 * else FULL (the general double formula), i.e. the same bits as the
 * elementwise select, without computing both for every element.  Per block of
 * GX_BLK(T) elements, LUT runs on the whole block and flags the elements it
 * does not cover (NaN included) in a bit mask; if they are the minority they
 * are packed into a buffer, FULL runs on it and the results are put back;
 * otherwise FULL runs on the whole block and the covered elements are
 * patched from LUT the same way.  Packing visits only the set bits of each
 * 64-bit mask word (count trailing zeros): the work follows the number of
 * packed elements.  Which formula an element gets depends on its value only
 * (not on the block or thread split).  In place (out == an input) the block's
 * inputs are copied first; NumPy never passes partially overlapping arrays.
 * NIN = 2: a derivative kernel, g = in[1] travels with x. */
/* Why 8192 (float32) and not 1024: per block the split pays a fixed cost
 * (the packing loop's exit, FULL's call and set-up) whatever the number of
 * packed elements.  On 2 N(0,1) data (1.3% of float32 elements outside the
 * exact GELU table) with the AVX-512 packing below, measured on AMD Zen 5:
 * the split added 66 ns per 1024 elements to the table loop's 175 at 1024,
 * 21 at 4096, 16 at 8192; with the faster table loop of the packed tables,
 * 8192 instead of 4096 gave exact GELU 2-3% at 2^20 (1 thread). */
/* ob[j] = N(F(W(xs[j]), W(gs[j]))) for the j < m whose bit in bad equals
 * want (times gs[j] if MUL: a gated form's general-formula elements; W and N
 * widen and narrow 16-bit data, GX_ID otherwise).
 * Packing (AVX2, baseline; AVX-512 below): the first GX_PACK_U set bits of each mask word are taken without
 * a branch (a step past the last set bit writes a clamped index that k does
 * not count, into the buffers' slack); a loop takes the rest.  Rare elements
 * fall a few to a word, and a loop that ran once per set bit mispredicted
 * its exit once per word: that, not the general formula, was half the cost
 * of the split on normally distributed data. */
#define GX_PACK_U 3
#define GX_ID(v) (v)
#define GX_PACK_ONE(NIN, s, W)          /* the lowest set bit of mk, to slot s */ \
    do {                                                                    \
        int j_ = 64 * w + GX_CTZ64(mk | ((uint64_t)1 << 63));               \
        j_ = j_ < m ? j_ : m - 1;                                           \
        idx[s] = j_; pb[s] = W(xs[j_]);                                     \
        if ((NIN) == 2) pg[s] = W(gs[j_]);                                  \
        mk &= mk - 1u;                                                      \
    } while (0)
#ifdef GX_HAVE_PACK_IDX
/* AVX-512: the indices come from vpcompressd, 16 mask bits at a time, and
 * only the 16-element chunks with a wanted element are visited (vptestmw
 * over the block's mask finds them).  idx[k..kp) repeat idx[k - 1], so the
 * gather and put-back loops run whole vectors (a duplicate writes the same
 * value to the same place): no loop's trip count follows the element count.
 * Measured on AMD Zen 5, exact GELU on 2 N(0,1) data, per 1024 elements: the
 * split added 66 ns to the table loop's 175 with the bit-by-bit packing below
 * at 1024- or 4096-element blocks, 66 with this one at 1024, 21 at 4096: the
 * gain is in paying the per-block costs once per 4096 elements, which the
 * bit-by-bit packing's per-word work did not allow. */
#define GX_SPLIT_PATCH(NIN, F, want, MUL, W, N)                                   \
    do {                                                                    \
        const int kp = GX_FN(pack_idx)(bad, m, want, idx);                  \
        for (int j = 0; j < kp; j++) {                                      \
            pb[j] = W(xs[idx[j]]);                                          \
            if ((NIN) == 2) pg[j] = W(gs[idx[j]]);                          \
        }                                                                   \
        F;                                                                  \
        for (int j = 0; j < kp; j++) ob[idx[j]] = N((MUL) ? rb[j] * pg[j] : rb[j]); \
    } while (0)
#define GX_PACK_SLACK 16
#else
#define GX_PACK_SLACK GX_PACK_U
#define GX_SPLIT_PATCH(NIN, F, want, MUL, W, N)                                   \
    do {                                                                    \
        int k = 0;                                                          \
        for (int w = 0; w < (m + 63) / 64; w++) {                           \
            uint64_t mk = (want) ? bad[w] : ~bad[w];                        \
            if (m - 64 * w < 64) mk &= ((uint64_t)1 << (m - 64 * w)) - 1u;  \
            const int c_ = GX_POPCNT64(mk);                                 \
            for (int u_ = 0; u_ < GX_PACK_U; u_++) GX_PACK_ONE(NIN, k + u_, W); \
            k += c_ < GX_PACK_U ? c_ : GX_PACK_U;                           \
            while (mk) {                                                    \
                GX_PACK_ONE(NIN, k, W);                                     \
                k++;                                                        \
            }                                                               \
        }                                                                   \
        const int kp = (k + 15) & ~15;     /* whole vectors: no scalar tail */ \
        for (int j = k; j < kp; j++) {                                      \
            pb[j] = 0;                                                      \
            if ((NIN) == 2) pg[j] = 0;                                      \
        }                                                                   \
        F;                                                                  \
        for (int j = 0; j < k; j++) ob[idx[j]] = N((MUL) ? rb[j] * pg[j] : rb[j]); \
    } while (0)
#endif
/* GATE = 1: a gated form, base(x) * u with u = in[1] (NIN = 2): LUT is the
 * G = 2 table loop, which multiplies in its own loop; FULL (the base's general
 * formula) is multiplied after, so every element is (float)base(x) * u. */
#define GX_SPLIT(name, T, NIN, LUT, FULL, GATE)                             \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0];                                     \
        const T *gp = (NIN) == 2 ? (const T *)in[1] : NULL;                 \
        T *out = (T *)out_;                                                 \
        T xb[GX_BLK(T)], gb[(NIN) == 2 ? GX_BLK(T) : 1];                  \
        T pb[GX_BLK(T) + GX_PACK_SLACK], pg[(NIN) == 2 ? GX_BLK(T) + GX_PACK_SLACK : 1]; \
        T rb[GX_BLK(T)];                                                   \
        uint64_t bad[GX_BLK(T) / 64], bad2[GX_BLK(T) / 64];               \
        int idx[GX_BLK(T) + GX_PACK_SLACK];                                 \
        for (gx_intp i0 = 0; i0 < n; i0 += GX_BLK(T)) {                    \
            const int m = (int)(n - i0 < GX_BLK(T) ? n - i0 : GX_BLK(T)); \
            T *ob = out + i0;                                               \
            const T *xs = xp + i0;                                          \
            const T *gs = (NIN) == 2 ? gp + i0 : NULL;                      \
            if ((const T *)ob == xs || ((NIN) == 2 && (const T *)ob == gs)) { \
                memcpy(xb, xs, (size_t)m * sizeof(T));                      \
                xs = xb;                                                    \
                if ((NIN) == 2) {                                           \
                    memcpy(gb, gs, (size_t)m * sizeof(T));                  \
                    gs = gb;                                                \
                }                                                           \
            }                                                               \
            /* LUT returns how many elements it flagged */                  \
            const int nbad = GX_FN(LUT)(&GX_TABLE(name), xs, gs, ob, m, bad); \
            if (nbad == 0) continue;                                        \
            if (2 * nbad <= m) {                                            \
                GX_SPLIT_PATCH(NIN, FULL(pb, pg, rb, kp), 1, GATE, GX_ID, GX_ID); \
            } else {                                                        \
                FULL(xs, gs, ob, m);                                        \
                if (GATE)                                                   \
                    for (int j = 0; j < m; j++) ob[j] = ob[j] * gs[j];      \
                GX_SPLIT_PATCH(NIN, GX_FN(LUT)(&GX_TABLE(name), pb, pg, rb, kp, bad2), 0, 0, \
                               GX_ID, GX_ID);                               \
            }                                                               \
        }                                                                   \
    }
/* FULL: the general double formula (gx_math.h) over an array.  Its own
 * never-inlined function, so it gets the registers to itself (inlined into
 * the driver, the formula's constants spilled to the stack and its loop ran
 * 20% slower). */
#define GX_FULL_FN(name, T, FULL1, GRAD)                                    \
    static GX_NOINLINE void GX_FN(name##_full)(const T *x, const T *g, T *o, int n) \
    {                                                                       \
        (void)g;                                                            \
        _Pragma("omp simd")                                                 \
        for (int j = 0; j < n; j++)                                         \
            o[j] = GRAD ? (T)(FULL1(x[j]) * (double)g[j]) : (T)FULL1(x[j]); \
    }

/* ReLU runs at memory speed: arrays of GX_STREAM_MIN elements or more go a
 * block of GX_RELU_B elements at a time, the lines GX_PF_BYTES ahead of the
 * block prefetched first, then the block's vector loop; smaller ones (in
 * cache, where the blocks cost 5-10%), and every array on CPUs where the
 * prefetch did not pay (gx_amd_loops, gx_kernels.c), in one plain loop.
 * NIN = 2: g = in[1]. */
#ifndef GX_RELU_B
#define GX_RELU_B 64
#endif
#ifndef GX_STREAM_MIN
#define GX_STREAM_MIN 8192
#endif
#define GX_STREAM(name, T, NIN, EXPR)                                      \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0], *vp = (const T *)in[(NIN) - 1];     \
        T *out = (T *)out_;                                                 \
        if (n < GX_STREAM_MIN || gx_amd_loops) {                           \
            _Pragma("omp simd")                                             \
            for (gx_intp j = 0; j < n; j++) {                               \
                T x = xp[j], g = vp[j]; (void)g; out[j] = (EXPR);           \
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
                T x = xp[i0 + j], g = vp[i0 + j]; (void)g; out[i0 + j] = (EXPR); \
            }                                                               \
        }                                                                   \
    }
GX_STREAM(relu_f32, float, 1, GX_RELU(x))
GX_STREAM(relu_f64, double, 1, GX_RELU(x))
GX_STREAM(relu_grad_f32, float, 2, (x > 0 ? g : 0.0f))
GX_STREAM(relu_grad_f64, double, 2, (x > 0 ? g : 0.0))

/* float64: the double-double formulas of gx_math.h, elementwise; gradients
 * multiply in double and round once */
/* exact and tanh GELU: double lanes from the tables of gx_lut64.h where they
 * cover x (|x| <= 5), the general formula elsewhere (GX_SPLIT below) */
GX_FULL_FN(gelu_erf_f64, double, gx_gelu_erf_f64, 0)
GX_FULL_FN(gelu_tanh_f64, double, gx_gelu_tanh_f64, 0)
GX_SPLIT(gelu_erf_f64, double, 1, lut64_fwd, GX_FN(gelu_erf_f64_full), 0)
GX_SPLIT(gelu_tanh_f64, double, 1, lut64_fwd, GX_FN(gelu_tanh_f64_full), 0)
GX_BINARY(gelu_erf_grad_f64, double, g, gx_gelu_erf_grad_f64(x) * g)
GX_BINARY(gelu_tanh_grad_f64, double, g, gx_gelu_tanh_grad_f64(x) * g)
GX_UNARY(silu_f64, double, gx_silu_f64(x))
GX_UNARY(quick_gelu_f64, double, gx_quick_gelu_f64(x))
GX_BINARY(silu_grad_f64, double, g, gx_silu_grad_f64(x) * g)
GX_BINARY(quick_gelu_grad_f64, double, g, gx_quick_gelu_grad_f64(x) * g)

/* float32: float32 lanes from the tables where they cover x (gx_lut_ok:
 * |x| <= 4.5, 8 or 4.7, and for forward GELU every x >= -4.5), the general
 * double formulas for the rest: per element, gx_lut_ok(x) ? the scalar twin
 * of gx_lut.h : the gx_math.h formula, whatever the split */
GX_FULL_FN(gelu_erf_f32, float, gx_gelu_erf_f32_full, 0)
GX_FULL_FN(gelu_tanh_f32, float, gx_gelu_tanh_f32, 0)
GX_FULL_FN(gelu_erf_grad_f32, float, gx_gelu_erf_grad_f32d, 1)
GX_FULL_FN(gelu_tanh_grad_f32, float, gx_gelu_tanh_grad_f32d, 1)
GX_SPLIT(gelu_erf_f32, float, 1, lut_fwd, GX_FN(gelu_erf_f32_full), 0)
GX_SPLIT(gelu_tanh_f32, float, 1, lut_fwd, GX_FN(gelu_tanh_f32_full), 0)
GX_SPLIT(gelu_erf_grad_f32, float, 2, lut_grad, GX_FN(gelu_erf_grad_f32_full), 0)
GX_SPLIT(gelu_tanh_grad_f32, float, 2, lut_grad, GX_FN(gelu_tanh_grad_f32_full), 0)
GX_FULL_FN(silu_f32, float, gx_silu_f32, 0)
GX_FULL_FN(quick_gelu_f32, float, gx_quick_gelu_f32, 0)
GX_FULL_FN(silu_grad_f32, float, gx_silu_grad_f32d, 1)
GX_FULL_FN(quick_gelu_grad_f32, float, gx_quick_gelu_grad_f32d, 1)
GX_SPLIT(silu_f32, float, 1, sig_fwd, GX_FN(silu_f32_full), 0)
GX_SPLIT(quick_gelu_f32, float, 1, sig_fwd, GX_FN(quick_gelu_f32_full), 0)
GX_SPLIT(silu_grad_f32, float, 2, sig_grad, GX_FN(silu_grad_f32_full), 0)
GX_SPLIT(quick_gelu_grad_f32, float, 2, sig_grad, GX_FN(quick_gelu_grad_f32_full), 0)
/* the gated forms in float32: the product inside the table loop */
GX_SPLIT(swiglu_f32, float, 2, sig_gate, GX_FN(silu_f32_full), 1)
GX_SPLIT(geglu_erf_f32, float, 2, lut_gate, GX_FN(gelu_erf_f32_full), 1)
GX_SPLIT(geglu_tanh_f32, float, 2, lut_gate, GX_FN(gelu_tanh_f32_full), 1)

#define GX_BIASED_ALL(T, SFX)                                               \
    GX_BIASED(gelu_erf_bias_##SFX, T, gelu_erf_##SFX, 2)                    \
    GX_BIASED(gelu_tanh_bias_##SFX, T, gelu_tanh_##SFX, 2)                  \
    GX_BIASED(gelu_erf_grad_bias_##SFX, T, gelu_erf_grad_##SFX, 3)          \
    GX_BIASED(gelu_tanh_grad_bias_##SFX, T, gelu_tanh_grad_##SFX, 3)
GX_BIASED_ALL(float, f32)
GX_BIASED_ALL(double, f64)

#define GX_DGATED_ALL(T, SFX)                                               \
    GX_DGATED(swiglu_dgate_##SFX, T, silu_grad_##SFX)                       \
    GX_DGATED(geglu_erf_dgate_##SFX, T, gelu_erf_grad_##SFX)                \
    GX_DGATED(geglu_tanh_dgate_##SFX, T, gelu_tanh_grad_##SFX)
GX_DGATED_ALL(float, f32)
GX_DGATED_ALL(double, f64)
/* float64: BASE on a block, then the product (float32: GX_SPLIT above) */
GX_GATED(swiglu_f64, double, silu_f64)
GX_GATED(geglu_erf_f64, double, gelu_erf_f64)
GX_GATED(geglu_tanh_f64, double, gelu_tanh_f64)


/* ------------------------------------------------- float16, bfloat16 --
 * 16-bit arrays run the float32 kernels: each block of GX_HALF_B elements is
 * widened (exact), computed, and rounded back once.  One block driver,
 * narrow_run, for both; what differs is the conversion pair.
 * float16: one instruction per vector where the ISA has it (F16C on the AVX2
 * path, AVX-512F) and the scalar round-to-nearest-even functions of
 * gx_kernels.c elsewhere.  bfloat16: plain integer loops (gx_kernels.h) that
 * GCC vectorises for each path.  The same bits on every path either way.
 * The fused-bias forms round x + b to the 16-bit type first, so they give the
 * bits of the unfused op on the 16-bit sum (float32 holds 24 bits, >= 2p + 2
 * for p = 11 and 8, so summing in float32 and rounding once more is the
 * correctly rounded 16-bit sum: no double-rounding error).
 * Two shortcuts give the same bits faster: on AVX2/AVX-512 a plain
 * derivative with float32 tables (GELU, SiLU, quick GELU) runs its table
 * loop on the 16-bit data itself (GX_SPLIT16, one pass), and the forward ops
 * of a unary base read a 65,536-entry result table (table16, 128 KiB: a
 * gather per 16 elements on AVX-512; one load per element elsewhere and on
 * AMD CPUs, gx_amd_loops, whose gathers are slow: 2.9 against 4.2 Gelem/s
 * on Zen 5), except plain forward SiLU on AMD, whose one-pass loop is
 * faster still (see GX_SPLIT16's forward op below). */
#ifndef GX_HALF_B
#define GX_HALF_B 2048
#endif
static GX_NOINLINE void GX_FN(h2f)(const uint16_t *h, float *f, int n)
{
    int j = 0;
#ifdef GX_VEC16
    for (; j + GX_F32_W <= n; j += GX_F32_W) GX_F32_STORE(f + j, GX_F32_LOAD_H(h + j));
#endif
    for (; j < n; j++) f[j] = gx_half_to_float(h[j]);
}
static GX_NOINLINE void GX_FN(f2h)(const float *f, uint16_t *h, int n)
{
    int j = 0;
#ifdef GX_VEC16
    for (; j + GX_F32_W <= n; j += GX_F32_W) GX_F32_STORE_H(h + j, GX_F32_LOAD(f + j));
#endif
    for (; j < n; j++) h[j] = gx_float_to_half(f[j]);
}
static GX_NOINLINE void GX_FN(b2f)(const uint16_t *h, float *f, int n)
{
    _Pragma("omp simd")
    for (int j = 0; j < n; j++) f[j] = gx_bfloat16_to_float(h[j]);
}
static GX_NOINLINE void GX_FN(f2b)(const float *f, uint16_t *h, int n)
{
    _Pragma("omp simd")
    for (int j = 0; j < n; j++) h[j] = gx_float_to_bfloat16(f[j]);
}
/* The float32 table ops on 16-bit arrays in one pass (AVX2, AVX-512):
 * per block of GX_SPLIT_B elements the 16-bit table loop (gx_lut_simd.h,
 * sig_fwd_h, lut_grad_h/_b, ...) writes every result and flags the elements
 * its table does not cover, which GX_SPLIT_PATCH then packs as they are
 * (16-bit), and which are widened (W: h2f or b2f), computed by the general
 * formula FULL (float32 results, as in GX_SPLIT), rounded back (N: f2h or
 * f2b) and put back: per element the bits of the block pipeline
 * (narrow_run), which widened a block, ran the float32 kernel and narrowed
 * it.  The widening and rounding run over the packed buffer with the vector
 * conversions (F16C's on the packed whole vectors): one by one, through the
 * scalar gx_half_to_float / gx_float_to_half calls, they had cost float16
 * forward GELU 29% on 2 N(0, 1) data against 11% for float32 (AMD Zen 5,
 * 2^20, 1 thread: float16 0.72x our float32 rate; 0.90x with no element
 * outside the table).  In place (out == x or g) the block's inputs are
 * copied first, as GX_SPLIT does. */
typedef void (*gx_k16)(const uint16_t *, const uint16_t *, uint16_t *, gx_intp);
#ifdef GX_VEC16
#define GX_SPLIT16(name, NIN, LUT16, TAB, FULL, W, N)                       \
    static void GX_FN(name)(const uint16_t *xp, const uint16_t *gp, uint16_t *out, gx_intp n) \
    {                                                                       \
        uint16_t xb[GX_SPLIT_B], gb[(NIN) == 2 ? GX_SPLIT_B : 1];           \
        uint16_t pb[GX_SPLIT_B + GX_PACK_SLACK], pg[GX_SPLIT_B + GX_PACK_SLACK], rb[GX_SPLIT_B + GX_PACK_SLACK]; \
        float pf[GX_SPLIT_B + GX_PACK_SLACK], pgf[GX_SPLIT_B + GX_PACK_SLACK], rf[GX_SPLIT_B + GX_PACK_SLACK]; \
        uint64_t bad[GX_SPLIT_B / 64];                                      \
        int idx[GX_SPLIT_B + GX_PACK_SLACK];                                \
        for (gx_intp i0 = 0; i0 < n; i0 += GX_SPLIT_B) {                    \
            const int m = (int)(n - i0 < GX_SPLIT_B ? n - i0 : GX_SPLIT_B); \
            uint16_t *ob = out + i0;                                        \
            const uint16_t *xs = xp + i0, *gs = (NIN) == 2 ? gp + i0 : xs;  \
            if ((const uint16_t *)ob == xs || (const uint16_t *)ob == gs) { \
                memcpy(xb, xs, (size_t)m * sizeof(uint16_t));               \
                xs = xb;                                                    \
                gs = xb;                                                    \
                if ((NIN) == 2) {                                           \
                    memcpy(gb, gp + i0, (size_t)m * sizeof(uint16_t));      \
                    gs = gb;                                                \
                }                                                           \
            }                                                               \
            const int nbad = GX_FN(LUT16)(&TAB, xs, (NIN) == 2 ? gs : NULL, ob, m, bad); \
            if (nbad == 0) continue;                                        \
            /* kp: the packed count rounded up to whole vectors (the slots   \
             * past the packed elements hold copies or zeros, see            \
             * GX_SPLIT_PATCH), so W and N run vectors only */               \
            GX_SPLIT_PATCH(NIN, (W(pb, pf, kp), (NIN) == 2 ? W(pg, pgf, kp) : (void)0, \
                                 FULL(pf, pgf, rf, kp), N(rf, rb, kp)),     \
                           1, 0, GX_ID, GX_ID);                             \
        }                                                                   \
    }
#define GX_SPLIT16_HB(name, NIN, LUT16, TAB, FULL)                          \
    GX_SPLIT16(name##_h16, NIN, LUT16##_h, TAB, FULL, GX_FN(h2f), GX_FN(f2h)) \
    GX_SPLIT16(name##_b16, NIN, LUT16##_b, TAB, FULL, GX_FN(b2f), GX_FN(f2b))
GX_SPLIT16_HB(gelu_erf_grad, 2, lut_grad, GX_TABLE(gelu_erf_grad_f32), GX_FN(gelu_erf_grad_f32_full))
GX_SPLIT16_HB(gelu_tanh_grad, 2, lut_grad, GX_TABLE(gelu_tanh_grad_f32), GX_FN(gelu_tanh_grad_f32_full))
GX_SPLIT16_HB(silu_grad, 2, sig_grad, GX_TABLE(silu_grad_f32), GX_FN(silu_grad_f32_full))
GX_SPLIT16_HB(quick_gelu_grad, 2, sig_grad, GX_TABLE(quick_gelu_grad_f32), GX_FN(quick_gelu_grad_f32_full))
/* forward SiLU (taken on AMD only, gx_amd_loops; the other forward ops, and
 * SiLU elsewhere, read the result table): on AMD the table is read with one
 * scalar load per element (lut16), 4.2-4.4 Gelem/s whatever the op (2^20, 1
 * thread, Zen 5), which beats this loop for exact, tanh and quick GELU
 * (float16 1.0-1.02x, bfloat16 1.05-1.10x) but not for SiLU's cheaper
 * formula (5.0-5.4 Gelem/s here) */
GX_SPLIT16(silu_h16, 1, sig_fwd_h, GX_TABLE(silu_f32), GX_FN(silu_f32_full), GX_FN(h2f), GX_FN(f2h))
GX_SPLIT16(silu_b16, 1, sig_fwd_b, GX_TABLE(silu_f32), GX_FN(silu_f32_full), GX_FN(b2f), GX_FN(f2b))
/* the same bfloat16 kernels with AVX512-BF16's rounding (GX_VSTORE_BN),
 * taken where the CPU has it (gx_bf16cvt) */
#ifdef GX_F32_STORE_BN
#define GX_SPLIT16_BN(name, NIN, LUT16, TAB, FULL)                          \
    GX_SPLIT16(name##_bn16, NIN, LUT16##_bn, TAB, FULL, GX_FN(b2f), GX_FN(f2b))
GX_SPLIT16_BN(gelu_erf_grad, 2, lut_grad, GX_TABLE(gelu_erf_grad_f32), GX_FN(gelu_erf_grad_f32_full))
GX_SPLIT16_BN(gelu_tanh_grad, 2, lut_grad, GX_TABLE(gelu_tanh_grad_f32), GX_FN(gelu_tanh_grad_f32_full))
GX_SPLIT16_BN(silu_grad, 2, sig_grad, GX_TABLE(silu_grad_f32), GX_FN(silu_grad_f32_full))
GX_SPLIT16_BN(quick_gelu_grad, 2, sig_grad, GX_TABLE(quick_gelu_grad_f32), GX_FN(quick_gelu_grad_f32_full))
GX_SPLIT16_BN(silu, 1, sig_fwd, GX_TABLE(silu_f32), GX_FN(silu_f32_full))
#undef GX_SPLIT16_BN
#define GX_BN(name) (gx_bf16cvt ? GX_FN(name##_bn16) : GX_FN(name##_b16))
#else
#define GX_BN(name) GX_FN(name##_b16)
#endif
#undef GX_SPLIT16_HB
#undef GX_SPLIT16
#endif
/* the one-pass 16-bit kernel of a plain op with float32 tables (forward or
 * derivative), NULL where there is none (the baseline path, ReLU's):
 * narrow_run then reads the result table (forward) or runs the block
 * pipeline */
static gx_k16 GX_FN(one16)(int base, int bf)
{
#ifdef GX_VEC16
    switch (base) {
    case GX_OP_SILU: return bf ? GX_BN(silu) : GX_FN(silu_h16);
    case GX_OP_GELU_ERF_GRAD: return bf ? GX_BN(gelu_erf_grad) : GX_FN(gelu_erf_grad_h16);
    case GX_OP_GELU_TANH_GRAD: return bf ? GX_BN(gelu_tanh_grad) : GX_FN(gelu_tanh_grad_h16);
    case GX_OP_SILU_GRAD: return bf ? GX_BN(silu_grad) : GX_FN(silu_grad_h16);
    case GX_OP_QUICK_GELU_GRAD: return bf ? GX_BN(quick_gelu_grad) : GX_FN(quick_gelu_grad_h16);
    default: return NULL;
    }
#else
    (void)base; (void)bf;
    return NULL;
#endif
}
/* The float32 kernel of each op (gx_ops.h), for the 16-bit drivers. */
#define GX_F32_ROW(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) [ID] = GX_FN(KERNEL##_f32),
static const gx_kernel GX_FN(f32_kernels)[GX_NOPS] = { GX_OPS(GX_F32_ROW) };
#undef GX_F32_ROW
/* A 16-bit op of the given kind with nin inputs: widen each block, run the
 * float32 kernel of base, round back; widen/narrow are the 16-bit type's
 * conversions (h2f/f2h, b2f/f2b).  Each 16-bit rounding of the unfused form
 * happens here too (x + b, up * g, BASE(gate) before the product), so the
 * fused forms give the unfused bits: a product of two 16-bit values is exact
 * in float32, and rounding it once is NumPy's (ml_dtypes') 16-bit multiply. */
typedef void (*gx_widen_fn)(const uint16_t *, float *, int);
typedef void (*gx_narrow_fn)(const float *, uint16_t *, int);
/* The result of unary op `base` for every one of the 65536 inputs of a 16-bit
 * type (bf = 0: float16, 1: bfloat16), computed once -- by this path's float32
 * kernel and rounding, so with exactly the bits the block pipeline below
 * gives -- on the first call that needs it (128 KiB, kept for the process;
 * threads racing to build it agree through a compare-and-swap, the loser
 * frees its copy).  A forward 16-bit call is then one load per element.
 * NULL if the memory is not there (or without GNU atomics): the block
 * pipeline runs instead. */
static const uint16_t *GX_FN(tab16)[GX_NOPS][2];
static const uint16_t *GX_FN(table16)(int base, int bf, gx_widen_fn widen, gx_narrow_fn narrow)
{
#if defined(__GNUC__) || defined(__clang__)
    const uint16_t *t = __atomic_load_n(&GX_FN(tab16)[base][bf], __ATOMIC_ACQUIRE);
    if (t) return t;
    /* one spare entry: the AVX-512 reader (gx_lut16) loads 32 bits at each
     * entry and keeps the low 16 */
    uint16_t *nt = (uint16_t *)malloc((65536 + 1) * sizeof(uint16_t));
    float *f = (float *)malloc(2 * 65536 * sizeof(float));
    if (!nt || !f) {
        free(nt);
        free(f);
        return NULL;
    }
    for (int i = 0; i < 65536; i++) nt[i] = (uint16_t)i;
    nt[65536] = 0;
    widen(nt, f, 65536);
    const void *p[1] = {f};
    GX_FN(f32_kernels)[base](p, f + 65536, 65536);
    narrow(f + 65536, nt, 65536);
    free(f);
    const uint16_t *expected = NULL;
    if (!__atomic_compare_exchange_n(&GX_FN(tab16)[base][bf], &expected, nt, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(nt);
        return expected;
    }
    return nt;
#else
    (void)base; (void)bf; (void)widen; (void)narrow;
    return NULL;
#endif
}
/* o[j] = T[x[j]]: AVX-512 gathers 16 entries at a time (32-bit loads at
 * T + x[j], whose low halves are the entries: little-endian x86, and the
 * table has a spare entry for the last); elsewhere one load per element. */
static GX_NOINLINE void GX_FN(lut16)(const uint16_t *T, const uint16_t *x, uint16_t *o, gx_intp n)
{
    gx_intp j = 0;
#ifdef GX_HAVE_GATHER16
    if (gx_amd_loops) {
        /* AMD: one scalar load per element, the baseline's loop (not
         * inlined here, where GCC would vectorise it into gathers) */
        gx_k_lut16_baseline(T, x, o, n);
        return;
    }
    j = GX_FN(gather16)(T, x, o, n);
#endif
    for (; j < n; j++) o[j] = T[x[j]];
}
static void GX_FN(narrow_run)(gx_widen_fn widen, gx_narrow_fn narrow, int kind, int base, int nin,
                              const void *const *in, void *out, gx_intp n)
{
    float b[3][GX_HALF_B], ob[GX_HALF_B];
    uint16_t hb[GX_HALF_B];
    const gx_kernel k32 = GX_FN(f32_kernels)[base];
    /* plain ops with float32 tables in one pass (forward float16 ops only
     * with gx_amd_loops, gx_kernels.c) */
    const gx_k16 k16 = kind == GX_PLAIN && (nin == 2 || gx_amd_loops)
                       ? GX_FN(one16)(base, widen == GX_FN(b2f)) : NULL;   /* forward: SiLU only */
    if (k16) {
        k16((const uint16_t *)in[0], nin == 2 ? (const uint16_t *)in[1] : NULL, (uint16_t *)out, n);
        return;
    }
    /* forward ops of a unary base: through the result table */
    const uint16_t *T = (kind != GX_DGATE && gx_nin(base) == 1)
                        ? GX_FN(table16)(base, widen == GX_FN(b2f), widen, narrow) : NULL;
    if (T && kind == GX_PLAIN) {
        GX_FN(lut16)(T, (const uint16_t *)in[0], (uint16_t *)out, n);
        return;
    }
    for (gx_intp i0 = 0; i0 < n; i0 += GX_HALF_B) {
        const int m = (int)(n - i0 < GX_HALF_B ? n - i0 : GX_HALF_B);
        for (int k = (T && kind == GX_GATE); k < nin; k++)   /* the table reads the gate's bits */
            widen((const uint16_t *)in[k] + i0, b[k], m);
        float *r = kind == GX_BIAS ? b[0] : (kind == GX_DGATE ? b[1] : NULL);
        if (r) {                    /* x + b, or up * g, rounded to 16 bits */
            const float *v = kind == GX_BIAS ? b[nin - 1] : b[2];
            if (kind == GX_BIAS) {
                _Pragma("omp simd")
                for (int j = 0; j < m; j++) r[j] = r[j] + v[j];
            } else {
                _Pragma("omp simd")
                for (int j = 0; j < m; j++) r[j] = r[j] * v[j];
            }
            narrow(r, hb, m);
            widen(hb, r, m);
        }
        if (T) {                    /* BASE through the table (kind BIAS or GATE) */
            if (kind == GX_BIAS) {      /* hb: x + b rounded to 16 bits, above */
                GX_FN(lut16)(T, hb, (uint16_t *)out + i0, m);
                continue;
            }
            GX_FN(lut16)(T, (const uint16_t *)in[0] + i0, hb, m);
            widen(hb, ob, m);
            _Pragma("omp simd")
            for (int j = 0; j < m; j++) ob[j] = ob[j] * b[1][j];
            narrow(ob, (uint16_t *)out + i0, m);
            continue;
        }
        const void *p[2] = {b[0], b[1]};
        k32(p, ob, m);
        if (kind == GX_GATE) {      /* BASE(gate) rounded to 16 bits, times up */
            narrow(ob, hb, m);
            widen(hb, ob, m);
            _Pragma("omp simd")
            for (int j = 0; j < m; j++) ob[j] = ob[j] * b[1][j];
        }
        narrow(ob, (uint16_t *)out + i0, m);
    }
}
#define GX_NARROW_ROWS(ID, NAME, KERNEL, NIN, KIND, BASE, DOC)              \
    static void GX_FN(KERNEL##_f16)(const void *const *in, void *out, gx_intp n) \
    {                                                                       \
        GX_FN(narrow_run)(GX_FN(h2f), GX_FN(f2h), KIND, BASE, NIN, in, out, n); \
    }                                                                       \
    static void GX_FN(KERNEL##_bf16)(const void *const *in, void *out, gx_intp n) \
    {                                                                       \
        GX_FN(narrow_run)(GX_FN(b2f), GX_FN(f2b), KIND, BASE, NIN, in, out, n); \
    }
GX_OPS(GX_NARROW_ROWS)
#undef GX_NARROW_ROWS

#undef GX_UNARY
#undef GX_STREAM
#undef GX_BINARY
#undef GX_BIASED
#undef GX_BIASED_ALL
#undef GX_GATED
#undef GX_DGATED
#undef GX_DGATED_ALL
#undef GX_SPLIT
#undef GX_FULL_FN
#undef GX_SPLIT_PATCH
#undef GX_PACK_ONE
#undef GX_PACK_U
#undef GX_PACK_SLACK
#undef GX_ID
#undef GX_BN
