/*
 * simd/avx2.h -- the primitives of the AVX2 path (AVX2, FMA, F16C): 8 float
 * or 4 double lanes; a mask is a vector whose lanes' sign bits say yes
 * (what blendv and movemask read).  What each function means is the
 * contract at the top of gx_loop_f32.h (float lanes) and gx_loop_f64.h
 * (double lanes); every one is one IEEE operation, an exact table fetch or
 * an exact select.  Included by src/isa/avx2.c only, which is compiled with
 * the AVX2 flags.
 */
#ifndef GX_ISA
#error "src/simd/avx2.h is not standalone: src/isa/avx2.c includes it (GX_ISA)"
#endif
#include "gx_base.h"
#include "math/gx_math.h"
#include "math/gx_lut.h"
#include "math/gx_lut64.h"
#include <immintrin.h>

#define GX_VEC 1
#define GX_VEC16 1
/* The float32 table loops use the 8-piece tables (gx_lut8.h): one vpermps
 * fetches a coefficient for 8 lanes (a 32-entry table took four and three
 * blends, a gather a quarter of that speed). */
#define GX_F32_PIECES 8

/* ----------------------------------------------------- float32 lanes -- */
#define GX_VF_W 8
typedef __m256 gx_vf;
typedef __m256 gx_vmf;           /* the sign bit of each lane */
typedef __m256i gx_vif;
typedef __m256 gx_vf_tab8;       /* an 8-entry table in one register */
typedef __m256i gx_vf_lut8_idx;

GX_INLINE gx_vf vf_load(const float *p) { return _mm256_loadu_ps(p); }
GX_INLINE void vf_store(float *p, gx_vf v) { _mm256_storeu_ps(p, v); }
GX_INLINE gx_vf vf_set(float f) { return _mm256_set1_ps(f); }
GX_INLINE gx_vf vf_add(gx_vf a, gx_vf b) { return _mm256_add_ps(a, b); }
GX_INLINE gx_vf vf_sub(gx_vf a, gx_vf b) { return _mm256_sub_ps(a, b); }
GX_INLINE gx_vf vf_mul(gx_vf a, gx_vf b) { return _mm256_mul_ps(a, b); }
GX_INLINE gx_vf vf_fma(gx_vf a, gx_vf b, gx_vf c) { return _mm256_fmadd_ps(a, b, c); }
GX_INLINE gx_vf vf_fms(gx_vf a, gx_vf b, gx_vf c) { return _mm256_fmsub_ps(a, b, c); }
GX_INLINE gx_vf vf_abs(gx_vf x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
GX_INLINE gx_vf vf_absmin(gx_vf x, gx_vf X) { return _mm256_min_ps(vf_abs(x), X); }
GX_INLINE gx_vf vf_lo16(gx_vf v)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(v), 16));
}
GX_INLINE gx_vf vf_hi16(gx_vf v)
{
    return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32((int)0xffff0000u)));
}
/* the piece: t's bits capped at the magic's + 7; vpermps reads their low 3
 * bits, n's */
GX_INLINE gx_vif vf_index8(gx_vf t)
{
    return _mm256_min_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(GX_LUT_MAGIC_BITS + 7));
}
GX_INLINE gx_vf_tab8 vf_tab8_load(const float *tab) { return _mm256_load_ps(tab); }
GX_INLINE gx_vf_lut8_idx vf_lut8_prep(gx_vif i) { return i; }
GX_INLINE gx_vf vf_lut8(gx_vf_tab8 r, gx_vf_lut8_idx i) { return _mm256_permutevar8x32_ps(r, i); }
GX_INLINE gx_vmf vf_signm(gx_vf x) { return x; }          /* blendv reads the sign bit */
GX_INLINE gx_vf vf_sel(gx_vmf m, gx_vf a, gx_vf b) { return _mm256_blendv_ps(b, a, m); }
GX_INLINE gx_vf vf_tail_to_cdf(gx_vmf n, gx_vf h) { return vf_sel(n, h, vf_sub(vf_set(1.0f), h)); }
GX_INLINE gx_vf vf_selneg(gx_vmf n, gx_vf M)
{
    return vf_sel(n, M, _mm256_xor_ps(M, _mm256_set1_ps(-0.0f)));
}
GX_INLINE gx_vf vf_maskmul(gx_vmf m, gx_vf src, gx_vf a, gx_vf b) { return vf_sel(m, vf_mul(a, b), src); }
GX_INLINE gx_vmf vf_special(gx_vf g)
{
    return _mm256_or_ps(_mm256_cmp_ps(g, _mm256_setzero_ps(), _CMP_EQ_OQ),
                        _mm256_cmp_ps(vf_abs(g), _mm256_set1_ps(INFINITY), _CMP_NLT_UQ));
}
GX_INLINE gx_vmf vf_bad(gx_vf x, gx_vf X) { return _mm256_cmp_ps(vf_abs(x), X, _CMP_NLE_UQ); }
GX_INLINE gx_vmf vf_bad_below(gx_vf x, gx_vf NX) { return _mm256_cmp_ps(x, NX, _CMP_NGE_UQ); }
GX_INLINE uint64_t vf_mbits(gx_vmf m) { return (uint64_t)_mm256_movemask_ps(m); }
GX_INLINE int vf_nbits(gx_vmf m, uint64_t b) { (void)m; return GX_POPCNT64(b); }

/* 16-bit data in float32 lanes (exact widening; rounding to nearest even) */
GX_INLINE gx_vf vf_load_h(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
GX_INLINE gx_vf vf_load_b(const uint16_t *p)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}
GX_INLINE void vf_store_h(uint16_t *p, gx_vf v)
{
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
/* 32-bit integer lanes, for the bfloat16 rounding (vf_store_b, derived.h) */
typedef __m256i gx_vu;
typedef __m256i gx_vmu;
GX_INLINE gx_vu vf_bits(gx_vf v) { return _mm256_castps_si256(v); }
GX_INLINE gx_vu vu_set(uint32_t c) { return _mm256_set1_epi32((int)c); }
GX_INLINE gx_vu vu_add(gx_vu a, gx_vu b) { return _mm256_add_epi32(a, b); }
GX_INLINE gx_vu vu_and(gx_vu a, gx_vu b) { return _mm256_and_si256(a, b); }
GX_INLINE gx_vu vu_or(gx_vu a, gx_vu b) { return _mm256_or_si256(a, b); }
GX_INLINE gx_vu vu_shr16(gx_vu a) { return _mm256_srli_epi32(a, 16); }
/* a, b < 2^31 (the contract), so the signed compare is the unsigned one */
GX_INLINE gx_vmu vu_gt(gx_vu a, gx_vu b) { return _mm256_cmpgt_epi32(a, b); }
GX_INLINE gx_vu vu_sel(gx_vmu m, gx_vu a, gx_vu b) { return _mm256_blendv_epi8(b, a, m); }
GX_INLINE void vu_store16(uint16_t *p, gx_vu v)         /* v <= 0xffff */
{
    const __m256i r = _mm256_permute4x64_epi64(_mm256_packus_epi32(v, v), 0x08);
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(r));
}
#include "derived.h"         /* vf_store_b over the integer lanes above */

/* ----------------------------------------------------- float64 lanes -- */
#define GX_VD_W 4
typedef __m256d gx_vd;
typedef __m256d gx_vmd;
typedef __m128i gx_vid;

GX_INLINE gx_vd vd_load(const double *p) { return _mm256_loadu_pd(p); }
GX_INLINE void vd_store(double *p, gx_vd v) { _mm256_storeu_pd(p, v); }
GX_INLINE gx_vd vd_set(double f) { return _mm256_set1_pd(f); }
GX_INLINE gx_vd vd_sub(gx_vd a, gx_vd b) { return _mm256_sub_pd(a, b); }
GX_INLINE gx_vd vd_fma(gx_vd a, gx_vd b, gx_vd c) { return _mm256_fmadd_pd(a, b, c); }
GX_INLINE gx_vd vd_fms(gx_vd a, gx_vd b, gx_vd c) { return _mm256_fmsub_pd(a, b, c); }
GX_INLINE gx_vd vd_abs(gx_vd x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }
GX_INLINE gx_vd vd_absmin(gx_vd x, gx_vd X) { return _mm256_min_pd(vd_abs(x), X); }
GX_INLINE gx_vid vd_index(gx_vd t) { return _mm_min_epi32(_mm256_cvttpd_epi32(t), _mm_set1_epi32(15)); }
GX_INLINE gx_vmd vd_signm(gx_vd x) { return x; }          /* blendv reads the sign bit */
GX_INLINE gx_vd vd_tail_to_cdf(gx_vmd n, gx_vd h) { return _mm256_blendv_pd(_mm256_sub_pd(_mm256_set1_pd(1.0), h), h, n); }
GX_INLINE gx_vmd vd_bad(gx_vd x, gx_vd X) { return _mm256_cmp_pd(vd_abs(x), X, _CMP_NLE_UQ); }
GX_INLINE uint64_t vd_mbits(gx_vmd m) { return (uint64_t)_mm256_movemask_pd(m); }
GX_INLINE int vd_nbits(gx_vmd m, uint64_t b) { (void)m; return GX_POPCNT64(b); }

/* The float64 table loop fetches by rows (gx_lut64_rows): each lane's piece
 * is a row of 20 doubles, and two columns of the four lanes' rows, k and
 * k + 1 (k even), come from two 128-bit loads per lane pair (rows 0 and 2 in
 * one register, 1 and 3 in another: a load and a vinsertf128 from memory
 * each) and one unpack per column.  Per 4 elements: 20 loads, 20 inserts
 * and 19 unpacks, with no 128-bit permute (port 5 alone on Intel) -- the
 * whole row transposed four columns at a time takes 20 loads and 40
 * shuffles.  A column is fetched where the formula first reads it (vd_col;
 * GCC merges the second column's loads with the first's), so only the
 * coefficients in use are live: fetched all at once, the 20 columns do not
 * fit in the 16 ymm registers and go through the stack.  llvm-mca 19 cycles
 * per 4 elements, all at once against by column: znver3 63.3 against 55.2,
 * skylake 66.3 against 61.7, alderlake 59.3 against 43.5 (bench/README.md).
 * A gather per coefficient is 2x slower on AMD Zen 5.  The same values, so
 * the same bits as gx_lut64_fwd. */
typedef const gx_lut64_rows *gx_vd_rows;
typedef struct { const double *r[4]; } gx_vd_piece;
GX_INLINE gx_vd_rows vd_rows_load(const gx_lut64 *T) { return T->rows; }
GX_INLINE gx_vd_piece vd_pieces(const gx_vd_rows *R, gx_vid i)
{
    gx_vd_piece v;
    v.r[0] = (*R)->p[_mm_cvtsi128_si32(i)];
    v.r[1] = (*R)->p[_mm_extract_epi32(i, 1)];
    v.r[2] = (*R)->p[_mm_extract_epi32(i, 2)];
    v.r[3] = (*R)->p[_mm_extract_epi32(i, 3)];
    return v;
}
GX_INLINE gx_vd vd_col(const gx_vd_rows *R, gx_vd_piece v, int k)
{
    const int g = k & ~1;
    const __m256d a = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(v.r[0] + g)),
                                           _mm_loadu_pd(v.r[2] + g), 1);
    const __m256d b = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(v.r[1] + g)),
                                           _mm_loadu_pd(v.r[3] + g), 1);
    (void)R;
    return (k & 1) ? _mm256_unpackhi_pd(a, b) : _mm256_unpacklo_pd(a, b);
}
