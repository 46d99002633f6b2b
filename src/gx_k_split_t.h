/*
 * gx_k_split_t.h -- the split's steps for one element type, per ISA: a
 * template that gx_k_split.h includes once per type with
 *   GX_ST      the element type (float, double; uint16_t: the 16-bit
 *              one-pass kernels' packing, which holds the data as it is)
 *   GX_ST_SFX  its suffix in the function names (f32, f64, u16)
 *   GX_ST_TT   the type of its table (gx_f32_table, gx_lut64);
 *              undefined: no split driver for this type, only its steps
 * It defines GX_FN(pack_SFX), GX_FN(put_SFX) and, with GX_ST_TT,
 * GX_FN(split_SFX).  All are GX_INLINE: every kernel calls its driver with
 * constants (its table loop, table, formula, input count), so each kernel
 * compiles to its own loop with direct calls, and a debugger steps through
 * these functions as inlined frames.  It undefines GX_ST, GX_ST_SFX and
 * GX_ST_TT at its end.
 */
#if !defined(GX_ISA) || !defined(GX_ST) || !defined(GX_ST_SFX)
#error "src/gx_k_split_t.h is not standalone: gx_k_split.h includes it once per element type (GX_ST, GX_ST_SFX)"
#endif
#define GX_ST_FN(step) GX_FN(GX_PASTE2(step, GX_ST_SFX))

/* Packs the elements j < m whose bit in bad equals want into the front of
 * pb: idx[k] = j, pb[k] = xs[j] and, for two inputs (nin = 2), pg[k] =
 * gs[j].  Returns the count to put back (GX_FN(put_SFX)) and sets *kp to
 * that count rounded up to whole vectors, the count a formula runs on: the
 * slots between hold zeros (the bit-by-bit packing) or repeat the last
 * element (GX_HAVE_PACK_IDX, whose put-back writes them again). */
#ifdef GX_HAVE_PACK_IDX
GX_INLINE int GX_ST_FN(pack)(const uint64_t *bad, int m, int want, int nin,
                                       const GX_ST *xs, const GX_ST *gs,
                                       GX_ST *pb, GX_ST *pg, int *idx, int *kp)
{
    const int n = GX_FN(pack_idx)(bad, m, want, idx);
    for (int j = 0; j < n; j++) {
        pb[j] = xs[idx[j]];
        if (nin == 2) pg[j] = gs[idx[j]];
    }
    *kp = n;
    return n;
}
#else
/* The lowest set bit of mask word w (mk), to slot s; returns mk without it.
 * Past the last set bit (mk = 0) it writes index m - 1, into a slot the
 * caller does not count (the buffers' slack, GX_PACK_SLACK). */
GX_INLINE uint64_t GX_ST_FN(pack_one)(uint64_t mk, int w, int m, int s, int nin,
                                                const GX_ST *xs, const GX_ST *gs,
                                                GX_ST *pb, GX_ST *pg, int *idx)
{
    int j = 64 * w + GX_CTZ64(mk | ((uint64_t)1 << 63));
    j = j < m ? j : m - 1;
    idx[s] = j;
    pb[s] = xs[j];
    if (nin == 2) pg[s] = gs[j];
    return mk & (mk - 1u);
}
GX_INLINE int GX_ST_FN(pack)(const uint64_t *bad, int m, int want, int nin,
                                       const GX_ST *xs, const GX_ST *gs,
                                       GX_ST *pb, GX_ST *pg, int *idx, int *kp)
{
    int k = 0;
    for (int w = 0; w < (m + 63) / 64; w++) {
        uint64_t mk = want ? bad[w] : ~bad[w];
        if (m - 64 * w < 64) mk &= ((uint64_t)1 << (m - 64 * w)) - 1u;
        const int c = GX_POPCNT64(mk);
        for (int u = 0; u < GX_PACK_U; u++)
            mk = GX_ST_FN(pack_one)(mk, w, m, k + u, nin, xs, gs, pb, pg, idx);
        k += c < GX_PACK_U ? c : GX_PACK_U;
        while (mk) {
            mk = GX_ST_FN(pack_one)(mk, w, m, k, nin, xs, gs, pb, pg, idx);
            k++;
        }
    }
    *kp = (k + 15) & ~15;     /* whole vectors: no scalar tail */
    for (int j = k; j < *kp; j++) {
        pb[j] = 0;
        if (nin == 2) pg[j] = 0;
    }
    return k;
}
#endif

/* ob[idx[j]] = rb[j] for the k packed results, times pg[j] if mul (a gated
 * form's general-formula elements). */
GX_INLINE void GX_ST_FN(put)(GX_ST *ob, const int *idx, const GX_ST *rb,
                                       const GX_ST *pg, int k, int mul)
{
    for (int j = 0; j < k; j++) ob[idx[j]] = mul ? rb[j] * pg[j] : rb[j];
}

#ifdef GX_ST_TT
/* The split driver (gx_k_split.h says what it computes): lut, one of the
 * table loops of gx_loop_f32.h, over table tab; full, a general formula
 * (GX_FULL_FN); nin inputs; gate = 1: a gated form, full(x) * up. */
typedef int (*GX_ST_FN(lut_loop))(const GX_ST_TT *, const GX_ST *, const GX_ST *, GX_ST *, int, uint64_t *);
typedef void (*GX_ST_FN(full_loop))(const GX_ST *, const GX_ST *, GX_ST *, int);
/* A block's buffers are separate local arrays, not one struct: with a
 * struct GCC cannot tell a store to the packed buffer from a load of the
 * copied input (both in one object, variable indices) and leaves the
 * AVX-512 packing loop scalar.  One-input kernels pass NULL for the second
 * input's buffers, so gb and pg are dropped from their frame. */
GX_INLINE void GX_ST_FN(split)(const void *const *in, void *out_, gx_intp n, int nin,
                                         GX_ST_FN(lut_loop) lut, const GX_ST_TT *tab,
                                         GX_ST_FN(full_loop) full, int gate)
{
    const GX_ST *xp = (const GX_ST *)in[0];
    const GX_ST *gp = nin == 2 ? (const GX_ST *)in[1] : NULL;
    GX_ST *out = (GX_ST *)out_;
    GX_ST xb[GX_BLK(GX_ST)], gb[GX_BLK(GX_ST)];            /* in place: the inputs */
    GX_ST pb[GX_BLK(GX_ST) + GX_PACK_SLACK], pg_[GX_BLK(GX_ST) + GX_PACK_SLACK]; /* packed */
    GX_ST rb[GX_BLK(GX_ST)];            /* the packed elements' results */
    uint64_t bad[GX_BLK(GX_ST) / 64], bad2[GX_BLK(GX_ST) / 64];
    int idx[GX_BLK(GX_ST) + GX_PACK_SLACK];
    GX_ST *const pg = nin == 2 ? pg_ : NULL;
    for (gx_intp i0 = 0; i0 < n; i0 += GX_BLK(GX_ST)) {
        const int m = (int)(n - i0 < GX_BLK(GX_ST) ? n - i0 : GX_BLK(GX_ST));
        GX_ST *ob = out + i0;
        const GX_ST *xs = xp + i0;
        const GX_ST *gs = nin == 2 ? gp + i0 : NULL;
        if ((const GX_ST *)ob == xs || (nin == 2 && (const GX_ST *)ob == gs)) {
            memcpy(xb, xs, (size_t)m * sizeof(GX_ST));
            xs = xb;
            if (nin == 2) {
                memcpy(gb, gs, (size_t)m * sizeof(GX_ST));
                gs = gb;
            }
        }
        const int nbad = lut(tab, xs, gs, ob, m, bad);   /* how many it flagged */
        if (nbad == 0) continue;
        int kp, k;
        if (2 * nbad <= m) {    /* the flagged ones through the formula */
            k = GX_ST_FN(pack)(bad, m, 1, nin, xs, gs, pb, pg, idx, &kp);
            full(pb, pg, rb, kp);
            GX_ST_FN(put)(ob, idx, rb, pg, k, gate);
        } else {                /* the formula on all, the covered ones from the table */
            full(xs, gs, ob, m);
            if (gate)
                for (int j = 0; j < m; j++) ob[j] = ob[j] * gs[j];
            k = GX_ST_FN(pack)(bad, m, 0, nin, xs, gs, pb, pg, idx, &kp);
            lut(tab, pb, pg, rb, kp, bad2);
            GX_ST_FN(put)(ob, idx, rb, pg, k, 0);
        }
    }
}
#endif
#undef GX_ST_FN
#undef GX_ST_TT
#undef GX_ST_SFX
#undef GX_ST
