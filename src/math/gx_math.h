/*
 * gx_math.h -- the scalar formulas of gelu_ext, each written once.
 *
 * Design:
 * - Every function here is `static inline`, free of libm calls (other than
 *   fma/fabs, which are single instructions where the ISA has them) and free
 *   of real branches (only ternary selects), so the array kernels in
 *   gx_k_ops.h, compiled once per instruction set, inline it and the
 *   compiler vectorises the loop.  The exponential and the normal tail are
 *   therefore our own polynomials (coefficients from src/tables/fit_gx.py).
 * - Built with -ffp-contract=off: no a*b+c is silently fused, so every ISA
 *   path computes the same correctly rounded operations and gives the same
 *   bits; fma() is written out where the error analysis needs it.  Without
 *   FMA hardware fma() is a (correct, slow) libm call and the baseline loop
 *   stays scalar.  Contraction off does not stop one rewrite: a negated
 *   result, -fma(a, b, c), may become one fnmadd, -(a b) - c (GCC on any
 *   FMA target, LLVM on aarch64), equal but for an exact zero, +0 where the
 *   negation gives -0; so no result's sign of zero may hang on one (the
 *   formulas here set +-0 explicitly; the table twins, gx_lut_fwd).
 * - float32 (and float16) results outside the tables of gx_lut.h are
 *   evaluated in double with cheaper polynomials (relative error < 2^-29
 *   before the single final rounding, so <= 0.5 + 1/16 ULP); float64 results
 *   carry the rounding errors that matter as double-double low parts (see
 *   gx_q_parts) and stay below ~1.3 ULP.
 *
 * Public formulas (x real, Phi the standard normal CDF):
 *   gelu_erf(x)       = x * Phi(x)
 *   gelu_tanh(x)      = x/2 * (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
 *                     = x * sigmoid(2u)       (no cancellation for x < 0)
 *   gelu_erf_grad(x)  = Phi(x) + x phi(x)
 *   gelu_tanh_grad(x) = sigmoid(2u) + x sigmoid(2u) (1 - sigmoid(2u)) 2 u'(x)
 *   silu(x)           = x * sigmoid(x),  quick_gelu(x) = x * sigmoid(1.702 x)
 *                       (one algorithm with tanh GELU: x sigmoid(w(x)))
 *   mish(x)           = x tanh(softplus(x)) = x tanh(log(1 + e^x))
 *   mish'(x)          = t + x sigmoid(x) (1 - t^2),  t = tanh(softplus(x))
 *   relu(x)           = max(x, 0), NaN -> NaN
 *
 * How Phi is computed.  With t = |x|, the upper tail is
 *   Q(t) = Phi(-t) = exp(-t^2/2) R(t),   R(t) = erfcx(t/sqrt2)/2  (smooth, ~1/(t sqrt(2 pi))),
 * and with Y = (t - 4)/(t + 4) in [-1, 1),  R(t) = g(Y) (1 - Y)/8  where g is a
 * single polynomial on all of [0, inf) (src/tables/fit_gx.py).  t^2 = hi + lo exactly
 * (fma), exp(-(hi + lo)/2) = 2^k (1 + s) with the reduced argument exact, and
 * the power of two is applied last, in two exact-or-once-rounding steps, so
 * results in the subnormal range are rounded once (not flushed).
 * x > 0: x - x Q (Q <= 1/2: its error is damped);  x < 0: x Q (a product, no
 * cancellation, unlike 1/2 x (1 + erf(x/sqrt2))).
 * float32 for x >= -4.5 (the bulk of real data) does not come here: it runs
 * in float32 lanes from the piecewise tables of gx_lut.h; the float32
 * formulas below serve the other elements (the split driver, gx_k_split.h),
 * exact GELU's with a formula of their own (gx_gelu_erf_f32_tail).
 * Likewise float64 exact and tanh GELU for |x| <= 5 (gx_lut64.h); their
 * float64 formulas below serve |x| > 5, NaN and inf, and every float64
 * derivative and the SiLU family use them throughout.
 */
#ifndef GX_MATH_H
#define GX_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define GX_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define GX_INLINE static __forceinline
#else
#define GX_INLINE static inline
#endif

/* 1/sqrt(2 pi); sqrt(2/pi) as double + correction; tanh GELU's cubic term */
#define GX_INV_SQRT_2PI 0x1.9884533d43651p-2
#define GX_SQRT_2_PI_HI 0x1.9884533d43651p-1
#define GX_SQRT_2_PI_LO (-0x1.cbc0d30ebfd15p-55)
#define GX_TANH_A 0.044715                 /* = its nearest double GX_TANH_A_HI */
#define GX_TANH_A_HI 0x1.6e4e26d4801f7p-5    /* 0.044715 as written (decimal) = HI + LO: */
#define GX_TANH_A_LO 0x1.441355475a31ap-59    /* 0.044715 x^3 is ~700 at x = -21, so LO matters */
/* exp: log2(e); ln 2 = LN2_HI + LN2_LO (LN2_HI = ln 2 rounded) */
#define GX_LOG2E 0x1.71547652b82fep+0
#define GX_LN2_HI 0x1.62e42fefa39efp-1
#define GX_LN2_LO 0x1.abc9e3b39803fp-56
/* adding and subtracting 1.5 * 2^52 rounds a double |v| < 2^51 to an integer */
#define GX_SHIFT 0x1.8p52
#define GX_K 4.0            /* Y = (t - K)/(t + K); keep in sync with src/tables/fit_gx.py */

#include "tables/gx_math_tables.h"  /* GX_G64, GX_GD64, GX_G32, GX_RT32, GX_E64, GX_E32: src/tables/fit_gx.py */

/* --------------------------------------------------------- bit helpers -- */

/* memcpy type punning: GCC turns it into a register move and vectorises it. */
GX_INLINE uint64_t gx_bits(double x) { uint64_t u; memcpy(&u, &x, sizeof u); return u; }
GX_INLINE double gx_from_bits(uint64_t u) { double x; memcpy(&x, &u, sizeof x); return x; }

/* v rounded to an integer (ties to even), |v| < 2^51, with no int conversion
 * (AVX2 has no double -> int64 instruction). */
GX_INLINE double gx_rint(double v) { return (v + GX_SHIFT) - GX_SHIFT; }

/* 2^k for an integer-valued double k in [-1022, 1023]: the low bits of
 * k + 1.5*2^52 hold k in two's complement; shift k + 1023 into the exponent. */
GX_INLINE double gx_pow2(double k)
{
    return gx_from_bits((gx_bits(k + GX_SHIFT) + 1023u) << 52);
}

/* ------------------------------------------------------------------ exp -- */

/* expm1(r) for |r| <= ln2/2, float32 grade: r + r^2 (1/2 + r p(r)), p of
 * degree 5 (GX_E32), ~2^-37 relative; r2 = r * r */
GX_INLINE double gx_expm1_r32(double r, double r2)
{
    double p = fma(fma(fma(fma(fma(GX_E32_5, r, GX_E32_4), r, GX_E32_3), r, GX_E32_2), r, GX_E32_1), r, GX_E32_0);
    return fma(r2, fma(r, p, 0.5), r);
}

/* exp(a + al) = 2^k (1 + s + *sl) for a <= 0 (a >= -1100), |al| <= 2^-40 |a|.
 * k = round(a / ln2), r = a - k LN2_HI is exact: |r| < 1/2 and, for |a| >= 1/2,
 * both a and k*LN2_HI are multiples of 2^-53 (for |a| < 1/2, k is 0 or -1 and
 * Sterbenz applies).  The remaining -k LN2_LO + al is tiny and enters to first
 * order.  hp (a compile-time constant after inlining) selects the float64
 * grade (p of degree 9; s + sl to ~2^-60, the r^2 and r^2 q roundings
 * recovered with fma) or the float32 grade (degree 5, ~2^-37, sl = 0). */
GX_INLINE double gx_exp_parts(double a, double al, double *sl, double *k_out, int hp)
{
    double k = gx_rint(a * GX_LOG2E);
    double r = fma(-k, GX_LN2_HI, a);
    double rl = fma(-k, GX_LN2_LO, al);
    double r2 = r * r;
    *k_out = k;
    if (hp) {
        /* p(r) as even/odd halves in r^2: two short dependency chains */
        double e0 = fma(fma(fma(fma(GX_E64_8, r2, GX_E64_6), r2, GX_E64_4), r2, GX_E64_2), r2, GX_E64_0);
        double o0 = fma(fma(fma(fma(GX_E64_9, r2, GX_E64_7), r2, GX_E64_5), r2, GX_E64_3), r2, GX_E64_1);
        double p = fma(o0, r, e0);
        double q = fma(r, p, 0.5);
        double r2l = fma(r, r, -r2);
        double v = r2 * q;
        double vl = fma(r2, q, -v);
        double s = r + v;               /* |v| < |r|/4: Fast2Sum */
        *sl = ((r - s) + v) + (vl + r2l * q) + fma(rl, s, rl);
        return s;
    } else {
        *sl = 0.0;
        return gx_expm1_r32(r, r2) + rl;
    }
}

/* ---------------------------------------------------------------- Phi ---- */

/* Phi(-t) = (p + pl) (1 + s + sl) 2^k for t in [0, 40] (callers clamp t:
 * beyond 40 every result has underflowed or saturated).
 *   (p + pl) = R(t) = g(Y) (1 - Y)/8,  Y = (t - 4)/(t + 4),
 *   (1 + s + sl) 2^k = exp(-t^2/2).
 * float64 grade: t + 4 and t - 4 are carried exactly (Fast2Sum), the division's
 * remainder gives Y's rounding error Yl (fma), and g(Y + Yl) = g(Y) + Yl g'(Y):
 * without it Y's 2^-54 error would cost ~1 ULP in the tail.  The three lowest
 * Horner steps run in double-double with double-double coefficients, because
 * near Y = 1 the sum cancels (0.4 from terms 0.75, -0.6, 0.39 ...).  Error of
 * p + pl: a few 2^-60 relative. */
typedef struct { double p, pl, s, sl, k; } gx_q;

GX_INLINE void gx_dd_horner_step(double *ph, double *pl, double y, double ch, double cl)
{
    double m = *ph * y;
    double ml = fma(*ph, y, -m) + *pl * y;
    double s = ch + m;                              /* TwoSum(ch, m) */
    double bb = s - ch;
    double e = (ch - (s - bb)) + (m - bb);
    *ph = s;
    *pl = e + (ml + cl);
}

GX_INLINE gx_q gx_q_parts(double t, int hp)
{
    gx_q q;
    double t2 = t * t;
    double t2l = fma(t, t, -t2);
    q.s = gx_exp_parts(-0.5 * t2, -0.5 * t2l, &q.sl, &q.k, hp);
    double D = t + GX_K, N = t - GX_K;
    double Y = N / D;
    if (hp) {
        double Dl = t > GX_K ? GX_K - (D - t) : t - (D - GX_K);
        double Nl = t > GX_K ? -GX_K - (N - t) : t - (N + GX_K);
        double rem = fma(-Y, D, N);                 /* exact */
        /* (N + Nl)/(D + Dl) - Y, to first order; 1/D = (1 - Y)/8 closely enough */
        double Yl = (rem + Nl - Y * Dl) * ((1.0 - Y) * (0.5 / GX_K));
        double Y2 = Y * Y;
        double ev = GX_G64_26, od = GX_G64_25;     /* c3 + c4 Y + ... as even/odd in Y^2 */
        ev = fma(ev, Y2, GX_G64_24); od = fma(od, Y2, GX_G64_23);
        ev = fma(ev, Y2, GX_G64_22); od = fma(od, Y2, GX_G64_21);
        ev = fma(ev, Y2, GX_G64_20); od = fma(od, Y2, GX_G64_19);
        ev = fma(ev, Y2, GX_G64_18); od = fma(od, Y2, GX_G64_17);
        ev = fma(ev, Y2, GX_G64_16); od = fma(od, Y2, GX_G64_15);
        ev = fma(ev, Y2, GX_G64_14); od = fma(od, Y2, GX_G64_13);
        ev = fma(ev, Y2, GX_G64_12); od = fma(od, Y2, GX_G64_11);
        ev = fma(ev, Y2, GX_G64_10); od = fma(od, Y2, GX_G64_9);
        ev = fma(ev, Y2, GX_G64_8);  od = fma(od, Y2, GX_G64_7);
        ev = fma(ev, Y2, GX_G64_6);  od = fma(od, Y2, GX_G64_5);
        ev = fma(ev, Y2, GX_G64_4);  od = fma(od, Y2, GX_G64_3);
        double gh = fma(ev, Y, od), gl = 0.0;
        gx_dd_horner_step(&gh, &gl, Y, GX_G64_2_H, GX_G64_2_L);
        gx_dd_horner_step(&gh, &gl, Y, GX_G64_1_H, GX_G64_1_L);
        gx_dd_horner_step(&gh, &gl, Y, GX_G64_0_H, GX_G64_0_L);
        double gd = fma(fma(fma(fma(fma(fma(fma(fma(GX_GD64_8, Y, GX_GD64_7), Y, GX_GD64_6), Y,
                        GX_GD64_5), Y, GX_GD64_4), Y, GX_GD64_3), Y, GX_GD64_2), Y, GX_GD64_1), Y, GX_GD64_0);
        gl = fma(Yl, gd, gl);
        /* W = 1 - (Y + Yl), Fast2Sum since |Y| <= 1 */
        double Wh = 1.0 - Y;
        double Wl = ((1.0 - Wh) - Y) - Yl;
        double ph = gh * Wh;
        double pl = fma(gh, Wh, -ph) + (gh * Wl + gl * Wh);
        q.p = ph * (0.5 / GX_K);
        q.pl = pl * (0.5 / GX_K);
    } else {
        double g = GX_G32_12;
        g = fma(g, Y, GX_G32_11); g = fma(g, Y, GX_G32_10); g = fma(g, Y, GX_G32_9);
        g = fma(g, Y, GX_G32_8); g = fma(g, Y, GX_G32_7); g = fma(g, Y, GX_G32_6);
        g = fma(g, Y, GX_G32_5); g = fma(g, Y, GX_G32_4); g = fma(g, Y, GX_G32_3);
        g = fma(g, Y, GX_G32_2); g = fma(g, Y, GX_G32_1); g = fma(g, Y, GX_G32_0);
        q.p = g * ((1.0 - Y) * (0.5 / GX_K));
        q.pl = 0.0;
    }
    return q;
}

/* x/2 rounded as x/2 + (a positive amount far below 2^-1074) rounds: for
 * |x| < 2^-1020 both x Phi(x) and tanh GELU are x/2 + O(x^2), and x/2 can
 * be a tie between two subnormals; plain x * 0.5 would round it to even. */
GX_INLINE double gx_half_tiny(double x)
{
    double r0 = x * 0.5;
    double e = r0 * 2.0 - x;                /* exact: 0, or -+2^-1074 for a tie */
    return e < 0 ? r0 + 0x1p-1074 : r0;
}

/* ------------------------------------------------------------ exact GELU -- */

GX_INLINE double gx_gelu_erf_f64(double x)
{
    double t = fabs(x);
    double tc = t < 40.0 ? t : 40.0;                /* NaN -> 40; fixed at the end */
    double xm = x < -40.0 ? -40.0 : x;              /* x Q(40) underflows to -0 */
    gx_q q = gx_q_parts(tc, 1);
    /* C + Cl = x (p + pl);  x Q = (C + u) 2^k with u = C (s + sl) + Cl (1 + s):
     * the only roundings left are u's (<= 1/4 ULP of the result) and the last. */
    double C = xm * q.p;
    double Cl = fma(xm, q.p, -C) + xm * q.pl;
    double u = fma(C, q.s, fma(Cl, q.s, Cl) + C * q.sl);
    double k1 = gx_rint(0.5 * q.k);
    double f1 = gx_pow2(k1), f2 = gx_pow2(q.k - k1);
    double neg = ((C + u) * f1) * f2;              /* x <= 0: x Q, rounded once */
    double Cs = (C * f1) * f2, us = (u * f1) * f2;  /* exact where it matters (x > 0 */
    double h = x - Cs;                              /* keeps t < 9: no underflow)     */
    double hl = (x - h) - Cs;                       /* Fast2Sum: x >= x Q */
    double pos = h + (hl - us);                     /* x > 0: x - x Q */
    double r = x > 0 ? pos : neg;
    r = t < 0x1p-1020 ? gx_half_tiny(x) : r;
    r = x == INFINITY ? x : r;
    return (x != x || x == 0) ? x : r;              /* NaN, and the sign of +-0 */
}

/* float32 exact GELU where the float32 tables leave it (gx_lut.h, gx_lut8.h
 * reject x < -4.5 and NaN only): x Q(t) = x R(t) exp(-t^2/2) in double,
 * rounded once, for t = |x| > 4.5 and NaN; any other x gives some finite
 * value or +inf, which the split driver overwrites from the table loop.
 * Why not the general formula x Q with gx_q_parts(t, 0) (the float32 grade
 * the derivatives use): on this range this one is cheaper and more accurate
 * (AMD Zen 5, AVX-512, all inputs in the tail, the two timed side by side:
 * 1.17x the general formula's elements per second; every float32 in
 * [-15, -4.5]: max error 0.5002 ULP against its 0.516, and 2 subnormal
 * results off by a rounding against its 304), because of
 * - R(t) itself, GX_RT32, degree 8 in Y = (t - 4)/(t + 4) on [4.49, 14.5]
 *   (1.4e-11 relative), where the general formula fits g(Y) (1 - Y)/8 on
 *   all of [-1, 1);
 * - Y from a float32 division in float lanes, before any conversion to
 *   double (one vdivps for 16 elements, not two vdivpd), and one
 *   correction: Y0 = fl32(fl32(t - 4)/fl32(t + 4)) is within 2^-22 of N/D, the
 *   remainder N - Y0 D is exact (fma; Y0 D has at most 49 bits), and
 *   1/D = (1 - Y)/8, so Y0 + rem (1 - Y0)/8 is within ~2^-44 of Y.  Every
 *   step is one IEEE operation, so each ISA path gives the same bits.
 * t is clamped at 14.5 (x at -14.5): |x Q| < 2^-151 there, and every
 * x < -14.5 rounds to -0, as its exact value does.  tc^2 is exact (tc has
 * 24 bits), so exp's argument carries no low part.
 * Error before the final rounding: R 1.4e-11, exp ~2^-37 (gx_exp_parts),
 * Y's 2^-44 times R's log-derivative in Y (< 3), three double roundings:
 * < 2^-35 relative, so normal results within 0.5 + 2^-11 ULP and subnormal
 * ones (x < -13.15) rounded correctly unless within 2^-12 ULP of a tie. */
GX_INLINE float gx_gelu_erf_f32_tail(float xf)
{
    /* in float lanes, 16 to a vector: the clamps and Y's first guess */
    const float tf = fabsf(xf) < 14.5f ? fabsf(xf) : 14.5f;  /* NaN -> 14.5; fixed at the end */
    const float xmf = xf < -14.5f ? -14.5f : xf;
    const double Y0 = (double)((tf - (float)GX_K) / (tf + (float)GX_K));
    const double tc = (double)tf, xm = (double)xmf;
    /* exp(-tc^2/2) = 2^k (1 + s): gx_exp_parts' float32 grade without the
     * k LN2_LO term (|k| <= 152: < 2^-47 relative) */
    const double a = -0.5 * (tc * tc);
    const double k = gx_rint(a * GX_LOG2E);
    const double r = fma(-k, GX_LN2_HI, a);
    const double s = gx_expm1_r32(r, r * r);
    /* R(tc) in Y, Y0 corrected once */
    const double D = tc + GX_K, N = tc - GX_K;      /* exact */
    const double Y = fma(fma(-Y0, D, N), (1.0 - Y0) * (0.5 / GX_K), Y0);
    double R = GX_RT32_8;
    R = fma(R, Y, GX_RT32_7); R = fma(R, Y, GX_RT32_6); R = fma(R, Y, GX_RT32_5);
    R = fma(R, Y, GX_RT32_4); R = fma(R, Y, GX_RT32_3); R = fma(R, Y, GX_RT32_2);
    R = fma(R, Y, GX_RT32_1); R = fma(R, Y, GX_RT32_0);
    const double xR = xm * R;
    const double res = fma(xR, s, xR) * gx_pow2(k);
    return (float)(xf != xf ? (double)xf : res);    /* NaN: quiet, through double */
}

/* ------------------------------------- x sigmoid(w(x)): tanh GELU, SiLU -- */

/* Three functions share one shape, f(x) = x sigmoid(w(x)) with w odd:
 *   GX_SIG_TANH   w = 2u = c x (1 + a x^2), c = 2 sqrt(2/pi)  (tanh GELU)
 *   GX_SIG_SILU   w = x                                     (SiLU / swish)
 *   GX_SIG_QUICK  w = 1.702 x                               (quick GELU)
 * so they share one algorithm: sig, which of them, is a compile-time
 * constant after inlining, so each compiles to its own operations alone (no
 * select on sig at run time) and gives the bits of a function written for it.
 * 1.702 is not a double: QUICK_HI + QUICK_LO, as 0.044715 above. */
#define GX_SIG_TANH 0
#define GX_SIG_SILU 1
#define GX_SIG_QUICK 2
#define GX_QUICK_HI 0x1.b3b645a1cac08p+0     /* 1.702 = HI + LO */
#define GX_QUICK_LO 0x1.89374bc6a7efap-55

/* w = hi + lo, and x w'(x) = xh + xl (for the derivative):
 *   tanh:  x w' = c x (1 + 3 a x^2) = 3 w - 2 c x (3w/2cx >= 3/2: at most a 3x
 *          cancellation, carried as a TwoSum); exp(-w) amplifies the relative
 *          error of w by |w| (up to ~745 before underflow), so c and a carry
 *          low parts too;
 *   SiLU:  w = x, x w' = x, exact;
 *   quick: w = x w' = 1.702 x. */
GX_INLINE void gx_sig_arg(double x, int sig, double *hi, double *lo, double *xh, double *xl)
{
    if (sig == GX_SIG_SILU) {
        *hi = x; *lo = 0.0; *xh = x; *xl = 0.0;
    } else if (sig == GX_SIG_QUICK) {
        double w = GX_QUICK_HI * x;
        double wl = fma(GX_QUICK_HI, x, -w) + GX_QUICK_LO * x;
        *hi = w; *lo = wl; *xh = w; *xl = wl;
    } else {
        double x2 = x * x, x2l = fma(x, x, -x2);
        double p = fma(GX_TANH_A_HI, x2, 1.0);              /* 1 + a x^2 */
        double pl = fma(GX_TANH_A_HI, x2, 1.0 - p) + (GX_TANH_A_HI * x2l + GX_TANH_A_LO * x2);
        double c = 2.0 * GX_SQRT_2_PI_HI, cl = 2.0 * GX_SQRT_2_PI_LO;
        double cx = c * x, cxl = fma(c, x, -cx) + cl * x;  /* c x */
        double w = cx * p;
        double wl = fma(cx, p, -w) + (cx * pl + cxl * p);
        *hi = w;
        *lo = wl;
        double w3 = 3.0 * w, w3l = fma(3.0, w, -w3);
        double h = w3 - 2.0 * cx, bb = h - w3;              /* TwoSum */
        *xh = h;
        *xl = ((w3 - (h - bb)) + (-2.0 * cx - bb)) + (w3l + (3.0 * wl - 2.0 * cxl));
    }
}

/* |x| beyond which the float64 functions are clamped: |w| > 800 there, so
 * sigmoid(w) is 1 or e^{-|w|} < 2^-1154 and x e^{-|w|} underflows (and for
 * tanh GELU's x^3 cannot overflow). */
GX_INLINE double gx_sig_lim64(int sig)
{
    return sig == GX_SIG_SILU ? 800.0 : (sig == GX_SIG_QUICK ? 470.0 : 24.0);
}

/* The float64 common start: x clamped to sig's limit, w = hi + lo,
 * x w' = xh + xl, and e^{-|w|} = 2^k (1 + s + sl), 2^k = f1 f2 (two normal
 * factors). */
typedef struct { double xc, w, wl, xh, xl, s, sl, k, f1, f2; } gx_sig_e;

GX_INLINE gx_sig_e gx_sig_exp_f64(double x, int sig)
{
    gx_sig_e t;
    const double lim = gx_sig_lim64(sig);
    t.xc = x < -lim ? -lim : (x > lim ? lim : x);
    gx_sig_arg(t.xc, sig, &t.w, &t.wl, &t.xh, &t.xl);
    t.s = gx_exp_parts(-fabs(t.w), t.w < 0 ? t.wl : -t.wl, &t.sl, &t.k, 1);
    double k1 = gx_rint(0.5 * t.k);
    t.f1 = gx_pow2(k1);
    t.f2 = gx_pow2(t.k - k1);
    return t;
}

/* x sigmoid(w) = x / (1 + e^-w) for w >= 0 and x e^w / (1 + e^w) for w < 0,
 * with e^{-|w|} = 2^k (1 + s): no overflow, and for w < 0 the power of two is
 * applied last so the tail is rounded once into the subnormals, not flushed. */
GX_INLINE double gx_xsig_f64(double x, int sig)
{
    const gx_sig_e t = gx_sig_exp_f64(x, sig);
    const double xc = t.xc, w = t.w, s = t.s, sl = t.sl, f1 = t.f1, f2 = t.f2;
    /* everything as double-double, so that only the last step rounds:
     * m = 1 + s + sl, e = m 2^k = e^{-|w|} in (0, 1], d = 1 + e,
     * num = x (w >= 0) or xc m (w < 0, scaled by 2^k at the very end) */
    double mh = 1.0 + s, ml = ((1.0 - mh) + s) + sl;          /* Fast2Sum: |s| < 1 */
    double eh = (mh * f1) * f2, el = (ml * f1) * f2;
    double d = 1.0 + eh, dl = ((1.0 - d) + eh) + el;          /* Fast2Sum: e <= 1 */
    double nh = w >= 0 ? x : xc * mh;
    double nl = w >= 0 ? 0.0 : fma(xc, mh, -nh) + xc * ml;
    /* (nh + nl)/(d + dl): one division and a Newton correction with fma */
    double inv = 1.0 / d;
    double q0 = nh * inv;
    double rem = (fma(-q0, d, nh) + nl) - q0 * dl;
    double r = q0 + rem * inv;
    r = w >= 0 ? r : (r * f1) * f2;
    r = fabs(x) < 0x1p-1020 ? gx_half_tiny(x) : r;
    r = x == INFINITY ? x : r;                                /* inf * 0 above */
    return (x != x || x == 0) ? x : r;                        /* NaN, sign of 0 */
}

/* float32 grade (any float32 x): w in plain double (relative error ~2^-52,
 * times |w| <= 225 through the exp), |x| clamped where x sigmoid(w) <
 * 2^-150 (tanh 12: w = 150; SiLU 120; quick 72: w = 122), so 2^k is one
 * normal double. */
GX_INLINE double gx_sig_w32(double xc, int sig)
{
    if (sig == GX_SIG_SILU) return xc;
    if (sig == GX_SIG_QUICK) return GX_QUICK_HI * xc;
    return (2.0 * GX_SQRT_2_PI_HI) * xc * fma(GX_TANH_A, xc * xc, 1.0);
}

GX_INLINE float gx_xsig_f32(float xf, int sig)
{
    double x = (double)xf;
    const double lim = sig == GX_SIG_SILU ? 120.0 : (sig == GX_SIG_QUICK ? 72.0 : 12.0);
    double xc = x < -lim ? -lim : (x > lim ? lim : x);
    double w = gx_sig_w32(xc, sig);
    double sl, k;
    double s = gx_exp_parts(-fabs(w), 0.0, &sl, &k, 0);
    double e = (1.0 + s) * gx_pow2(k);
    double num = w >= 0 ? x : xc * e;
    double r = num / (1.0 + e);
    return (float)(x != x ? x : r);
}

GX_INLINE double gx_gelu_tanh_f64(double x) { return gx_xsig_f64(x, GX_SIG_TANH); }
GX_INLINE float gx_gelu_tanh_f32(float x) { return gx_xsig_f32(x, GX_SIG_TANH); }
GX_INLINE double gx_silu_f64(double x) { return gx_xsig_f64(x, GX_SIG_SILU); }
GX_INLINE float gx_silu_f32(float x) { return gx_xsig_f32(x, GX_SIG_SILU); }
GX_INLINE double gx_quick_gelu_f64(double x) { return gx_xsig_f64(x, GX_SIG_QUICK); }
GX_INLINE float gx_quick_gelu_f32(float x) { return gx_xsig_f32(x, GX_SIG_QUICK); }

/* ---------------------------------------------------------- derivatives -- */

/* Phi(x) + x phi(x), with E = exp(-t^2/2) = 2^k (1 + s), phi = E/sqrt(2 pi):
 *   x < 0:  Q + x phi     = E (R + x/sqrt(2 pi))     (scaled last: tail subnormals)
 *   x >= 0: 1 - Q + x phi = 1 + E (x/sqrt(2 pi) - R)
 * The sum of the two terms rounds once relative to the larger (the bound is
 * in ULPs of max(|Phi|, |x phi|)).  Returned in double: the kernels multiply
 * by the incoming gradient before the one rounding to the array's dtype. */
GX_INLINE double gx_gelu_erf_grad_core(double x, int hp)
{
    /* float32 grade: clamp where gelu'(x) < 2^-300, so even times the largest
     * float32 grad (2^128) the product underflows float32 (clamping where
     * gelu' alone underflows is not enough: a large grad lifts the product
     * back into float32's range; tests/test_fuzz.py's grads reach 2^126) */
    double lim = hp ? 40.0 : 24.0;
    double t = fabs(x);
    double tc = t < lim ? t : lim;
    double xm = x < -lim ? -lim : (x > lim ? lim : x);
    gx_q q = gx_q_parts(tc, hp);
    /* in = x/sqrt(2 pi) -+ R as double-double (ih + il), then
     * v = in (1 + s + sl) with a single rounding of the sum that matters */
    double xp = xm * GX_INV_SQRT_2PI;
    double xpl = fma(xm, GX_INV_SQRT_2PI, -xp) + xm * (0.5 * GX_SQRT_2_PI_LO);
    double a = x < 0 ? q.p : -q.p, al = x < 0 ? q.pl : -q.pl;
    double ih = a + xp, bb = ih - a;                            /* TwoSum */
    double il = ((a - (ih - bb)) + (xp - bb)) + (al + xpl);
    double v = ih + fma(ih, q.s, fma(il, q.s, il) + ih * q.sl);
    double vs;
    if (hp) {
        double k1 = gx_rint(0.5 * q.k);
        vs = (v * gx_pow2(k1)) * gx_pow2(q.k - k1);
    } else {
        vs = v * gx_pow2(q.k);
    }
    double r = x < 0 ? vs : 1.0 + vs;
    r = x == INFINITY ? 1.0 : (x == -INFINITY ? 0.0 : r);
    return x != x ? x : r;
}

/* d/dx x sigmoid(w) = sigmoid(w) (1 + x w'(x) (1 - sigmoid(w))):
 *   w >= 0:  sigmoid = 1/d, 1 - sigmoid = e/d,  d = 1 + e, e = e^-w
 *   w < 0:   sigmoid = e/d (scaled by 2^k last), 1 - sigmoid = 1/d
 * Two algorithms, one per grade.  The special values are common. */
GX_INLINE double gx_xsig_grad_special(double x, double r)
{
    r = x == INFINITY ? 1.0 : (x == -INFINITY ? 0.0 : r);
    return x != x ? x : r;
}

/* float64: every factor as double-double and one rounding at the end (plain
 * double already loses ~5 ULP(s) near x = -3 for tanh GELU, where
 * x w' ~ -10 and the sum cancels 10x). */
GX_INLINE double gx_xsig_grad_f64(double x, int sig)
{
    const gx_sig_e t = gx_sig_exp_f64(x, sig);
    const double w = t.w, s = t.s, sl = t.sl, f1 = t.f1, f2 = t.f2;
    const double xh = t.xh, xl = t.xl;                        /* x w' */
    /* m = 1 + s + sl, e = m 2^k, d = 1 + e, inv = 1/d: all double-double */
    double mh = 1.0 + s, ml = ((1.0 - mh) + s) + sl;
    double eh = (mh * f1) * f2, el = (ml * f1) * f2;
    double d = 1.0 + eh, dl = ((1.0 - d) + eh) + el;
    double inv = 1.0 / d;
    double invl = inv * (fma(-inv, d, 1.0) - inv * dl);
    /* sm = 1 - sigmoid, sg = sigmoid / 2^k (w < 0) */
    double smh = w >= 0 ? eh * inv : inv;
    double sml = w >= 0 ? fma(eh, inv, -smh) + (eh * invl + el * inv) : invl;
    double sgh = w >= 0 ? inv : mh * inv;
    double sgl = w >= 0 ? invl : fma(mh, inv, -sgh) + (mh * invl + ml * inv);
    /* inner = 1 + x w' sm */
    double th = xh * smh;
    double tl = fma(xh, smh, -th) + (xh * sml + xl * smh);
    double ih = 1.0 + th, b2 = ih - 1.0;                     /* TwoSum */
    double il = ((1.0 - (ih - b2)) + (th - b2)) + tl;
    double r = fma(ih, sgh, ih * sgl + il * sgh);
    r = w >= 0 ? r : (r * f1) * f2;
    return gx_xsig_grad_special(x, r);
}

/* float32 inputs (the general formula behind the float32 tables): plain
 * double, ~2^-49 relative, returned in double for the product with g.
 * |x| is clamped where f'(x) < 2^-300 (tanh 16, SiLU 220, quick 130), so even
 * times a 2^128 grad the product underflows float32, and 2^k stays normal. */
GX_INLINE double gx_xsig_grad_f32d(float xf, int sig)
{
    double x = (double)xf;
    const double lim = sig == GX_SIG_SILU ? 220.0 : (sig == GX_SIG_QUICK ? 130.0 : 16.0);
    double xc = x < -lim ? -lim : (x > lim ? lim : x);
    double w = gx_sig_w32(xc, sig);
    double xdw = sig == GX_SIG_SILU ? xc
               : (sig == GX_SIG_QUICK ? w : (2.0 * GX_SQRT_2_PI_HI) * xc * fma(3.0 * GX_TANH_A, xc * xc, 1.0));
    double sl, k;
    double s = gx_exp_parts(-fabs(w), 0.0, &sl, &k, 0);
    double m = 1.0 + s;
    double e = m * gx_pow2(k);
    double inv = 1.0 / (1.0 + e);
    double sm = w >= 0 ? e * inv : inv;
    double sg = w >= 0 ? inv : e * inv;
    return gx_xsig_grad_special(x, sg * fma(xdw, sm, 1.0));
}

GX_INLINE double gx_gelu_tanh_grad_f64(double x) { return gx_xsig_grad_f64(x, GX_SIG_TANH); }
GX_INLINE double gx_gelu_tanh_grad_f32d(float x) { return gx_xsig_grad_f32d(x, GX_SIG_TANH); }
GX_INLINE double gx_silu_grad_f64(double x) { return gx_xsig_grad_f64(x, GX_SIG_SILU); }
GX_INLINE double gx_silu_grad_f32d(float x) { return gx_xsig_grad_f32d(x, GX_SIG_SILU); }
GX_INLINE double gx_quick_gelu_grad_f64(double x) { return gx_xsig_grad_f64(x, GX_SIG_QUICK); }
GX_INLINE double gx_quick_gelu_grad_f32d(float x) { return gx_xsig_grad_f32d(x, GX_SIG_QUICK); }

GX_INLINE double gx_gelu_erf_grad_f64(double x) { return gx_gelu_erf_grad_core(x, 1); }
/* float32 inputs: the float32-grade polynomials, result still in double */
GX_INLINE double gx_gelu_erf_grad_f32d(float x) { return gx_gelu_erf_grad_core((double)x, 0); }

/* ------------------------------------------------------- double-double -- */

/* h + l, |l| about ulp(h)/2 or less: each operation an error-free
 * transformation of the high parts plus the low parts to first order
 * (~2^-104 relative; less where a part is subnormal). */
typedef struct { double h, l; } gx_dd;

GX_INLINE gx_dd gx_dd_make(double h, double l) { gx_dd r; r.h = h; r.l = l; return r; }

/* a + b, any magnitudes (TwoSum) */
GX_INLINE gx_dd gx_dd_add(gx_dd a, gx_dd b)
{
    double s = a.h + b.h, bb = s - a.h;
    return gx_dd_make(s, ((a.h - (s - bb)) + (b.h - bb)) + (a.l + b.l));
}

/* a + b for |a.h| >= |b.h| (Fast2Sum) */
GX_INLINE gx_dd gx_dd_add_fast(gx_dd a, gx_dd b)
{
    double s = a.h + b.h;
    return gx_dd_make(s, ((a.h - s) + b.h) + (a.l + b.l));
}

GX_INLINE gx_dd gx_dd_mul(gx_dd a, gx_dd b)
{
    double p = a.h * b.h;
    return gx_dd_make(p, fma(a.h, b.h, -p) + (a.h * b.l + a.l * b.h));
}

/* a / b: one division, its remainder exact (fma), one correction */
GX_INLINE gx_dd gx_dd_div(gx_dd a, gx_dd b)
{
    double q = a.h / b.h;
    double rem = (fma(-q, b.h, a.h) + a.l) - q * b.l;
    return gx_dd_make(q, rem / b.h);
}

/* ---------------------------------------------------------------- Mish -- */

/* mish(x) = x t, t = tanh(softplus(x)) = tanh(log(1 + e^x)), and
 *   mish'(x) = t + x sigmoid(x) (1 - t^2).
 * With e = e^{-|x|} in (0, 1] (nothing overflows) and tanh(log y) =
 * (y^2 - 1)/(y^2 + 1), t is a quotient of sums of positive terms:
 *   x >= 0:  t =   (1 + 2e) / (1 + 2e + 2e^2)
 *   x <  0:  t = e (2 +  e) / (2 + 2e +  e^2)
 * one shape, t = P/D (times e for x < 0), P = a + b e, D = a + e (2 + b e),
 * (a, b) = (1, 2) for x >= 0 and (2, 1) for x < 0: no cancellation (1 - t
 * and 1 - e^x are never formed).  The derivative likewise: 1 - t = 2c/D with
 * c = e^2 (x >= 0) or 1 (x < 0), 1 + t = 2 (1 + e)^2 / D, sigmoid = 1/(1 + e)
 * (x >= 0) or e/(1 + e) (x < 0), so
 *   mish'(x) =   (P D + 4 x (1 + e) c) / D^2      (x >= 0)
 *            = e (P D + 4 x (1 + e)  ) / D^2      (x <  0)
 * whose two terms are t and x sigmoid (1 - t^2): they cancel only for x < 0,
 * where mish' = 0 at x ~ -1.1924, so its bound is in ULPs of the larger, s.
 * For x < 0 the factor e = m 2^k is applied last, its power of two after the
 * rounding, as in gx_xsig_f64: tail results are rounded into the subnormals,
 * not flushed.  The special values are the GELU family's: NaN -> NaN, +-0 ->
 * +-0 (x t with t > 0), +inf -> +inf, -inf -> -0; mish'(+inf) = 1,
 * mish'(-inf) = 0. */

/* The float32-grade start (any float32 x): plain double, x clamped at
 * +-lim, e = 2^k (1 + s) from gx_exp_parts' float32 grade (~2^-37
 * relative), P and D. */
typedef struct { double xc, e, P, D; } gx_mish_e32;

GX_INLINE gx_mish_e32 gx_mish_exp_f32(double x, double lim)
{
    gx_mish_e32 t;
    t.xc = x < -lim ? -lim : (x > lim ? lim : x);
    double sl, k;
    double s = gx_exp_parts(-fabs(t.xc), 0.0, &sl, &k, 0);
    t.e = (1.0 + s) * gx_pow2(k);
    double a = x >= 0 ? 1.0 : 2.0, b = 3.0 - a;
    t.P = a + b * t.e;                                      /* b e exact */
    t.D = fma(t.e, 2.0 + b * t.e, a);
    return t;
}

/* float32: mish moves by at most e's relative error (its log-derivative in e
 * lies in [-8/15, 1]); with six roundings, < 2^-36 relative before the one
 * rounding to float32, so within 0.5 + 2^-12 ULP.  |x| is clamped at 120:
 * below -120 |mish| < 2^-165 (-0 in float32), above 120 t = 1 in double. */
GX_INLINE float gx_mish_f32(float xf)
{
    double x = (double)xf;
    const gx_mish_e32 t = gx_mish_exp_f32(x, 120.0);
    double num = x >= 0 ? x : t.xc * t.e;
    double r = num * (t.P / t.D);
    return (float)(x != x ? x : r);                         /* NaN: quiet, through double */
}

/* The derivative for float32 inputs: ~2^-35 of s, returned in double for the
 * product with g.  |x| is clamped at 220, where |mish'| < 2^-309: even times
 * a 2^128 grad the product underflows float32. */
GX_INLINE double gx_mish_grad_f32d(float xf)
{
    double x = (double)xf;
    const gx_mish_e32 t = gx_mish_exp_f32(x, 220.0);
    double c = x >= 0 ? t.e * t.e : 1.0;
    double R = fma(4.0 * t.xc * (1.0 + t.e), c, t.P * t.D) / (t.D * t.D);
    return gx_xsig_grad_special(x, x >= 0 ? R : t.e * R);
}

/* The float64 start: x clamped at +-800 (|mish| and |mish'| < 2^-1144 below
 * -800, t = 1 above 800), e^{-|x|} = 2^k m with m = 1 + s + sl, 2^k = f1 f2
 * (two normal factors), e = m 2^k, P and D: all double-double. */
typedef struct { double xc, f1, f2; gx_dd m, e, P, D; } gx_mish_e;

GX_INLINE gx_mish_e gx_mish_exp_f64(double x)
{
    gx_mish_e t;
    t.xc = x < -800.0 ? -800.0 : (x > 800.0 ? 800.0 : x);
    double sl, k;
    double s = gx_exp_parts(-fabs(t.xc), 0.0, &sl, &k, 1);
    double k1 = gx_rint(0.5 * k);
    t.f1 = gx_pow2(k1);
    t.f2 = gx_pow2(k - k1);
    double mh = 1.0 + s;
    t.m = gx_dd_make(mh, ((1.0 - mh) + s) + sl);           /* Fast2Sum: |s| < 1 */
    t.e = gx_dd_make((t.m.h * t.f1) * t.f2, (t.m.l * t.f1) * t.f2);
    double a = x >= 0 ? 1.0 : 2.0, b = 3.0 - a;
    gx_dd be = gx_dd_make(b * t.e.h, b * t.e.l);            /* exact */
    t.P = gx_dd_add(gx_dd_make(a, 0.0), be);
    gx_dd in = gx_dd_add_fast(gx_dd_make(2.0, 0.0), be);    /* b e <= 2 */
    t.D = gx_dd_add(gx_dd_make(a, 0.0), gx_dd_mul(t.e, in));
    return t;
}

/* float64: x (P/D) for x >= 0, (xc m) (P/D) 2^k for x < 0, double-double up
 * to the one rounding (and the power of two after it).  Before it, e's error
 * (~2^-60, gx_exp_parts) and the double-double steps': within 0.54 ULP; up to
 * 0.75 where the result is subnormal (x < -708: rounded to 53 bits, then to
 * the subnormal's fewer), 0.8 for 2^-1022 <= |x| < 2^-1000 (products rounded
 * to the subnormal grid).  Subnormal x: mish(x) = 3x/5 + O(x^2), and x * 0.6
 * is correctly rounded there: with x = n 2^-1074, n < 2^52, 3n/5 is at least
 * 1/10 from a half-integer and fl(0.6) = 0.6 - 2^-53/5 moves it by less. */
GX_INLINE double gx_mish_f64(double x)
{
    const gx_mish_e t = gx_mish_exp_f64(x);
    gx_dd num = x >= 0 ? gx_dd_make(x, 0.0) : gx_dd_mul(gx_dd_make(t.xc, 0.0), t.m);
    gx_dd v = gx_dd_mul(num, gx_dd_div(t.P, t.D));
    double r = v.h + v.l;
    r = x >= 0 ? r : (r * t.f1) * t.f2;
    r = fabs(x) < 0x1p-1022 ? x * 0.6 : r;
    r = x == INFINITY ? x : r;                              /* inf - inf in the low parts */
    return (x != x || x == 0) ? x : r;                      /* NaN, sign of 0 */
}

/* The derivative in float64: every factor double-double, the two terms'
 * sum exact but for its low parts, one rounding (then 2^k for x < 0).  The
 * error before it is < 2^-5 ULP(s), so within 0.5 ULP of the result plus
 * that: up to 1.03 ULP(s) where the result lies in the binade above s's,
 * 0.75 where it is subnormal (as mish's). */
GX_INLINE double gx_mish_grad_f64(double x)
{
    const gx_mish_e t = gx_mish_exp_f64(x);
    gx_dd ope = gx_dd_add_fast(gx_dd_make(1.0, 0.0), t.e);  /* 1 + e */
    /* both sides computed, then selected part by part: a select of whole
     * structs is a branch clang does not vectorise */
    const int pos = x >= 0;
    gx_dd ee = gx_dd_mul(t.e, t.e);
    gx_dd c = gx_dd_make(pos ? ee.h : 1.0, pos ? ee.l : 0.0);
    gx_dd B = gx_dd_mul(gx_dd_mul(gx_dd_make(4.0 * t.xc, 0.0), ope), c);
    gx_dd N = gx_dd_add(gx_dd_mul(t.P, t.D), B);
    gx_dd R = gx_dd_div(N, gx_dd_mul(t.D, t.D));
    gx_dd mR = gx_dd_mul(t.m, R);
    double r = pos ? R.h + R.l : mR.h + mR.l;
    r = x >= 0 ? r : (r * t.f1) * t.f2;
    return gx_xsig_grad_special(x, r);
}

/* ----------------------------------------------------------------- ReLU -- */

/* x < 0 ? 0 : x, as torch's relu (a clamp_min(x, 0)) and as ReLU6 below:
 * NaN stays NaN and -0.0 stays -0.0, neither being below 0.  (np.maximum(x,
 * 0) gives +0.0 for -0.0; torch's is the sign the torch ops must give, and
 * one kernel serves both.) */
GX_INLINE float gx_relu_f32(float x) { return x < 0 ? 0.0f : x; }
GX_INLINE double gx_relu_f64(double x) { return x < 0 ? 0.0 : x; }
/* its derivative times g: 0 where x <= 0, else g -- NaN x included, as
 * torch's threshold_backward (x <= 0 ? 0 : g) passes g there */
GX_INLINE float gx_relu_grad_f32(float x, float g) { return x <= 0 ? 0.0f : g; }
GX_INLINE double gx_relu_grad_f64(double x, double g) { return x <= 0 ? 0.0 : g; }

/* ------------------------------------------------------- squared ReLU -- */

/* relu(x)^2 (Primer, Nemotron; transformers' "relu2"): x * x, one rounding
 * (a float16 or bfloat16 x squared is exact in float32, so the 16-bit path
 * rounds once too); NaN stays NaN, x <= 0 and -0.0 give +0.0, as torch's
 * square(relu(x)). */
GX_INLINE float gx_relu2_f32(float x) { return x < 0 ? 0.0f : x * x; }
GX_INLINE double gx_relu2_f64(double x) { return x < 0 ? 0.0 : x * x; }
/* Its derivative times g, 2x g for x > 0 (NaN x gives NaN, as torch's
 * grad * (2 x) through relu's backward), else 0, rounded once: float32 in
 * double, where 2x g of two floats is exact (2x in float overflows for
 * x >= 2^127 where 2x g may not); float64 (x + x) * g, 2x exact below
 * DBL_MAX / 2. */
GX_INLINE float gx_relu2_grad_f32(float x, float g)
{
    return x <= 0 ? 0.0f : (float)(((double)x + (double)x) * (double)g);
}
GX_INLINE double gx_relu2_grad_f64(double x, double g) { return x <= 0 ? 0.0 : (x + x) * g; }

/* --------------------------------------------------------------- ReLU6 -- */

/* min(max(x, 0), 6) (MobileNets; torch.nn.ReLU6, hardtanh(x, 0, 6)): no
 * rounding.  As torch's clamp: NaN stays NaN and -0.0 stays -0.0 (neither is
 * below 0), +inf gives 6, -inf 0. */
GX_INLINE float gx_relu6_f32(float x) { return x < 0 ? 0.0f : (x > 6 ? 6.0f : x); }
GX_INLINE double gx_relu6_f64(double x) { return x < 0 ? 0.0 : (x > 6 ? 6.0 : x); }
/* Its derivative times g: g where 0 < x < 6, else 0 (NaN x too): torch's
 * hardtanh_backward on its vector path, which is nearly every element (its
 * scalar tail, < one vector, passes g for NaN x). */
GX_INLINE float gx_relu6_grad_f32(float x, float g) { return x > 0 && x < 6 ? g : 0.0f; }
GX_INLINE double gx_relu6_grad_f64(double x, double g) { return x > 0 && x < 6 ? g : 0.0; }

#endif /* GX_MATH_H */
