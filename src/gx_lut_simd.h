/*
 * gx_lut_simd.h -- the array kernels of the float32-lane formulas (gx_lut.h),
 * included by gx_kernels_impl.h once per instruction set (GX_ISA_LEVEL 0, 1,
 * 2 = baseline, AVX2+FMA, AVX-512).  The loop body is written once over a few
 * primitives; only the primitives differ per ISA, and each performs one IEEE
 * operation (or an exact table fetch or select), in the order of the scalar
 * twins, so every path gives the scalar twins' bits.
 *
 * Why intrinsics here when the rest is auto-vectorised: the table fetch.
 * GCC does not vectorise the scalar twins at all (the data-dependent index),
 * and a gather per table costs more than the whole formula; AVX-512's
 * two-register permute (vpermt2ps) fetches a 32-entry table for 16 lanes in
 * one instruction, AVX2 in four permutes and three blends (8 lanes).
 */
#if GX_ISA_LEVEL == 2
#define GX_VW 16
#define gx_vf __m512
#define gx_vi __m512i
#define GX_VLOAD(p) _mm512_loadu_ps(p)
#define GX_VSTORE(p, v) _mm512_storeu_ps(p, v)
#define GX_VSET(f) _mm512_set1_ps(f)
#define GX_VABS(v) _mm512_abs_ps(v)
#define GX_VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define GX_VFMS(a, b, c) _mm512_fmsub_ps(a, b, c)     /* a b - c, one rounding */
#define GX_VMUL(a, b) _mm512_mul_ps(a, b)
#define GX_VSUB(a, b) _mm512_sub_ps(a, b)
#define GX_VMIN(a, b) _mm512_min_ps(a, b)      /* a < b ? a : b, as gx_lut_clamp */
/* min(|x|, X) for X > 0 in one instruction (AVX512DQ vrangeps: the smaller
 * magnitude, sign cleared): the bits of GX_VMIN(GX_VABS(x), X), NaN and inf
 * included (checked for every class of input) */
#define GX_VABSMIN(x, X) _mm512_range_ps(x, X, 0x0A)
#define GX_VCASTI(v) _mm512_castps_si512(v)
#define GX_VCASTF(v) _mm512_castsi512_ps(v)
#define GX_VSLLI16(v) _mm512_slli_epi32(v, 16)
/* the piece from t's bits (gx_lut_index): GX_LUT_MAGIC's bits + n, whose low
 * 5 bits are n's (the magic's low 22 bits are zero), capped at piece 31 */
#define GX_VINDEX(t) _mm512_min_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(GX_LUT_MAGIC_BITS + 31))
/* a table lives in two registers, loaded once per call (the compiler cannot
 * hoist the loads itself: the output might alias the table) */
#define gx_vtab struct { __m512 lo, hi; }
#define GX_VTAB_LOAD(r, tab) ((r).lo = _mm512_load_ps(tab), (r).hi = _mm512_load_ps((tab) + 16))
#define GX_VLUT_PREP(i) (void)0
#define GX_VLUT(r, i) _mm512_permutex2var_ps((r).lo, i, (r).hi)
/* the sign mask as GX_VSEL1MH and GX_VSELNEG take it: here the lanes with
 * the sign bit clear (x >= +0), one test instruction */
#define GX_VSIGNM(x) _mm512_testn_epi32_mask(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN))
/* bits of the elements gx_lut_ok rejects: |x| > X (the table's T->x), or NaN;
 * GX_VBAD1: x < -X or NaN (the forward GELU tables, xp = inf) */
#define GX_VBAD(x, X) ((uint64_t)_mm512_cmp_ps_mask(_mm512_abs_ps(x), X, _CMP_NLE_UQ))
#define GX_VBAD1(x, NX) ((uint64_t)_mm512_cmp_ps_mask(x, NX, _CMP_NGE_UQ))
#define gx_vmask __mmask16
#define GX_VSEL(m, a, b) _mm512_mask_blend_ps(m, b, a)          /* m ? a : b */
/* g is +-0, +-inf or NaN (fpclass: QNaN, +0, -0, +inf, -inf, SNaN) */
#define GX_VSPECIAL(g) _mm512_fpclass_ps_mask(g, 0x9f)
#define GX_VADD(a, b) _mm512_add_ps(a, b)
#define GX_VNEG(v) _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi32((int)0x80000000u)))
/* selects folded into masked operations (one instruction instead of two),
 * p = GX_VSIGNM(x):  x < 0 ? h : 1 - h,   x < 0 ? M : -M,   m ? a b : src */
#define GX_VSEL1MH(p, h) _mm512_mask_sub_ps(h, p, _mm512_set1_ps(1.0f), h)
#define GX_VSELNEG(p, M) _mm512_mask_xor_ps(M, p, M, _mm512_set1_ps(-0.0f))
#define GX_VMASKMUL(m, src, a, b) _mm512_mask_mul_ps(src, m, a, b)
#elif GX_ISA_LEVEL == 1
#define GX_VW 8
#define gx_vf __m256
#define gx_vi __m256i
#define GX_VLOAD(p) _mm256_loadu_ps(p)
#define GX_VSTORE(p, v) _mm256_storeu_ps(p, v)
#define GX_VSET(f) _mm256_set1_ps(f)
#define GX_VABS(v) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v)
#define GX_VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define GX_VFMS(a, b, c) _mm256_fmsub_ps(a, b, c)
#define GX_VMUL(a, b) _mm256_mul_ps(a, b)
#define GX_VSUB(a, b) _mm256_sub_ps(a, b)
#define GX_VMIN(a, b) _mm256_min_ps(a, b)
#define GX_VABSMIN(x, X) GX_VMIN(GX_VABS(x), X)
#define GX_VCASTI(v) _mm256_castps_si256(v)
#define GX_VCASTF(v) _mm256_castsi256_ps(v)
#define GX_VSLLI16(v) _mm256_slli_epi32(v, 16)
#define GX_VINDEX(t) _mm256_min_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(GX_LUT_MAGIC_BITS + 31))
/* A 32-entry table for 8 lanes: AVX2's permute reaches 8 entries, so four
 * permutes (the low 3 index bits) and three blends on index bits 3 and 4,
 * shifted into the sign bits once per vector (GX_VLUT_PREP).  A gather per
 * table ran at a quarter of this speed. */
#define gx_vtab struct { const float *p; }
#define GX_VTAB_LOAD(r, tab) ((r).p = (tab))
#define GX_VLUT_PREP(i)                                                     \
    const __m256 b3_ = _mm256_castsi256_ps(_mm256_slli_epi32(i, 28));       \
    const __m256 b4_ = _mm256_castsi256_ps(_mm256_slli_epi32(i, 27))
#define GX_VLUT(r, i) gx_lut32_avx2((r).p, i, b3_, b4_)
static inline __m256 gx_lut32_avx2(const float *t, __m256i i, __m256 b3, __m256 b4)
{
    __m256 a = _mm256_permutevar8x32_ps(_mm256_load_ps(t), i);
    __m256 b = _mm256_permutevar8x32_ps(_mm256_load_ps(t + 8), i);
    __m256 c = _mm256_permutevar8x32_ps(_mm256_load_ps(t + 16), i);
    __m256 d = _mm256_permutevar8x32_ps(_mm256_load_ps(t + 24), i);
    return _mm256_blendv_ps(_mm256_blendv_ps(a, b, b3), _mm256_blendv_ps(c, d, b3), b4);
}
#define gx_vmask __m256
#define GX_VSIGNM(x) (x)                                         /* blendv reads the sign bit */
#define GX_VBAD(x, X) ((uint64_t)_mm256_movemask_ps(_mm256_cmp_ps(                    \
    _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), X, _CMP_NLE_UQ)))
#define GX_VBAD1(x, NX) ((uint64_t)_mm256_movemask_ps(_mm256_cmp_ps(x, NX, _CMP_NGE_UQ)))
#define GX_VSEL(m, a, b) _mm256_blendv_ps(b, a, m)
#define GX_VSPECIAL(g) _mm256_or_ps(_mm256_cmp_ps(g, _mm256_setzero_ps(), _CMP_EQ_OQ), \
    _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), g), _mm256_set1_ps(INFINITY), _CMP_NLT_UQ))
#define GX_VADD(a, b) _mm256_add_ps(a, b)
#define GX_VNEG(v) _mm256_xor_ps(v, _mm256_set1_ps(-0.0f))
#define GX_VSEL1MH(n, h) GX_VSEL(n, h, GX_VSUB(GX_VSET(1.0f), h))
#define GX_VSELNEG(n, M) GX_VSEL(n, M, GX_VNEG(M))
#define GX_VMASKMUL(m, src, a, b) GX_VSEL(m, GX_VMUL(a, b), src)
#endif

#ifdef GX_VW
/* The tables of one gx_lut, ready for GX_VLUT, and its range constants. */
#define GX_VTABS_DECL(R, T)                                                 \
    const gx_vf R##x = GX_VSET((T)->x), R##nx = GX_VSET(-(T)->x), R##xc = GX_VSET((T)->xc); \
    const gx_vf R##k = GX_VSET((T)->k), R##k2 = GX_VSET((T)->k2);          \
    gx_vtab R##m[5], R##m5c, R##m6h;                                        \
    for (int q_ = 0; q_ < 5; q_++) GX_VTAB_LOAD(R##m[q_], (T)->m[q_]);      \
    GX_VTAB_LOAD(R##m5c, (T)->m5c);                                         \
    GX_VTAB_LOAD(R##m6h, (T)->m6h)
/* the low 16 bits of each lane's entry shifted up (gx_lut_lo16): c, H */
#define GX_VLO16(E) GX_VCASTF(GX_VSLLI16(GX_VCASTI(E)))
/* M_i(d) for a vector: the same Horner steps as gx_lut_poly, from the
 * entries E5 (m_5 | c) and E6 (m_6 | H) already fetched.  S (the sigmoid
 * family's tables, degree 5) starts at m_5, as gx_lut_poly does. */
#define GX_VPOLY(R, i, d, E5, E6, S)                                       \
    GX_VFMA(GX_VFMA(GX_VFMA(GX_VFMA(GX_VFMA(                                \
        (S) ? (E5) : GX_VFMA(E6, d, E5),                                    \
        d, GX_VLUT(R##m[4], i)), d,                                         \
        GX_VLUT(R##m[3], i)), d, GX_VLUT(R##m[2], i)), d,                   \
        GX_VLUT(R##m[1], i)), d, GX_VLUT(R##m[0], i))

/* One vector of gx_lut_fwd (G = 0 or 2) or gx_lut_grad (G = 1); S = 1 for the
 * sigmoid family's tables (k2 = 0: t = fma(a, k, GX_LUT_MAGIC), which is
 * fma(a, fma(a, 0, k), GX_LUT_MAGIC) exactly; m_6 = 0, see GX_VPOLY). */
#define GX_LUT_BODY(R, xv, gv, G, S, res)                                   \
    do {                                                                    \
        gx_vf a_ = GX_VABSMIN(xv, R##xc);                /* gx_lut_clamp */ \
        gx_vf t_ = (S) ? GX_VFMA(a_, R##k, GX_VSET(GX_LUT_MAGIC))          \
                       : GX_VFMA(a_, GX_VFMA(a_, R##k2, R##k), GX_VSET(GX_LUT_MAGIC)); \
        gx_vi i_ = GX_VINDEX(t_);                                           \
        GX_VLUT_PREP(i_);                                                   \
        const gx_vf e5_ = GX_VLUT(R##m5c, i_), e6_ = GX_VLUT(R##m6h, i_);   \
        gx_vf M_ = GX_VPOLY(R, i_, GX_VSUB(a_, GX_VLO16(e5_)), e5_, e6_, S); \
        gx_vf h_ = GX_VLO16(e6_);                                         \
        gx_vmask n_ = GX_VSIGNM(xv);                                        \
        gx_vf B_ = GX_VSEL1MH(n_, h_);                                      \
        if ((G) == 1) {                                                     \
            gx_vf sM_ = GX_VSELNEG(n_, M_);                                 \
            res = GX_VFMA(B_, gv, GX_VMUL(sM_, gv));                        \
            res = GX_VMASKMUL(GX_VSPECIAL(gv), res, GX_VADD(B_, sM_), gv);  \
        } else {                                                            \
            res = GX_VFMS(xv, B_, M_);                                      \
        }                                                                   \
    } while (0)
#endif

/* o[j] = gelu(x[j]) (G = 0), gelu'(x[j]) g[j] (G = 1) or gelu(x[j]) * g[j]
 * (G = 2: a gated form, the rounded result times up, so bit-identical to
 * the unfused product) from table T for the
 * n <= GX_SPLIT_B elements at x (and g); bit j of bad[j / 64] is set for the
 * elements the table does not cover (!gx_lut_ok), whose
 * o[j] the caller overwrites.  The test rides along in the vector loop, so the
 * split costs no separate pass over the data. */
#define GX_LUT_ARRAY(fname, G, S)                                           \
static GX_NOINLINE int GX_FN(fname)(const gx_lut *T, const float *x, const float *g, \
                                    float *o, int n, uint64_t *bad)         \
{                                                                           \
    int nb_ = 0;                                                            \
    GX_LUT_LOOP(G, S)                                                       \
    return nb_;                                                             \
}
#ifdef GX_VW
#define GX_LUT_LOOP(G, S)                                                   \
    GX_VTABS_DECL(R, T);                                                    \
    for (int w = 0; w < (n + 63) / 64; w++) bad[w] = 0;                     \
    for (int j = 0; j < n; j += GX_VW) {                                    \
        gx_vf r, xv, gv;                                                    \
        float xb[GX_VW], gb[GX_VW], ob[GX_VW];                              \
        const int full = j + GX_VW <= n;                                    \
        if (j % 16 == 0) {      /* GX_PREFETCH: a line of each array ahead */ \
            GX_PREFETCH(x + j, GX_PF_BYTES);                                \
            if (G) GX_PREFETCH(g + j, GX_PF_BYTES);                         \
            GX_PREFETCH(o + j, GX_PF_BYTES);                                \
        }                                                                   \
        if (full) {                                                         \
            xv = GX_VLOAD(x + j);                                           \
            gv = G ? GX_VLOAD(g + j) : xv;                                  \
        } else {                /* the last partial vector, via a padded copy */ \
            for (int q = 0; q < GX_VW; q++) {                               \
                xb[q] = j + q < n ? x[j + q] : 0.0f;                        \
                gb[q] = G && j + q < n ? g[j + q] : 0.0f;                   \
            }                                                               \
            xv = GX_VLOAD(xb);                                              \
            gv = GX_VLOAD(gb);                                              \
        }                                                                   \
        GX_LUT_BODY(R, xv, gv, G, S, r);                                    \
        if ((G) == 2) r = GX_VMUL(r, gv);                                   \
        /* the forward GELU tables (lut_fwd, lut_gate) cover x > 0 whole */ \
        uint64_t b = ((G) != 1 && !(S)) ? GX_VBAD1(xv, Rnx) : GX_VBAD(xv, Rx); \
        bad[j / 64] |= b << (j % 64);                                       \
        nb_ += GX_POPCNT64(b);  /* padded lanes (0) are never flagged */    \
        if (full) {                                                         \
            GX_VSTORE(o + j, r);                                            \
        } else {                                                            \
            GX_VSTORE(ob, r);                                               \
            memcpy(o + j, ob, (size_t)(n - j) * sizeof(float));             \
        }                                                                   \
    }                                                                       \
    if (n % 64) bad[(n - 1) / 64] &= ((uint64_t)1 << (n % 64)) - 1u;
#else
#define GX_LUT_LOOP(G, S)                                                   \
    for (int w = 0; w < (n + 63) / 64; w++) bad[w] = 0;                     \
    for (int j = 0; j < n; j++) {                                           \
        o[j] = (G) == 1 ? gx_lut_grad(T, x[j], g[j])                        \
             : ((G) == 2 ? gx_lut_fwd(T, x[j]) * g[j] : gx_lut_fwd(T, x[j])); \
        int ok = gx_lut_ok(T, x[j]);                                           \
        bad[j / 64] |= (uint64_t)!ok << (j % 64);                           \
        nb_ += !ok;                                                         \
    }
#endif
GX_LUT_ARRAY(lut_fwd, 0, 0)
GX_LUT_ARRAY(lut_grad, 1, 0)
GX_LUT_ARRAY(sig_fwd, 0, 1)        /* the sigmoid family's tables (SiLU, quick GELU) */
GX_LUT_ARRAY(sig_grad, 1, 1)
GX_LUT_ARRAY(lut_gate, 2, 0)       /* the gated forms: times up in the same loop */
GX_LUT_ARRAY(sig_gate, 2, 1)

/* The table loops on 16-bit arrays (x, for a derivative g, and the result
 * float16 or bfloat16): each vector is widened in registers (exact), runs the float32
 * body above, and is rounded back to 16 bits in registers, by the very
 * rounding of the block pipeline's narrowing (vcvtps2ph for float16, the
 * round-to-nearest-even of gx_float_to_bfloat16 for bfloat16): the same bits
 * as widening a block, running lut_grad and narrowing it (gx_kernels_impl.h,
 * narrow_run), in one pass over the data.  The caller (GX_SPLIT16) overwrites
 * the elements flagged in bad. */
#ifdef GX_VW
#define GX_RNE16 (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#if GX_ISA_LEVEL == 2
#define GX_VLOAD_H(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define GX_VLOAD_B(p) _mm512_castsi512_ps(_mm512_slli_epi32(                      \
    _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define GX_VSTORE_H(p, v) _mm256_storeu_si256((__m256i *)(p), _mm512_cvtps_ph(v, GX_RNE16))
static inline void GX_FN(vstore_b)(uint16_t *p, __m512 v)
{
    const __m512i u = _mm512_castps_si512(v), hi = _mm512_srli_epi32(u, 16);
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                                  _mm512_and_si512(hi, _mm512_set1_epi32(1)))), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                  _mm512_set1_epi32(0x7f800000));
    r = _mm512_mask_or_epi32(r, nan, hi, _mm512_set1_epi32(0x40));
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(r));
}
/* GX_VSTORE_BN: the same bits with AVX512-BF16's vcvtneps2bf16, one
 * instruction for the nine above (CPUs that have it: gx_bf16cvt, a run-time
 * choice in gx_kernels.c).  It flushes float32 subnormals to zero, so a
 * vector holding one (a result below 2^-126 in magnitude: never in ordinary
 * data) takes vstore_b; on every other value, NaN payloads included, its
 * bits are vstore_b's (compared on all 2^32 float32 values, AMD Zen 5). */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 10)
#define GX_HAVE_BF16CVT 1
#define GX_BF16_TARGET __attribute__((target("avx512bf16")))
static inline GX_BF16_TARGET void GX_FN(vstore_bn)(uint16_t *p, __m512 v)
{
    if (_mm512_fpclass_ps_mask(v, 0x20)) {         /* +-subnormal */
        GX_FN(vstore_b)(p, v);
        return;
    }
    const __m256bh r = _mm512_cvtneps_pbh(v);
    _mm256_storeu_si256((__m256i *)p, (__m256i)r);
}
#define GX_VSTORE_BN(p, v) GX_FN(vstore_bn)(p, v)
#endif
#else
#define GX_VLOAD_H(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define GX_VLOAD_B(p) _mm256_castsi256_ps(_mm256_slli_epi32(                      \
    _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define GX_VSTORE_H(p, v) _mm_storeu_si128((__m128i *)(p), _mm256_cvtps_ph(v, GX_RNE16))
static inline void GX_FN(vstore_b)(uint16_t *p, __m256 v)
{
    const __m256i u = _mm256_castps_si256(v), hi = _mm256_srli_epi32(u, 16);
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff),
                                  _mm256_and_si256(hi, _mm256_set1_epi32(1)))), 16);
    /* |u| <= 0x7fffffff, so the signed compare is the unsigned one */
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                           _mm256_set1_epi32(0x7f800000));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), nan);
    r = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);   /* r <= 0xffff */
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(r));
}
#endif
#define GX_VSTORE_B(p, v) GX_FN(vstore_b)(p, v)
#define GX_LUT16_ARRAY(fname, G, S, LD, ST) GX_LUT16_ARRAY_A(fname, G, S, LD, ST, )
#define GX_LUT16_ARRAY_A(fname, G, S, LD, ST, ATTR)                         \
static GX_NOINLINE ATTR int GX_FN(fname)(const gx_lut *T, const uint16_t *x, const uint16_t *g, \
                                    uint16_t *o, int n, uint64_t *bad)      \
{                                                                           \
    int nb_ = 0;                                                            \
    GX_VTABS_DECL(R, T);                                                    \
    (void)Rnx;                                                              \
    for (int w = 0; w < (n + 63) / 64; w++) bad[w] = 0;                     \
    for (int j = 0; j < n; j += GX_VW) {                                    \
        gx_vf r, xv, gv;                                                    \
        uint16_t xb[GX_VW], gb[GX_VW], ob[GX_VW];                           \
        const uint16_t *xs = x + j, *gs = (G) ? g + j : xs;                 \
        const int full = j + GX_VW <= n;                                    \
        if (j % 32 == 0) {      /* GX_PREFETCH: a line of each array ahead */ \
            GX_PREFETCH(x + j, GX_PF_BYTES);                                \
            if (G) GX_PREFETCH(g + j, GX_PF_BYTES);                         \
            GX_PREFETCH(o + j, GX_PF_BYTES);                                \
        }                                                                   \
        if (!full) {            /* the last partial vector, via a padded copy */ \
            for (int q = 0; q < GX_VW; q++) {                               \
                xb[q] = j + q < n ? x[j + q] : 0;                           \
                gb[q] = (G) && j + q < n ? g[j + q] : 0;                    \
            }                                                               \
            xs = xb;                                                        \
            gs = gb;                                                        \
        }                                                                   \
        xv = LD(xs);                                                        \
        gv = (G) ? LD(gs) : xv;                                             \
        GX_LUT_BODY(R, xv, gv, G, S, r);                                    \
        /* as GX_LUT_LOOP: the forward GELU tables cover x > 0 whole */     \
        uint64_t b = ((G) != 1 && !(S)) ? GX_VBAD1(xv, Rnx) : GX_VBAD(xv, Rx); \
        bad[j / 64] |= b << (j % 64);                                       \
        nb_ += GX_POPCNT64(b);  /* padded lanes (0) are never flagged */    \
        if (full) {                                                         \
            ST(o + j, r);                                                   \
        } else {                                                            \
            ST(ob, r);                                                      \
            memcpy(o + j, ob, (size_t)(n - j) * sizeof(uint16_t));          \
        }                                                                   \
    }                                                                       \
    if (n % 64) bad[(n - 1) / 64] &= ((uint64_t)1 << (n % 64)) - 1u;       \
    return nb_;                                                             \
}
#define GX_VW_16 1
GX_LUT16_ARRAY(lut_grad_h, 1, 0, GX_VLOAD_H, GX_VSTORE_H)
GX_LUT16_ARRAY(lut_grad_b, 1, 0, GX_VLOAD_B, GX_VSTORE_B)
GX_LUT16_ARRAY(sig_grad_h, 1, 1, GX_VLOAD_H, GX_VSTORE_H)
GX_LUT16_ARRAY(sig_grad_b, 1, 1, GX_VLOAD_B, GX_VSTORE_B)
GX_LUT16_ARRAY(sig_fwd_h, 0, 1, GX_VLOAD_H, GX_VSTORE_H)      /* forward: g unused (NULL) */
GX_LUT16_ARRAY(sig_fwd_b, 0, 1, GX_VLOAD_B, GX_VSTORE_B)
#ifdef GX_HAVE_BF16CVT
GX_LUT16_ARRAY_A(lut_grad_bn, 1, 0, GX_VLOAD_B, GX_VSTORE_BN, GX_BF16_TARGET)
GX_LUT16_ARRAY_A(sig_grad_bn, 1, 1, GX_VLOAD_B, GX_VSTORE_BN, GX_BF16_TARGET)
GX_LUT16_ARRAY_A(sig_fwd_bn, 0, 1, GX_VLOAD_B, GX_VSTORE_BN, GX_BF16_TARGET)
#endif
#undef GX_LUT16_ARRAY
#undef GX_LUT16_ARRAY_A
#undef GX_VLOAD_H
#undef GX_VLOAD_B
#undef GX_VSTORE_H
#undef GX_VSTORE_B
#undef GX_VSTORE_BN
#undef GX_RNE16
#endif

/* ------------------------------------------------ float64 lanes (gx_lut64.h)
 * GX_FN(lut64_fwd): o[j] = gx_lut64_fwd(T, x[j]) for n <= GX_SPLIT_B
 * elements, bit j of bad[j / 64] set where !gx_lut64_ok (NaN, |x| > T->x).
 * The same operations as the scalar twin, in 8 (AVX-512: a 16-entry table is
 * one vpermt2pd) or 4 (AVX2: a gather) double lanes. */
#if GX_ISA_LEVEL == 2
#define GX_DW 8
#define gx_vd __m512d
#define GX_DLOAD(p) _mm512_loadu_pd(p)
#define GX_DSTORE(p, v) _mm512_storeu_pd(p, v)
#define GX_DSET(f) _mm512_set1_pd(f)
#define GX_DFMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define GX_DSUB(a, b) _mm512_sub_pd(a, b)
#define gx_dtab struct { __m512d lo, hi; }
#define GX_DTAB_LOAD(r, tab) ((r).lo = _mm512_load_pd(tab), (r).hi = _mm512_load_pd((tab) + 8))
#define gx_di __m512i
#define GX_DINDEX(t) _mm512_min_epi64(_mm512_cvttpd_epi64(t), _mm512_set1_epi64(15))
#define GX_DLUT(r, i) _mm512_permutex2var_pd((r).lo, i, (r).hi)
/* B = x < 0 ? h : 1 - h (sign bit clear: 1 - h); r = x B - M, one rounding */
#define GX_DB(x, h) _mm512_mask_sub_pd(h, _mm512_testn_epi64_mask(_mm512_castpd_si512(x), \
    _mm512_set1_epi64(INT64_MIN)), _mm512_set1_pd(1.0), h)
#define GX_DFMS(a, b, c) _mm512_fmsub_pd(a, b, c)
#define GX_DABSMIN(x, X) _mm512_min_pd(_mm512_abs_pd(x), X)
#define GX_DBAD(x, X) ((uint64_t)_mm512_cmp_pd_mask(_mm512_abs_pd(x), X, _CMP_NLE_UQ))
#elif GX_ISA_LEVEL == 1
#define GX_DW 4
#define gx_vd __m256d
#define GX_DLOAD(p) _mm256_loadu_pd(p)
#define GX_DSTORE(p, v) _mm256_storeu_pd(p, v)
#define GX_DSET(f) _mm256_set1_pd(f)
#define GX_DFMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define GX_DSUB(a, b) _mm256_sub_pd(a, b)
#define gx_dtab struct { const double *p; }
#define GX_DTAB_LOAD(r, tab) ((r).p = (tab))
#define gx_di __m128i
#define GX_DINDEX(t) _mm_min_epi32(_mm256_cvttpd_epi32(t), _mm_set1_epi32(15))
#define GX_DLUT(r, i) _mm256_i32gather_pd((r).p, i, 8)
#define GX_DB(x, h) _mm256_blendv_pd(_mm256_sub_pd(_mm256_set1_pd(1.0), h), h, x)   /* sign of x */
#define GX_DFMS(a, b, c) _mm256_fmsub_pd(a, b, c)
#define GX_DABSMIN(x, X) _mm256_min_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), x), X)
#define GX_DBAD(x, X) ((uint64_t)_mm256_movemask_pd(_mm256_cmp_pd(                \
    _mm256_andnot_pd(_mm256_set1_pd(-0.0), x), X, _CMP_NLE_UQ)))
#endif

static GX_NOINLINE int GX_FN(lut64_fwd)(const gx_lut64 *T, const double *x, const double *g,
                                        double *o, int n, uint64_t *bad)
{
    int nb_ = 0;
    (void)g;
    for (int w = 0; w < (n + 63) / 64; w++) bad[w] = 0;
#ifdef GX_DW
    const gx_vd X = GX_DSET(T->x), K = GX_DSET(T->k), K2 = GX_DSET(T->k2), K3 = GX_DSET(T->k3);
    const gx_vd T0 = GX_DSET(T->t0);
    gx_dtab c, h, m[16], m1l;
    GX_DTAB_LOAD(c, T->c);
    GX_DTAB_LOAD(h, T->h);
    GX_DTAB_LOAD(m1l, T->m1l);
    for (int q = 0; q < 16; q++) GX_DTAB_LOAD(m[q], T->m[q]);
    for (int j = 0; j < n; j += GX_DW) {
        gx_vd xv, r;
        double xb[GX_DW], ob[GX_DW];
        const int full = j + GX_DW <= n;
        if (j % 8 == 0) {       /* GX_PREFETCH: a line of each array ahead */
            GX_PREFETCH(x + j, GX_PF_BYTES);
            GX_PREFETCH(o + j, GX_PF_BYTES);
        }
        if (full) {
            xv = GX_DLOAD(x + j);
        } else {                /* the last partial vector, via a padded copy */
            for (int q = 0; q < GX_DW; q++) xb[q] = j + q < n ? x[j + q] : 0.0;
            xv = GX_DLOAD(xb);
        }
        gx_vd a = GX_DABSMIN(xv, X);
        gx_di i = GX_DINDEX(GX_DFMA(a, GX_DFMA(a, GX_DFMA(a, K3, K2), K), T0));
        gx_vd d = GX_DSUB(a, GX_DLUT(c, i));
        gx_vd p = GX_DLUT(m[15], i);
        for (int q = 14; q >= 1; q--) p = GX_DFMA(p, d, GX_DLUT(m[q], i));
        p = GX_DFMA(p, d, GX_DFMA(GX_DLUT(m1l, i), d, GX_DLUT(m[0], i)));
        r = GX_DFMS(xv, GX_DB(xv, GX_DLUT(h, i)), p);
        const uint64_t b = GX_DBAD(xv, X);
        bad[j / 64] |= b << (j % 64);
        nb_ += GX_POPCNT64(b);    /* padded lanes (0) are never flagged */
        if (full) {
            GX_DSTORE(o + j, r);
        } else {
            GX_DSTORE(ob, r);
            memcpy(o + j, ob, (size_t)(n - j) * sizeof(double));
        }
    }
    if (n % 64) bad[(n - 1) / 64] &= ((uint64_t)1 << (n % 64)) - 1u;
#else
    for (int j = 0; j < n; j++) {
        o[j] = gx_lut64_fwd(T, x[j]);
        const int ok = gx_lut64_ok(T, x[j]);
        bad[j / 64] |= (uint64_t)!ok << (j % 64);
        nb_ += !ok;
    }
#endif
    return nb_;
}
#ifdef GX_DW
#undef GX_DW
#undef gx_vd
#undef GX_DLOAD
#undef GX_DSTORE
#undef GX_DSET
#undef GX_DFMA
#undef GX_DSUB
#undef gx_dtab
#undef GX_DTAB_LOAD
#undef gx_di
#undef GX_DINDEX
#undef GX_DLUT
#undef GX_DB
#undef GX_DFMS
#undef GX_DABSMIN
#undef GX_DBAD
#endif
#undef GX_LUT_ARRAY
#undef GX_LUT_LOOP

#ifdef GX_VW
#undef GX_VW
#undef GX_VLOAD
#undef GX_VSTORE
#undef GX_VSET
#undef GX_VABS
#undef GX_VFMA
#undef GX_VFMS
#undef GX_VMUL
#undef GX_VSUB
#undef GX_VMIN
#undef GX_VABSMIN
#undef GX_VCASTI
#undef GX_VCASTF
#undef GX_VSLLI16
#undef GX_VLO16
#undef GX_VINDEX
#undef GX_VLUT
#undef GX_VLUT_PREP
#undef GX_VSIGNM
#undef GX_VBAD
#undef GX_VBAD1
#undef GX_VSEL
#undef GX_VNEG
#undef GX_VSPECIAL
#undef GX_VADD
#undef GX_VSEL1MH
#undef GX_VSELNEG
#undef GX_VMASKMUL
#undef gx_vf
#undef gx_vtab
#undef GX_VTAB_LOAD
#undef GX_VTABS_DECL
#undef gx_vi
#undef gx_vmask
#undef GX_VPOLY
#undef GX_LUT_BODY
#endif
