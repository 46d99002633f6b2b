"""Generate src/tables/gx_lut_tables.h, the piecewise tables of the float32-lane kernels.

Usage::

    python src/tables/fit_lut.py            # print the header
    python src/tables/fit_lut.py --write    # write src/tables/gx_lut_tables.h
    python src/tables/fit_lut.py --check    # exit 1 if the header differs

    python src/tables/fit_lut.py gx_lut_silu   # only the named tables (to look at)

Needs numpy and mpmath; runs in about ten seconds.

What is tabulated (see src/math/gx_lut.h for how the kernels use it).  With
a = |x| <= X (each table carries X, K, K2), the piece is
i = min(rint(K a + K2 a^2), 31): pieces are narrow where the functions
change fast in relative terms, so every piece sees about the same relative
variation (< 0.3).  GELU (X = 4.5): the log-derivative of Phi(-a) grows like
a, and so does K (1 + a) with K2 = K/2.  SiLU and quick GELU (x sigmoid(c x),
X = 8/c): the log-derivative of sigmoid(-c a) stays in [c/2, c), so the pieces
are uniform (K2 = 0).  The forward GELU tables (exact and tanh) carry one
more thing: pieces 0..30 cover [0, 4.5] and the last piece serves x in
(4.5, 6] (and x > 6 clamped to 6), where gelu(x) = x - x q(x) is x to within
57 ULPs, so the tables cover every x > -4.5 (``GELU_FWD``).  Piece i has a centre c_i (a
bfloat16 value, the nearest to the point where q is the geometric mean of its
ends; c_0 = 0, the others with c/2 <= a <= 2c over the piece, so d = a - c is
exact by Sterbenz), and for each function a value H_i (q at the balanced
centre, a multiple of 2^-24 rounded to 8 significant bits, still a multiple,
so that 1 - H_i is exact too; 2^-23 for the derivatives, whose G goes negative,
so that 1 - H_i > 1 is exact) and a degree-6 polynomial M_i(d) with float32
coefficients:

* forward, q(a) = Phi(-a) (exact GELU) or sigmoid(-w(a)) (tanh form, SiLU,
  quick GELU: f(x) = x (1 - q(|x|)) for x >= 0, x q(|x|) for x < 0):
      M_i(d) = a (q(a) - H_i),  gelu(x) = x H - M (x < 0),  x (1 - H) - M (x >= 0)
  fitted in relative error against a q(a), the smaller |result| of the two sides;
* derivative, G(a) = q(a) - a |q'(a)| (gelu'(-a); gelu'(a) = 1 - G(a)):
      M_i(d) = G(a) - H_i,  fitted against max(q(a), a |q'(a)|), the scale in
  which the derivative's bound is stated.
Coefficients are rounded to float32 from the highest degree down, refitting the
lower ones after each rounding (weighted least squares at Chebyshev nodes,
solved exactly in integers: lstsq_last; no BLAS and no libm, so the header
has the same bits on every machine), so the rounding errors are absorbed; the
printed comments give the worst fit error of each table measured at 2001
points per piece.  PACKING (src/math/gx_lut.h):
m_5 and m_6 are stored with c_i's and H_i's bfloat16 bits as their low 16 bits,
so only their top 16 bits are free (``with_low16``); the kernels take c_i and
H_i from the entries by a 16-bit shift.  The degree-5 tables store m_6 = 0
with H_i's bits (an entry used for H_i only).
"""
import functools
import math
import os
import sys

import mpmath as mp
import numpy as np

mp.mp.dps = 30
NP = 32             # pieces: one AVX-512 two-register permute (vpermt2ps) per table
DEG = 6             # the tables' storage: m_0 .. m_6 (a degree-5 family stores m_6 = 0)
TANH_C = 2 * mp.sqrt(2 / mp.pi)
TANH_A = mp.mpf("0.044715")
QUICK_C = mp.mpf("1.702")
HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gx_lut_tables.h")


class Family:
    """The pieces of a table family: |x| <= X, index t = K a + K2 a^2 + 1/2.

    GELU: q's log-derivative grows like a, so K2 = K/2 (pieces narrow as
    1/(1 + a)) and X = 4.5.  The sigmoid family (SiLU, quick GELU): the
    log-derivative of sigmoid(-c a) is c (1 - q) in [c/2, c), so uniform pieces
    (K2 = 0) of width 0.25/c give the same relative variation; X = 8/c."""

    def __init__(self, X, quadratic, qcentre, deg, ext=None):
        self.X = X
        self.deg = deg              # its polynomials' degree (<= DEG)
        self.ext = ext              # forward GELU: the last piece serves x in (X, ext]
        # with an extension, NP - 1 pieces cover [0, X] (t(X) = NP - 1.1: a
        # margin far above t's rounding) and the last piece the positive side
        top = NP - 0.5 if ext is None else NP - 1.6
        if quadratic:
            self.K = float(np.float32(top / (X * (1 + X / 2))))
            self.K2 = float(np.float32(self.K / 2))
        else:
            self.K = float(np.float32(top / X))
            self.K2 = 0.0
        self.qcentre = qcentre      # the function whose log the centres balance
        self.XC = X if ext is None else ext     # where a = |x| is clamped
        self.XP = X if ext is None else float("inf")   # x > XP: not covered


def _memo(fn):
    """fn(a), remembered for the last few a at the working precision: the
    fits and error scans ask for q(a) and |q'(a)| several times at one point
    (the target, its weight, and |q'| of the sigmoid family through q), and
    these mpmath evaluations are most of the scripts' time.  The same values,
    so the same headers."""
    @functools.lru_cache(maxsize=64)
    def at(a, prec):
        return fn(a)

    @functools.wraps(fn)
    def memo(a):
        return at(a, mp.mp.prec)
    return memo


@_memo
def q_erf(a):
    return mp.ncdf(-a)


@_memo
def dq_erf(a):                       # |q'(a)| = phi(a)
    return mp.npdf(a)


def _w(a):
    return TANH_C * a * (1 + TANH_A * a * a)


@_memo
def q_tanh(a):
    return 1 / (1 + mp.exp(_w(a)))


@_memo
def dq_tanh(a):
    s = q_tanh(a)
    return s * (1 - s) * TANH_C * (1 + 3 * TANH_A * a * a)


@_memo
def q_silu(a):
    return 1 / (1 + mp.exp(a))


@_memo
def dq_silu(a):
    s = q_silu(a)
    return s * (1 - s)


@_memo
def q_quick(a):
    return 1 / (1 + mp.exp(QUICK_C * a))


@_memo
def dq_quick(a):
    s = q_quick(a)
    return s * (1 - s) * QUICK_C


# Each q and |q'| above has a float64 twin on NumPy arrays, the same formula
# in libm (a few ULPs): max_err screens its grid with them (see there).
_erfc64 = np.vectorize(math.erfc, otypes=[float])
_TC, _TA, _QC = float(TANH_C), float(TANH_A), float(QUICK_C)


def _sigmoid_twins(q, dq, w, dw):
    """The twins of q(a) = 1 / (1 + e^w(a)) and |q'(a)| = q (1 - q) w'(a)."""
    q.f64 = lambda a: 1 / (1 + np.exp(w(a)))
    dq.f64 = lambda a: q.f64(a) * (1 - q.f64(a)) * dw(a)


q_erf.f64 = lambda a: 0.5 * _erfc64(a / math.sqrt(2))
dq_erf.f64 = lambda a: np.exp(-a * a / 2) / math.sqrt(2 * math.pi)
_sigmoid_twins(q_tanh, dq_tanh, lambda a: _TC * a * (1 + _TA * a * a), lambda a: _TC * (1 + 3 * _TA * a * a))
_sigmoid_twins(q_silu, dq_silu, lambda a: a, lambda a: 1.0)
_sigmoid_twins(q_quick, dq_quick, lambda a: _QC * a, lambda a: _QC)


def identity_from(fam, q, dq, grad):
    """XG: from x = XG on, the function rounds to its identity for every
    float32 (the forward result is x, the derivative times g is g), so the
    kernels return that without the general formula (gx_lut.h, gx_lut_ok).
    With gelu'(a) = 1 - G(a), G(a) = q(a) - a |q'(a)| (see the top), and
    f(a) = a (1 - q(a)): where |G(a)|, or q(a), is below 2^-26 the double
    result times g (or a) is within 2^-26 + 2^-52 of g's (a's) value, which
    no float32 rounding moves off it (half a ULP is above 2^-25 relative).
    The first multiple of 1/4 above X where it holds; both decrease from X
    on.  The forward GELU tables cover x > 0 whole already: INFINITY.  So is
    a threshold more than IDENTITY_GAP above X (the sigmoid family's: 18.25
    to 21.25 against 8, 10.75 and 12.5 against 4.7): the elements between
    still take the formula, and testing every flagged element cost more than
    it saved (Xeon, AVX-512 and AVX2: SiLU and quick GELU 5-18% slower at
    3 N(0,1), faster only at 8); the GELU derivatives' (6.25 and 5.75 against
    4.5) halve their time at 8 N(0,1)."""
    if fam.ext is not None:
        return float("inf")
    dev = (lambda a: abs(q(a) - a * dq(a))) if grad else q
    a = math.ceil(fam.X * 4) / 4
    while dev(mp.mpf(a)) >= mp.mpf(2) ** -26:
        a += 0.25
    return a if a - fam.X <= IDENTITY_GAP else float("inf")


IDENTITY_GAP = 2.0


# Degree: GELU needs 6 (degree 5 leaves 4e-8, too much of the ULP budget);
# the sigmoid family reaches the float32 coefficients' own floor (~7e-9) at 5,
# and its kernels skip the zero m_6 (gx_loop_f32.h, gx_body32's S).
GELU = Family(4.5, True, q_erf, 6)
# The forward tables also cover x > 4.5 -- half of the elements beyond the
# tables, which took the general double formula -- in their last piece:
# there gelu(x) = x - x q(x) with x q(x) below 57 ULP(x) (and below half an
# ULP from x = 5.5 on), so M needs little relative accuracy; a = |x| is
# clamped at 6, where it is 0.02 ULP, and x (1 - 0) - M rounds to x.  x < -4.5
# still takes the general formula (the tail, where x q(x) is the result).
# The derivative cannot follow cheaply: a phi(a) reaches half an ULP of 1
# only at a = 5.9, too wide a piece for its fit.
GELU_FWD = Family(4.5, True, q_erf, 6, ext=6.0)
SILU = Family(8.0, False, q_silu, 5)
QUICK = Family(float(np.float32(8.0 / 1.702)), False, q_quick, 5)


def piece_bounds(fam, i):
    """[lo, hi] of a for piece i, from t = K a + K2 a^2 + 1/2 (in exact arithmetic)."""
    def a_of(t):
        t = max(t - 0.5, 0.0)
        if fam.K2 == 0:
            return t / fam.K
        return -1 + np.sqrt(1 + 2 * t / fam.K)          # K2 = K/2
    lo, hi = a_of(i), a_of(i + 1)
    if i == NP - 1:
        hi = fam.XC
    w = hi - lo
    return max(lo - 1e-4 * w, 0.0), hi + 1e-4 * w   # margin: t is rounded in float32


def centre(fam, i, lo, hi):
    if i == 0:
        return 0.0
    # where q(a) is the geometric mean of its ends: the least relative variation
    # (the GELU family: of Phi(-a), for the tanh form's tables too)
    q = fam.qcentre
    f = lambda a: mp.log(q(a)) - (mp.log(q(lo)) + mp.log(q(hi))) / 2
    c = float(np.float32(float(mp.findroot(f, (lo + hi) / 2))))
    # Sterbenz needs c/2 <= a <= 2c over the piece: the first uniform pieces
    # (ratio hi/lo = 3) have little room, so the centre moves inside it
    if c > 2 * lo:
        c = float(np.float32(2 * lo))
        while c > 2 * lo:
            c = float(np.nextafter(np.float32(c), np.float32(0)))
    assert c / 2 <= lo and hi <= 2 * c, (i, c, lo, hi)
    return c


def bf16(v):
    """v rounded to bfloat16 (8 significant bits, to nearest even), as a float."""
    u = int(np.float32(v).view(np.uint32))
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return float(np.uint32(u).view(np.float32))


def bits16(v):
    """the 16 bits of the bfloat16 value v (exactly a bfloat16)."""
    u = int(np.float32(v).view(np.uint32))
    assert u & 0xFFFF == 0, v
    return u >> 16


def with_low16(v, low):
    """The float32 nearest to v whose low 16 bits are low (the kernels fetch
    m_5 with c's bfloat16 bits and m_6 with H's in one entry: PACKING)."""
    top = int(np.float32(v).view(np.uint32)) >> 16
    cands = [float(np.uint32(((t & 0xFFFF) << 16) | low).view(np.float32)) for t in (top - 1, top, top + 1)]
    return min((w for w in cands if np.isfinite(w)), key=lambda w: abs(w - v))


def cos_rn(x):
    """cos(x) correctly rounded (NumPy's cos is a vendor or SIMD routine that
    may differ in the last bit from one CPU or libm to another)."""
    return float(mp.cos(mp.mpf(x)))


def pow_rn(v, j):
    """v**j correctly rounded: the exact power of the double v, rounded once
    (int / int is correctly rounded).  np.power and libm pow are not: NumPy's
    AVX-512 pow differs from glibc's in the last bit for ~3% of arguments."""
    n, den = v.as_integer_ratio()
    return n ** j / den ** j


def lstsq_last(A, b):
    """The last component of the least-squares solution of A x ~ b (A, b
    lists of doubles, A of full column rank), exact, then rounded once to
    double.

    Why exact: np.linalg.lstsq's answer depends on the BLAS/LAPACK build
    (blocking, SIMD, threads) in its last bits, and a last bit of the double
    can move the float32 coefficient, so the header depended on the machine.
    The doubles are integers times one power of two, so the normal equations
    A^T A x = A^T b are integer equations, solved exactly by fraction-free
    (Bareiss) elimination: A^T A is positive definite, so no pivoting, and
    x_n is the quotient of the last row's two entries (Cramer).  Same bits on
    every machine, and the same tables as the LAPACK solve that made the
    committed header; with OpenBLAS forced to another kernel set
    (OPENBLAS_CORETYPE=Prescott) and NumPy's AVX-512 loops off, that solve
    moved one coefficient (piece 0 of a forward table), this one none."""
    den = max(x.as_integer_ratio()[1] for x in [*b, *(x for row in A for x in row)])   # powers of 2
    Ai = [[x.as_integer_ratio()[0] * (den // x.as_integer_ratio()[1]) for x in row] for row in A]
    bi = [x.as_integer_ratio()[0] * (den // x.as_integer_ratio()[1]) for x in b]
    n = len(A[0])
    M = [[sum(r[i] * r[j] for r in Ai) for j in range(n)] + [sum(r[i] * bk for r, bk in zip(Ai, bi))]
         for i in range(n)]
    prev = 1
    for k in range(n - 1):
        for i in range(k + 1, n):
            for j in range(k + 1, n + 1):
                M[i][j] = (M[i][j] * M[k][k] - M[i][k] * M[k][j]) // prev    # exact (Bareiss)
        prev = M[k][k]
    return M[n - 1][n] / M[n - 1][n - 1]


def fit(target, weight, c, lo, hi, zero_at_0, deg=DEG, low16=(None, None)):
    """float32 coefficients m_0..m_DEG of M(d) ~ target(a), d = a - c.

    low16 = (bits5, bits6): m_5 and m_6 are stored with these low 16 bits
    (with_low16), rounded so before the lower ones are refitted.  Only
    correctly rounded operations (IEEE +, -, *, /, cos_rn, pow_rn, mpmath)
    and the exact solve (lstsq_last): the same bits whatever the CPU, libm or
    BLAS."""
    nodes = [(lo + hi) / 2 + (hi - lo) / 2 * cos_rn(np.pi * (k + 0.5) / 300) for k in range(300)]
    d = [a - c for a in nodes]
    P = [[pow_rn(v, j) for v in d] for j in range(DEG + 1)]       # P[j][k] = d_k ** j
    f = [float(target(mp.mpf(a))) for a in nodes]
    w = [float(1 / weight(mp.mpf(a))) if a > 0 else 0.0 for a in nodes]
    m = [0.0] * (DEG + 1)
    first = 1 if zero_at_0 else 0
    for top in range(deg, first - 1, -1):
        resid = []
        for k in range(len(nodes)):
            s = 0.0
            for j in range(top + 1, DEG + 1):
                s += m[j] * P[j][k]
            resid.append(f[k] - s)
        A = [[P[j][k] * w[k] for j in range(first, top + 1)] for k in range(len(nodes))]
        sol = lstsq_last(A, [resid[k] * w[k] for k in range(len(nodes))])
        low = low16[top - 5] if top >= 5 else None
        m[top] = float(np.float32(sol)) if low is None else with_low16(sol, low)
    return np.array(m)


def max_err(m, target, weight, c, lo, hi, screen):
    """The worst weighted fit error at 2001 points of [lo, hi], each point's
    error taken in mpmath (exact below), where only the points that can hold
    the maximum are evaluated: screen, the (target, weight) pair over float64
    arrays, gives every point's error to within its slack (SLACK, hundreds of
    ULPs: far above the float64 evaluation's few), so a point whose screened
    error plus slack is below another's minus slack cannot be the worst.  The
    same maximum as evaluating every point, from about one point in 700
    (the mpmath calls were most of the scripts' time); each point evaluated
    checks the slack."""
    def exact(a):
        p = sum(m[j] * pow_rn(a - c, j) for j in range(DEG + 1))      # (not libm's pow: see pow_rn)
        return abs(p - float(target(mp.mpf(a)))) * float(1 / weight(mp.mpf(a)))
    return screened_max([a for a in np.linspace(lo, hi, 2001) if a != 0], exact,
                        lambda x: [m[j] * (x - c) ** j for j in range(DEG + 1)], *screen)


SLACK = 1e-13


def screened_max(points, exact, terms, target, weight):
    """max(exact(a) for a in points), exact(a) = |M(a) - target(a)| / weight(a)
    (max_err says how); terms(x): M's terms over a float64 array, target and
    weight the float64 twins.  The slack bounds the float64 error of M (its
    terms' sizes), of the target and of the twins of q and |q'| inside it
    (their sizes over the weight are at most ~2 where the target cancels)."""
    x = np.array(points)
    t = terms(x)
    tv, winv = target(x), 1 / weight(x)
    err = np.abs(sum(t) - tv) * winv
    slack = SLACK * ((sum(np.abs(v) for v in t) + np.abs(tv)) * winv + 4)
    floor = np.max(err - slack)
    worst = 0.0
    for k in np.flatnonzero(err + slack >= floor):
        e = exact(points[k])
        assert abs(e - err[k]) <= slack[k], (points[k], e, err[k], slack[k])
        worst = max(worst, e)
    return worst


def bf16_centre(i, lo, hi, c):
    """The bfloat16 value nearest to the centre c with d = a - c still exact
    over [lo, hi] (Sterbenz: c/2 <= lo, hi <= 2c); 0 for piece 0."""
    if i == 0:
        return 0.0
    cands = []
    u = int(np.float32(bf16(c)).view(np.uint32)) >> 16
    for t in range(u - 8, u + 9):
        v = float(np.uint32(t << 16).view(np.float32))
        if v / 2 <= lo and hi <= 2 * v:
            cands.append(v)
    assert cands, (i, c, lo, hi)
    return min(cands, key=lambda v: abs(v - c))


def forms(kind, q, dq, h, maximum):
    """A piece's fit target and weight as functions of a, from q, |q'| and H:
    in mpmath (maximum = max) for the fit, and over float64 arrays (the
    twins, maximum = np.maximum) for max_err's screen."""
    if kind == "grad":
        return (lambda a: q(a) - a * dq(a) - h), (lambda a: maximum(q(a), a * dq(a)))
    if kind == "ext":
        return (lambda a: a * q(a)), (lambda a: a)
    return (lambda a: a * (q(a) - h)), (lambda a: a * q(a))


def table(fam, name, q, dq, grad):
    rows, worst = [], 0.0
    for i in range(NP):
        lo, hi = piece_bounds(fam, i)
        c = centre(fam, i, lo, hi)
        cb = bf16_centre(i, lo, hi, c)
        # H from the balanced centre c, then to bfloat16 precision: still a
        # multiple of 2^-24 (2^-23), since bfloat16's spacing is one from
        # 2^-17 (2^-16) up and smaller multiples have at most 7 bits
        if grad:
            kind = "grad"
            h = bf16(round(float(q(mp.mpf(c)) - c * dq(mp.mpf(c))) * 2 ** 23) / 2 ** 23)     # 1 - h may exceed 1
            assert h * 2 ** 23 == round(h * 2 ** 23), (name, i, h)
        elif fam.ext is not None and i == NP - 1:
            # the positive extension: x (1 - 0) - M, M ~ a q(a) << a; weighed
            # against the result a, the other pieces against their smaller side
            kind, h = "ext", 0.0
        else:
            kind = "forward"
            h = bf16(round(float(q(mp.mpf(c))) * 2 ** 24) / 2 ** 24)
            assert h * 2 ** 24 == round(h * 2 ** 24), (name, i, h)
        target, weight = forms(kind, q, dq, h, max)
        m = fit(target, weight, cb, lo, hi, zero_at_0=(i == 0), deg=fam.deg,
                low16=(bits16(cb), bits16(h) if fam.deg == 6 else None))
        if fam.deg < 6:                 # m_6 = 0: the entry holds H's bits only
            m[6] = float(np.uint32(bits16(h)).view(np.float32))
        for j, v in ((5, m[5]), (6, m[6])):
            e = (int(np.float32(v).view(np.uint32)) >> 23) & 0xFF
            # normal, so that no kernel ever computes with a subnormal entry
            # (the degree-5 tables' m_6 entry is never computed with)
            assert 0 < e < 255 or (j == 6 and fam.deg < 6) or v == 0.0, (name, i, j, v)
        worst = max(worst, max_err(m if fam.deg == 6 else np.append(m[:6], 0.0), target, weight, cb, lo, hi,
                                   forms(kind, q.f64, dq.f64, h, np.maximum)))
        rows.append((cb, h, m))
    return name, rows, worst


def fmt(v):
    return float(np.float32(v)).hex() + "f"


def fmt_inf(v):
    return "INFINITY" if v == float("inf") else fmt(v)


SPECS = [  # (table, family, q, |q'|, derivative?)
    ("gx_lut_erf", GELU_FWD, q_erf, dq_erf, False), ("gx_lut_erf_grad", GELU, q_erf, dq_erf, True),
    ("gx_lut_tanh", GELU_FWD, q_tanh, dq_tanh, False), ("gx_lut_tanh_grad", GELU, q_tanh, dq_tanh, True),
    ("gx_lut_silu", SILU, q_silu, dq_silu, False), ("gx_lut_silu_grad", SILU, q_silu, dq_silu, True),
    ("gx_lut_quick", QUICK, q_quick, dq_quick, False), ("gx_lut_quick_grad", QUICK, q_quick, dq_quick, True),
]


def generate(only=None):
    out = [f"/* GENERATED by src/tables/fit_lut.py (do not edit by hand): {NP} pieces, degree <= {DEG} */",
           f"#define GX_LUT_NP {NP}",
           f"#define GX_LUT_DEG {DEG}"]
    for name, fam, q, dq, grad in SPECS:
        if only and name not in only:
            continue
        name, rows, worst = table(fam, name, q, dq, grad)
        what = "derivative" if grad else "forward"
        out.append("")
        xgv = identity_from(fam, q, dq, grad)
        xp, xg = fmt_inf(fam.XP), fmt_inf(xgv)
        cover = f"|x| <= {fam.X:g}" if fam.ext is None else f"x >= -{fam.X:g} (a clamped at {fam.ext:g})"
        if xgv < float("inf"):
            cover += f", the identity from x >= {xgv:g}"
        out.append(f"/* {what}; {cover}; degree {fam.deg}; worst weighted fit error {worst:.2e} */")
        out.append(f"static const gx_lut {name} = {{")
        out.append(f"    {fmt(fam.X)}, {fmt(fam.XC)}, {xp}, {xg}, {fmt(fam.K)}, {fmt(fam.K2)}, {fam.deg},")
        out.append("    {")
        for j in range(5):
            out.append("        {" + ", ".join(fmt(r[2][j]) for r in rows) + "},")
        out.append("    },")
        out.append("    /* m_5 | c, m_6 | H (PACKING) */")
        out.append("    {" + ", ".join(fmt(r[2][5]) for r in rows) + "},")
        out.append("    {" + ", ".join(fmt(r[2][6]) for r in rows) + "},")
        out.append("};")
    return "\n".join(out) + "\n"


def emit(text, header, argv):
    """--check: exit status 1 if header differs from text; --write: write it;
    else print it (shared with src/tables/fit_lut64.py)."""
    name = os.path.basename(header)
    if "--check" in argv:
        with open(header) as f:
            ok = f.read() == text
        print(f"{name} matches" if ok else f"{name} DIFFERS from this script")
        return 0 if ok else 1
    if "--write" in argv:
        with open(header, "w") as f:
            f.write(text)
        return 0
    sys.stdout.write(text)
    return 0


def main(argv):
    only = [a for a in argv if not a.startswith("--")]
    return emit(generate(only), HEADER, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
