/*
 * simd/avx2.h -- the primitives of the AVX2 path (AVX2, FMA, F16C): 8 float
 * or 4 double lanes; a mask is a vector whose lanes' sign bits say yes
 * (what blendv and movemask read).  What each name means is the contract at
 * the top of gx_loops.h; every one is one IEEE operation, an exact table
 * fetch or an exact select.
 */
#ifndef GX_ISA
#error "src/simd/avx2.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif
#include <immintrin.h>

#define GX_VEC 1

/* ----------------------------------------------------- float32 lanes -- */
#define GX_F32_W 8
#define GX_F32_V __m256
#define GX_F32_I __m256i
#define GX_F32_M __m256
#define GX_F32_LOAD(p) _mm256_loadu_ps(p)
#define GX_F32_STORE(p, v) _mm256_storeu_ps(p, v)
#define GX_F32_SET(f) _mm256_set1_ps(f)
#define GX_F32_ADD(a, b) _mm256_add_ps(a, b)
#define GX_F32_SUB(a, b) _mm256_sub_ps(a, b)
#define GX_F32_MUL(a, b) _mm256_mul_ps(a, b)
#define GX_F32_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define GX_F32_FMS(a, b, c) _mm256_fmsub_ps(a, b, c)
#define GX_F32_NEG(v) _mm256_xor_ps(v, _mm256_set1_ps(-0.0f))    /* this header's own, for SELNEG */
#define GX_F32_ABSMIN(x, X) _mm256_min_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), X)
#define GX_F32_LO16(v) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(v), 16))
/* The float32 table loops use the 8-piece tables (gx_lut8.h): one vpermps
 * fetches a coefficient for 8 lanes (a 32-entry table took four and three
 * blends, a gather a quarter of that speed).  The index is t's bits capped
 * at the magic's + 7; vpermps reads their low 3 bits, n's. */
#define GX_F32_TABLES8 1
#define GX_F32_INDEX8(t) _mm256_min_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(GX_LUT_MAGIC_BITS + 7))
#define GX_F32_TAB8 __m256
#define GX_F32_TAB8_LOAD(r, tab) ((r) = _mm256_load_ps(tab))
#define GX_F32_LUT8_IDX __m256i
#define GX_F32_LUT8_PREP(i) (i)
#define GX_F32_LUT8(r, i) _mm256_permutevar8x32_ps(r, i)
#define GX_F32_HI16(v) _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32((int)0xffff0000u)))
#define GX_F32_SIGNM(x) (x)                                  /* blendv reads the sign bit */
#define GX_F32_SEL(m, a, b) _mm256_blendv_ps(b, a, m)   /* this header's own, for the selects below */
#define GX_F32_SEL1MH(n, h) GX_F32_SEL(n, h, GX_F32_SUB(GX_F32_SET(1.0f), h))
#define GX_F32_SELNEG(n, M) GX_F32_SEL(n, M, GX_F32_NEG(M))
#define GX_F32_MASKMUL(m, src, a, b) GX_F32_SEL(m, GX_F32_MUL(a, b), src)
#define GX_F32_SPECIAL(g) _mm256_or_ps(_mm256_cmp_ps(g, _mm256_setzero_ps(), _CMP_EQ_OQ), \
    _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), g), _mm256_set1_ps(INFINITY), _CMP_NLT_UQ))
#define GX_F32_BAD(x, X) _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), X, _CMP_NLE_UQ)
#define GX_F32_BAD1(x, NX) _mm256_cmp_ps(x, NX, _CMP_NGE_UQ)
#define GX_F32_MBITS(m) ((uint64_t)_mm256_movemask_ps(m))

/* 16-bit data in float32 lanes (exact widening; rounding to nearest even) */
#define GX_VEC16 1
#define GX_RNE16 (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define GX_F32_LOAD_H(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define GX_F32_LOAD_B(p) _mm256_castsi256_ps(_mm256_slli_epi32(                \
    _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define GX_F32_STORE_H(p, v) _mm_storeu_si128((__m128i *)(p), _mm256_cvtps_ph(v, GX_RNE16))
/* gx_float_to_bfloat16 (gx_kernels.h) in integer lanes */
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
#define GX_F32_STORE_B(p, v) GX_FN(vstore_b)(p, v)

/* ----------------------------------------------------- float64 lanes -- */
#define GX_F64_W 4
#define GX_F64_V __m256d
#define GX_F64_M __m256d
#define GX_F64_I __m128i
#define GX_F64_LOAD(p) _mm256_loadu_pd(p)
#define GX_F64_STORE(p, v) _mm256_storeu_pd(p, v)
#define GX_F64_SET(f) _mm256_set1_pd(f)
#define GX_F64_SUB(a, b) _mm256_sub_pd(a, b)
#define GX_F64_FMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define GX_F64_FMS(a, b, c) _mm256_fmsub_pd(a, b, c)
#define GX_F64_ABSMIN(x, X) _mm256_min_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), x), X)
#define GX_F64_INDEX(t) _mm_min_epi32(_mm256_cvttpd_epi32(t), _mm_set1_epi32(15))
/* The float64 table loop fetches by rows (gx_lut64_rows): each lane's piece
 * is a row of 20 doubles, and two columns of the four lanes' rows, k and
 * k + 1 (k even), come from two 128-bit loads per lane pair (rows 0 and 2 in
 * one register, 1 and 3 in another: a load and a vinsertf128 from memory
 * each) and one unpack per column.  Per 4 elements: 20 loads, 20 inserts
 * and 19 unpacks, with no 128-bit permute (port 5 alone on Intel) -- the
 * whole row transposed four columns at a time took 20 loads and 40
 * shuffles.  A column is fetched where the formula first reads it
 * (GX_F64_PIECE; GCC merges the second column's loads with the first's), so
 * only the coefficients in use are live: fetched all at once, the 20
 * columns did not fit in the 16 ymm registers and went through the stack.
 * llvm-mca 19 cycles per 4 elements, all at once -> now: znver3 63.3 ->
 * 55.2, skylake 66.3 -> 61.7, alderlake 59.3 -> 43.5 (bench/README.md).  A
 * gather per coefficient was 2x slower on AMD Zen 5.  The same values, so
 * the same bits as gx_lut64_fwd. */
typedef struct { const double *r[4]; } gx_rows_avx2;
GX_INLINE gx_rows_avx2 gx_rows_fetch_avx2(const gx_lut64_rows *rows, __m128i i)
{
    gx_rows_avx2 v;
    v.r[0] = rows->p[_mm_cvtsi128_si32(i)];
    v.r[1] = rows->p[_mm_extract_epi32(i, 1)];
    v.r[2] = rows->p[_mm_extract_epi32(i, 2)];
    v.r[3] = rows->p[_mm_extract_epi32(i, 3)];
    return v;
}
GX_INLINE __m256d gx_rows_col_avx2(gx_rows_avx2 v, int k)
{
    const int g = k & ~1;
    const __m256d a = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(v.r[0] + g)),
                                           _mm_loadu_pd(v.r[2] + g), 1);
    const __m256d b = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(v.r[1] + g)),
                                           _mm_loadu_pd(v.r[3] + g), 1);
    return (k & 1) ? _mm256_unpackhi_pd(a, b) : _mm256_unpacklo_pd(a, b);
}
#define GX_F64_TABLE_DECL(R, T)                                             \
    const GX_F64_V R##_x = GX_F64_SET((T)->x), R##_k = GX_F64_SET((T)->k);  \
    const GX_F64_V R##_k2 = GX_F64_SET((T)->k2), R##_k3 = GX_F64_SET((T)->k3); \
    const GX_F64_V R##_t0 = GX_F64_SET((T)->t0);                            \
    const gx_lut64_rows *const R##_rows = (T)->rows
#define GX_F64_LUT_IDX gx_rows_avx2
#define GX_F64_PIECES(R, i) gx_rows_fetch_avx2(R##_rows, i)
#define GX_F64_PIECE(R, ix, f) gx_rows_col_avx2(ix, GX_LUT64_COL_##f)
#define GX_F64_PIECE_M(R, ix, q) gx_rows_col_avx2(ix, GX_LUT64_COL_M + (q))
#define GX_F64_SIGNM(x) (x)                                  /* blendv reads the sign bit */
#define GX_F64_SEL1MH(n, h) _mm256_blendv_pd(_mm256_sub_pd(_mm256_set1_pd(1.0), h), h, n)
#define GX_F64_BAD(x, X) _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), x), X, _CMP_NLE_UQ)
#define GX_F64_MBITS(m) ((uint64_t)_mm256_movemask_pd(m))
