/*
 * simd/avx512.h -- the primitives of the AVX-512 path (AVX512F/DQ/VL/BW,
 * FMA, F16C): 16 float or 8 double lanes, masks in mask registers.  What
 * each function means is the contract at the top of gx_loop_f32.h and
 * gx_loop_f64.h; every one is one IEEE operation, an exact table fetch or
 * an exact select.  Included by src/isa/avx512.c only, which is compiled
 * with the AVX-512 flags.  Beyond the contract: the split's packing
 * (pack_idx) and the 16-bit result table's gathers (gather16).
 */
#ifndef GX_ISA
#error "src/simd/avx512.h is not standalone: src/isa/avx512.c includes it (GX_ISA)"
#endif
#include "gx_base.h"
#include "math/gx_math.h"
#include "math/gx_lut.h"
#include "math/gx_lut64.h"
#include <immintrin.h>

#define GX_VEC 1
#define GX_VEC16 1
#define GX_F32_PIECES 32        /* the 32-piece tables (gx_lut.h), two registers each */

/* ----------------------------------------------------- float32 lanes -- */
#define GX_VF_W 16
typedef __m512 gx_vf;
typedef __mmask16 gx_vmf;
typedef __m512i gx_vif;
/* a 32-entry table lives in two registers, loaded once per call (the
 * compiler cannot hoist the loads itself: the output might alias the
 * table); one vpermt2ps fetches 16 lanes */
typedef struct { __m512 lo, hi; } gx_vf_tab;
typedef __m512i gx_vf_lut_idx;

GX_INLINE gx_vf vf_load(const float *p) { return _mm512_loadu_ps(p); }
GX_INLINE void vf_store(float *p, gx_vf v) { _mm512_storeu_ps(p, v); }
GX_INLINE gx_vf vf_set(float f) { return _mm512_set1_ps(f); }
GX_INLINE gx_vf vf_add(gx_vf a, gx_vf b) { return _mm512_add_ps(a, b); }
GX_INLINE gx_vf vf_sub(gx_vf a, gx_vf b) { return _mm512_sub_ps(a, b); }
GX_INLINE gx_vf vf_mul(gx_vf a, gx_vf b) { return _mm512_mul_ps(a, b); }
GX_INLINE gx_vf vf_fma(gx_vf a, gx_vf b, gx_vf c) { return _mm512_fmadd_ps(a, b, c); }
GX_INLINE gx_vf vf_fms(gx_vf a, gx_vf b, gx_vf c) { return _mm512_fmsub_ps(a, b, c); }
/* min(|x|, X) for X > 0 in one instruction (AVX512DQ vrangeps: the smaller
 * magnitude, sign cleared): the bits of min(abs(x), X) with min's NaN rule
 * (X), inf included (checked for every class of input) */
GX_INLINE gx_vf vf_absmin(gx_vf x, gx_vf X) { return _mm512_range_ps(x, X, 0x0A); }
GX_INLINE gx_vf vf_lo16(gx_vf v)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(v), 16));
}
GX_INLINE gx_vif vf_index(gx_vf t)
{
    return _mm512_min_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(GX_LUT_MAGIC_BITS + 31));
}
GX_INLINE gx_vf_tab vf_tab_load(const float *tab)
{
    gx_vf_tab r = {_mm512_load_ps(tab), _mm512_load_ps(tab + 16)};
    return r;
}
GX_INLINE gx_vf_lut_idx vf_lut_prep(gx_vif i) { return i; }
GX_INLINE gx_vf vf_lut(gx_vf_tab r, gx_vf_lut_idx i) { return _mm512_permutex2var_ps(r.lo, i, r.hi); }
/* the sign mask: here the lanes with the sign bit clear, one test */
GX_INLINE gx_vmf vf_signm(gx_vf x)
{
    return _mm512_testn_epi32_mask(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
}
/* selects folded into masked operations (one instruction instead of two) */
GX_INLINE gx_vf vf_tail_to_cdf(gx_vmf p, gx_vf h) { return _mm512_mask_sub_ps(h, p, _mm512_set1_ps(1.0f), h); }
GX_INLINE gx_vf vf_selneg(gx_vmf p, gx_vf M) { return _mm512_mask_xor_ps(M, p, M, _mm512_set1_ps(-0.0f)); }
GX_INLINE gx_vf vf_maskmul(gx_vmf m, gx_vf src, gx_vf a, gx_vf b) { return _mm512_mask_mul_ps(src, m, a, b); }
/* fpclass: QNaN, +0, -0, +inf, -inf, SNaN */
GX_INLINE gx_vmf vf_special(gx_vf g) { return _mm512_fpclass_ps_mask(g, 0x9f); }
GX_INLINE gx_vmf vf_bad(gx_vf x, gx_vf X) { return _mm512_cmp_ps_mask(_mm512_abs_ps(x), X, _CMP_NLE_UQ); }
GX_INLINE gx_vmf vf_bad_below(gx_vf x, gx_vf NX) { return _mm512_cmp_ps_mask(x, NX, _CMP_NGE_UQ); }
GX_INLINE uint64_t vf_mbits(gx_vmf m) { return (uint64_t)m; }
GX_INLINE int vf_nbits(gx_vmf m, uint64_t b) { (void)m; return GX_POPCNT64(b); }

/* 16-bit data in float32 lanes (exact widening; rounding to nearest even) */
GX_INLINE gx_vf vf_load_h(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
GX_INLINE gx_vf vf_load_b(const uint16_t *p)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}
GX_INLINE void vf_store_h(uint16_t *p, gx_vf v)
{
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
/* 32-bit integer lanes, for the bfloat16 rounding (vf_store_b, derived.h) */
typedef __m512i gx_vu;
typedef __mmask16 gx_vmu;
GX_INLINE gx_vu vf_bits(gx_vf v) { return _mm512_castps_si512(v); }
GX_INLINE gx_vu vu_set(uint32_t c) { return _mm512_set1_epi32((int)c); }
GX_INLINE gx_vu vu_add(gx_vu a, gx_vu b) { return _mm512_add_epi32(a, b); }
GX_INLINE gx_vu vu_and(gx_vu a, gx_vu b) { return _mm512_and_si512(a, b); }
GX_INLINE gx_vu vu_or(gx_vu a, gx_vu b) { return _mm512_or_si512(a, b); }
GX_INLINE gx_vu vu_shr16(gx_vu a) { return _mm512_srli_epi32(a, 16); }
GX_INLINE gx_vmu vu_gt(gx_vu a, gx_vu b) { return _mm512_cmpgt_epu32_mask(a, b); }
GX_INLINE gx_vu vu_sel(gx_vmu m, gx_vu a, gx_vu b) { return _mm512_mask_blend_epi32(m, b, a); }
GX_INLINE void vu_store16(uint16_t *p, gx_vu v) { _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(v)); }
#include "derived.h"         /* vf_store_b over the integer lanes above */
/* vf_store_bn: the same bits with AVX512-BF16's vcvtneps2bf16, one
 * instruction for the nine above, in functions compiled with GX_BN_TARGET
 * and taken where the CPU has it (gx_dispatch.c, the bf16cvt loop choice).
 * It flushes float32 subnormals to zero, so a vector holding one (a result
 * below 2^-126 in magnitude: never in ordinary data) takes vf_store_b; on
 * every other value, NaN payloads included, its bits are vf_store_b's
 * (compared on all 2^32 float32 values, AMD Zen 5). */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 10)
#define GX_HAVE_STORE_BN 1
/* avx512bf16 on top of the unit's flags (GCC and clang add a function's
 * target to the command line's) */
#define GX_BN_TARGET __attribute__((target("avx512bf16")))
static inline GX_BN_TARGET void vf_store_bn(uint16_t *p, gx_vf v)
{
    if (_mm512_fpclass_ps_mask(v, 0x20)) {         /* +-subnormal */
        vf_store_b(p, v);
        return;
    }
    const __m256bh r = _mm512_cvtneps_pbh(v);
    _mm256_storeu_si256((__m256i *)p, (__m256i)r);
}
#endif

/* ----------------------------------------------------- float64 lanes -- */
#define GX_VD_W 8
typedef __m512d gx_vd;
typedef __mmask8 gx_vmd;
typedef __m512i gx_vid;

GX_INLINE gx_vd vd_load(const double *p) { return _mm512_loadu_pd(p); }
GX_INLINE void vd_store(double *p, gx_vd v) { _mm512_storeu_pd(p, v); }
GX_INLINE gx_vd vd_set(double f) { return _mm512_set1_pd(f); }
GX_INLINE gx_vd vd_sub(gx_vd a, gx_vd b) { return _mm512_sub_pd(a, b); }
GX_INLINE gx_vd vd_fma(gx_vd a, gx_vd b, gx_vd c) { return _mm512_fmadd_pd(a, b, c); }
GX_INLINE gx_vd vd_fms(gx_vd a, gx_vd b, gx_vd c) { return _mm512_fmsub_pd(a, b, c); }
GX_INLINE gx_vd vd_absmin(gx_vd x, gx_vd X) { return _mm512_min_pd(_mm512_abs_pd(x), X); }
GX_INLINE gx_vid vd_index(gx_vd t) { return _mm512_min_epi64(_mm512_cvttpd_epi64(t), _mm512_set1_epi64(15)); }
GX_INLINE gx_vmd vd_signm(gx_vd x)
{
    return _mm512_testn_epi64_mask(_mm512_castpd_si512(x), _mm512_set1_epi64(INT64_MIN));
}
GX_INLINE gx_vd vd_tail_to_cdf(gx_vmd p, gx_vd h) { return _mm512_mask_sub_pd(h, p, _mm512_set1_pd(1.0), h); }
GX_INLINE gx_vmd vd_bad(gx_vd x, gx_vd X) { return _mm512_cmp_pd_mask(_mm512_abs_pd(x), X, _CMP_NLE_UQ); }
GX_INLINE uint64_t vd_mbits(gx_vmd m) { return (uint64_t)m; }
GX_INLINE int vd_nbits(gx_vmd m, uint64_t b) { (void)m; return GX_POPCNT64(b); }
/* The fetch: every column of gx_lut64 (GX_LUT64_COL_*) a 16-entry table in
 * two registers, loaded once per call; one vpermt2pd per column. */
typedef struct { __m512d lo, hi; } gx_vd_tab;
typedef struct { gx_vd_tab col[GX_LUT64_NCOL]; } gx_vd_rows;
typedef __m512i gx_vd_piece;
GX_INLINE gx_vd_tab vd_tab_load(const double *tab)
{
    gx_vd_tab r = {_mm512_load_pd(tab), _mm512_load_pd(tab + 8)};
    return r;
}
GX_INLINE gx_vd_rows vd_rows_load(const gx_lut64 *T)
{
    gx_vd_rows R;
    R.col[GX_LUT64_COL_c] = vd_tab_load(T->c);
    R.col[GX_LUT64_COL_h] = vd_tab_load(T->h);
    R.col[GX_LUT64_COL_m1l] = vd_tab_load(T->m1l);
    for (int q = 0; q < 16; q++) R.col[GX_LUT64_COL_M + q] = vd_tab_load(T->m[q]);
    return R;
}
GX_INLINE gx_vd_piece vd_pieces(const gx_vd_rows *R, gx_vid i) { (void)R; return i; }
GX_INLINE gx_vd vd_col(const gx_vd_rows *R, gx_vd_piece i, int k)
{
    return _mm512_permutex2var_pd(R->col[k].lo, i, R->col[k].hi);
}

/* ------------------------------------------------------ split helpers -- */
/* GX_FN(pack_idx): the indices of the wanted elements of a split block
 * (gx_k_split.h, gx_pack), from vpcompressd, 16 mask bits at a time;
 * only the 16-element chunks with a wanted element are visited (vptestmw
 * over the block's mask finds them).  idx[k..kp) repeat idx[k - 1], so the
 * gather and put-back loops run whole vectors (a duplicate writes the same
 * value to the same place): no loop's trip count follows the element count.
 * The per-block costs are paid once per block, so the split's cost falls
 * with the block size (gx_base.h, GX_SPLIT_B); the bit-by-bit packing of
 * the other paths (gx_k_split.h) pays per mask word.  Measured on AMD Zen 5,
 * exact GELU on 2 N(0, 1) data, per 1024 elements: the split added 66 ns to
 * the table loop's 175 with the bit-by-bit packing at 1024- or 4096-element
 * blocks, 66 with this one at 1024, 21 at 4096. */
#define GX_HAVE_PACK_IDX 1

/* The chunks of a split block with a wanted element: bit c of nz[c / 64]
 * for chunk c (elements 16 c .. 16 c + 15).  The mask read in place; bits
 * at or past m cleared, all of them inverted when the good elements are
 * wanted. */
GX_INLINE void gx_avx512_chunks(const uint64_t *bad, int m, int want, uint64_t *nz)
{
    const uint64_t flip = want ? 0 : ~(uint64_t)0;
    for (int u = 0; u < GX_SPLIT_B / 1024; u++) nz[u] = 0;
    for (int v = 0; 64 * v < m; v += 8) {
        __m512i c16 = _mm512_xor_si512(_mm512_loadu_si512((const void *)(bad + v)),
                                       _mm512_set1_epi64((long long)flip));
        if (m - 64 * v < 512) {
            /* r: elements left in each word; r >= 64 keeps every bit,
             * 0 < r < 64 the low r, r <= 0 none */
            const __m512i r = _mm512_sub_epi64(_mm512_set1_epi64(m - 64 * v),
                                               _mm512_setr_epi64(0, 64, 128, 192, 256, 320, 384, 448));
            c16 = _mm512_and_si512(c16, _mm512_mask_blend_epi64(
                _mm512_cmpge_epi64_mask(r, _mm512_set1_epi64(64)),
                _mm512_maskz_srlv_epi64(_mm512_cmpgt_epi64_mask(r, _mm512_setzero_si512()),
                                        _mm512_set1_epi64(-1), _mm512_sub_epi64(_mm512_set1_epi64(64), r)),
                _mm512_set1_epi64(-1)));
        }
        nz[v / 16] |= (uint64_t)_mm512_test_epi16_mask(c16, c16) << (4 * (v % 16));
    }
}

/* Chunk c's 16 wanted bits (read as they lie: x86 is little-endian); bits
 * at or past m are clear in bad, so only inverted ones need clearing. */
GX_INLINE __mmask16 gx_avx512_chunk(const uint64_t *bad, int m, int want, int c)
{
    uint16_t b16;
    memcpy(&b16, (const char *)bad + 2 * c, sizeof b16);
    unsigned mc = want ? b16 : (uint16_t)~b16;
    if (!want && m - 16 * c < 16) mc &= (1u << (m - 16 * c)) - 1u;
    return (__mmask16)mc;
}

static GX_NOINLINE int GX_FN(pack_idx)(const uint64_t *bad, int m, int want, int *idx)
{
    uint64_t nz[GX_SPLIT_B / 1024];
    gx_avx512_chunks(bad, m, want, nz);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    int k = 0;
    for (int u = 0; u < GX_SPLIT_B / 1024; u++) {
        for (uint64_t z = nz[u]; z; z &= z - 1u) {
            const int c = 64 * u + GX_CTZ64(z);
            const __mmask16 mc = gx_avx512_chunk(bad, m, want, c);
            _mm512_storeu_si512((void *)(idx + k),
                _mm512_maskz_compress_epi32(mc, _mm512_add_epi32(iota, _mm512_set1_epi32(16 * c))));
            k += GX_POPCNT64((uint64_t)mc);
        }
    }
    if (k == 0) return 0;
    _mm512_storeu_si512((void *)(idx + k), _mm512_set1_epi32(idx[k - 1]));
    return (k + 15) & ~15;
}

/* GX_FN(pack_f32), GX_FN(put_f32): the float32 split's packing without
 * indices.  pack_f32 compresses the wanted elements of xs (and gs, nin = 2)
 * into pb (pg), 16 at a time (vcompressps in a register, then a plain
 * store: the store-to-memory encoding is slow on AMD), and zeros the next 16,
 * so a formula can run on whole vectors; returns their count.  put_f32
 * expands the results back, chunk by chunk in the same order, with masked
 * stores.  Per chunk with a wanted element a few instructions, against a
 * scalar gather and a vscatterdps per 16 elements through pack_idx's
 * indices: that was a quarter of the float32 split's time on data with a
 * quarter of its elements flagged (Intel Xeon, AVX-512).  Masked loads do
 * not read past the block's end; pb, pg and rb hold GX_PACK_SLACK more.
 * idk (want = 1 only): the elements x >= xg take the identity (gx_k_split.h,
 * gx_identity_f32) here, written to ob and cleared from bad's chunk bits, so
 * neither the formula nor put_f32 sees them. */
#define GX_HAVE_PACK_F32 1
static GX_NOINLINE int GX_FN(pack_f32)(uint64_t *bad, int m, int want, const float *xs, const float *gs,
                                       float *pb, float *pg, uint64_t *nz, float *ob, float xg, int idk)
{
    gx_avx512_chunks(bad, m, want, nz);
    const __m512 vxg = _mm512_set1_ps(xg), one = _mm512_set1_ps(gx_lut_one);
    int k = 0;
    for (int u = 0; u < GX_SPLIT_B / 1024; u++) {
        for (uint64_t z = nz[u]; z; z &= z - 1u) {
            const int c = 64 * u + GX_CTZ64(z);
            __mmask16 mc = gx_avx512_chunk(bad, m, want, c);
            const __m512 xv = _mm512_maskz_loadu_ps(mc, xs + 16 * c);
            const __m512 gv = gs ? _mm512_maskz_loadu_ps(mc, gs + 16 * c) : xv;
            if (idk) {          /* x >= xg: the identity now, and out of the mask put_f32 reads */
                const __mmask16 id = _mm512_mask_cmp_ps_mask(mc, xv, vxg, _CMP_GE_OQ);
                const __m512 v = idk == GX_ID_X ? xv : _mm512_mul_ps(idk == GX_ID_G ? gv : xv, idk == GX_ID_G ? one : gv);
                _mm512_mask_storeu_ps(ob + 16 * c, id, v);
                mc = (__mmask16)(mc & ~id);
                const uint16_t b16 = (uint16_t)mc;
                memcpy((char *)bad + 2 * c, &b16, sizeof b16);
            }
            _mm512_storeu_ps(pb + k, _mm512_maskz_compress_ps(mc, xv));
            if (gs) _mm512_storeu_ps(pg + k, _mm512_maskz_compress_ps(mc, gv));
            k += GX_POPCNT64((uint64_t)mc);
        }
    }
    _mm512_storeu_ps(pb + k, _mm512_setzero_ps());
    if (gs) _mm512_storeu_ps(pg + k, _mm512_setzero_ps());
    return k;
}
static GX_NOINLINE void GX_FN(put_f32)(const uint64_t *bad, int m, int want, const uint64_t *nz, const float *rb,
                                       float *ob)
{
    int k = 0;
    for (int u = 0; u < GX_SPLIT_B / 1024; u++) {
        for (uint64_t z = nz[u]; z; z &= z - 1u) {
            const int c = 64 * u + GX_CTZ64(z);
            const __mmask16 mc = gx_avx512_chunk(bad, m, want, c);
            _mm512_mask_storeu_ps(ob + 16 * c, mc, _mm512_maskz_expand_ps(mc, _mm512_loadu_ps(rb + k)));
            k += GX_POPCNT64((uint64_t)mc);
        }
    }
}

/* GX_FN(gather16): o[j] = T[x[j]] for the first whole vectors of 16 (32-bit
 * gathers at T + x[j], whose low halves are the entries: little-endian x86,
 * and the 16-bit result tables have a spare entry for the last); returns
 * how many it did (gx_k_16bit.h, lut16, does the rest). */
#define GX_HAVE_GATHER16 1
static inline gx_intp GX_FN(gather16)(const uint16_t *T, const uint16_t *x, uint16_t *o, gx_intp n)
{
    gx_intp j = 0;
    for (; j + 16 <= n; j += 16) {
        __m512i ix = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + j)));
        __m512i v = _mm512_i32gather_epi32(ix, (const void *)T, 2);
        _mm256_storeu_si256((__m256i *)(o + j), _mm512_cvtepi32_epi16(v));
    }
    return j;
}
