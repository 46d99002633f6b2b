/*
 * gx_soft_fma.h -- a correctly rounded fused multiply-add in software, for
 * the C libraries whose fma/fmaf are not: mingw-w64's (libmingwex, linked
 * statically into every mingw-w64 build) rounds twice: with it the x86
 * baseline path differs from the Linux build by 1 ulp on every op
 * (bench/windows.sh), and a float test of 2 million random triples gives
 * 575206 wrong results.  Where GX_SOFT_FMA is 1 (mingw-w64), gx_soft_fma.c defines fma
 * and fmaf with these, so the extension links them instead of the
 * library's; the vector paths never call either (under an FMA target the
 * compiler expands the kernels' fma() into the instruction, and
 * auto-vectorises loops of it).  Round to nearest even
 * (the only mode gelu_ext runs in); no floating-point flags are promised.
 * Checked against glibc's fma and fmaf (correctly rounded) by
 * `bits_harness softfma` in bench/windows.sh: random triples of every
 * class, cancellations, subnormal and overflowing results.
 *
 * fmaf: a b is exact in double (24 + 24 bits); a b + c rounded to double
 * with round-to-odd (a double whose last bit records any inexactness) and
 * then to float is correctly rounded, because double has more than 24 + 1
 * bits (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums:
 * proved algorithms using rounding to odd", IEEE Trans. Computers 57(4),
 * 2008).  The rounding error of the double sum comes from TwoSum, exactly.
 *
 * fma: integers.  Each finite operand is m 2^e with m < 2^53; m_a m_b is
 * exact in 128 bits.  Both terms are placed with their top bit at bit 125,
 * the smaller shifted right into the other's scale with the bits it loses
 * ORed into its lowest bit (sticky); then added or subtracted, and the
 * result rounded to 53 bits (fewer below 2^-1022) to nearest even.  The
 * sticky bit cannot spoil a cancellation: a term shifted by 2 or more
 * leaves the sum within a factor 2 of the larger, far above the sticky bit;
 * a shift of 0 or 1 loses nothing (each term's lowest 20 bits are zero).
 * Needs a 128-bit integer type (GCC and clang on 64-bit targets): GX_SOFT_FMA
 * is 0 without one.
 */
#ifndef GX_SOFT_FMA_H
#define GX_SOFT_FMA_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if !defined(GX_SOFT_FMA)
#if defined(__MINGW32__) && defined(__SIZEOF_INT128__)
#define GX_SOFT_FMA 1
#else
#define GX_SOFT_FMA 0
#endif
#endif


static inline float gx_soft_fmaf(float a, float b, float c)
{
    double p = (double)a * (double)b;       /* exact */
    double s = p + (double)c;
    double bp = s - p;
    double e = (p - (s - bp)) + ((double)c - bp);  /* TwoSum: s + e = p + c exactly */
    uint64_t u;
    memcpy(&u, &s, sizeof u);
    if (e != 0 && (u & 1) == 0 && isfinite(s)) {
        /* round to odd: the neighbour of s on e's side */
        u += (e > 0) == (s > 0) ? 1 : (uint64_t)-1;
        memcpy(&s, &u, sizeof s);
    }
    return (float)s;
}

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 gx_u128;

static inline int gx_clz128(gx_u128 x)
{
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    return hi ? __builtin_clzll(hi) : 64 + __builtin_clzll(lo);
}

/* x >> k, the bits shifted out ORed into bit 0 */
static inline gx_u128 gx_shr_sticky(gx_u128 x, int k)
{
    if (k <= 0) return x;
    if (k >= 128) return x != 0;
    return (x >> k) | ((x & (((gx_u128)1 << k) - 1)) != 0);
}

/* finite nonzero d as m 2^e, m < 2^53 */
static inline uint64_t gx_unpack(double d, int *e)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    int E = (int)(u >> 52 & 0x7ff);
    uint64_t m = u & ((1ull << 52) - 1);
    if (E == 0) {
        *e = -1074;
        return m;
    }
    *e = E - 1075;
    return m | 1ull << 52;
}

static inline double gx_soft_fma(double a, double b, double c)
{
    /* IEEE's own answers: a special or zero factor (a b exact or NaN/inf,
     * and a b + c then rounds once), a special c, a zero c (RN(a b), its sign) */
    if (!isfinite(a) || !isfinite(b) || a == 0 || b == 0) return a * b + c;
    if (!isfinite(c)) return c;
    if (c == 0) return a * b;
    int ea, eb, ec;
    uint64_t ma = gx_unpack(a, &ea), mb = gx_unpack(b, &eb), mc = gx_unpack(c, &ec);
    int sp = signbit(a) != signbit(b), sc = signbit(c) != 0;
    gx_u128 P = (gx_u128)ma * mb, C = mc;
    int ep = ea + eb;
    /* top bits at 125: two bits of headroom for the carry of the sum */
    int kp = gx_clz128(P) - 2, kc = gx_clz128(C) - 2;
    P <<= kp;
    ep -= kp;
    C <<= kc;
    ec -= kc;
    int e = ep > ec ? ep : ec;
    P = gx_shr_sticky(P, e - ep);
    C = gx_shr_sticky(C, e - ec);
    gx_u128 R;
    int sr;
    if (sp == sc) {
        R = P + C;
        sr = sp;
    } else if (P >= C) {
        R = P - C;
        sr = sp;
    } else {
        R = C - P;
        sr = sc;
    }
    if (R == 0) return 0.0;                 /* exact cancellation: +0 */
    /* R 2^e: its top bit t; keep 53 bits from there, or down to 2^-1074 */
    int t = 127 - gx_clz128(R);
    int shift = t - 52;
    if (t + e < -1022) shift = -1074 - e;   /* subnormal result */
    uint64_t m;
    if (shift <= 0) {
        m = (uint64_t)(R << -shift);        /* exact */
    } else {
        gx_u128 rem = R & (((gx_u128)1 << shift) - 1), half = (gx_u128)1 << (shift - 1);
        m = (uint64_t)(R >> shift);
        if (rem > half || (rem == half && (m & 1))) m++;
    }
    int E = e + shift;                      /* the result is m 2^E */
    uint64_t u;
    if (m >> 53) {                          /* rounding carried into bit 53 */
        m >>= 1;
        E++;
    }
    if (m >> 52) {                          /* normal: biased exponent E + 1075 */
        if (E + 1075 >= 0x7ff) u = 0x7ffull << 52;     /* overflow: inf */
        else u = (uint64_t)(E + 1075) << 52 | (m & ((1ull << 52) - 1));
    } else {
        u = m;                              /* subnormal (E = -1074) */
    }
    u |= (uint64_t)sr << 63;
    double r;
    memcpy(&r, &u, sizeof r);
    return r;
}
#endif

#endif
