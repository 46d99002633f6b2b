/*
 * gx_math.h -- the scalar formulas of gelu_ext, each written once.
 *
 * Design:
 * - Every function here is `static inline` and branch-light so that the array
 *   kernels in gx_kernels_impl.h, compiled once per instruction set, can inline
 *   it and let the compiler vectorise the loop.
 * - The float32 entry points evaluate in double and round once at the end: the
 *   double result is accurate to far better than 2^-29 relative, so the float32
 *   result is within 0.5 ULP + a hair (the exhaustive check in bench/ulp.py
 *   proves <= 1 ULP over all 2^32 inputs).
 * - Built with -ffp-contract=off: no a*b+c is silently fused, so every ISA
 *   path computes the same correctly rounded operations and gives the same
 *   bits; fma() is written out where the error analysis needs it.
 *
 * Public formulas (x real, Phi the standard normal CDF):
 *   gelu_erf(x)       = x * Phi(x)
 *   gelu_tanh(x)      = x/2 * (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
 *                     = x * sigmoid(2u)       (no cancellation for x < 0)
 *   gelu_erf_grad(x)  = Phi(x) + x phi(x)
 *   gelu_tanh_grad(x) = sigmoid(2u) + x sigmoid(2u) (1 - sigmoid(2u)) 2 u'(x)
 *   relu(x)           = max(x, 0), NaN -> NaN
 */
#ifndef GX_MATH_H
#define GX_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define GX_INLINE static inline __attribute__((always_inline))
#else
#define GX_INLINE static inline
#endif

/* 1/sqrt(2) and 1/sqrt(2 pi) split into a double plus a correction, so that
 * products with them can be carried to ~106 bits where the analysis needs it. */
#define GX_SQRT1_2_HI 0x1.6a09e667f3bcdp-1
#define GX_SQRT1_2_LO (-0x1.bdd3413b26456p-55)
#define GX_INV_SQRT_2PI 0x1.9884533d43651p-2
/* sqrt(2/pi), double + correction, and the cubic coefficient of the tanh form */
#define GX_SQRT_2_PI_HI 0x1.9884533d43651p-1
#define GX_SQRT_2_PI_LO (-0x1.cbc0d30ebfd15p-56)
#define GX_TANH_A 0.044715

/* ---------------------------------------------------------------- Phi ---- */

/* Upper tail Q(t) = Phi(-t) = erfc(t/sqrt 2)/2 for t >= 0, to ~1 ULP in double.
 * z = t/sqrt2 rounded carries a relative error up to 2^-53 that erfc amplifies
 * by about 2 z^2 (e.g. ~1,600 ULP at t = 35); the first-order correction with
 * the exact residual e = t/sqrt2 - z removes it:
 *   erfc(z + e) = erfc(z) - e * 2/sqrt(pi) * exp(-z^2) (1 + O(z e)). */
GX_INLINE double gx_phi_upper(double t)
{
    double z = t * GX_SQRT1_2_HI;
    double e = fma(t, GX_SQRT1_2_HI, -z) + t * GX_SQRT1_2_LO;
    double q = 0.5 * erfc(z);
    double d = 0x1.20dd750429b6dp-1 * exp(-z * z);     /* 1/sqrt(pi) e^{-z^2} */
    return fma(-e, d, q);
}

GX_INLINE double gx_gelu_erf_f64(double x)
{
    if (x != x) return x;
    if (x == -INFINITY) return -0.0;
    double t = fabs(x);
    double q = gx_phi_upper(t);
    /* x > 0: x - x Q (Q <= 1/2, so the error of Q is damped; +inf stays
     * +inf); x <= 0: x Q, a product, no cancellation, and -0.0 stays -0.0. */
    double pos = x == INFINITY ? x : fma(-x, q, x);
    return x > 0 ? pos : x * q;
}

GX_INLINE float gx_gelu_erf_f32(float xf)
{
    double x = (double)xf;
    if (x != x) return xf;
    if (x == -INFINITY) return -0.0f;
    /* t/sqrt2 rounding is amplified at most ~200x over the float32 range (the
     * result underflows below x = -14.2): invisible at 2^-29. */
    double q = 0.5 * erfc(fabs(x) * GX_SQRT1_2_HI);
    double pos = x == INFINITY ? x : x - x * q;
    return (float)(x > 0 ? pos : x * q);
}

/* ------------------------------------------------------------- tanh form -- */

/* w = 2u = 2 sqrt(2/pi) x (1 + a x^2), returned as hi + lo because exp(-w)
 * amplifies the relative error of w by |w| (up to ~745 before underflow). */
GX_INLINE void gx_tanh_arg(double x, double *hi, double *lo)
{
    double x2 = x * x, x2l = fma(x, x, -x2);
    double p = fma(GX_TANH_A, x2, 1.0);                 /* 1 + a x^2 */
    double pl = fma(GX_TANH_A, x2, 1.0 - p) + GX_TANH_A * x2l;
    double c = 2.0 * GX_SQRT_2_PI_HI, cl = 2.0 * GX_SQRT_2_PI_LO;
    double cx = c * x, cxl = fma(c, x, -cx) + cl * x;  /* c x */
    double w = cx * p;
    double wl = fma(cx, p, -w) + (cx * pl + cxl * p);
    *hi = w;
    *lo = wl;
}

GX_INLINE double gx_gelu_tanh_f64(double x)
{
    if (x != x) return x;
    if (x == -INFINITY) return -0.0;
    if (fabs(x) > 0x1p340) return x > 0 ? x : -0.0;    /* x^3 would overflow */
    double w, wl;
    gx_tanh_arg(x, &w, &wl);
    /* x sigmoid(w) = x / (1 + e^{-w});  e^{-(w+wl)} = e^{-w} (1 - wl) */
    double em = exp(-w);
    em = em == INFINITY ? em : fma(-em, wl, em);
    return x / (1.0 + em);
}

GX_INLINE float gx_gelu_tanh_f32(float xf)
{
    return (float)gx_gelu_tanh_f64((double)xf);
}

/* ---------------------------------------------------------- derivatives -- */

GX_INLINE double gx_gelu_erf_grad_f64(double x)
{
    if (x != x) return x;
    if (x == INFINITY) return 1.0;
    if (x == -INFINITY) return 0.0;
    double t = fabs(x);
    double q = gx_phi_upper(t);
    double phi = GX_INV_SQRT_2PI * exp(-0.5 * x * x);
    double P = x >= 0 ? 1.0 - q : q;
    return fma(x, phi, P);
}

GX_INLINE double gx_gelu_tanh_grad_f64(double x)
{
    if (x != x) return x;
    if (fabs(x) > 0x1p340) return x > 0 ? 1.0 : 0.0;
    double w, wl;
    gx_tanh_arg(x, &w, &wl);
    double em = exp(-w);
    em = em == INFINITY ? em : fma(-em, wl, em);
    double s = 1.0 / (1.0 + em);                /* sigmoid(w) */
    double sm = em * s;                         /* 1 - sigmoid(w), no cancellation */
    /* dw/dx = 2 sqrt(2/pi) (1 + 3 a x^2) */
    double dw = 2.0 * GX_SQRT_2_PI_HI * fma(3.0 * GX_TANH_A, x * x, 1.0);
    double r = fma(x * s * sm, dw, s);
    return isfinite(r) ? r : (x > 0 ? 1.0 : 0.0);
}

GX_INLINE float gx_gelu_erf_grad_f32(float x) { return (float)gx_gelu_erf_grad_f64(x); }
GX_INLINE float gx_gelu_tanh_grad_f32(float x) { return (float)gx_gelu_tanh_grad_f64(x); }

/* ----------------------------------------------------------------- ReLU -- */

/* x > 0 ? x : 0, but NaN stays NaN and -0.0 gives +0.0 (as PyTorch). */
#define GX_RELU(x) ((x) > 0 ? (x) : ((x) != (x) ? (x) : 0))

#endif /* GX_MATH_H */
