/*
 * gx_k_16bit.h -- the float16 and bfloat16 kernels, per ISA (included by
 * gx_isa_kernels.h after the float32 kernels they run): one kernel per
 * type, for every op, which runs the 16-bit pipeline (GX_FN(run_16bit)) on the
 * op's row of gx_ops.h.
 *
 * 16-bit arrays run the float32 kernels: each block of GX_HALF_B elements is
 * widened (exact), computed, and rounded back once (one block driver for
 * both types; what differs is the conversion pair, gx_half16).
 * float16: one instruction per vector where the ISA has it (GX_VEC16) and the
 * scalar round-to-nearest-even functions of gx_half.h elsewhere.
 * bfloat16: plain integer loops (gx_half.h) that GCC vectorises for each
 * path.  The same bits on every path either way.  The fused-bias forms round
 * x + b to the 16-bit type first, so they give the bits of the unfused op on
 * the 16-bit sum (float32 holds 24 bits, >= 2p + 2 for p = 11 and 8, so
 * summing in float32 and rounding once more is the correctly rounded 16-bit
 * sum: no double-rounding error).
 *
 * Two shortcuts give the same bits faster:
 * - the plain ops marked ONE16 in GX_F32_SPLITS (gx_split_rows.h) run their
 *   table loop on the 16-bit data itself (gx_split16, one pass): the
 *   derivatives always, forward SiLU with the plain_loads choice, and
 *   forward GELU on float16 with it on AVX-512 (ONE16 F16);
 * - the other forward ops of a unary base read a 65,536-entry result table
 *   (table16, 128 KiB): with gathers where the ISA has GX_HAVE_GATHER16,
 *   one load per element elsewhere and with the plain_loads choice (AMD Zen
 *   5's gathers are slow: 2.9 against 4.2 Gelem/s).
 * The CPU-dependent choices (gx_choices, gx_unit_table.h) are the unit's
 * GX_FN(choices), which gx_fill (gx_dispatch.c) sets; the pipeline reads
 * them per call.
 */
#ifndef GX_ISA
#error "src/kernels/gx_k_16bit.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif
#include "gx_half.h"

#ifndef GX_HALF_B
#define GX_HALF_B 2048
#endif
/* A 16-bit type's conversions: widen, exact; narrow, round to nearest even. */
typedef void (*gx_widen_fn)(const uint16_t *, float *, int);
typedef void (*gx_narrow_fn)(const float *, uint16_t *, int);
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
 * sig_fwd_f16, lut_grad_f16/_bf16, ...) writes every result and flags the
 * elements its table does not cover, which gx_pack and gx_gather_u16 then
 * pack as they are (16-bit), and which are widened, computed by the row's
 * general formula (float32 results, as in the float32 split), rounded back
 * and put back: per element the bits of the block pipeline (GX_FN(run_16bit)),
 * which widens a block, runs the float32 kernel and narrows it.  The
 * widening and rounding run over the packed buffer with the vector
 * conversions on whole vectors (through the scalar gx_half_to_float /
 * gx_float_to_half one by one they would cost float16 forward GELU 29% on
 * 2 N(0, 1) data, against 11% for the float32 split).  In place (out == x
 * or g) the block's inputs are copied first, as the float32 split does.
 * lut: the row's loop for the type; widen, narrow: the type's conversions. */
#ifdef GX_VEC16
GX_INLINE void gx_split16(const uint16_t *xp, const uint16_t *gp, uint16_t *out, gx_intp n, int nin,
                          gx_lut_u16 lut, const gx_f32_table *tab, gx_full_fn_f32 full,
                          gx_widen_fn widen, gx_narrow_fn narrow)
{
    /* separate local arrays, not a struct: gx_split_f32 says why */
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
        /* kp: the packed count rounded up to whole vectors (gx_pack), so
         * widen and narrow run vectors only */
        int kp;
        const int k = gx_pack(bad, m, 1, idx, &kp);
        gx_gather_u16(idx, k, kp, nin, xs, gs, pb, pg);
        widen(pb, pf, kp);
        if (nin == 2) widen(pg, pgf, kp);
        full(pf, pgf, rf, kp);
        narrow(rf, rb, kp);
        gx_put_u16(ob, idx, rb, k);
    }
}
/* The one-pass kernel of a split row: lut, the row's loop for the type;
 * one copy of the driver per input count.  Its own function, so its
 * buffers (209 KiB) are not in the pipeline's frame. */
static GX_NOINLINE void GX_FN(one_pass16)(const gx_split_row *row, gx_lut_u16 lut, const uint16_t *x,
                                          const uint16_t *g, uint16_t *o, gx_intp n,
                                          gx_widen_fn widen, gx_narrow_fn narrow)
{
    if (row->nin == 2)
        gx_split16(x, g, o, n, 2, lut, row->tab, row->full, widen, narrow);
    else
        gx_split16(x, NULL, o, n, 1, lut, row->tab, row->full, widen, narrow);
}
#endif

/* A 16-bit type: its conversions (widen: exact; narrow: round to nearest
 * even), which result table it reads (bf: 0 float16, 1 bfloat16) and which
 * of a split row's one-pass loops it runs. */
enum { GX_ONE_PASS_F16 = 0, GX_ONE_PASS_BF16 = 1, GX_ONE_PASS_BF16_INSN = 2 };
typedef struct {
    gx_widen_fn widen;
    gx_narrow_fn narrow;
    int bf;
    int one_pass;
} gx_half16;
static const gx_half16 GX_FN(half_f16) = { GX_FN(h2f), GX_FN(f2h), 0, GX_ONE_PASS_F16 };
static const gx_half16 GX_FN(half_bf16) = { GX_FN(b2f), GX_FN(f2b), 1, GX_ONE_PASS_BF16 };
#ifdef GX_HAVE_STORE_BN
/* bfloat16 results rounded by the CPU's own conversion (the bf16cvt choice) */
static const gx_half16 GX_FN(half_bf16_insn) = { GX_FN(b2f), GX_FN(f2b), 1, GX_ONE_PASS_BF16_INSN };
#endif

#ifdef GX_VEC16
/* The one-pass loop of op base's split row for type h (NULL: none). */
static gx_lut_u16 GX_FN(one_pass_loop)(int base, const gx_half16 *h)
{
    const gx_split_row *row = &GX_FN(split_rows)[base];
    return h->one_pass == GX_ONE_PASS_F16 ? row->lut_f16
         : h->one_pass == GX_ONE_PASS_BF16 ? row->lut_bf16 : row->lut_bf16_insn;
}
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
    GX_FN(f32_kernels)[base](p, f + 65536, 65536, base);
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
 * plain_loads choice), else one load per element. */
static GX_NOINLINE void GX_FN(lut16)(const uint16_t *T, const uint16_t *x, uint16_t *o, gx_intp n,
                                     int gather)
{
    gx_intp j = 0;
#ifdef GX_HAVE_GATHER16
    if (!gather) {
        /* gx_half.c's loop, built without the ISA's flags (here GCC
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
/* Op's columns of gx_ops.h (GX_OPS) the pipeline reads. */
#define GX_OP_ROW_16(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) [ID] = { NIN, KIND, BASE },
static const struct { int nin, kind, base; } GX_FN(op_rows)[GX_NOPS] = { GX_OPS(GX_OP_ROW_16) };
#undef GX_OP_ROW_16

/* The 16-bit pipeline: op on n elements of type h.  In order: a plain op
 * with a one-pass kernel (derivatives; forward ones with plain_loads) runs
 * it; a forward op of a unary base reads the result table (table16), whole
 * for a plain op, per block for a fused one; the rest widens a block, runs
 * the float32 kernel of the base op and rounds back, with the fused form's
 * x + b or up * g rounded to 16 bits first and a gated op's base result
 * rounded before the product, as the unfused ops would. */
static GX_NOINLINE void GX_FN(run_16bit)(const gx_half16 *h, int op, const void *const *in, void *out,
                                         gx_intp n)
{
    const int nin = GX_FN(op_rows)[op].nin, kind = GX_FN(op_rows)[op].kind;
    const int base = GX_FN(op_rows)[op].base;
    const int plain_loads = GX_FN(choices).plain_loads;
    const gx_widen_fn widen = h->widen;
    const gx_narrow_fn narrow = h->narrow;
    float b[3][GX_HALF_B], ob[GX_HALF_B];
    uint16_t hb[GX_HALF_B];
    const gx_kernel k32 = GX_FN(f32_kernels)[base];
#ifdef GX_VEC16
    const gx_lut_u16 lut = kind == GX_PLAIN && (nin == 2 || plain_loads) ? GX_FN(one_pass_loop)(base, h) : NULL;
    if (lut) {
        GX_FN(one_pass16)(&GX_FN(split_rows)[base], lut, (const uint16_t *)in[0],
                          nin == 2 ? (const uint16_t *)in[1] : NULL, (uint16_t *)out, n, widen, narrow);
        return;
    }
#endif
    /* forward ops of a unary base: through the result table */
    const uint16_t *T = (kind != GX_DGATE && GX_FN(op_rows)[base].nin == 1)
                        ? GX_FN(table16)(base, h->bf, widen, narrow) : NULL;
    if (T && kind == GX_PLAIN) {
        GX_FN(lut16)(T, (const uint16_t *)in[0], (uint16_t *)out, n, !plain_loads);
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
        if (T) {                    /* the base op through the table (kind BIAS or GATE) */
            if (kind == GX_BIAS) {      /* hb: x + b rounded to 16 bits, above */
                GX_FN(lut16)(T, hb, (uint16_t *)out + i0, m, !plain_loads);
                continue;
            }
            GX_FN(lut16)(T, (const uint16_t *)in[0] + i0, hb, m, !plain_loads);
            widen(hb, ob, m);
            _Pragma("omp simd")
            for (int j = 0; j < m; j++) ob[j] = ob[j] * b[1][j];
            narrow(ob, (uint16_t *)out + i0, m);
            continue;
        }
        const void *p[2] = {b[0], b[1]};
        k32(p, ob, m, base);
        if (kind == GX_GATE) {      /* the base op's result rounded to 16 bits, times up */
            narrow(ob, hb, m);
            widen(hb, ob, m);
            _Pragma("omp simd")
            for (int j = 0; j < m; j++) ob[j] = ob[j] * b[1][j];
        }
        narrow(ob, (uint16_t *)out + i0, m);
    }
}

/* The float16 and bfloat16 kernels of every op on this path.  bfloat16
 * results are rounded by the CPU's own conversion with the bf16cvt choice,
 * where the ISA has one (GX_HAVE_STORE_BN). */
static void GX_FN(f16_kernel)(const void *const *in, void *out, gx_intp n, int op)
{
    GX_FN(run_16bit)(&GX_FN(half_f16), op, in, out, n);
}
static void GX_FN(bf16_kernel)(const void *const *in, void *out, gx_intp n, int op)
{
#ifdef GX_HAVE_STORE_BN
    if (GX_FN(choices).bf16cvt) {
        GX_FN(run_16bit)(&GX_FN(half_bf16_insn), op, in, out, n);
        return;
    }
#endif
    GX_FN(run_16bit)(&GX_FN(half_bf16), op, in, out, n);
}
