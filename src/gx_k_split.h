/*
 * gx_k_split.h -- the split driver, per ISA (included by gx_isa_compile.h):
 * a float32 or float64 kernel that runs a table loop of gx_loops.h where the
 * table covers an element and the general formula of gx_math.h elsewhere
 * (GX_SPLIT), the packing of the elements each formula takes
 * (GX_SPLIT_PATCH, also used by the 16-bit one-pass kernels of
 * gx_k_16bit.h) and the general formula over an array (GX_FULL_FN).
 */
#ifndef GX_ISA
#error "src/gx_k_split.h is not standalone: gx_isa_compile.h includes it once per ISA row (GX_ISA)"
#endif
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
 * NIN = 2: a derivative kernel, g = in[1] travels with x.  The block,
 * GX_BLK(T), and why it is that size: gx_kdefs.h. */
/* ob[j] = N(F(W(xs[j]), W(gs[j]))) for the j < m whose bit in bad equals
 * want (times gs[j] if MUL: a gated form's general-formula elements; W and N
 * widen and narrow 16-bit data, GX_ID otherwise).
 * Packing, with the ISA's GX_FN(pack_idx) where its header has one
 * (GX_HAVE_PACK_IDX: AVX-512), else bit by bit: the first GX_PACK_U set
 * bits of each mask word are taken without a branch (a step past the last
 * set bit writes a clamped index that k does not count, into the buffers'
 * slack) and a loop takes the rest.  Rare elements fall a few to a word:
 * a loop run once per set bit would mispredict its exit once per word,
 * half the cost of the split on normally distributed data. */
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
/* AVX-512: the indices from GX_FN(pack_idx) (simd/avx512.h says how, and
 * what it saves), padded to whole vectors, so the gather and put-back loops
 * below run whole vectors. */
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
/* LUT reads table TAB.  GATE = 1: a gated form, base(x) * u with u = in[1]
 * (NIN = 2): LUT is the G = 2 table loop, which multiplies in its own loop;
 * FULL (the base's general formula) is multiplied after, so every element
 * is (float)base(x) * u. */
#define GX_SPLIT(name, T, NIN, LUT, FULL, GATE, TAB)                        \
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
            const int nbad = GX_FN(LUT)(&(TAB), xs, gs, ob, m, bad);        \
            if (nbad == 0) continue;                                        \
            if (2 * nbad <= m) {                                            \
                GX_SPLIT_PATCH(NIN, FULL(pb, pg, rb, kp), 1, GATE, GX_ID, GX_ID); \
            } else {                                                        \
                FULL(xs, gs, ob, m);                                        \
                if (GATE)                                                   \
                    for (int j = 0; j < m; j++) ob[j] = ob[j] * gs[j];      \
                GX_SPLIT_PATCH(NIN, GX_FN(LUT)(&(TAB), pb, pg, rb, kp, bad2), 0, 0, \
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
