"""Generate src/tables/gx_math_tables.h, the polynomial coefficients of src/math/gx_math.h.

    python src/tables/fit_gx.py            # print the header
    python src/tables/fit_gx.py --write    # write src/tables/gx_math_tables.h
    python src/tables/fit_gx.py --check    # exit 1 if the header differs

(The float32 tables of src/tables/gx_lut_tables.h come from src/tables/fit_lut.py.)

Needs mpmath only (every solve in 40-digit mpmath,
no BLAS: the same bits on every machine); runs in a few seconds.

Fits (all in the variable Y = (t - K)/(t + K), K = 4, which maps t in [0, inf)
onto [-1, 1); t = |x|):
* g(Y) = (t + K) R(t), R(t) = exp(t^2/2) Phi(-t) = erfcx(t/sqrt2)/2, so that
  Phi(-t) = exp(-t^2/2) g(Y) (1 - Y)/(2K).  g is analytic on [-1, 1] (g -> 1/sqrt(2 pi)
  as t -> inf), so its Chebyshev series converges geometrically.
  - GX_G64: degree 26.  Near Y = 1 (the tail) the monomial sum cancels (g ~ 0.4
    from coefficients ~0.75, -0.6, 0.39 ...), so c0..c2 are kept as double-double
    (``_H``/``_L``) and evaluated in double-double; the other coefficients are
    rounded from the highest degree down, refitting the lower ones (relative
    least squares at Chebyshev nodes) after each rounding so that the rounding
    errors are absorbed.
  - GX_GD64: g'(Y), degree 8 (only corrects the rounding error of Y; 1e-3 is plenty).
  - GX_G32: degree 12 (float32 results need ~1e-9 relative).
* GX_RT32: R(t) itself, degree 8 in the same Y, on the float32 tail only
  (t in [TAIL_LO, TAIL_HI]: the x < -4.5 that the float32 tables leave to
  the general formula, clamped where x Phi(x) has underflowed to -0): the
  short range needs 9 coefficients where g on all of [-1, 1) needs 13, and
  R directly saves the (1 - Y)/(2K) factor.
* expm1(r) = r + r^2 (1/2 + r p(r)) on |r| <= ln2/2: GX_E64 (degree 9 p) and
  GX_E32 (degree 5 p).
The printed comments give the max error of each rounded fit measured in mpmath.
"""
import os
import sys

import mpmath as mp

mp.mp.dps = 40
K = 4
RMAX = mp.log(2) / 2 * (1 + mp.mpf("1e-6"))
# the float32 tail (gx_gelu_erf_f32_tail): t = |x| from the tables' end
# (4.5, a margin below) to 14.5, where |x Phi(x)| < 2^-151 rounds to -0
TAIL_LO, TAIL_HI = mp.mpf("4.49"), mp.mpf("14.5")
HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gx_math_tables.h")


def R(t):
    return mp.erfc(t / mp.sqrt(2)) * mp.exp(t * t / 2) / 2


def g(Y):
    if Y == 1:
        return 1 / mp.sqrt(2 * mp.pi)
    t = K * (1 + Y) / (1 - Y)
    return (t + K) * R(t)


def p_exp(r):
    if abs(r) < mp.mpf("1e-10"):
        return mp.mpf(1) / 6 + r / 24 + r * r / 120
    return (mp.expm1(r) - r - r * r / 2) / r ** 3


def cheb_nodes(a, b, m):
    return [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / m) for k in range(m)]


def lsq_fit(f, a, b, deg, fixed=None, m=None, rel=True):
    """Monomial coefficients (lowest first) minimising the (relative) residual
    at Chebyshev nodes; ``fixed`` maps degree -> coefficient held fixed."""
    fixed = fixed or {}
    m = m or 3 * deg + 20
    xs = cheb_nodes(a, b, m)
    fs = [f(x) for x in xs]
    free = [k for k in range(deg + 1) if k not in fixed]
    A = mp.matrix(m, len(free))
    rhs = mp.matrix(m, 1)
    for i, (x, fx) in enumerate(zip(xs, fs)):
        w = 1 / fx if rel else 1
        rhs[i] = (fx - mp.fsum(c * x ** k for k, c in fixed.items())) * w
        for j, k in enumerate(free):
            A[i, j] = x ** k * w
    sol = mp.qr_solve(A, rhs)[0]
    coef = dict(fixed)
    for j, k in enumerate(free):
        coef[k] = sol[j]
    return [coef[k] for k in range(deg + 1)]


def round_down_from_top(f, a, b, deg, keep_dd, rel=True):
    """Round coefficients to double from degree ``deg`` down to ``keep_dd``,
    refitting the unrounded lower ones after each step; the lowest ``keep_dd``
    are returned unrounded (the caller splits them into double-double)."""
    fixed = {}
    for k in range(deg, keep_dd - 1, -1):
        coef = lsq_fit(f, a, b, deg, fixed, rel=rel)
        fixed[k] = mp.mpf(float(coef[k]))
    return lsq_fit(f, a, b, deg, fixed, rel=rel) if keep_dd else [fixed[k] for k in range(deg + 1)]


def max_rel_err(coef, f, a, b, n=600):
    worst = 0
    for k in range(n + 1):
        x = a + (b - a) * mp.mpf(k) / n
        p = mp.mpf(0)
        for c in reversed(coef):
            p = p * x + c
        fx = f(x)
        worst = max(worst, abs((p - fx) / fx))
    return worst


def emit(out, name, coef, note, dd=0):
    out.append(f"/* {note} */")
    for i, c in enumerate(coef):
        if i < dd:
            hi = float(c)
            lo = float(c - mp.mpf(hi))
            out.append(f"#define {name}_{i}_H {hi.hex()}")
            out.append(f"#define {name}_{i}_L {lo.hex()}")
        else:
            out.append(f"#define {name}_{i} {float(c).hex()}")


def generate():
    out = []
    c = round_down_from_top(g, -1, 1, 26, 3)
    cr = [mp.mpf(float(v)) + mp.mpf(float(v - mp.mpf(float(v)))) if i < 3 else v for i, v in enumerate(c)]
    emit(out, "GX_G64", c, f"g(Y), degree 26, c0..c2 double-double; max rel error {float(max_rel_err(cr, g, -1, 1)):.2e}", dd=3)

    def gd(Y):          # derivative of the fitted polynomial
        return mp.fsum(k * ck * Y ** (k - 1) for k, ck in enumerate(cr) if k)
    cd = lsq_fit(gd, -1, 1, 8, rel=False)
    cd = [mp.mpf(float(v)) for v in cd]
    out.append("")
    emit(out, "GX_GD64", cd, f"g'(Y), degree 8; max rel error {float(max_rel_err(cd, gd, -1, 1)):.1e}")
    c32 = round_down_from_top(g, -1, 1, 12, 0)
    out.append("")
    emit(out, "GX_G32", c32, f"g(Y), degree 12; max rel error {float(max_rel_err(c32, g, -1, 1)):.2e}")

    def rt(Y):          # R(t) as a function of Y
        return R(K * (1 + Y) / (1 - Y))
    ya, yb = (TAIL_LO - K) / (TAIL_LO + K), (TAIL_HI - K) / (TAIL_HI + K)
    ct = round_down_from_top(rt, ya, yb, 8, 0)
    out.append("")
    emit(out, "GX_RT32", ct, f"R(t) on the float32 tail, t in [{float(TAIL_LO)}, {float(TAIL_HI)}], "
                             f"degree 8 in Y; max rel error {float(max_rel_err(ct, rt, ya, yb)):.2e}")
    for name, deg in (("GX_E64", 9), ("GX_E32", 5)):
        ce = round_down_from_top(p_exp, -RMAX, RMAX, deg, 0)
        err = max_rel_err(ce, p_exp, -RMAX, RMAX) * RMAX ** 3 / 6
        out.append("")
        emit(out, name, ce, f"expm1(r) = r + r^2 (1/2 + r p(r)), p of degree {deg}; "
                            f"max error of r^3 p relative to 1: {float(err):.1e}")
    return "\n".join(out)


def main(argv):
    text = ("/* GENERATED by src/tables/fit_gx.py (do not edit by hand): the polynomial coefficients of "
            "src/math/gx_math.h */\n" + generate() + "\n")
    from fit_lut import emit    # after generate(): importing fit_lut sets mpmath's precision
    return emit(text, HEADER, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
