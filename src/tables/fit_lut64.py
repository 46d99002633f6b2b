"""Generate src/tables/gx_lut64_tables.h, the piecewise tables of the float64 forward GELU kernels.

Usage::

    python src/tables/fit_lut64.py            # print the header
    python src/tables/fit_lut64.py --write    # write src/tables/gx_lut64_tables.h
    python src/tables/fit_lut64.py --check    # exit 1 if the header differs

Needs numpy and mpmath; runs in about 10 s.

The float32 tables' scheme (src/tables/fit_lut.py, src/math/gx_lut.h) in double: with
a = |x| <= X = 5, piece i = min(floor(K a + K2 a^2 + K3 a^3 + T0), 15)
(pieces narrow where q's log-derivative grows: see Index), centre c_i (a
double with c/2 <= a <= 2c over the piece, so d = a - c is exact; c_0 = 0),
H_i the harmonic mean of q at the piece's ends, rounded to a multiple of
2^-53 (so 1 - H_i is exact too; H_0 = 1/2), and

    M_i(d) ~ a (q(a) - H_i),   gelu(x) = x H - M (x < 0),  x (1 - H) - M (x >= 0)

of degree 15 with double coefficients (m_1 double-double: m_1 + m1l),
q(a) = Phi(-a) (exact GELU) or sigmoid(-w(a)) (tanh form).  16 pieces: a
table is one AVX-512 two-register permute (vpermt2pd) for 8 lanes.  Fitted
in relative error against a q(a) (the smaller |result| of the two sides) by
weighted least squares at Chebyshev nodes in 50-digit arithmetic (mpmath,
no BLAS: the same bits on every machine); the coefficients are rounded to
double from the highest degree down, refitting the lower ones after each
rounding, so the roundings are absorbed.  The
comment of each table gives its worst weighted fit error measured at 1001
points per piece, and rho = max |M| / |a q(a)|, the relative variation of q
about H within a piece (the Horner roundings' weight in the error budget of
src/math/gx_lut64.h).
"""
import os
import sys

import mpmath as mp
import numpy as np

from fit_lut import emit, q_erf, q_tanh

mp.mp.dps = 50
NP = 16             # pieces: one vpermt2pd per table
DEG = 15
X = 5.0             # |x| <= X; the rest (1.2% of 2 N(0, 1) data) takes the general formula
NODES = 64
HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gx_lut64_tables.h")

class Index:
    """t = K a + K2 a^2 + K3 a^3 + T0, piece floor(t), with t(X) = NP - 0.1
    (a margin far above t's rounding).

    Pieces of equal relative variation of q need t to grow like -log q: like
    a^2/2 for Phi(-a) (exact GELU: K3 = 0, K2 = K/2), like w(a) =
    c a (1 + 0.044715 a^2) for the tanh form (K2 = 0, K3 = 0.05 K).  Piece 0,
    where H = 1/2 is fixed (tiny x), is made narrow by the offset T0 > 1/2.
    Worst relative variation about H (rho) 0.46 and 0.51, against 0.63 and
    0.88 with the float32 tables' K2 = K/2, T0 = 1/2 and H = q(centre); and
    the largest errors of those (1.4 ULP, in piece 0 at x = -0.34) are gone."""

    def __init__(self, b2, b3, t0):
        self.T0 = t0
        self.K = (NP - 0.1 - t0) / (X + b2 * X ** 2 + b3 * X ** 3)
        self.K2, self.K3 = self.K * b2, self.K * b3

    def t(self, a):
        return self.K * a + self.K2 * a ** 2 + self.K3 * a ** 3 + self.T0

    def a_of(self, t):
        if t <= self.T0:
            return 0.0
        lo, hi = 0.0, 2 * X
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.t(mid) < t else (lo, mid)
        return (lo + hi) / 2


def piece_bounds(ix, i):
    lo, hi = ix.a_of(i), ix.a_of(i + 1)
    if i == NP - 1:
        hi = X
    w = hi - lo
    return max(lo - 1e-6 * w, 0.0), hi + 1e-6 * w      # margin: t is rounded in double


def centre(q, i, lo, hi):
    """Where q is the geometric mean of its values at the ends: the least
    relative variation over the piece."""
    if i == 0:
        return 0.0
    f = lambda a: mp.log(q(a)) - (mp.log(q(lo)) + mp.log(q(hi))) / 2
    c = float(mp.findroot(f, (lo + hi) / 2))
    c = max(c, hi / 2)
    c = min(c, 2 * lo)
    assert c / 2 <= lo and hi <= 2 * c, (i, c, lo, hi)
    return c


class LeastSquares:
    """Least squares over the leading columns of A, by Householder QR done
    once: mpmath's qr_solve's own arithmetic (its order of operations, 10
    more bits than the context), so solve(b, k) is qr_solve(A[:, :k], b)
    to the last bit.  Householder works column by column and never looks
    right of the column it reduces, so A's first k columns and every
    right-hand side see exactly what they would in A[:, :k] alone -- one
    factorisation for all the refits, where a qr_solve per refit took
    most of this script's time."""

    def __init__(self, rows):
        self.m, self.n = len(rows), len(rows[0])
        with mp.workprec(mp.mp.prec + 10):
            A = [[mp.mpf(v) for v in row] for row in rows]
            self.p, self.kappa = [], []
            for j in range(self.n):
                s = mp.fsum(abs(A[i][j]) ** 2 for i in range(j, self.m))
                if not abs(s) > mp.eps:
                    raise ValueError("matrix is numerically singular")
                self.p.append(-mp.sign(A[j][j]) * mp.sqrt(s))
                self.kappa.append(mp.mpf(1) / (s - self.p[j] * A[j][j]))
                A[j][j] -= self.p[j]
                for k in range(j + 1, self.n):
                    y = mp.fsum(A[i][j] * A[i][k] for i in range(j, self.m)) * self.kappa[j]
                    for i in range(j, self.m):
                        A[i][k] -= A[i][j] * y
            self.A = A

    def solve(self, b, k):
        """x minimising |A[:, :k] x - b| (at the raised precision, as qr_solve returns it)."""
        A, p = self.A, self.p
        with mp.workprec(mp.mp.prec + 10):
            b = [mp.mpf(v) for v in b]
            for j in range(k):
                y = mp.fsum(A[i][j] * b[i] for i in range(j, self.m)) * self.kappa[j]
                for i in range(j, self.m):
                    b[i] -= A[i][j] * y
            x = b[:k]
            for i in range(k - 1, -1, -1):
                x[i] -= mp.fsum(A[i][j] * x[j] for j in range(i + 1, k))
                x[i] /= p[i]
            return x


def fit(target, weight, c, lo, hi, first):
    """double coefficients m_0..m_DEG (m_j = 0 for j < first) of M(d) ~ target(a),
    and m_1's low part m1l (M = m_0 + (m_1 + m1l) d + ...)."""
    lo, hi, c = mp.mpf(lo), mp.mpf(hi), mp.mpf(c)
    nodes = [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (k + mp.mpf(0.5)) / NODES) for k in range(NODES)]
    d = [a - c for a in nodes]
    f = [target(a) for a in nodes]
    w = [1 / weight(a) if a > 0 else mp.mpf(0) for a in nodes]
    m = [mp.mpf(0)] * (DEG + 1)
    ls = LeastSquares([[w[k] * d[k] ** j for j in range(first, DEG + 1)] for k in range(NODES)])
    for top in range(DEG, first - 1, -1):
        resid = [f[k] - sum(m[j] * d[k] ** j for j in range(top + 1, DEG + 1)) for k in range(NODES)]
        sol = ls.solve([w[k] * resid[k] for k in range(NODES)], top - first + 1)
        m[top] = mp.mpf(float(sol[top - first]))          # rounded to double
        if top == 1:            # m_1 as double-double: its rounding, times d, is
            m1l = mp.mpf(float(sol[top - first] - m[1]))   # not absorbed by m_0
            m[1] += m1l
    m1h = float(m[1])
    return [float(v) for v in m[:1]] + [m1h] + [float(v) for v in m[2:]] + [float(m[1] - m1h)]


def max_err(m, target, weight, c, lo, hi):
    worst = mp.mpf(0)
    for a in np.linspace(lo, hi, 1001):
        if a == 0:
            continue
        am = mp.mpf(a)
        d = am - mp.mpf(c)
        p = mp.mpf(0)
        for j in range(DEG, -1, -1):
            p = p * d + mp.mpf(m[j])
        p += mp.mpf(m[DEG + 1]) * d
        worst = max(worst, abs(p - target(am)) / weight(am))
    return float(worst)


def table(name, q, ix):
    rows, worst, rho = [], 0.0, mp.mpf(0)
    for i in range(NP):
        lo, hi = piece_bounds(ix, i)
        c = centre(q, i, lo, hi)
        # H: the harmonic mean of q at the piece's ends, which minimises
        # max |q - H| / q (rho) over the piece: (R - 1)/(R + 1) for
        # R = q(lo)/q(hi), against sqrt(R) - 1 for H = q(c)
        qlo, qhi = q(mp.mpf(lo)), q(mp.mpf(hi))
        h = float(mp.nint(2 * qlo * qhi / (qlo + qhi) * 2 ** 53) / 2 ** 53)
        if i == 0:
            h = 0.5                  # M = a (q(a) - 1/2): even in a, O(a^2)
        target = lambda a, h=h: a * (q(a) - h)
        weight = lambda a: a * q(a)
        m = fit(target, weight, c, lo, hi, first=2 if i == 0 else 0)
        worst = max(worst, max_err(m, target, weight, c, lo, hi))
        rho = max(rho, max(abs(target(mp.mpf(a)) / weight(mp.mpf(a))) for a in np.linspace(lo, hi, 51)[1:]))
        rows.append((c, h, m))
    return rows, worst, float(rho)


def fmt(v):
    return float(v).hex()


SPECS = [("gx_lut64_erf", q_erf, Index(0.5, 0.0, 0.7)), ("gx_lut64_tanh", q_tanh, Index(0.0, 0.05, 0.6))]


def generate():
    out = [f"/* GENERATED by src/tables/fit_lut64.py (do not edit by hand): {NP} pieces, degree {DEG} */",
           f"#define GX_LUT64_NP {NP}",
           f"#define GX_LUT64_DEG {DEG}"]
    for name, q, ix in SPECS:
        rows, worst, rho = table(name, q, ix)
        out.append("")
        out.append(f"/* forward; |x| <= {X:g}; worst weighted fit error {worst:.2e}; max |M| / |a q(a)| {rho:.3f} */")
        # the rows (gx_lut64_rows): c_i, H_i, m1l_i, m_0 .. m_DEG, 0
        out.append(f"static const gx_lut64_rows {name}_rows = {{{{")
        for r in rows:
            out.append("    {" + ", ".join(fmt(v) for v in [r[0], r[1], r[2][DEG + 1]] + list(r[2][:DEG + 1]) + [0])
                       + "},")
        out.append("}};")
        out.append(f"static const gx_lut64 {name} = {{")
        out.append(f"    {fmt(X)}, {fmt(ix.K)}, {fmt(ix.K2)}, {fmt(ix.K3)}, {fmt(ix.T0)},")
        out.append("    {" + ", ".join(fmt(r[0]) for r in rows) + "},")
        out.append("    {" + ", ".join(fmt(r[1]) for r in rows) + "},")
        out.append("    {")
        for j in range(DEG + 1):
            out.append("        {" + ", ".join(fmt(r[2][j]) for r in rows) + "},")
        out.append("    },")
        out.append("    {" + ", ".join(fmt(r[2][DEG + 1]) for r in rows) + "},")
        out.append(f"    &{name}_rows,")
        out.append("};")
    return "\n".join(out) + "\n"


def main(argv):
    return emit(generate(), HEADER, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
