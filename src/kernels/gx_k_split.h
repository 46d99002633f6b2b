/*
 * gx_k_split.h -- the split drivers, per ISA (included by gx_isa_kernels.h):
 * a float32 or float64 kernel that runs a table loop of gx_loop_f32.h or
 * gx_loop_f64.h where the table covers an element and the general formula
 * of gx_math.h elsewhere (gx_split_f32, gx_split_f64), the packing of the
 * elements each formula takes (gx_pack, gx_gather_<T>, gx_put_<T>, also
 * used by the 16-bit one-pass kernels of gx_k_16bit.h) and the general
 * formula over an array (gx_full_f32, gx_full_f64).  All are GX_INLINE:
 * every kernel calls its driver with constants (its table loop, table,
 * formula, input count), so each kernel compiles to its own loop with
 * direct calls, and a debugger steps through these functions as inlined
 * frames.
 */
#ifndef GX_ISA
#error "src/kernels/gx_k_split.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif
/* The float32 kernels: out[i] = the table formula where it covers x[i],
 * else full (the general double formula), i.e. the same bits as the
 * elementwise select, without computing both for every element.  Per block of
 * GX_SPLIT_B float32 (half as many float64) elements, the table loop runs on the whole block and flags the elements it
 * does not cover (NaN included) in a bit mask; if they are the minority they
 * are packed into a buffer, full runs on it and the results are put back;
 * otherwise full runs on the whole block and the covered elements are
 * patched from the table loop the same way.  Packing visits only the set bits of each
 * 64-bit mask word (count trailing zeros): the work follows the number of
 * packed elements.  Which formula an element gets depends on its value only
 * (not on the block or thread split).  In place (out == an input) the block's
 * inputs are copied first; the ufunc loop never passes partially
 * overlapping arrays (_ufuncs.pyx, _overlap: it runs those element by element).
 * nin = 2: a derivative kernel, g = in[1] travels with x.  The block and
 * why it is that size: gx_base.h. */
/* Packing, with the ISA's GX_FN(pack_idx) where its header has one
 * (GX_HAVE_PACK_IDX: AVX-512), else bit by bit: the first GX_PACK_U set
 * bits of each mask word are taken without a branch (a step past the last
 * set bit writes a clamped index that k does not count, into the buffers'
 * slack, GX_PACK_SLACK) and a loop takes the rest.  Rare elements fall a
 * few to a word: a loop run once per set bit would mispredict its exit once
 * per word, half the cost of the split on normally distributed data.  The
 * indices are packed whatever the element type, the values then gathered
 * by a loop per type; the AVX-512 indices pad to whole vectors
 * (simd/avx512.h says how, and what it saves). */
#define GX_PACK_U 3
#ifdef GX_HAVE_PACK_IDX
#define GX_PACK_SLACK 16
#else
#define GX_PACK_SLACK GX_PACK_U
#endif
/* The indices j < m whose bit in bad equals want, in order, into idx.
 * Returns the count to put back (gx_put_<T>) and sets *kp to that count
 * rounded up to whole vectors, the count a formula runs on: the slots
 * between are zeros after gx_gather_<T> (the bit-by-bit packing) or repeat
 * the last index (GX_HAVE_PACK_IDX, whose put-back writes them again). */
#ifdef GX_HAVE_PACK_IDX
GX_INLINE int gx_pack(const uint64_t *bad, int m, int want, int *idx, int *kp)
{
    const int n = GX_FN(pack_idx)(bad, m, want, idx);
    *kp = n;
    return n;
}
#else
/* The lowest set bit of mask word w (mk), to slot s; returns mk without it.
 * Past the last set bit (mk = 0) it writes index m - 1, into a slot the
 * caller does not count (the buffers' slack, GX_PACK_SLACK). */
GX_INLINE uint64_t gx_pack_one(uint64_t mk, int w, int m, int s, int *idx)
{
    int j = 64 * w + GX_CTZ64(mk | ((uint64_t)1 << 63));
    idx[s] = j < m ? j : m - 1;
    return mk & (mk - 1u);
}
GX_INLINE int gx_pack(const uint64_t *bad, int m, int want, int *idx, int *kp)
{
    int k = 0;
    for (int w = 0; w < (m + 63) / 64; w++) {
        uint64_t mk = want ? bad[w] : ~bad[w];
        if (m - 64 * w < 64) mk &= ((uint64_t)1 << (m - 64 * w)) - 1u;
        const int c = GX_POPCNT64(mk);
        for (int u = 0; u < GX_PACK_U; u++) mk = gx_pack_one(mk, w, m, k + u, idx);
        k += c < GX_PACK_U ? c : GX_PACK_U;
        while (mk) {
            mk = gx_pack_one(mk, w, m, k, idx);
            k++;
        }
    }
    *kp = (k + 15) & ~15;     /* whole vectors: no scalar tail */
    return k;
}
#endif

/* The packed elements' inputs: pb[j] = xs[idx[j]] and, for two inputs
 * (nin = 2), pg[j] = gs[idx[j]], for j < k; zeros up to kp.  Then their
 * results put back: ob[idx[j]] = rb[j] for j < k, times pg[j] if mul (a
 * gated form's general-formula elements).  One pair per element type:
 * float32 and float64 (the split driver below), 16-bit (the one-pass
 * kernels of gx_k_16bit.h, which pack the data as it is). */
GX_INLINE void gx_gather_f32(const int *idx, int k, int kp, int nin, const float *xs, const float *gs,
                             float *pb, float *pg)
{
    for (int j = 0; j < k; j++) {
        pb[j] = xs[idx[j]];
        if (nin == 2) pg[j] = gs[idx[j]];
    }
    for (int j = k; j < kp; j++) {
        pb[j] = 0;
        if (nin == 2) pg[j] = 0;
    }
}
/* The identity from x >= T->xg on (gx_lut.h, gx_lut_ok): the element's
 * result is x (forward), g (a derivative: times 1 read through a volatile,
 * quieting a signalling NaN as the formula's products do) or x up (a gated
 * form), the formula's own bits (bench/identity.py).  The table loops flag
 * these elements with the rest they do not cover; the split driver takes
 * them out before the formula: only elements it packs pay for the test, so
 * the table loops, the whole cost of narrow data, stay as they were. */
GX_INLINE int gx_identity_kind(const gx_f32_table *T, int nin, int gate)
{
    return !(T->xg < INFINITY) ? GX_ID_NONE : (gate ? GX_ID_XUP : (nin == 2 ? GX_ID_G : GX_ID_X));
}
/* Without value packing: the packed indices idx[0..k) filtered, the
 * identity's elements written to ob (every element is written, without a
 * branch; put-back overwrites the others), the rest kept in order; returns
 * their count. */
GX_INLINE int gx_identity_f32(int *idx, int k, const float *xs, const float *gs, float *ob, float xg, int idk)
{
    const float one = gx_lut_one;
    int k2 = 0;
    for (int j = 0; j < k; j++) {
        const int i = idx[j];
        const float x = xs[i];
        ob[i] = idk == GX_ID_X ? x : (idk == GX_ID_G ? gs[i] * one : x * gs[i]);
        idx[k2] = i;
        k2 += !(x >= xg);
    }
    return k2;
}

/* Whether a float32 split block packs its flagged elements for the formula
 * (else the formula runs on the whole block and the table's elements are
 * packed back).  The formula costs several table elements, packing one or
 * two, so packing the flagged pays up to about three quarters of the block;
 * and with an identity all the way, since those elements skip the formula. */
GX_INLINE int gx_pack_flagged(int nbad, int m, int idk) { return idk || 4 * nbad <= 3 * m; }

/* A gated form's general-formula result r times up.  Where both are NaN
 * (x NaN and up NaN) the product's payload is whichever operand the
 * instruction reads first, an order compilers choose freely: up's NaN,
 * quieted, is taken explicitly, so every path and build gives one bits. */
GX_INLINE float gx_gate_mul(float r, float up) { return up != up ? up + up : r * up; }
GX_INLINE void gx_put_f32(float *ob, const int *idx, const float *rb, const float *pg, int k, int mul)
{
    for (int j = 0; j < k; j++) ob[idx[j]] = mul ? gx_gate_mul(rb[j], pg[j]) : rb[j];
}
GX_INLINE void gx_gather_f64(const int *idx, int k, int kp, const double *xs, double *pb)
{
    for (int j = 0; j < k; j++) pb[j] = xs[idx[j]];
    for (int j = k; j < kp; j++) pb[j] = 0;
}
GX_INLINE void gx_put_f64(double *ob, const int *idx, const double *rb, int k)
{
    for (int j = 0; j < k; j++) ob[idx[j]] = rb[j];
}
GX_INLINE void gx_gather_u16(const int *idx, int k, int kp, int nin, const uint16_t *xs,
                             const uint16_t *gs, uint16_t *pb, uint16_t *pg)
{
    for (int j = 0; j < k; j++) {
        pb[j] = xs[idx[j]];
        if (nin == 2) pg[j] = gs[idx[j]];
    }
    for (int j = k; j < kp; j++) {
        pb[j] = 0;
        if (nin == 2) pg[j] = 0;
    }
}
GX_INLINE void gx_put_u16(uint16_t *ob, const int *idx, const uint16_t *rb, int k)
{
    for (int j = 0; j < k; j++) ob[idx[j]] = rb[j];
}

/* A table loop (gx_loop_f32.h, gx_loop_f64.h) and a general formula over
 * an array (gx_full_<T>, below), as the split drivers take them. */
typedef int (*gx_lut_f32)(const gx_f32_table *, const float *, const float *, float *, int, uint64_t *);
typedef int (*gx_lut_f64)(const gx_lut64 *, const double *, const double *, double *, int, uint64_t *);
typedef int (*gx_lut_u16)(const gx_f32_table *, const uint16_t *, const uint16_t *, uint16_t *, int,
                          uint64_t *);
typedef void (*gx_full_fn_f32)(const float *, const float *, float *, int);
typedef void (*gx_full_fn_f64)(const double *, const double *, double *, int);

/* One row of GX_F32_SPLITS (gx_split_rows.h) as data: what a float32 split
 * kernel and its 16-bit one-pass kernels run.  gx_k_ops.h holds the
 * rows (GX_FN(split_rows), by op); each kernel passes its own row, a
 * constant, so the compiler reads the row's fields at compile time. */
typedef struct {
    int nin;                /* 1, or 2: g (a derivative) or up (GATE) */
    int gate;               /* 1: full(gate) * up, the loop multiplies itself */
    gx_lut_f32 lut;         /* the float32 table loop */
    const gx_f32_table *tab;
    gx_full_fn_f32 full;    /* the general formula for the rest */
    /* the same loop on 16-bit data (ONE16, gx_k_16bit.h; NULL: none):
     * float16, bfloat16, and bfloat16 stored by the CPU's own conversion */
    gx_lut_u16 lut_f16, lut_bf16, lut_bf16_insn;
} gx_split_row;

/* The float32 split driver (what it computes: the top of this file).  A
 * block's buffers are separate local arrays, not one struct: with a
 * struct GCC cannot tell a store to the packed buffer from a load of the
 * copied input (both in one object, variable indices) and leaves the
 * AVX-512 packing loop scalar.  One-input kernels pass NULL for the second
 * input's buffers, so gb and pg are dropped from their frame. */
GX_INLINE void gx_split_f32(const void *const *in, void *out_, gx_intp n, const gx_split_row *row)
{
    const int nin = row->nin, gate = row->gate;
    const gx_lut_f32 lut = row->lut;
    const gx_full_fn_f32 full = row->full;
    const gx_f32_table *const tab = row->tab;
    const int idk = gx_identity_kind(tab, nin, gate);
    const float *xp = (const float *)in[0];
    const float *gp = nin == 2 ? (const float *)in[1] : NULL;
    float *out = (float *)out_;
    float xb[GX_SPLIT_B], gb[GX_SPLIT_B];                          /* in place: the inputs */
    float pb[GX_SPLIT_B + GX_PACK_SLACK], pg_[GX_SPLIT_B + GX_PACK_SLACK];    /* packed */
    float rb[GX_SPLIT_B + GX_PACK_SLACK];                          /* their results */
    uint64_t bad[GX_SPLIT_B / 64], bad2[GX_SPLIT_B / 64];
#ifndef GX_HAVE_PACK_F32
    int idx[GX_SPLIT_B + GX_PACK_SLACK];
#endif
    float *const pg = nin == 2 ? pg_ : NULL;
    for (gx_intp i0 = 0; i0 < n; i0 += GX_SPLIT_B) {
        const int m = (int)(n - i0 < GX_SPLIT_B ? n - i0 : GX_SPLIT_B);
        float *ob = out + i0;
        const float *xs = xp + i0;
        const float *gs = nin == 2 ? gp + i0 : NULL;
        if ((const float *)ob == xs || (nin == 2 && (const float *)ob == gs)) {
            memcpy(xb, xs, (size_t)m * sizeof(float));
            xs = xb;
            if (nin == 2) {
                memcpy(gb, gs, (size_t)m * sizeof(float));
                gs = gb;
            }
        }
        const int nbad = lut(tab, xs, gs, ob, m, bad);   /* how many it flagged */
        if (nbad == 0) continue;
        int kp, k;
        /* the identity's test only where flagged elements are common (over a
         * quarter of the block): on narrower data the ones past xg are rare and
         * the test on every flagged element cost more than it saved (the
         * derivatives 2-9% slower at 2 and 3 N(0,1), Xeon, AVX-512 and AVX2) */
        const int id = 4 * nbad > m ? idk : GX_ID_NONE;
#ifdef GX_HAVE_PACK_F32     /* AVX-512: the values packed, no indices */
        uint64_t nz[GX_SPLIT_B / 1024];
        if (gx_pack_flagged(nbad, m, id)) {
            k = GX_FN(pack_f32)(bad, m, 1, xs, gs, pb, pg, nz, ob, tab->xg, id);
            kp = (k + 15) & ~15;
            full(pb, pg, rb, kp);
            if (gate)
                for (int j = 0; j < kp; j++) rb[j] = gx_gate_mul(rb[j], pg[j]);
            GX_FN(put_f32)(bad, m, 1, nz, rb, ob);
        } else {
            full(xs, gs, ob, m);
            if (gate)
                for (int j = 0; j < m; j++) ob[j] = gx_gate_mul(ob[j], gs[j]);
            k = GX_FN(pack_f32)(bad, m, 0, xs, gs, pb, pg, nz, ob, tab->xg, GX_ID_NONE);
            lut(tab, pb, pg, rb, (k + 15) & ~15, bad2);
            GX_FN(put_f32)(bad, m, 0, nz, rb, ob);
        }
#else
        if (gx_pack_flagged(nbad, m, id)) {    /* the flagged ones through the formula */
            k = gx_pack(bad, m, 1, idx, &kp);
            if (id) {
                k = gx_identity_f32(idx, k, xs, gs, ob, tab->xg, id);
                kp = (k + 15) & ~15;
            }
            gx_gather_f32(idx, k, kp, nin, xs, gs, pb, pg);
            full(pb, pg, rb, kp);
            gx_put_f32(ob, idx, rb, pg, k, gate);
        } else {                /* the formula on all, the covered ones from the table */
            full(xs, gs, ob, m);
            if (gate)
                for (int j = 0; j < m; j++) ob[j] = gx_gate_mul(ob[j], gs[j]);
            k = gx_pack(bad, m, 0, idx, &kp);
            gx_gather_f32(idx, k, kp, nin, xs, gs, pb, pg);
            lut(tab, pb, pg, rb, kp, bad2);
            gx_put_f32(ob, idx, rb, pg, k, 0);
        }
#endif
    }
}

/* The float64 split driver: the float32 one for one input, no gate, and
 * blocks of GX_SPLIT_B / 2 (the same bytes per buffer). */
GX_INLINE void gx_split_f64(const void *const *in, void *out_, gx_intp n, gx_lut_f64 lut,
                            const gx_lut64 *tab, gx_full_fn_f64 full)
{
    enum { B = GX_SPLIT_B / 2 };
    const double *xp = (const double *)in[0];
    double *out = (double *)out_;
    double xb[B], pb[B + GX_PACK_SLACK], rb[B];
    uint64_t bad[B / 64], bad2[B / 64];
    int idx[B + GX_PACK_SLACK];
    for (gx_intp i0 = 0; i0 < n; i0 += B) {
        const int m = (int)(n - i0 < B ? n - i0 : B);
        double *ob = out + i0;
        const double *xs = xp + i0;
        if ((const double *)ob == xs) {
            memcpy(xb, xs, (size_t)m * sizeof(double));
            xs = xb;
        }
        const int nbad = lut(tab, xs, NULL, ob, m, bad);
        if (nbad == 0) continue;
        int kp, k;
        if (2 * nbad <= m) {
            k = gx_pack(bad, m, 1, idx, &kp);
            gx_gather_f64(idx, k, kp, xs, pb);
            full(pb, NULL, rb, kp);
            gx_put_f64(ob, idx, rb, k);
        } else {
            full(xs, NULL, ob, m);
            k = gx_pack(bad, m, 0, idx, &kp);
            gx_gather_f64(idx, k, kp, xs, pb);
            lut(tab, pb, NULL, rb, kp, bad2);
            gx_put_f64(ob, idx, rb, k);
        }
    }
}

/* The general formula over an array: o[j] = f(x[j]) rounded to the type,
 * or for a derivative d(x[j]) * g[j] in double, rounded once.  Each op's
 * own never-inlined function calls it (gx_k_ops.h, <name>_f32_full),
 * so the formula gets the registers to itself (inlined into the split
 * driver, its constants spill to the stack and its loop runs 20% slower). */
GX_INLINE void gx_full_f32(const float *x, const float *g, float *o, int n, gx_el1_f32 f,
                           double (*d)(float))
{
    (void)g;
    _Pragma("omp simd")
    for (int j = 0; j < n; j++) o[j] = d ? (float)(d(x[j]) * (double)g[j]) : f(x[j]);
}
GX_INLINE void gx_full_f64(const double *x, double *o, int n, gx_el1_f64 f)
{
    _Pragma("omp simd")
    for (int j = 0; j < n; j++) o[j] = f(x[j]);
}

/* A row of GX_F32_SPLITS (gx_split_rows.h) as a gx_split_row, indexed by its
 * op (gx_k_ops.h builds GX_FN(split_rows) with it): the table loop, the table
 * of this path, the formula for the rest and, ONE16, the 16-bit one-pass
 * loops this ISA has. */
#ifdef GX_VEC16
#ifdef GX_HAVE_STORE_BN
#define GX_ONE_PASS_LOOPS(LOOP) GX_FN(LOOP##_f16), GX_FN(LOOP##_bf16), GX_FN(LOOP##_bf16_insn)
#else
#define GX_ONE_PASS_LOOPS(LOOP) GX_FN(LOOP##_f16), GX_FN(LOOP##_bf16), NULL
#endif
#else
#define GX_ONE_PASS_LOOPS(LOOP) NULL, NULL, NULL
#endif
#if defined(GX_VEC16) && GX_VF_W >= 16
#define GX_ONE_PASS_F16(LOOP) GX_FN(LOOP##_f16), NULL, NULL
#else
#define GX_ONE_PASS_F16(LOOP) NULL, NULL, NULL
#endif
/* the ONE16 column's values: 0, 1 (both types), F16 (float16 only) */
#define GX_ONE16_0(LOOP) NULL, NULL, NULL
#define GX_ONE16_1(LOOP) GX_ONE_PASS_LOOPS(LOOP)
#define GX_ONE16_F16(LOOP) GX_ONE_PASS_F16(LOOP)
#define GX_SPLIT_ROW(KERNEL, NIN, LOOP, FULL, GATE, ONE16, TAB32, TAB8)     \
    [GX_KID_##KERNEL] = { NIN, GATE, GX_FN(LOOP), &GX_F32_TABLE_OF(TAB32, TAB8), \
                          GX_FN(FULL##_f32_full), GX_ONE16_##ONE16(LOOP) },

