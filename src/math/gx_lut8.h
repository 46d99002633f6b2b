/*
 * gx_lut8.h -- the 8-piece float32-lane formulas of the AVX2 and NEON
 * paths: exact and tanh GELU, SiLU, quick GELU and their derivatives, from
 * the tables of src/tables/gx_lut8_tables.h (src/tables/fit_lut8.py).  The scalar twins
 * below define the bits of every path that uses these tables; the vector
 * loops perform the very same IEEE operations (8 float lanes, each
 * coefficient fetched by one vpermps on AVX2, by one tbl per 4 lanes on
 * NEON).  The 32-piece tables of gx_lut.h serve the baseline and AVX-512
 * paths: the two schemes give different last bits, both within the bounds
 * (bench/results/ulp_exhaustive.txt has each path).
 *
 * Why a second scheme: a 32-entry table costs AVX2 four vpermps and three
 * blends per coefficient (AVX-512: one vpermt2ps), so a 32-piece AVX2 loop
 * spends most of its time fetching.  With 8 pieces one vpermps fetches a
 * coefficient, at the price of a higher degree (8 instead of 6) and of a
 * B that follows q within the piece (below).
 *
 * ALGORITHM.  a = min(|x|, xc); piece i = min(rint(K a + K2 a^2), 7) (the
 * magic-number fma of gx_lut.h); d = a - c_i (exact, Sterbenz; c_0 = 0).
 * q(a) as in gx_lut.h (Phi(-a), sigmoid(-w(a))); forward, x B - M with
 *     B(d) = H + S d + U d^2 ~ q(a),   M(d) ~ a (q(a) - B(d))  (degree 8)
 *     x < 0:  x q = x B - M,      x >= 0:  x (1 - q) = x (1 - B) - M.
 * B is not representable, so it is computed as  T = fl(S + U d),
 * B' = fl(1/2 + H + d T)  (H + 1/2 exact: H is a multiple of 2^-24), and
 * the two roundings are recovered exactly (S - T and (H + 1/2) - B' are
 * exact by Sterbenz; |U d| <= |S|/2 is a condition of the fit):
 *     eT = fl(U d + (S - T)),  e = fl(d eT + fl(d T + ((H + 1/2) - B')))
 * so that B = h + e with h = B' - 1/2 (exact, a multiple of 2^-24, and so is
 * 1 - h).  Then, one final rounding:
 *     r = fl(x (x < 0 ? h : 1 - h) - fl(M + a e)).
 * Derivatives (G(a) = gelu'(-a) = q - a |q'| as in gx_lut.h, B ~ G, M ~ G - B,
 * H a multiple of 2^-22 and B' = fl(2 + H + d T), h = B' - 2, a multiple of
 * 2^-23, so that 1 - h is exact too):
 *     gelu'(x) g = (h g + fl(M + e) g) (x < 0),  ((1 - h) g - fl(M + e) g),
 * one fma as in gx_lut.h (g = +-0, +-inf, NaN: one product).
 *
 * ERROR BUDGET (forward; the result r, |r| < 2^24 ULP(r)):
 *     0.5 ULP(r)                the final rounding (x h enters exactly)
 *   + |M| 2^-23                 Horner's last two roundings and M + a e's,
 *                               |M| <= rho |r|: rho = 0.032 (exact GELU),
 *                               0.125 (tanh GELU), 0.008 (SiLU, quick GELU)
 *   + fit <= 1.6e-8 |r|         src/tables/fit_lut8.py, float32 coefficients
 *   + e's own roundings         ~2^-48: e is a rounding error itself
 *   a priori <= 0.5 + 0.06 + 0.27 = 0.83 ULP (exact GELU) and 1.0 (tanh);
 *   the proof of <= 1 ULP is the exhaustive run (bench/ulp.py --exhaustive
 *   --isa avx2).  Derivatives: rho <= 0.22 of s = max(q, a |q'|), against
 *   the bound of 2 ULP(s).
 * IEEE SPECIAL CASES as in gx_lut.h: NaN, +-inf and |x| > x (forward GELU:
 * x < -x) take the general double formulas (the split driver,
 * gx_k_split.h); +inf gives +inf (piece 7, a clamped at 6); x = +-0 gives
 * +-0 (M = 0, e = 0, h = 1/2).
 */
#ifndef GX_LUT8_H
#define GX_LUT8_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gx_lut.h"             /* GX_ALIGN64, GX_LUT_MAGIC, gx_lut_lo16 */
#include "gx_lut64.h"           /* the float64 tables such a path keeps */

typedef struct {
    float x, xc, xp;            /* covers -x <= x <= xp; a = |x| clamped at xc */
    float xg;                   /* and x >= xg: the identity (gx_lut_ok) */
    float k, k2;                /* piece of a: min(rint(k a + k2 a^2), 7) */
    GX_ALIGN64 float m[9][8];   /* M_i(d) = m[0][i] + ... + m[8][i] d^8; m[8] | c, m[7] | H */
    GX_ALIGN64 uint32_t su[8];  /* S's bfloat16 bits (high half) | U's (low half) */
} gx_lut8;

#include "tables/gx_lut8_tables.h"

/* Which kernel reads which table on a path with 8-piece tables: the TAB8
 * column of GX_F32_SPLITS (gx_split_rows.h); float64 keeps its tables (gx_lut64.h). */

GX_INLINE int gx_lut8_ok(const gx_lut8 *T, float x) { return (x >= -T->x && x <= T->xp) || x >= T->xg; }

GX_INLINE int gx_lut8_index(const gx_lut8 *T, float a)
{
    float t = fmaf(a, fmaf(a, T->k2, T->k), GX_LUT_MAGIC);
    int i = (int)(t - GX_LUT_MAGIC);        /* exact */
    return i < 7 ? i : 7;
}

/* the bfloat16 value in the high (hi = 1) or low half of u: S and U from su */
GX_INLINE float gx_lut8_half(uint32_t u, int hi)
{
    float f;
    u = hi ? u & 0xffff0000u : u << 16;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* M_i(d) (Horner), and B's pieces: h and e with h + e = B(d) - base
 * (base = 1/2 forward, 2 for the derivatives) */
GX_INLINE float gx_lut8_poly(const gx_lut8 *T, int i, float d)
{
    float p = T->m[8][i];
    for (int j = 7; j >= 0; j--) p = fmaf(p, d, T->m[j][i]);
    return p;
}

GX_INLINE float gx_lut8_b(const gx_lut8 *T, int i, float d, float base, float *e)
{
    const float H5 = gx_lut_lo16(T->m[7][i]) + base;        /* exact */
    const float S = gx_lut8_half(T->su[i], 1), U = gx_lut8_half(T->su[i], 0);
    const float t = fmaf(U, d, S);
    const float et = fmaf(U, d, S - t);                     /* S - t exact */
    const float b = fmaf(d, t, H5);
    *e = fmaf(d, et, fmaf(d, t, H5 - b));                   /* H5 - b exact */
    return b - base;                                        /* exact */
}

/* what both twins compute: a, M(d) and h, e of B (base 1/2 forward, 2 for
 * the derivatives) */
GX_INLINE float gx_lut8_parts(const gx_lut8 *T, float x, float base, float *a, float *M, float *e)
{
    float t = fabsf(x);
    t = t < T->xc ? t : T->xc;
    const int i = gx_lut8_index(T, t);
    const float d = t - gx_lut_lo16(T->m[8][i]);
    *a = t;
    *M = gx_lut8_poly(T, i, d);
    return gx_lut8_b(T, i, d, base, e);
}

/* the scalar twins: gelu(x), and gelu'(x) g.  gelu(x) is x times a positive
 * factor, and copysignf says so: for x = +-0 C's fmaf(x, B, -c) is at the
 * compiler's mercy (a negated fma may become one fnmadd, whose exact zero
 * has the other sign: gx_math.h), while the vector loops' x B - c gives
 * +-0; for every other covered x the sign is x's already. */
GX_INLINE float gx_lut8_fwd(const gx_lut8 *T, float x)
{
    if (x >= T->xg) return x;
    float a, M, e;
    const float h = gx_lut8_parts(T, x, 0.5f, &a, &M, &e);
    const float B = signbit(x) ? h : 1.0f - h;
    return copysignf(fmaf(x, B, -fmaf(a, e, M)), x);
}

GX_INLINE float gx_lut8_grad(const gx_lut8 *T, float x, float g)
{
    if (x >= T->xg) return gx_lut_identity(g);
    float a, M, e;
    const float h = gx_lut8_parts(T, x, 2.0f, &a, &M, &e);
    const float Me = M + e;
    const float B = signbit(x) ? h : 1.0f - h;
    const float sM = signbit(x) ? Me : -Me;
    return (g == 0 || !(fabsf(g) < INFINITY)) ? (B + sM) * g : fmaf(B, g, sM * g);
}

#endif /* GX_LUT8_H */
