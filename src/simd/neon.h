/*
 * simd/neon.h -- the primitives of the NEON path (aarch64's Advanced SIMD
 * and FMA, which every aarch64 CPU has): 4 float lanes; a mask is a vector
 * whose lanes are all ones or all zeros (what the compares give and bsl
 * reads).  What each name means is the contract at the top of gx_loops.h;
 * every one is one IEEE operation, an exact table fetch or an exact select.
 *
 * Design:
 * - The float32 table loops use the 8-piece tables of gx_lut8.h, the AVX2
 *   path's, so aarch64 gives the AVX2 path's bits: an 8-entry table is 32
 *   bytes, two q registers, and one tbl (vqtbl2q_u8) fetches a coefficient
 *   for 4 lanes from byte indices 4 i + {0, 1, 2, 3}, made once per vector
 *   (LUT8_PREP).  The 32-piece tables would take a 4-register tbl and a tbx
 *   per coefficient (128 bytes) and 8 registers per table: more than the 32
 *   vector registers hold for the 7 tables.
 * - No movemask: MBITS narrows the mask to 16-bit lanes (vshrn), reads the
 *   64 bits into a general register and gathers bit 16 k to bit k with one
 *   multiply (no two partial products meet: listed at GX_NEON_MBITS);
 *   the integer pipes do it, the vector pipes are the loop's bottleneck.
 * - float64 keeps the scalar twin (GX_F64_TWIN): a 16-entry double table is
 *   128 bytes, and the 19 tables of gx_lut64.h do not fit in registers, so
 *   each fetch for 2 lanes would be two loads and a lane insert; under the
 *   llvm-mca model that is no faster than the scalar twin (bench/README.md,
 *   "aarch64 (NEON): modelled speed").
 * - The sign of zero: a negated fma may be rewritten as one instruction
 *   whose exact zero has the other sign (gx_math.h); FMS below is
 *   fma(a, b, -c), the IEEE a b - c, +-0 included, and NEON's only fused
 *   forms (fmla, fmls) keep it so (tests/test_signed_zeros.py, the qemu
 *   comparison of bench/aarch64.sh).
 * - The rounding of the 16-bit conversions is FPCR's, round to nearest even
 *   unless a caller changed it (as the x86 paths follow MXCSR's for
 *   arithmetic; gx_kernels.c never changes either).
 */
#include <arm_neon.h>

#define GX_VEC 1
#define GX_F64_TWIN 1           /* float64: the scalar twin (above) */

/* ----------------------------------------------------- float32 lanes -- */
#define GX_F32_W 4
#define GX_F32_V float32x4_t
#define GX_F32_I uint32x4_t
#define GX_F32_M uint32x4_t
#define GX_F32_LOAD(p) vld1q_f32(p)
#define GX_F32_STORE(p, v) vst1q_f32(p, v)
#define GX_F32_SET(f) vdupq_n_f32(f)
#define GX_F32_ADD(a, b) vaddq_f32(a, b)
#define GX_F32_SUB(a, b) vsubq_f32(a, b)
#define GX_F32_MUL(a, b) vmulq_f32(a, b)
#define GX_F32_FMA(a, b, c) vfmaq_f32(c, a, b)
#define GX_F32_FMS(a, b, c) vfmaq_f32(vnegq_f32(c), a, b)
#define GX_F32_NEG(v) vnegq_f32(v)
#define GX_NEON_U(v) vreinterpretq_u32_f32(v)
#define GX_NEON_F(u) vreinterpretq_f32_u32(u)
/* min(|x|, X) on the bits: for floats with the sign cleared the integer
 * order is the float order, and every NaN's bits exceed X's, so a NaN gives
 * X, signalling ones too (fminnm would give a NaN for those) */
#define GX_F32_ABSMIN(x, X) GX_NEON_F(vminq_u32(GX_NEON_U(vabsq_f32(x)), GX_NEON_U(X)))
#define GX_F32_LO16(v) GX_NEON_F(vshlq_n_u32(GX_NEON_U(v), 16))
#define GX_F32_TABLES8 1
/* the piece (t's bits capped at the magic's + 7, whose low 3 bits are n)
 * and the byte indices of its entry, 4 n + {0, 1, 2, 3} in each lane */
#define GX_F32_INDEX8(t) vminq_u32(GX_NEON_U(t), vdupq_n_u32(GX_LUT_MAGIC_BITS + 7))
#define GX_F32_TAB8 uint8x16x2_t
#define GX_F32_TAB8_LOAD(r, tab) \
    ((r).val[0] = vld1q_u8((const uint8_t *)(tab)), (r).val[1] = vld1q_u8((const uint8_t *)(tab) + 16))
#define GX_F32_LUT8_PREP(i)                                                 \
    const uint8x16_t gx_bi_ = vreinterpretq_u8_u32(vmlaq_n_u32(vdupq_n_u32(0x03020100u), \
        vandq_u32(i, vdupq_n_u32(7)), 0x04040404u))
#define GX_F32_LUT8(r, i) vreinterpretq_f32_u8(vqtbl2q_u8(r, gx_bi_))
#define GX_F32_HI16(v) GX_NEON_F(vandq_u32(GX_NEON_U(v), vdupq_n_u32(0xffff0000u)))
#define GX_F32_SIGNM(x) vcltzq_s32(vreinterpretq_s32_f32(x))  /* the sign bit, -0 too */
#define GX_F32_SEL(m, a, b) vbslq_f32(m, a, b)
#define GX_F32_SEL1MH(n, h) vbslq_f32(n, h, vsubq_f32(vdupq_n_f32(1.0f), h))
#define GX_F32_SELNEG(n, M) vbslq_f32(n, M, vnegq_f32(M))
#define GX_F32_MASKMUL(m, src, a, b) vbslq_f32(m, vmulq_f32(a, b), src)
/* g == 0, or !(|g| < inf): inf and NaN */
#define GX_F32_SPECIAL(g) vornq_u32(vceqzq_f32(g), vcaltq_f32(g, vdupq_n_f32(INFINITY)))
/* !(|x| <= X) on the bits of |x| (X > 0; NaN's bits exceed X's) */
#define GX_F32_BAD(x, X) vcgtq_u32(GX_NEON_U(vabsq_f32(x)), GX_NEON_U(X))
#define GX_F32_BAD1(x, NX) vmvnq_u32(vcgeq_f32(x, NX))
/* lane k's mask at bit 16 k of the narrowed 64 bits; the multiplier moves
 * bit 16 k to bit 48 + k (shifts 48, 33, 18, 3); the other twelve products
 * land on distinct bits below 48 or beyond 63, so nothing carries into
 * 48..51 */
#define GX_NEON_MBITS(m)                                                    \
    (((vget_lane_u64(vreinterpret_u64_u16(vshrn_n_u32(m, 16)), 0) & 0x0001000100010001u) \
      * 0x0001000200040008u) >> 48)
#define GX_F32_MBITS(m) ((uint64_t)GX_NEON_MBITS(m))
#define GX_F32_MANY(m) (vmaxvq_u32(m) != 0)

/* 16-bit data in float32 lanes (exact widening; FPCR's rounding, nearest
 * even, for float16; bfloat16 by integer operations) */
#define GX_VEC16 1
#define GX_F32_LOAD_H(p) vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)))
#define GX_F32_LOAD_B(p) GX_NEON_F(vshll_n_u16(vld1_u16(p), 16))
#define GX_F32_STORE_H(p, v) vst1_u16(p, vreinterpret_u16_f16(vcvt_f16_f32(v)))
/* gx_float_to_bfloat16 (gx_kernels.h) in integer lanes */
static inline void GX_FN(vstore_b)(uint16_t *p, float32x4_t v)
{
    const uint32x4_t u = GX_NEON_U(v);
    const uint16x4_t hi = vshrn_n_u32(u, 16);
    const uint16x4_t r = vshrn_n_u32(vaddq_u32(u, vaddq_u32(vdupq_n_u32(0x7fff),
                                     vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1)))), 16);
    const uint16x4_t nan = vmovn_u32(vcgtq_u32(vandq_u32(u, vdupq_n_u32(0x7fffffff)),
                                               vdupq_n_u32(0x7f800000)));
    vst1_u16(p, vbsl_u16(nan, vorr_u16(hi, vdup_n_u16(0x40)), r));
}
#define GX_F32_STORE_B(p, v) GX_FN(vstore_b)(p, v)
