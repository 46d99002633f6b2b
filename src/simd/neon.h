/*
 * simd/neon.h -- the primitives of the NEON path (aarch64's Advanced SIMD
 * and FMA, which every aarch64 CPU has): 8 float lanes (a pair of q
 * registers) or 2 double lanes; a mask is a vector whose lanes are all ones
 * or all zeros (what the compares give and bsl reads).  What each function
 * means is the contract at the top of gx_loop_f32.h and gx_loop_f64.h; every
 * one is one IEEE operation, an exact table fetch or an exact select.
 *
 * Design:
 * - The float32 table loops use the 8-piece tables of gx_lut8.h, the AVX2
 *   path's, so aarch64 gives the AVX2 path's bits: an 8-entry table is 32
 *   bytes, two q registers, and one tbl (vqtbl2q_u8) fetches a coefficient
 *   for 4 lanes from byte indices 4 n + {0, 1, 2, 3}, made once per vector
 *   (vf_lut8_prep).  A 32-entry table would take a 4-register tbl and a tbx
 *   per coefficient, and 8 registers per table.
 * - 8 lanes, not 4: with one register per vector the loop was bound by
 *   its fixed cost per vector (constants rematerialised, the mask's bits,
 *   the count, the copies that fmla's overwritten addend needs: the 10
 *   two-register tables and the constants exceed the 32 registers) and by
 *   the Horner chain's latency; the pair pays them once per 8 elements and
 *   runs two chains (llvm-mca, Neoverse N1: 10.3 -> 7.1 cycles per element,
 *   exact GELU).  4 registers (16 lanes) spill: 8.5 on N1.
 * - No movemask: MBITS narrows the 8 masks to bytes (uzp1, xtn), reads the
 *   64 bits into a general register and gathers the bits with one multiply;
 *   NBITS counts them with another.  The integer pipes do it: the vector
 *   pipes are the loop's bottleneck (a popcount would take four of theirs).
 * - float64: 2 lanes, each table entry fetched by two scalar loads (below).
 * - The sign of zero: a negated fma may be rewritten as one instruction
 *   whose exact zero has the other sign (gx_math.h); FMS below is
 *   fma(a, b, -c), the IEEE a b - c, +-0 included, and NEON's only fused
 *   instructions (fmla, fmls) keep it so (tests/test_signed_zeros.py, and the qemu
 *   comparison of bench/aarch64.sh, whose inputs include +-0).
 * - The rounding of the 16-bit conversions is FPCR's, round to nearest even
 *   unless a caller changed it (as the x86 paths follow MXCSR's for
 *   arithmetic; gx_dispatch.c never changes either).
 */
#ifndef GX_ISA
#error "src/simd/neon.h is not standalone: src/isa/neon.c includes it (GX_ISA)"
#endif
#include "gx_base.h"
#include "math/gx_math.h"
#include "math/gx_lut.h"
#include "math/gx_lut64.h"
#include <arm_neon.h>

#define GX_VEC 1
#define GX_VEC16 1
#define GX_F32_PIECES 8         /* the 8-piece tables (gx_lut8.h): the AVX2 path's bits */

/* ----------------------------------------------------- float32 lanes -- */
/* 8 lanes: a vector is a pair of q registers, every primitive one NEON
 * instruction per register (Design, above) */
#define GX_VF_W 8
typedef float32x4x2_t gx_vf;
typedef uint32x4x2_t gx_vmf;
typedef uint32x4x2_t gx_vif;
typedef uint8x16x2_t gx_vf_tab8;         /* an 8-entry table is 32 bytes, one tbl's two registers */
typedef uint8x16x2_t gx_vf_lut8_idx;     /* the byte indices of tbl */

/* the one-register versions */
GX_INLINE uint32x4_t gx_neon_u(float32x4_t v) { return vreinterpretq_u32_f32(v); }
GX_INLINE float32x4_t gx_neon_f(uint32x4_t u) { return vreinterpretq_f32_u32(u); }
GX_INLINE float32x4_t gx_neon_fma(float32x4_t a, float32x4_t b, float32x4_t c) { return vfmaq_f32(c, a, b); }
/* a b - c: fma(a, b, -c) (IEEE's a b - c, the sign of an exact zero too) */
GX_INLINE float32x4_t gx_neon_fms(float32x4_t a, float32x4_t b, float32x4_t c) { return vfmaq_f32(vnegq_f32(c), a, b); }
/* min(|x|, X) on the bits: for floats with the sign cleared the integer
 * order is the float order, and every NaN's bits exceed X's, so a NaN gives
 * X, signalling ones too (fminnm gives a NaN for those) */
GX_INLINE float32x4_t gx_neon_absmin(float32x4_t x, float32x4_t X)
{
    return gx_neon_f(vminq_u32(gx_neon_u(vabsq_f32(x)), gx_neon_u(X)));
}
GX_INLINE float32x4_t gx_neon_lo16(float32x4_t v) { return gx_neon_f(vshlq_n_u32(gx_neon_u(v), 16)); }
GX_INLINE float32x4_t gx_neon_hi16(float32x4_t v) { return gx_neon_f(vandq_u32(gx_neon_u(v), vdupq_n_u32(0xffff0000u))); }
/* the piece: t's bits capped at the magic's + 7, i = GX_LUT_MAGIC_BITS + n */
GX_INLINE uint32x4_t gx_neon_index8(float32x4_t t) { return vminq_u32(gx_neon_u(t), vdupq_n_u32(GX_LUT_MAGIC_BITS + 7)); }
GX_INLINE uint32x4_t gx_neon_signm(float32x4_t x) { return vcltzq_s32(vreinterpretq_s32_f32(x)); }   /* the sign bit, -0 too */
GX_INLINE float32x4_t gx_neon_tail_to_cdf(uint32x4_t n, float32x4_t h) { return vbslq_f32(n, h, vsubq_f32(vdupq_n_f32(1.0f), h)); }
GX_INLINE float32x4_t gx_neon_selneg(uint32x4_t n, float32x4_t M) { return vbslq_f32(n, M, vnegq_f32(M)); }
/* g == 0, or !(|g| < inf): inf and NaN */
GX_INLINE uint32x4_t gx_neon_special(float32x4_t g) { return vornq_u32(vceqzq_f32(g), vcaltq_f32(g, vdupq_n_f32(INFINITY))); }
/* !(|x| <= X) on the bits of |x| (X > 0; NaN's bits exceed X's) */
GX_INLINE uint32x4_t gx_neon_bad(float32x4_t x, float32x4_t X) { return vcgtq_u32(gx_neon_u(vabsq_f32(x)), gx_neon_u(X)); }
GX_INLINE uint32x4_t gx_neon_bad_below(float32x4_t x, float32x4_t NX) { return vmvnq_u32(vcgeq_f32(x, NX)); }
/* the byte indices of lane i's entry, 4 n + {0, 1, 2, 3}, in one
 * multiply-add: i 0x04040404 + 0x03020100 - GX_LUT_MAGIC_BITS 0x04040404
 * (mod 2^32; n <= 7, so no byte carries) */
GX_INLINE uint8x16_t gx_neon_bidx(uint32x4_t i)
{
    return vreinterpretq_u8_u32(vmlaq_n_u32(vdupq_n_u32(0x03020100u - (uint32_t)GX_LUT_MAGIC_BITS * 0x04040404u),
                                            i, 0x04040404u));
}

/* the primitives: the one-register version on each register of the pair */
GX_INLINE gx_vf vf_add(gx_vf a, gx_vf b)
{ gx_vf r; r.val[0] = vaddq_f32(a.val[0], b.val[0]); r.val[1] = vaddq_f32(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vf vf_sub(gx_vf a, gx_vf b)
{ gx_vf r; r.val[0] = vsubq_f32(a.val[0], b.val[0]); r.val[1] = vsubq_f32(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vf vf_mul(gx_vf a, gx_vf b)
{ gx_vf r; r.val[0] = vmulq_f32(a.val[0], b.val[0]); r.val[1] = vmulq_f32(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vf vf_fma(gx_vf a, gx_vf b, gx_vf c)
{ gx_vf r; r.val[0] = gx_neon_fma(a.val[0], b.val[0], c.val[0]); r.val[1] = gx_neon_fma(a.val[1], b.val[1], c.val[1]); return r; }
GX_INLINE gx_vf vf_fms(gx_vf a, gx_vf b, gx_vf c)
{ gx_vf r; r.val[0] = gx_neon_fms(a.val[0], b.val[0], c.val[0]); r.val[1] = gx_neon_fms(a.val[1], b.val[1], c.val[1]); return r; }
GX_INLINE gx_vf vf_absmin(gx_vf a, gx_vf b)
{ gx_vf r; r.val[0] = gx_neon_absmin(a.val[0], b.val[0]); r.val[1] = gx_neon_absmin(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vf vf_lo16(gx_vf a)
{ gx_vf r; r.val[0] = gx_neon_lo16(a.val[0]); r.val[1] = gx_neon_lo16(a.val[1]); return r; }
GX_INLINE gx_vf vf_hi16(gx_vf a)
{ gx_vf r; r.val[0] = gx_neon_hi16(a.val[0]); r.val[1] = gx_neon_hi16(a.val[1]); return r; }
GX_INLINE gx_vif vf_index8(gx_vf a)
{ gx_vif r; r.val[0] = gx_neon_index8(a.val[0]); r.val[1] = gx_neon_index8(a.val[1]); return r; }
GX_INLINE gx_vmf vf_signm(gx_vf a)
{ gx_vmf r; r.val[0] = gx_neon_signm(a.val[0]); r.val[1] = gx_neon_signm(a.val[1]); return r; }
GX_INLINE gx_vf vf_sel(gx_vmf a, gx_vf b, gx_vf c)
{ gx_vf r; r.val[0] = vbslq_f32(a.val[0], b.val[0], c.val[0]); r.val[1] = vbslq_f32(a.val[1], b.val[1], c.val[1]); return r; }
GX_INLINE gx_vf vf_tail_to_cdf(gx_vmf a, gx_vf b)
{ gx_vf r; r.val[0] = gx_neon_tail_to_cdf(a.val[0], b.val[0]); r.val[1] = gx_neon_tail_to_cdf(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vf vf_selneg(gx_vmf a, gx_vf b)
{ gx_vf r; r.val[0] = gx_neon_selneg(a.val[0], b.val[0]); r.val[1] = gx_neon_selneg(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vmf vf_special(gx_vf a)
{ gx_vmf r; r.val[0] = gx_neon_special(a.val[0]); r.val[1] = gx_neon_special(a.val[1]); return r; }
GX_INLINE gx_vmf vf_bad(gx_vf a, gx_vf b)
{ gx_vmf r; r.val[0] = gx_neon_bad(a.val[0], b.val[0]); r.val[1] = gx_neon_bad(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vmf vf_bad_below(gx_vf a, gx_vf b)
{ gx_vmf r; r.val[0] = gx_neon_bad_below(a.val[0], b.val[0]); r.val[1] = gx_neon_bad_below(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vf_lut8_idx vf_lut8_prep(gx_vif a)
{ gx_vf_lut8_idx r; r.val[0] = gx_neon_bidx(a.val[0]); r.val[1] = gx_neon_bidx(a.val[1]); return r; }
GX_INLINE gx_vf vf_set(float f)
{
    gx_vf r;
    r.val[0] = r.val[1] = vdupq_n_f32(f);
    return r;
}
GX_INLINE gx_vf vf_load(const float *p) { return vld1q_f32_x2(p); }
/* two stores, not vst1q_f32_x2: st1's two registers must be consecutive,
 * and GCC 12 met that by a round trip through the stack */
GX_INLINE void vf_store(float *p, gx_vf v) { vst1q_f32(p, v.val[0]); vst1q_f32(p + 4, v.val[1]); }
GX_INLINE gx_vf_tab8 vf_tab8_load(const float *tab) { return vld1q_u8_x2((const uint8_t *)tab); }
GX_INLINE gx_vf vf_lut8(gx_vf_tab8 tab, gx_vf_lut8_idx bi)
{ gx_vf r; r.val[0] = vreinterpretq_f32_u8(vqtbl2q_u8(tab, bi.val[0])); r.val[1] = vreinterpretq_f32_u8(vqtbl2q_u8(tab, bi.val[1])); return r; }
GX_INLINE gx_vf vf_maskmul(gx_vmf m, gx_vf src, gx_vf a, gx_vf b) { return vf_sel(m, vf_mul(a, b), src); }
/* No movemask: the 8 lanes' masks narrowed to bytes (uzp1, xtn), read as
 * 64 bits, one bit of each byte kept: x.  Then one multiply gathers bit
 * 8 k to bit 56 + k (shift 56 - 7 k: no two partial products meet and
 * nothing carries into bits 56..63), and another adds the bytes up (each
 * 0 or 1), the count: the integer pipes do it, the vector pipes are the
 * loop's bottleneck (a popcount would take four vector instructions). */
GX_INLINE uint64_t gx_neon_mbytes(gx_vmf m)
{
    const uint8x8_t b = vmovn_u16(vuzp1q_u16(vreinterpretq_u16_u32(m.val[0]),
                                             vreinterpretq_u16_u32(m.val[1])));
    return vget_lane_u64(vreinterpret_u64_u8(b), 0) & 0x0101010101010101u;
}
GX_INLINE uint64_t vf_mbits(gx_vmf m) { return (gx_neon_mbytes(m) * 0x0102040810204080u) >> 56; }
GX_INLINE int vf_nbits(gx_vmf m, uint64_t b) { (void)b; return (int)((gx_neon_mbytes(m) * 0x0101010101010101u) >> 56); }

/* 16-bit data in float32 lanes (exact widening; FPCR's rounding, nearest
 * even, for float16; bfloat16 by integer operations) */
GX_INLINE gx_vf vf_load_h(const uint16_t *p)
{
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
    gx_vf r;
    r.val[0] = vcvt_f32_f16(vget_low_f16(h));
    r.val[1] = vcvt_high_f32_f16(h);
    return r;
}
GX_INLINE gx_vf vf_load_b(const uint16_t *p)
{
    const uint16x8_t h = vld1q_u16(p);
    gx_vf r;
    r.val[0] = gx_neon_f(vshll_n_u16(vget_low_u16(h), 16));
    r.val[1] = gx_neon_f(vshll_high_n_u16(h, 16));
    return r;
}
GX_INLINE void vf_store_h(uint16_t *p, gx_vf v)
{
    vst1q_u16(p, vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(v.val[0]), v.val[1])));
}
/* 32-bit integer lanes, for the bfloat16 rounding (vf_store_b, derived.h) */
typedef uint32x4x2_t gx_vu;
typedef uint32x4x2_t gx_vmu;
GX_INLINE uint32x4_t gx_neon_shr16(uint32x4_t a) { return vshrq_n_u32(a, 16); }
GX_INLINE gx_vu vf_bits(gx_vf a)
{ gx_vu r; r.val[0] = gx_neon_u(a.val[0]); r.val[1] = gx_neon_u(a.val[1]); return r; }
GX_INLINE gx_vu vu_add(gx_vu a, gx_vu b)
{ gx_vu r; r.val[0] = vaddq_u32(a.val[0], b.val[0]); r.val[1] = vaddq_u32(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vu vu_and(gx_vu a, gx_vu b)
{ gx_vu r; r.val[0] = vandq_u32(a.val[0], b.val[0]); r.val[1] = vandq_u32(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vu vu_or(gx_vu a, gx_vu b)
{ gx_vu r; r.val[0] = vorrq_u32(a.val[0], b.val[0]); r.val[1] = vorrq_u32(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vu vu_shr16(gx_vu a)
{ gx_vu r; r.val[0] = gx_neon_shr16(a.val[0]); r.val[1] = gx_neon_shr16(a.val[1]); return r; }
GX_INLINE gx_vmu vu_gt(gx_vu a, gx_vu b)
{ gx_vmu r; r.val[0] = vcgtq_u32(a.val[0], b.val[0]); r.val[1] = vcgtq_u32(a.val[1], b.val[1]); return r; }
GX_INLINE gx_vu vu_sel(gx_vmu a, gx_vu b, gx_vu c)
{ gx_vu r; r.val[0] = vbslq_u32(a.val[0], b.val[0], c.val[0]); r.val[1] = vbslq_u32(a.val[1], b.val[1], c.val[1]); return r; }
GX_INLINE gx_vu vu_set(uint32_t c)
{
    gx_vu r;
    r.val[0] = r.val[1] = vdupq_n_u32(c);
    return r;
}
GX_INLINE void vu_store16(uint16_t *p, gx_vu v)         /* v <= 0xffff */
{
    vst1q_u16(p, vcombine_u16(vmovn_u32(v.val[0]), vmovn_u32(v.val[1])));
}
#include "derived.h"         /* vf_store_b over the integer lanes above */

/* ----------------------------------------------------- float64 lanes -- */
/* 2 double lanes.  A 16-entry double table is 128 bytes: a tbl would need
 * 8 registers per table, and the 19 columns of gx_lut64.h hold 152, so each
 * entry is fetched by two scalar loads at the lanes' indices and joined
 * (ins).  Still half the scalar twin's model cycles on Neoverse N1, whose
 * Horner chain GCC leaves as a rolled inner loop (bench/README.md). */
#define GX_VD_W 2
typedef float64x2_t gx_vd;
typedef uint64x2_t gx_vmd;
typedef uint64x2_t gx_vid;

GX_INLINE gx_vd vd_load(const double *p) { return vld1q_f64(p); }
GX_INLINE void vd_store(double *p, gx_vd v) { vst1q_f64(p, v); }
GX_INLINE gx_vd vd_set(double f) { return vdupq_n_f64(f); }
GX_INLINE gx_vd vd_sub(gx_vd a, gx_vd b) { return vsubq_f64(a, b); }
GX_INLINE gx_vd vd_fma(gx_vd a, gx_vd b, gx_vd c) { return vfmaq_f64(c, a, b); }
GX_INLINE gx_vd vd_fms(gx_vd a, gx_vd b, gx_vd c) { return vfmaq_f64(vnegq_f64(c), a, b); }
/* |x| > X on the bits (NaN's exceed X's): vd_absmin's select and vd_bad */
GX_INLINE gx_vmd vd_bad(gx_vd x, gx_vd X)
{
    return vcgtq_u64(vreinterpretq_u64_f64(vabsq_f64(x)), vreinterpretq_u64_f64(X));
}
GX_INLINE gx_vd vd_absmin(gx_vd x, gx_vd X) { return vbslq_f64(vd_bad(x, X), X, vabsq_f64(x)); }
/* trunc(t) capped at 15: t >= t0 > 0 and finite (a <= X), so the cap may
 * come first */
GX_INLINE gx_vid vd_index(gx_vd t) { return vcvtq_u64_f64(vminnmq_f64(t, vdupq_n_f64(15.0))); }
GX_INLINE gx_vmd vd_signm(gx_vd x) { return vcltzq_s64(vreinterpretq_s64_f64(x)); }
GX_INLINE gx_vd vd_tail_to_cdf(gx_vmd n, gx_vd h) { return vbslq_f64(n, h, vsubq_f64(vdupq_n_f64(1.0), h)); }
GX_INLINE uint64_t vd_mbits(gx_vmd m) { return (vgetq_lane_u64(m, 0) & 1u) | (vgetq_lane_u64(m, 1) & 2u); }
GX_INLINE int vd_nbits(gx_vmd m, uint64_t b) { (void)m; return (int)((b & 1u) + (b >> 1)); }
/* The fetch: each column's 16 doubles where the table holds them; the two
 * lanes' pieces read once per index vector as scalars */
typedef struct { const double *col[GX_LUT64_NCOL]; } gx_vd_rows;
typedef struct { uint64_t i0, i1; } gx_vd_piece;
GX_INLINE gx_vd_rows vd_rows_load(const gx_lut64 *T)
{
    gx_vd_rows R;
    R.col[GX_LUT64_COL_c] = T->c;
    R.col[GX_LUT64_COL_h] = T->h;
    R.col[GX_LUT64_COL_m1l] = T->m1l;
    for (int q = 0; q < 16; q++) R.col[GX_LUT64_COL_M + q] = T->m[q];
    return R;
}
GX_INLINE gx_vd_piece vd_pieces(const gx_vd_rows *R, gx_vid i)
{
    gx_vd_piece p = {vgetq_lane_u64(i, 0), vgetq_lane_u64(i, 1)};
    (void)R;
    return p;
}
GX_INLINE gx_vd vd_col(const gx_vd_rows *R, gx_vd_piece p, int k)
{
    return vcombine_f64(vld1_f64(R->col[k] + p.i0), vld1_f64(R->col[k] + p.i1));
}
