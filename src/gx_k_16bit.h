/*
 * gx_k_16bit.h -- the float16 and bfloat16 kernels of every op, per ISA
 * (included by gx_isa_kernels.h after the float32 kernels they run).
 *
 * 16-bit arrays run the float32 kernels: each block of GX_HALF_B elements is
 * widened (exact), computed, and rounded back once (narrow_run, one block
 * driver for both types; what differs is the conversion pair, gx_cv16).
 * float16: one instruction per vector where the ISA has it (GX_VEC16) and the
 * scalar round-to-nearest-even functions of gx_kernels.c elsewhere.
 * bfloat16: plain integer loops (gx_kernels.h) that GCC vectorises for each
 * path.  The same bits on every path either way.  The fused-bias forms round
 * x + b to the 16-bit type first, so they give the bits of the unfused op on
 * the 16-bit sum (float32 holds 24 bits, >= 2p + 2 for p = 11 and 8, so
 * summing in float32 and rounding once more is the correctly rounded 16-bit
 * sum: no double-rounding error).
 *
 * Two shortcuts give the same bits faster:
 * - the plain ops marked ONE16 in GX_F32_SPLITS (gx_kdefs.h) run their
 *   table loop on the 16-bit data itself (GX_SPLIT16, one pass): the
 *   derivatives always, forward SiLU with the amd_loops choice;
 * - the other forward ops of a unary base read a 65,536-entry result table
 *   (table16, 128 KiB): with gathers where the ISA has GX_HAVE_GATHER16,
 *   one load per element elsewhere and with the amd_loops choice (AMD Zen
 *   5's gathers are slow: 2.9 against 4.2 Gelem/s).
 * The CPU-dependent choices (amd_loops, bf16cvt) are made by the dispatch
 * table: each op has one 16-bit kernel per choice (GX_K16_ROWS), and the
 * fill in gx_kernels.c takes the ones the CPU wants from the unit's table.
 */
#ifndef GX_ISA
#error "src/gx_k_16bit.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif
#ifndef GX_HALF_B
#define GX_HALF_B 2048
#endif
static GX_NOINLINE void GX_FN(h2f)(const uint16_t *h, float *f, int n)
{
    int j = 0;
#ifdef GX_VEC16
    for (; j + GX_VF_W <= n; j += GX_VF_W) vf_store(f + j, vf_load_h(h + j));
#endif
    for (; j < n; j++) f[j] = gx_half_to_float(h[j]);
}
static GX_NOINLINE void GX_FN(f2h)(const float *f, uint16_t *h, int n)
{
    int j = 0;
#ifdef GX_VEC16
    for (; j + GX_VF_W <= n; j += GX_VF_W) vf_store_h(h + j, vf_load(f + j));
#endif
    for (; j < n; j++) h[j] = gx_float_to_half(f[j]);
}
static GX_NOINLINE void GX_FN(b2f)(const uint16_t *h, float *f, int n)
{
    _Pragma("omp simd")
    for (int j = 0; j < n; j++) f[j] = gx_bfloat16_to_float(h[j]);
}
static GX_NOINLINE void GX_FN(f2b)(const float *f, uint16_t *h, int n)
{
    _Pragma("omp simd")
    for (int j = 0; j < n; j++) h[j] = gx_float_to_bfloat16(f[j]);
}
/* The float32 table ops on 16-bit arrays in one pass (ISAs with GX_VEC16):
 * per block of GX_SPLIT_B elements the 16-bit table loop (gx_loop_f32.h,
 * sig_fwd_h, lut_grad_h/_b, ...) writes every result and flags the elements
 * its table does not cover, which GX_FN(pack_u16) then packs as they are
 * (16-bit), and which are widened (W: h2f or b2f), computed by the general
 * formula FULL (float32 results, as in the float32 split), rounded back (N: f2h or
 * f2b) and put back: per element the bits of the block pipeline
 * (narrow_run), which widens a block, runs the float32 kernel and narrows
 * it.  The widening and rounding run over the packed buffer with the vector
 * conversions on whole vectors (through the scalar gx_half_to_float /
 * gx_float_to_half one by one they would cost float16 forward GELU 29% on
 * 2 N(0, 1) data, against 11% for the float32 split).  In place (out == x or g) the block's inputs are
 * copied first, as the float32 split does.  GX_FN(split16) is the driver,
 * GX_SPLIT16 a kernel: name, NIN inputs, its 16-bit table loop LUT16 over
 * table TAB, the float32 formula FULL, the conversions W and N. */
#ifdef GX_VEC16
typedef int (*GX_FN(lut16_loop))(const gx_f32_table *, const uint16_t *, const uint16_t *,
                                  uint16_t *, int, uint64_t *);
/* lut: a 16-bit table loop of gx_loop_f32.h or gx_loop_f64.h over table tab; full: the float32
 * general formula (GX_FULL_FN); widen, narrow: the type's conversions. */
GX_INLINE void GX_FN(split16)(const uint16_t *xp, const uint16_t *gp, uint16_t *out, gx_intp n,
                              int nin, GX_FN(lut16_loop) lut, const gx_f32_table *tab,
                              void (*full)(const float *, const float *, float *, int),
                              gx_widen_fn widen, gx_narrow_fn narrow)
{
    /* separate local arrays, not a struct: gx_k_split_t.h says why */
    uint16_t xb[GX_SPLIT_B], gb[GX_SPLIT_B];        /* in place: the inputs */
    uint16_t pb[GX_SPLIT_B + GX_PACK_SLACK], pg[GX_SPLIT_B + GX_PACK_SLACK];   /* packed */
    uint16_t rb[GX_SPLIT_B + GX_PACK_SLACK];        /* their results, narrowed */
    float pf[GX_SPLIT_B + GX_PACK_SLACK], pgf[GX_SPLIT_B + GX_PACK_SLACK];     /* widened */
    float rf[GX_SPLIT_B + GX_PACK_SLACK];           /* their float32 results */
    uint64_t bad[GX_SPLIT_B / 64];
    int idx[GX_SPLIT_B + GX_PACK_SLACK];
    for (gx_intp i0 = 0; i0 < n; i0 += GX_SPLIT_B) {
        const int m = (int)(n - i0 < GX_SPLIT_B ? n - i0 : GX_SPLIT_B);
        uint16_t *ob = out + i0;
        const uint16_t *xs = xp + i0, *gs = nin == 2 ? gp + i0 : xs;
        if ((const uint16_t *)ob == xs || (const uint16_t *)ob == gs) {
            memcpy(xb, xs, (size_t)m * sizeof(uint16_t));
            xs = xb;
            gs = xb;
            if (nin == 2) {
                memcpy(gb, gp + i0, (size_t)m * sizeof(uint16_t));
                gs = gb;
            }
        }
        const int nbad = lut(tab, xs, nin == 2 ? gs : NULL, ob, m, bad);
        if (nbad == 0) continue;
        /* kp: the packed count rounded up to whole vectors (the slots past
         * the packed elements hold copies or zeros, gx_k_split_t.h), so
         * widen and narrow run vectors only */
        int kp;
        const int k = GX_FN(pack_u16)(bad, m, 1, nin, xs, gs, pb, pg, idx, &kp);
        widen(pb, pf, kp);
        if (nin == 2) widen(pg, pgf, kp);
        full(pf, pgf, rf, kp);
        narrow(rf, rb, kp);
        GX_FN(put_u16)(ob, idx, rb, pg, k, 0);
    }
}
#define GX_SPLIT16(name, NIN, LUT16, TAB, FULL, W, N)                       \
    static void GX_FN(name)(const uint16_t *x, const uint16_t *g, uint16_t *o, gx_intp n) \
    {                                                                       \
        GX_FN(split16)(x, g, o, n, NIN, GX_FN(LUT16), &(TAB), FULL, W, N);  \
    }
#define GX_SPLIT16_ROW(KERNEL, NIN, LOOP, FULL, GATE, ONE16, TAB32, TAB8) \
    GX_IF(ONE16)(                                                           \
        GX_SPLIT16(KERNEL##_h16, NIN, LOOP##_h, GX_F32_TABLE_OF(TAB32, TAB8), \
                   GX_FN(FULL##_f32_full), GX_FN(h2f), GX_FN(f2h))          \
        GX_SPLIT16(KERNEL##_b16, NIN, LOOP##_b, GX_F32_TABLE_OF(TAB32, TAB8), \
                   GX_FN(FULL##_f32_full), GX_FN(b2f), GX_FN(f2b)))
GX_F32_SPLITS(GX_SPLIT16_ROW)
#undef GX_SPLIT16_ROW
/* the same bfloat16 kernels with STORE_BN (the bf16cvt choice) */
#ifdef GX_HAVE_STORE_BN
#define GX_SPLIT16_BN_ROW(KERNEL, NIN, LOOP, FULL, GATE, ONE16, TAB32, TAB8) \
    GX_IF(ONE16)(                                                           \
        GX_SPLIT16(KERNEL##_bn16, NIN, LOOP##_bn, GX_F32_TABLE_OF(TAB32, TAB8), \
                   GX_FN(FULL##_f32_full), GX_FN(b2f), GX_FN(f2b)))
GX_F32_SPLITS(GX_SPLIT16_BN_ROW)
#undef GX_SPLIT16_BN_ROW
#endif
#undef GX_SPLIT16
#endif

/* The one-pass kernel of each op (NULL: none), per conversion: the ONE16
 * rows of GX_F32_SPLITS, by their op's number (gx_ops.h, GX_KID_). */
#ifdef GX_VEC16
#define GX_ONE16_ROW(KERNEL, ONE16, SFX) \
    GX_IF(ONE16)([GX_KID_##KERNEL] = GX_FN(KERNEL##SFX),)
#define GX_ONE16_H(KERNEL, NIN, LOOP, FULL, GATE, ONE16, TAB32, TAB8) GX_ONE16_ROW(KERNEL, ONE16, _h16)
#define GX_ONE16_B(KERNEL, NIN, LOOP, FULL, GATE, ONE16, TAB32, TAB8) GX_ONE16_ROW(KERNEL, ONE16, _b16)
#define GX_ONE16_BN(KERNEL, NIN, LOOP, FULL, GATE, ONE16, TAB32, TAB8) GX_ONE16_ROW(KERNEL, ONE16, _bn16)
static const gx_k16 GX_FN(one16_h)[GX_NOPS] = { GX_F32_SPLITS(GX_ONE16_H) };
static const gx_k16 GX_FN(one16_b)[GX_NOPS] = { GX_F32_SPLITS(GX_ONE16_B) };
#ifdef GX_HAVE_STORE_BN
static const gx_k16 GX_FN(one16_bn)[GX_NOPS] = { GX_F32_SPLITS(GX_ONE16_BN) };
#endif
#undef GX_ONE16_H
#undef GX_ONE16_B
#undef GX_ONE16_BN
#undef GX_ONE16_ROW
#else
static const gx_k16 GX_FN(one16_h)[GX_NOPS] = { NULL };
static const gx_k16 GX_FN(one16_b)[GX_NOPS] = { NULL };
#endif

static const gx_cv16 GX_FN(cv_h) = { GX_FN(h2f), GX_FN(f2h), 0, GX_FN(one16_h) };
static const gx_cv16 GX_FN(cv_b) = { GX_FN(b2f), GX_FN(f2b), 1, GX_FN(one16_b) };
#ifdef GX_HAVE_STORE_BN
static const gx_cv16 GX_FN(cv_bn) = { GX_FN(b2f), GX_FN(f2b), 1, GX_FN(one16_bn) };
#endif

/* The result of unary op `base` for every one of the 65536 inputs of a 16-bit
 * type (bf = 0: float16, 1: bfloat16), computed once -- by this path's float32
 * kernel and rounding, so with exactly the bits the block pipeline below
 * gives -- on the first call that needs it (128 KiB, kept for the process;
 * threads racing to build it agree through a compare-and-swap, the loser
 * frees its copy).  A forward 16-bit call is then one load per element.
 * NULL if the memory is not there (or without atomics, gx_atomic.h): the block
 * pipeline runs instead. */
static void *GX_FN(tab16)[GX_NOPS][2];         /* const uint16_t[65537], atomic */
static const uint16_t *GX_FN(table16)(int base, int bf, gx_widen_fn widen, gx_narrow_fn narrow)
{
#if GX_HAVE_ATOMICS
    const uint16_t *t = (const uint16_t *)GX_ALOAD_PTR(&GX_FN(tab16)[base][bf], ACQUIRE);
    if (t) return t;
    /* one spare entry: the AVX-512 reader (lut16, below) loads 32 bits at each
     * entry and keeps the low 16 */
    uint16_t *nt = (uint16_t *)malloc((65536 + 1) * sizeof(uint16_t));
    float *f = (float *)malloc(2 * 65536 * sizeof(float));
    if (!nt || !f) {
        free(nt);
        free(f);
        return NULL;
    }
    for (int i = 0; i < 65536; i++) nt[i] = (uint16_t)i;
    nt[65536] = 0;
    widen(nt, f, 65536);
    const void *p[1] = {f};
    GX_FN(f32_kernels)[base](p, f + 65536, 65536);
    narrow(f + 65536, nt, 65536);
    free(f);
    if (!GX_ACAS_PTR(&GX_FN(tab16)[base][bf], NULL, nt)) {
        free(nt);               /* another thread's table won */
        return (const uint16_t *)GX_ALOAD_PTR(&GX_FN(tab16)[base][bf], ACQUIRE);
    }
    return nt;
#else
    (void)base; (void)bf; (void)widen; (void)narrow;
    return NULL;
#endif
}
/* o[j] = T[x[j]]: with gathers where the ISA has them (gather = 1: not the
 * amd_loops choice), else one load per element. */
static GX_NOINLINE void GX_FN(lut16)(const uint16_t *T, const uint16_t *x, uint16_t *o, gx_intp n,
                                     int gather)
{
    gx_intp j = 0;
#ifdef GX_HAVE_GATHER16
    if (!gather) {
        /* gx_kernels.c's loop, built without the ISA's flags (here GCC
         * would vectorise it into gathers) */
        gx_lut16_plain(T, x, o, n);
        return;
    }
    j = GX_FN(gather16)(T, x, o, n);
#else
    (void)gather;
#endif
    for (; j < n; j++) o[j] = T[x[j]];
}
static void GX_FN(narrow_run)(const gx_cv16 *cv, int amd, int kind, int base, int nin,
                              const void *const *in, void *out, gx_intp n)
{
    const gx_widen_fn widen = cv->widen;
    const gx_narrow_fn narrow = cv->narrow;
    float b[3][GX_HALF_B], ob[GX_HALF_B];
    uint16_t hb[GX_HALF_B];
    const gx_kernel k32 = GX_FN(f32_kernels)[base];
    /* plain ops in one pass (GX_F32_SPLITS' ONE16; forward ones only with
     * the amd_loops choice) */
    const gx_k16 k16 = kind == GX_PLAIN && (nin == 2 || amd) ? cv->one16[base] : NULL;
    if (k16) {
        k16((const uint16_t *)in[0], nin == 2 ? (const uint16_t *)in[1] : NULL, (uint16_t *)out, n);
        return;
    }
    /* forward ops of a unary base: through the result table */
    const uint16_t *T = (kind != GX_DGATE && gx_nin(base) == 1)
                        ? GX_FN(table16)(base, cv->bf, widen, narrow) : NULL;
    if (T && kind == GX_PLAIN) {
        GX_FN(lut16)(T, (const uint16_t *)in[0], (uint16_t *)out, n, !amd);
        return;
    }
    for (gx_intp i0 = 0; i0 < n; i0 += GX_HALF_B) {
        const int m = (int)(n - i0 < GX_HALF_B ? n - i0 : GX_HALF_B);
        for (int k = (T && kind == GX_GATE); k < nin; k++)   /* the table reads the gate's bits */
            widen((const uint16_t *)in[k] + i0, b[k], m);
        float *r = kind == GX_BIAS ? b[0] : (kind == GX_DGATE ? b[1] : NULL);
        if (r) {                    /* x + b, or up * g, rounded to 16 bits */
            const float *v = kind == GX_BIAS ? b[nin - 1] : b[2];
            if (kind == GX_BIAS) {
                _Pragma("omp simd")
                for (int j = 0; j < m; j++) r[j] = r[j] + v[j];
            } else {
                _Pragma("omp simd")
                for (int j = 0; j < m; j++) r[j] = r[j] * v[j];
            }
            narrow(r, hb, m);
            widen(hb, r, m);
        }
        if (T) {                    /* BASE through the table (kind BIAS or GATE) */
            if (kind == GX_BIAS) {      /* hb: x + b rounded to 16 bits, above */
                GX_FN(lut16)(T, hb, (uint16_t *)out + i0, m, !amd);
                continue;
            }
            GX_FN(lut16)(T, (const uint16_t *)in[0] + i0, hb, m, !amd);
            widen(hb, ob, m);
            _Pragma("omp simd")
            for (int j = 0; j < m; j++) ob[j] = ob[j] * b[1][j];
            narrow(ob, (uint16_t *)out + i0, m);
            continue;
        }
        const void *p[2] = {b[0], b[1]};
        k32(p, ob, m);
        if (kind == GX_GATE) {      /* BASE(gate) rounded to 16 bits, times up */
            narrow(ob, hb, m);
            widen(hb, ob, m);
            _Pragma("omp simd")
            for (int j = 0; j < m; j++) ob[j] = ob[j] * b[1][j];
        }
        narrow(ob, (uint16_t *)out + i0, m);
    }
}
/* Each op's 16-bit kernels, one per loop choice: KERNEL_f16, KERNEL_bf16,
 * KERNEL_bf16n (bfloat16 through STORE_BN) and their _amd forms. */
#define GX_K16_ONE(KERNEL, SFX, CV, AMD, KIND, BASE, NIN)                   \
    static void GX_FN(KERNEL##SFX)(const void *const *in, void *out, gx_intp n) \
    {                                                                       \
        GX_FN(narrow_run)(&GX_FN(CV), AMD, KIND, BASE, NIN, in, out, n);    \
    }
#ifdef GX_HAVE_STORE_BN
#define GX_K16_BN(KERNEL, KIND, BASE, NIN)                                  \
    GX_K16_ONE(KERNEL, _bf16n, cv_bn, 0, KIND, BASE, NIN)                  \
    GX_K16_ONE(KERNEL, _bf16n_amd, cv_bn, 1, KIND, BASE, NIN)
#else
#define GX_K16_BN(KERNEL, KIND, BASE, NIN)
#endif
#define GX_K16_ROWS(ID, NAME, KERNEL, NIN, KIND, BASE, DOC)                 \
    GX_K16_ONE(KERNEL, _f16, cv_h, 0, KIND, BASE, NIN)                      \
    GX_K16_ONE(KERNEL, _f16_amd, cv_h, 1, KIND, BASE, NIN)                  \
    GX_K16_ONE(KERNEL, _bf16, cv_b, 0, KIND, BASE, NIN)                     \
    GX_K16_ONE(KERNEL, _bf16_amd, cv_b, 1, KIND, BASE, NIN)                 \
    GX_K16_BN(KERNEL, KIND, BASE, NIN)
GX_OPS(GX_K16_ROWS)
#undef GX_K16_ROWS
#undef GX_K16_BN
#undef GX_K16_ONE
