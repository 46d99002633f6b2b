"""Generate src/tables/gx_lut8_tables.h, the 8-piece tables of the AVX2 (and NEON) float32 kernels.

Usage::

    python src/tables/fit_lut8.py            # print the header
    python src/tables/fit_lut8.py --write    # write src/tables/gx_lut8_tables.h
    python src/tables/fit_lut8.py --check    # exit 1 if the header differs

    python src/tables/fit_lut8.py gx_lut8_silu   # only the named tables (to look at)

Needs numpy and mpmath; runs in about 15 s on 2 cores.  Every step is exact or
done in mpmath at 50 digits and rounded to float32 by Python's own IEEE
arithmetic, so the header does not depend on NumPy's BLAS.

What is tabulated (src/math/gx_lut8.h says how the kernels use it).  The scheme
of src/math/gx_lut.h (x B - M with x B exact inside one fma and M small) with 8
pieces instead of 32, so that one AVX2 ``vpermps`` (or one NEON ``tbl``)
fetches a coefficient for a whole vector.  Wider pieces need two changes:

* B is a quadratic in d = a - c, B(d) = H + S d + U d^2 ~ q(a) (relative
  least squares), not a constant: q varies by up to e^1.5 over a piece, and
  a constant would leave |M| up to 0.8 |result| (its Horner roundings alone
  would then cost 1.6 ULP).  With the quadratic, rho = max |q - B| / q is
  0.03 (exact GELU), 0.13 (tanh form), 0.01 (SiLU, quick GELU) and 0.22
  (the derivatives, against their scale).  The kernels round B once and
  recover that rounding, and the one of the slope S + U d, exactly (the
  error terms e of src/math/gx_lut8.h), so B need not be representable: H, S and
  U are bfloat16 values, H a multiple of 2^-24 (forward; 2^-22 for the
  derivatives) so that H + 1/2 (H + 2) is exact.  U is capped so that
  |U d| <= |S| / 2 over the piece (S - (S + U d) is then exact, Sterbenz).
* M is of degree 8, fitted in relative error against the smaller side of the
  result (a q(a); derivatives: max(q, a |q'|)); coefficients are rounded to
  float32 from the highest degree down, refitting the lower ones after each.

Pieces: i = min(rint(K a + K2 a^2), 7).  Forward exact and tanh GELU: pieces
0..6 cover [0, 4.5] (K2 = K/2: narrower as q's log-derivative grows) and
piece 7 the positive side (4.5, 6] (x > 6 clamped; H = S = U = 0 there, see
the POSITIVE SIDE of src/math/gx_lut.h); their derivatives: 8 pieces on [0, 4.5].
SiLU and quick GELU (and derivatives): 8 uniform pieces on [0, 8/c].  The
centre c_i is a bfloat16 value with c/2 <= a <= 2c over the piece (d exact,
Sterbenz; c_0 = 0).  PACKING: m_8 carries c's bfloat16 bits and m_7 H's in
their low 16 bits (so both are fitted to 16 bits); ``su`` holds S (high 16
bits) and U (low 16 bits).
"""
import multiprocessing
import os
import sys

import mpmath as mp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit_lut as F   # noqa: E402  (the functions q, |q'|, and the bit helpers)

mp.mp.dps = 50
NP = 8              # pieces: one AVX2 vpermps per table
DEG = 8             # M's degree
NODES = 240         # Chebyshev nodes per piece for the fits
HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gx_lut8_tables.h")


def f32(v):
    return float(np.float32(v))


class Family:
    """|x| <= X covered (forward GELU: x >= -X, and the positive side up to
    ext in the last piece); index t = K a + K2 a^2 rounded."""

    def __init__(self, X, quadratic, ext=None):
        self.X = X
        self.ext = ext
        nneg = NP - 1 if ext else NP           # pieces on [0, X]
        top = nneg - 0.6 if ext else nneg - 0.5
        if quadratic:
            self.K = f32(top / (X * (1 + X / 2)))
            self.K2 = f32(self.K / 2)
        else:
            self.K = f32(top / X)
            self.K2 = 0.0
        self.nneg = nneg
        self.XC = ext if ext else X
        self.XP = float("inf") if ext else X

    def bounds(self, i):
        def a_of(t):
            t = max(t - 0.5, 0.0)
            if self.K2 == 0:
                return t / self.K
            return (-self.K + np.sqrt(self.K * self.K + 4 * self.K2 * t)) / (2 * self.K2)
        lo, hi = a_of(i), a_of(i + 1)
        if i == NP - 1:
            hi = self.XC
        w = hi - lo
        return max(lo - 1e-4 * w, 0.0), hi + 1e-4 * w    # margin: t is rounded in float32


GELU = Family(4.5, True)
GELU_FWD = Family(4.5, True, ext=6.0)
SILU = Family(8.0, False)
QUICK = Family(f32(8.0 / 1.702), False)


def nodes(lo, hi):
    return [(lo + hi) / 2 + (hi - lo) / 2 * float(mp.cos(mp.pi * (k + mp.mpf(1) / 2) / NODES)) for k in range(NODES)]


def gram(rows, w):
    """The normal equations' matrix sum w^2 r r^T (upper triangle; at 50
    digits).  Its leading n x n block is the matrix of the first n columns,
    so the fits of M from the top degree down build it once per piece."""
    n = len(rows[0])
    A = mp.matrix(n, n)
    for r, wt in zip(rows, w):
        w2 = wt * wt
        for p in range(n):
            for q in range(p, n):
                A[p, q] += w2 * r[p] * r[q]
    return A


def lsq(rows, rhs, w, G=None):
    """Weighted least squares in mpmath (normal equations at 50 digits) on
    the first len(rows[0]) columns; G: gram() of rows with more columns."""
    n = len(rows[0])
    G = gram(rows, w) if G is None else G
    A = mp.matrix(n, n)
    b = mp.matrix(n, 1)
    for r, y, wt in zip(rows, rhs, w):
        w2 = wt * wt
        for p in range(n):
            b[p] += w2 * r[p] * y
    for p in range(n):
        for q in range(n):
            A[p, q] = G[min(p, q), max(p, q)]
    return list(mp.lu_solve(A, b))


def centre(fam, q, i, lo, hi):
    """bfloat16 centre near where q is the geometric mean of its ends, with
    c/2 <= a <= 2c over [lo, hi]; 0 for piece 0."""
    if i == 0:
        return 0.0
    if i >= fam.nneg:           # the positive extension: the middle
        c = (lo + hi) / 2
    else:
        g = lambda a: mp.log(q(a)) - (mp.log(q(lo)) + mp.log(q(hi))) / 2
        c = float(mp.findroot(g, (lo + hi) / 2))
    u = int(np.float32(F.bf16(c)).view(np.uint32)) >> 16
    cands = [float(np.uint32(t << 16).view(np.float32)) for t in range(u - 40, u + 41)]
    cands = [v for v in cands if v / 2 <= lo and hi <= 2 * v]
    assert cands, (i, c, lo, hi)
    return min(cands, key=lambda v: abs(v - c))


def error_forms(grad, q, dq, HSU, c, covered, maximum, where):
    """The fitted function M approximates and the scale of its error, as
    functions of a: in mpmath (maximum = max, where a conditional) for the
    error at a point, and over float64 arrays (the twins of q and |q'|,
    np.maximum, np.where) for the screen.  B = H + S d + U d^2, d = a - c;
    a forward piece's error is relative to a q(a) where covered(a), else
    to a."""
    H, S, U = HSU
    b = lambda a: H + S * (a - c) + U * (a - c) * (a - c)
    if grad:
        return (lambda a: q(a) - a * dq(a) - b(a)), (lambda a: maximum(q(a), a * dq(a)))
    return (lambda a: a * (q(a) - b(a))), (lambda a: where(covered(a), a * q(a), a))


def table(fam, q, dq, grad):
    rows, worst, worst_rho = [], 0.0, 0.0
    for i in range(NP):
        lo, hi = fam.bounds(i)
        ext = fam.ext is not None and i >= fam.nneg
        c = centre(fam, q, i, lo, min(hi, fam.X) if not ext else hi)
        A = [mp.mpf(a) for a in nodes(lo, hi)]
        d = [a - c for a in A]
        if grad:
            val = [q(a) - a * dq(a) for a in A]              # G(a) = gelu'(-a)
            scale = [max(q(a), a * dq(a)) for a in A]
        else:
            val = [q(a) for a in A]
            scale = val
        neg = [(not ext) and a <= fam.X for a in A]
        # B = H + S d + U d^2 ~ val, relative to scale, on the covered part
        H = S = U = 0.0
        if not ext:
            sel = [k for k in range(NODES) if neg[k]]
            w = [1 / scale[k] for k in sel]
            sol = lsq([[1, d[k], d[k] ** 2] for k in sel], [val[k] for k in sel], w)
            if grad:
                H = round(F.bf16(float(sol[0])) * 2 ** 22) / 2 ** 22
            else:
                H = 0.5 if i == 0 else F.bf16(round(float(sol[0]) * 2 ** 24) / 2 ** 24)
            assert F.bf16(H) == H
            sol = lsq([[d[k], d[k] ** 2] for k in sel], [val[k] - H for k in sel], w)
            S = F.bf16(float(sol[0]))
            sol = lsq([[d[k] ** 2] for k in sel], [val[k] - H - S * d[k] for k in sel], w)
            dmax = max(abs(v) for v in d)
            U = float(sol[0])
            lim = 0.45 * abs(S) / float(dmax)
            if abs(U) > lim:
                U = float(np.sign(U)) * lim
            U = F.bf16(U)
            while abs(U) * dmax > abs(S) / 2:
                U = float(np.nextafter(np.float32(U), np.float32(0)))
        b = [H + S * dk + U * dk * dk for dk in d]
        if grad:
            target = [v - bk for v, bk in zip(val, b)]
            wts = [1 / s for s in scale]
            rho = max(abs(t) / s for t, s in zip(target, scale))
        else:
            target = [a * (v - bk) for a, v, bk in zip(A, val, b)]
            wts = [(1 / (a * v) if ng else 1 / a) if a > 0 else mp.mpf(0) for a, v, ng in zip(A, val, neg)]
            rho = max([abs(v - bk) / v for v, bk, ng in zip(val, b, neg) if ng] or [0])
        worst_rho = max(worst_rho, float(rho))
        # M: degree DEG, m_0 = 0 on the forward piece 0 (M = O(a)); rounded
        # from the top down, the lower ones refitted after each
        low = {DEG: F.bits16(c), DEG - 1: F.bits16(H)}
        m = [0.0] * (DEG + 1)
        first = 1 if (i == 0 and not grad) else 0
        powers = [[dk ** j for j in range(first, DEG + 1)] for dk in d]
        G = gram(powers, wts)
        for top in range(DEG, first - 1, -1):
            resid = [t - sum(m[j] * dk ** j for j in range(top + 1, DEG + 1)) for t, dk in zip(target, d)]
            sol = lsq([r[:top + 1 - first] for r in powers], resid, wts, G)
            v = float(sol[-1])
            m[top] = F.with_low16(v, low[top]) if top in low else f32(v)
        for j in (DEG, DEG - 1):                # entries never subnormal
            e = (int(np.float32(m[j]).view(np.uint32)) >> 23) & 0xFF
            assert 0 < e < 255 or m[j] == 0.0, (i, j, m[j])
        # the worst fit error at 1001 points, in mpmath where it can be the
        # worst (fit_lut.max_err says how)
        target, scale = error_forms(grad, q, dq, (H, S, U), c, lambda a: not ext and a <= fam.X,
                                    max, lambda t, x, y: x if t else y)

        def exact(a):
            a = mp.mpf(a)
            p = sum(m[j] * (a - c) ** j for j in range(DEG + 1))
            return float(abs(p - target(a)) / scale(a))
        err = F.screened_max([a for a in np.linspace(lo, hi, 1001) if a != 0], exact,
                             lambda x: [m[j] * (x - c) ** j for j in range(DEG + 1)],
                             *error_forms(grad, q.f64, dq.f64, (H, S, U), c,
                                          lambda a: (not ext) & (a <= fam.X), np.maximum, np.where))
        worst = max(worst, err)
        rows.append((m, (F.bits16(S) << 16) | F.bits16(U)))
    return rows, worst, worst_rho


def fmt(v):
    return float(np.float32(v)).hex() + "f"


SPECS = [  # (table, family, q, |q'|, derivative?)
    ("gx_lut8_erf", GELU_FWD, F.q_erf, F.dq_erf, False), ("gx_lut8_erf_grad", GELU, F.q_erf, F.dq_erf, True),
    ("gx_lut8_tanh", GELU_FWD, F.q_tanh, F.dq_tanh, False), ("gx_lut8_tanh_grad", GELU, F.q_tanh, F.dq_tanh, True),
    ("gx_lut8_silu", SILU, F.q_silu, F.dq_silu, False), ("gx_lut8_silu_grad", SILU, F.q_silu, F.dq_silu, True),
    ("gx_lut8_quick", QUICK, F.q_quick, F.dq_quick, False), ("gx_lut8_quick_grad", QUICK, F.q_quick, F.dq_quick, True),
]


def _table(spec):
    name, fam, q, dq, grad = spec
    return table(fam, q, dq, grad)


def generate(only=None):
    out = [f"/* GENERATED by src/tables/fit_lut8.py (do not edit by hand): {NP} pieces, degree {DEG}, quadratic B */",
           f"#define GX_LUT8_NP {NP}",
           f"#define GX_LUT8_DEG {DEG}"]
    specs = [s for s in SPECS if not only or s[0] in only]
    # the tables are independent: one process per core (the same bits: every
    # step is exact or mpmath's)
    with multiprocessing.Pool(min(len(specs), os.cpu_count() or 1)) as pool:
        results = pool.map(_table, specs)
    for (name, fam, q, dq, grad), (rows, worst, rho) in zip(specs, results):
        what = "derivative" if grad else "forward"
        xgv = F.identity_from(fam, q, dq, grad)
        xp, xg = F.fmt_inf(fam.XP), F.fmt_inf(xgv)
        cover = f"|x| <= {fam.X:g}" if fam.ext is None else f"x >= -{fam.X:g} (a clamped at {fam.ext:g})"
        if xgv < float("inf"):
            cover += f", the identity from x >= {xgv:g}"
        out.append("")
        out.append(f"/* {what}; {cover}; worst weighted fit error {worst:.2e}; rho {rho:.3f} */")
        out.append(f"static const gx_lut8 {name} = {{")
        out.append(f"    {fmt(fam.X)}, {fmt(fam.XC)}, {xp}, {xg}, {fmt(fam.K)}, {fmt(fam.K2)},")
        out.append("    {")
        for j in range(DEG + 1):
            out.append("        {" + ", ".join(fmt(r[0][j]) for r in rows) + "},")
        out.append("    },")
        out.append("    /* su: S (high 16 bits) | U (low 16 bits), bfloat16 bits */")
        out.append("    {" + ", ".join(f"0x{r[1]:08x}u" for r in rows) + "},")
        out.append("};")
    return "\n".join(out) + "\n"


def main(argv):
    only = [a for a in argv if not a.startswith("--")]
    return F.emit(generate(only), HEADER, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
