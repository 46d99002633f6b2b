/*
 * gx_loop_f64.h -- the float64-lane table loop, per ISA unit: gx_lut64_fwd
 * (exact and tanh GELU for |x| <= 5, gx_lut64.h) over float64 arrays,
 * written once over the unit's primitives (src/simd/<isa>.h), in the scalar
 * twin's order of operations, so every path gives its bits.  Without
 * primitives (the baseline) it runs the twin element by element.
 *
 * THE PRIMITIVES (double lanes, GX_VEC): as gx_loop_f32.h's float ones,
 * vd_ for vf_, with these of them: GX_VD_W lanes; the types gx_vd, gx_vmd,
 * gx_vid; vd_load, vd_store, vd_set, vd_sub, vd_fma, vd_fms, vd_absmin,
 * vd_signm, vd_tail_to_cdf, vd_bad, vd_mbits, vd_nbits; and
 *   vd_index(t)           trunc(t) capped at 15, every lane's piece
 *   the fetch, which an ISA lays out as suits it (register tables on
 *   AVX-512, each lane's row on AVX2, scalar loads on NEON):
 *   gx_vd_rows, vd_rows_load(T)   the table made ready, once per call
 *   gx_vd_piece, vd_pieces(&R, i) the lanes' pieces made ready, per vector
 *   vd_col(&R, p, k)      column k (GX_LUT64_COL_*, gx_lut64.h) of every
 *                         lane's piece, exact; called where the formula
 *                         first reads the column
 */
#ifndef GX_ISA
#error "src/kernels/gx_loop_f64.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif

#ifdef GX_VEC
typedef struct {
    gx_vd x, k, k2, k3, t0;
    gx_vd_rows rows;
} gx_regs64;

GX_INLINE gx_regs64 gx_regs64_load(const gx_lut64 *T)
{
    gx_regs64 R;
    R.x = vd_set(T->x);
    R.k = vd_set(T->k);
    R.k2 = vd_set(T->k2);
    R.k3 = vd_set(T->k3);
    R.t0 = vd_set(T->t0);
    R.rows = vd_rows_load(T);
    return R;
}

/* One vector of gx_lut64_fwd; *bm: the lanes gx_lut64_ok rejects (NaN,
 * |x| > T->x). */
GX_INLINE gx_vd gx_body64(const gx_regs64 *R, gx_vd xv, gx_vmd *bm)
{
    const gx_vd a = vd_absmin(xv, R->x);
    const gx_vid i = vd_index(vd_fma(a, vd_fma(a, vd_fma(a, R->k3, R->k2), R->k), R->t0));
    const gx_vd_piece p = vd_pieces(&R->rows, i);
    const gx_vd d = vd_sub(a, vd_col(&R->rows, p, GX_LUT64_COL_c));
    gx_vd M = vd_col(&R->rows, p, GX_LUT64_COL_M + 15);
    for (int q = 14; q >= 1; q--) M = vd_fma(M, d, vd_col(&R->rows, p, GX_LUT64_COL_M + q));
    M = vd_fma(M, d, vd_fma(vd_col(&R->rows, p, GX_LUT64_COL_m1l), d, vd_col(&R->rows, p, GX_LUT64_COL_M)));
    *bm = vd_bad(xv, R->x);
    return vd_fms(xv, vd_tail_to_cdf(vd_signm(xv), vd_col(&R->rows, p, GX_LUT64_COL_h)), M);
}

/* gx_k_lut64_fwd_<isa>: o[j] = gx_lut64_fwd(T, x[j]) for n <= GX_SPLIT_B / 2
 * elements; bit j of bad[j / 64] set where the table does not cover x[j]
 * (the caller overwrites o[j]); returns how many.  As gx_f32_loop
 * (gx_loop_f32.h), for one input of doubles. */
static GX_NOINLINE int GX_FN(lut64_fwd)(const gx_lut64 *T, const double *x, const double *g, double *o,
                                        int n, uint64_t *bad)
{
    const gx_regs64 R = gx_regs64_load(T);
    int nb = 0;
    (void)g;
    for (int w = 0; w < (n + 63) / 64; w++) bad[w] = 0;
    for (int j = 0; j < n; j += GX_VD_W) {
        double xb[GX_VD_W], ob[GX_VD_W];
        const double *xs = x + j;
        const int full = j + GX_VD_W <= n;
        if (j % 8 == 0) {                   /* a line of each array ahead */
            GX_PREFETCH(x + j, GX_PF_BYTES);
            GX_PREFETCH(o + j, GX_PF_BYTES);
        }
        if (!full) {                /* the last partial vector, via a padded copy */
            for (int q = 0; q < GX_VD_W; q++) xb[q] = j + q < n ? x[j + q] : 0;
            xs = xb;
        }
        gx_vmd bm;
        const gx_vd r = gx_body64(&R, vd_load(xs), &bm);
        const uint64_t b = vd_mbits(bm);
        bad[j / 64] |= b << (j % 64);
        nb += vd_nbits(bm, b);      /* padded lanes (0) are never flagged */
        if (full) {
            vd_store(o + j, r);
        } else {
            vd_store(ob, r);
            memcpy(o + j, ob, (size_t)(n - j) * sizeof(double));
        }
    }
    if (n % 64) bad[(n - 1) / 64] &= ((uint64_t)1 << (n % 64)) - 1u;
    return nb;
}
#else
/* the baseline: the scalar twin and its coverage test, element by element */
static GX_NOINLINE int GX_FN(lut64_fwd)(const gx_lut64 *T, const double *x, const double *g, double *o,
                                        int n, uint64_t *bad)
{
    int nb = 0;
    (void)g;
    for (int w = 0; w < (n + 63) / 64; w++) bad[w] = 0;
    for (int j = 0; j < n; j++) {
        o[j] = gx_lut64_fwd(T, x[j]);
        const int ok = gx_lut64_ok(T, x[j]);
        bad[j / 64] |= (uint64_t)!ok << (j % 64);
        nb += !ok;
    }
    return nb;
}
#endif
