/*
 * simd/neon.h -- the primitives of the NEON path (aarch64's Advanced SIMD
 * and FMA, which every aarch64 CPU has): 8 float lanes (a pair of q
 * registers) or 2 double lanes; a mask is a vector whose lanes are all ones
 * or all zeros (what the compares give and bsl reads).  What each name means
 * is the contract at the top of gx_loops.h; every one is one IEEE operation,
 * an exact table fetch or an exact select.
 *
 * Design:
 * - The float32 table loops use the 8-piece tables of gx_lut8.h, the AVX2
 *   path's, so aarch64 gives the AVX2 path's bits: an 8-entry table is 32
 *   bytes, two q registers, and one tbl (vqtbl2q_u8) fetches a coefficient
 *   for 4 lanes from byte indices 4 n + {0, 1, 2, 3}, made once per vector
 *   (LUT8_PREP).  A 32-entry table would take a 4-register tbl and a tbx
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
 *   forms (fmla, fmls) keep it so (tests/test_signed_zeros.py, and the qemu
 *   comparison of bench/aarch64.sh, whose inputs include +-0).
 * - The rounding of the 16-bit conversions is FPCR's, round to nearest even
 *   unless a caller changed it (as the x86 paths follow MXCSR's for
 *   arithmetic; gx_kernels.c never changes either).
 */
#ifndef GX_ISA
#error "src/simd/neon.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif
#include <arm_neon.h>

#define GX_VEC 1

/* ----------------------------------------------------- float32 lanes -- */
/* 8 lanes: a vector is a pair of q registers, every primitive one NEON
 * instruction per register (Design, above) */
#define GX_F32_W 8
#define GX_F32_V float32x4x2_t
#define GX_F32_I uint32x4x2_t
#define GX_F32_M uint32x4x2_t
/* the pair forms of a 1-, 2- or 3-operand intrinsic */
#define GX_NEON_FN1(name, R, A, f) \
    GX_INLINE R GX_FN(name)(A a) { R r; r.val[0] = f(a.val[0]); r.val[1] = f(a.val[1]); return r; }
#define GX_NEON_FN2(name, R, A, B, f)                                       \
    GX_INLINE R GX_FN(name)(A a, B b)                                       \
    { R r; r.val[0] = f(a.val[0], b.val[0]); r.val[1] = f(a.val[1], b.val[1]); return r; }
#define GX_NEON_FN3(name, R, A, B, C, f)                                    \
    GX_INLINE R GX_FN(name)(A a, B b, C c)                                  \
    {                                                                       \
        R r;                                                                \
        r.val[0] = f(a.val[0], b.val[0], c.val[0]);                         \
        r.val[1] = f(a.val[1], b.val[1], c.val[1]);                         \
        return r;                                                           \
    }
#define GX_NEON_U(v) vreinterpretq_u32_f32(v)
#define GX_NEON_F(u) vreinterpretq_f32_u32(u)
#define GX_NEON_FMA1(a, b, c) vfmaq_f32(c, a, b)
/* a b - c: fma(a, b, -c) (IEEE's a b - c, the sign of an exact zero too) */
#define GX_NEON_FMS1(a, b, c) vfmaq_f32(vnegq_f32(c), a, b)
/* min(|x|, X) on the bits: for floats with the sign cleared the integer
 * order is the float order, and every NaN's bits exceed X's, so a NaN gives
 * X, signalling ones too (fminnm gives a NaN for those) */
#define GX_NEON_ABSMIN1(x, X) GX_NEON_F(vminq_u32(GX_NEON_U(vabsq_f32(x)), GX_NEON_U(X)))
#define GX_NEON_LO161(v) GX_NEON_F(vshlq_n_u32(GX_NEON_U(v), 16))
#define GX_NEON_HI161(v) GX_NEON_F(vandq_u32(GX_NEON_U(v), vdupq_n_u32(0xffff0000u)))
#define GX_NEON_INDEX81(t) vminq_u32(GX_NEON_U(t), vdupq_n_u32(GX_LUT_MAGIC_BITS + 7))
#define GX_NEON_SIGNM1(x) vcltzq_s32(vreinterpretq_s32_f32(x))   /* the sign bit, -0 too */
#define GX_NEON_SEL1MH1(n, h) vbslq_f32(n, h, vsubq_f32(vdupq_n_f32(1.0f), h))
#define GX_NEON_SELNEG1(n, M) vbslq_f32(n, M, vnegq_f32(M))
/* g == 0, or !(|g| < inf): inf and NaN */
#define GX_NEON_SPECIAL1(g) vornq_u32(vceqzq_f32(g), vcaltq_f32(g, vdupq_n_f32(INFINITY)))
/* !(|x| <= X) on the bits of |x| (X > 0; NaN's bits exceed X's) */
#define GX_NEON_BAD1_(x, X) vcgtq_u32(GX_NEON_U(vabsq_f32(x)), GX_NEON_U(X))
#define GX_NEON_BAD11(x, NX) vmvnq_u32(vcgeq_f32(x, NX))
GX_NEON_FN2(v_add, float32x4x2_t, float32x4x2_t, float32x4x2_t, vaddq_f32)
GX_NEON_FN2(v_sub, float32x4x2_t, float32x4x2_t, float32x4x2_t, vsubq_f32)
GX_NEON_FN2(v_mul, float32x4x2_t, float32x4x2_t, float32x4x2_t, vmulq_f32)
GX_NEON_FN3(v_fma, float32x4x2_t, float32x4x2_t, float32x4x2_t, float32x4x2_t, GX_NEON_FMA1)
GX_NEON_FN3(v_fms, float32x4x2_t, float32x4x2_t, float32x4x2_t, float32x4x2_t, GX_NEON_FMS1)
GX_NEON_FN2(v_absmin, float32x4x2_t, float32x4x2_t, float32x4x2_t, GX_NEON_ABSMIN1)
GX_NEON_FN1(v_lo16, float32x4x2_t, float32x4x2_t, GX_NEON_LO161)
GX_NEON_FN1(v_hi16, float32x4x2_t, float32x4x2_t, GX_NEON_HI161)
GX_NEON_FN1(v_index8, uint32x4x2_t, float32x4x2_t, GX_NEON_INDEX81)
GX_NEON_FN1(v_signm, uint32x4x2_t, float32x4x2_t, GX_NEON_SIGNM1)
GX_NEON_FN3(v_sel, float32x4x2_t, uint32x4x2_t, float32x4x2_t, float32x4x2_t, vbslq_f32)
GX_NEON_FN2(v_sel1mh, float32x4x2_t, uint32x4x2_t, float32x4x2_t, GX_NEON_SEL1MH1)
GX_NEON_FN2(v_selneg, float32x4x2_t, uint32x4x2_t, float32x4x2_t, GX_NEON_SELNEG1)
GX_NEON_FN1(v_special, uint32x4x2_t, float32x4x2_t, GX_NEON_SPECIAL1)
GX_NEON_FN2(v_bad, uint32x4x2_t, float32x4x2_t, float32x4x2_t, GX_NEON_BAD1_)
GX_NEON_FN2(v_bad1, uint32x4x2_t, float32x4x2_t, float32x4x2_t, GX_NEON_BAD11)
GX_INLINE float32x4x2_t GX_FN(v_set)(float f)
{
    float32x4x2_t r;
    r.val[0] = r.val[1] = vdupq_n_f32(f);
    return r;
}
#define GX_F32_LOAD(p) vld1q_f32_x2(p)
/* two stores, not vst1q_f32_x2: st1's two registers must be consecutive,
 * and GCC 12 met that by a round trip through the stack */
#define GX_F32_STORE(p, v) (vst1q_f32(p, (v).val[0]), vst1q_f32((p) + 4, (v).val[1]))
#define GX_F32_SET(f) GX_FN(v_set)(f)
#define GX_F32_ADD(a, b) GX_FN(v_add)(a, b)
#define GX_F32_SUB(a, b) GX_FN(v_sub)(a, b)
#define GX_F32_MUL(a, b) GX_FN(v_mul)(a, b)
#define GX_F32_FMA(a, b, c) GX_FN(v_fma)(a, b, c)
#define GX_F32_FMS(a, b, c) GX_FN(v_fms)(a, b, c)
#define GX_F32_ABSMIN(x, X) GX_FN(v_absmin)(x, X)
#define GX_F32_LO16(v) GX_FN(v_lo16)(v)
#define GX_F32_HI16(v) GX_FN(v_hi16)(v)
#define GX_F32_TABLES8 1
/* the piece: t's bits capped at the magic's + 7, i = GX_LUT_MAGIC_BITS + n */
#define GX_F32_INDEX8(t) GX_FN(v_index8)(t)
/* an 8-entry table is 32 bytes, one tbl's two registers */
#define GX_F32_TAB8 uint8x16x2_t
#define GX_F32_TAB8_LOAD(r, tab) ((r) = vld1q_u8_x2((const uint8_t *)(tab)))
/* the byte indices of lane i's entry, 4 n + {0, 1, 2, 3}, in one
 * multiply-add: i 0x04040404 + 0x03020100 - GX_LUT_MAGIC_BITS 0x04040404
 * (mod 2^32; n <= 7, so no byte carries) */
#define GX_NEON_BIDX1(i) vreinterpretq_u8_u32(vmlaq_n_u32(                  \
    vdupq_n_u32(0x03020100u - (uint32_t)GX_LUT_MAGIC_BITS * 0x04040404u), i, 0x04040404u))
GX_NEON_FN1(v_bidx, uint8x16x2_t, uint32x4x2_t, GX_NEON_BIDX1)
GX_INLINE float32x4x2_t GX_FN(v_lut8)(uint8x16x2_t tab, uint8x16x2_t bi)
{
    float32x4x2_t r;
    r.val[0] = vreinterpretq_f32_u8(vqtbl2q_u8(tab, bi.val[0]));
    r.val[1] = vreinterpretq_f32_u8(vqtbl2q_u8(tab, bi.val[1]));
    return r;
}
#define GX_F32_LUT8_IDX uint8x16x2_t
#define GX_F32_LUT8_PREP(i) GX_FN(v_bidx)(i)
#define GX_F32_LUT8(r, p) GX_FN(v_lut8)(r, p)
#define GX_F32_SIGNM(x) GX_FN(v_signm)(x)
#define GX_F32_SEL1MH(n, h) GX_FN(v_sel1mh)(n, h)
#define GX_F32_SELNEG(n, M) GX_FN(v_selneg)(n, M)
#define GX_F32_MASKMUL(m, src, a, b) GX_FN(v_sel)(m, GX_FN(v_mul)(a, b), src)
#define GX_F32_SPECIAL(g) GX_FN(v_special)(g)
#define GX_F32_BAD(x, X) GX_FN(v_bad)(x, X)
#define GX_F32_BAD1(x, NX) GX_FN(v_bad1)(x, NX)
/* No movemask: the 8 lanes' masks narrowed to bytes (uzp1, xtn), read as
 * 64 bits, one bit of each byte kept: x.  Then one multiply gathers bit
 * 8 k to bit 56 + k (shift 56 - 7 k: no two partial products meet and
 * nothing carries into bits 56..63), and another adds the bytes up (each
 * 0 or 1), the count: the integer pipes do it, the vector pipes are the
 * loop's bottleneck (a popcount would take four vector instructions). */
GX_INLINE uint64_t GX_FN(v_mbytes)(uint32x4x2_t m)
{
    const uint8x8_t b = vmovn_u16(vuzp1q_u16(vreinterpretq_u16_u32(m.val[0]),
                                             vreinterpretq_u16_u32(m.val[1])));
    return vget_lane_u64(vreinterpret_u64_u8(b), 0) & 0x0101010101010101u;
}
#define GX_F32_MBITS(m) ((GX_FN(v_mbytes)(m) * 0x0102040810204080u) >> 56)
#define GX_F32_NBITS(m, b) ((int)((GX_FN(v_mbytes)(m) * 0x0101010101010101u) >> 56))

/* 16-bit data in float32 lanes (exact widening; FPCR's rounding, nearest
 * even, for float16; bfloat16 by integer operations) */
#define GX_VEC16 1
GX_INLINE float32x4x2_t GX_FN(v_load_h)(const uint16_t *p)
{
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
    float32x4x2_t r;
    r.val[0] = vcvt_f32_f16(vget_low_f16(h));
    r.val[1] = vcvt_high_f32_f16(h);
    return r;
}
GX_INLINE float32x4x2_t GX_FN(v_load_b)(const uint16_t *p)
{
    const uint16x8_t h = vld1q_u16(p);
    float32x4x2_t r;
    r.val[0] = GX_NEON_F(vshll_n_u16(vget_low_u16(h), 16));
    r.val[1] = GX_NEON_F(vshll_high_n_u16(h, 16));
    return r;
}
GX_INLINE void GX_FN(v_store_h)(uint16_t *p, float32x4x2_t v)
{
    vst1q_u16(p, vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(v.val[0]), v.val[1])));
}
/* gx_float_to_bfloat16 (gx_kernels.h) in integer lanes, 4 at a time */
GX_INLINE uint16x4_t GX_FN(v_bf16)(float32x4_t v)
{
    const uint32x4_t u = GX_NEON_U(v);
    const uint16x4_t hi = vshrn_n_u32(u, 16);
    const uint16x4_t r = vshrn_n_u32(vaddq_u32(u, vaddq_u32(vdupq_n_u32(0x7fff),
                                     vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1)))), 16);
    const uint16x4_t nan = vmovn_u32(vcgtq_u32(vandq_u32(u, vdupq_n_u32(0x7fffffff)),
                                               vdupq_n_u32(0x7f800000)));
    return vbsl_u16(nan, vorr_u16(hi, vdup_n_u16(0x40)), r);
}
#define GX_F32_LOAD_H(p) GX_FN(v_load_h)(p)
#define GX_F32_LOAD_B(p) GX_FN(v_load_b)(p)
#define GX_F32_STORE_H(p, v) GX_FN(v_store_h)(p, v)
#define GX_F32_STORE_B(p, v) \
    vst1q_u16(p, vcombine_u16(GX_FN(v_bf16)((v).val[0]), GX_FN(v_bf16)((v).val[1])))

/* ----------------------------------------------------- float64 lanes -- */
/* 2 double lanes.  A 16-entry double table is 128 bytes: a tbl would need
 * 8 registers per table, and the 19 tables of gx_lut64.h hold 152, so each
 * entry is fetched by two scalar loads at the lanes' indices and joined
 * (ins).  Still half the scalar twin's model cycles on Neoverse N1, whose
 * Horner chain GCC leaves as a rolled inner loop (bench/README.md). */
#define GX_F64_W 2
#define GX_F64_V float64x2_t
#define GX_F64_M uint64x2_t
#define GX_F64_I uint64x2_t
#define GX_F64_LOAD(p) vld1q_f64(p)
#define GX_F64_STORE(p, v) vst1q_f64(p, v)
#define GX_F64_SET(f) vdupq_n_f64(f)
#define GX_F64_SUB(a, b) vsubq_f64(a, b)
#define GX_F64_FMA(a, b, c) vfmaq_f64(c, a, b)
#define GX_F64_FMS(a, b, c) vfmaq_f64(vnegq_f64(c), a, b)
/* |x| > X on the bits (NaN's exceed X's): ABSMIN's select and BAD */
#define GX_NEON_OUT64(x, X) vcgtq_u64(vreinterpretq_u64_f64(vabsq_f64(x)), vreinterpretq_u64_f64(X))
#define GX_F64_ABSMIN(x, X) vbslq_f64(GX_NEON_OUT64(x, X), X, vabsq_f64(x))
/* trunc(t) capped at 15: t >= t0 > 0 and finite (a <= X), so the cap may
 * come first */
#define GX_F64_INDEX(t) vcvtq_u64_f64(vminnmq_f64(t, vdupq_n_f64(15.0)))
#define GX_F64_TAB struct { const double *p; }
#define GX_F64_TAB_LOAD(r, tab) ((r).p = (tab))
/* the two lanes' pieces as scalars, read once per index vector */
typedef struct { uint64_t i0, i1; } gx_neon_idx2;
GX_INLINE gx_neon_idx2 GX_FN(v_idx2)(uint64x2_t i)
{
    gx_neon_idx2 p = {vgetq_lane_u64(i, 0), vgetq_lane_u64(i, 1)};
    return p;
}
#define GX_F64_LUT_IDX gx_neon_idx2
#define GX_F64_LUT_PREP(i) GX_FN(v_idx2)(i)
#define GX_F64_LUT(r, ix) vcombine_f64(vld1_f64((r).p + (ix).i0), vld1_f64((r).p + (ix).i1))
#define GX_F64_SIGNM(x) vcltzq_s64(vreinterpretq_s64_f64(x))
#define GX_F64_SEL1MH(n, h) vbslq_f64(n, h, vsubq_f64(vdupq_n_f64(1.0), h))
#define GX_F64_BAD(x, X) GX_NEON_OUT64(x, X)
#define GX_F64_MBITS(m) ((vgetq_lane_u64(m, 0) & 1u) | (vgetq_lane_u64(m, 1) & 2u))
#define GX_F64_NBITS(m, b) ((int)(((b) & 1u) + ((b) >> 1)))
