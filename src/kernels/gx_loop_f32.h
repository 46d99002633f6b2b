/*
 * gx_loop_f32.h -- the float32-lane table loops, per ISA unit: the formulas
 * of gx_lut.h (32 pieces) and gx_lut8.h (8 pieces) on float32 arrays and on
 * float16 / bfloat16 arrays widened in registers, written once over the
 * primitives of the unit's header (src/simd/<isa>.h).  Each primitive
 * performs one IEEE operation, an exact table fetch or an exact select, in
 * the order of the scalar twins, so every path gives its twins' bits.
 * Without primitives (the baseline, simd/scalar.h) the same kernels run
 * the scalar twins element by element.
 *
 * Why intrinsics here when the rest is auto-vectorised: the table fetch.  GCC
 * does not vectorise the scalar twins at all (the data-dependent index), and
 * a gather per table costs more than the whole formula.
 *
 * THE PRIMITIVES (float32 lanes; the contract an ISA header fulfils).
 * Typed static inline functions (GX_INLINE), SLEEF's style: vf_<op> for
 * float lanes (gx_loop_f64.h: vd_<op> for double lanes).  A unit includes
 * one header, so the names carry no ISA; they are static, so no other unit
 * can link to them.
 *   GX_VEC, GX_VEC16      defined: the header has the primitives below
 *   GX_VF_W               lanes per vector (<= 64; NEON's 8 are a pair of
 *                         registers)
 *   GX_F32_PIECES         8 or 32: which tables the loops read (gx_lut8.h or
 *                         gx_lut.h; the baseline's twins: 32)
 *   gx_vf, gx_vmf, gx_vif the types: vector, mask, index vector.  A mask is
 *                         opaque: the loops only pass it to the functions below
 *   vf_load(p), vf_store(p, v)   W unaligned floats
 *   vf_set(c)             c in every lane
 *   vf_add vf_sub vf_mul (a, b)  one rounding each
 *   vf_fma(a, b, c)       a b + c, vf_fms(a, b, c): a b - c, one rounding each
 *   vf_absmin(x, X)       min(|x|, X) for X > 0, and X where x is NaN
 *   vf_lo16(v)            the float whose bits are v's low 16 bits shifted
 *                         up (gx_lut_lo16)
 *   masks:
 *   vf_signm(x)           x's sign as a mask that tail_to_cdf and selneg read:
 *   vf_tail_to_cdf(m, h)  x < 0 ? h : 1 - h: a CDF from its tail h at -|x|
 *                         (sign set: h; -0 counts as < 0)
 *   vf_selneg(m, M)       x < 0 ? M : -M
 *   vf_maskmul(m, s, a, b)  m ? a b : s
 *   vf_special(g)         g is +-0, +-inf or NaN
 *   vf_bad(x, X)          !(|x| <= X): |x| > X or NaN
 *   vf_bad_below(x, NX)   !(x >= NX): x < NX or NaN
 *   vf_mbits(m)           a uint64 whose bit k is lane k (bits >= W clear).
 *                         An ISA without a movemask builds it (NEON: the
 *                         lanes narrowed to bytes, read as 64 bits, their
 *                         bits gathered by one multiply)
 *   vf_nbits(m, b)        the lanes set in m, given b = vf_mbits(m)
 *   the 32-piece tables (GX_F32_PIECES 32):
 *   vf_index(t)           the piece of every lane from t = the bits of
 *                         GX_LUT_MAGIC + n, capped at 31 (gx_lut_index)
 *   gx_vf_tab, vf_tab_load(p)   a 32-float table (64-byte aligned) made
 *                         ready for vf_lut, once per call
 *   gx_vf_lut_idx, vf_lut_prep(i)  the index vector made ready for vf_lut;
 *                         vf_lut(r, p): entry p of every lane, exact
 *   the 8-piece tables (GX_F32_PIECES 8): vf_index8 (capped at 7),
 *   gx_vf_tab8, vf_tab8_load (8 floats, or 8 uint32 read as floats, 32-byte
 *   aligned), gx_vf_lut8_idx, vf_lut8_prep, vf_lut8 (bits kept) as above,
 *   and vf_hi16(v): the float whose bits are v's high 16 bits, the low ones
 *   cleared (gx_lut8_half)
 *   16-bit data in float lanes (GX_VEC16):
 *   vf_load_h(p), vf_load_b(p)    W float16 / bfloat16 values widened (exact)
 *   vf_store_h(p, v)      rounded to float16 (round to nearest even, as
 *                         gx_float_to_half)
 *   32-bit integer lanes, for the bfloat16 rounding (vf_store_b,
 *   simd/derived.h: gx_float_to_bfloat16's formula written once for every ISA):
 *   gx_vu, gx_vmu         the types: integer vector, its compare mask
 *   vf_bits(v)            v's bits; vu_set(c): c in every lane
 *   vu_add vu_and vu_or (a, b), vu_shr16(a): a >> 16 (logical)
 *   vu_gt(a, b)           a > b, for a, b < 2^31; vu_sel(m, a, b): m ? a : b
 *   vu_store16(p, v)      W uint16 from lanes v <= 0xffff
 *   vf_store_bn(p, v)     optional (GX_HAVE_STORE_BN): vf_store_b's bits by
 *                         another instruction, in functions compiled with
 *                         GX_BN_TARGET; kernels with it are the bf16cvt loop
 *                         choice (gx_dispatch.c)
 * Optional helpers of an ISA, used where its header defines them:
 *   GX_HAVE_PACK_IDX      GX_FN(pack_idx)(bad, m, want, idx): the split's
 *                         packing (gx_k_split.h says what it returns)
 *   GX_HAVE_GATHER16      GX_FN(gather16)(T, x, o, n): the 16-bit result
 *                         table read with gathers (gx_k_16bit.h)
 *
 * AN ISA WITH TABLES OF ITS OWN adds a table scheme here: its registers
 * type and loader (gx_regs8 and gx_regs8_load below), its body (gx_body8),
 * a value of GX_F32_PIECES that selects them, and a column of GX_F32_SPLITS
 * (gx_split_rows.h) naming its tables.  The loop skeleton (gx_f32_loop: loads,
 * the padded tail, prefetch, the bits of the rejected elements, stores)
 * never names a table's layout.
 */
#ifndef GX_ISA
#error "src/kernels/gx_loop_f32.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif

/* What a loop computes (loop): the forward formula, the derivative times g,
 * or the forward formula times up (a gated form: the rounded result times
 * up).  sigmoid = 1: the sigmoid family's tables (SiLU, quick GELU: k2 = 0 and
 * m_6 = 0).  Where the data lives (st): float32, float16, bfloat16, and
 * bfloat16 rounded by the CPU's own conversion (vf_store_bn). */
enum { GX_LOOP_FWD = 0, GX_LOOP_GRAD = 1, GX_LOOP_GATE = 2 };
enum { GX_ST_F32 = 0, GX_ST_F16 = 1, GX_ST_BF16 = 2, GX_ST_BF16_INSN = 3 };

/* ------------------------------------ the 32-piece tables (gx_lut.h) -- */
#if defined(GX_VEC) && GX_F32_PIECES == 32
/* A gx_lut's range constants and tables, ready in registers once per call. */
typedef struct {
    gx_vf x, nx, xc, k, k2;
    gx_vf_tab m[5], m5c, m6h;
} gx_regs32;

GX_INLINE void gx_regs32_load(gx_regs32 *R, const gx_lut *T)
{
    R->x = vf_set(T->x);
    R->nx = vf_set(-T->x);
    R->xc = vf_set(T->xc);
    R->k = vf_set(T->k);
    R->k2 = vf_set(T->k2);
    for (int q = 0; q < 5; q++) R->m[q] = vf_tab_load(T->m[q]);
    R->m5c = vf_tab_load(T->m5c);
    R->m6h = vf_tab_load(T->m6h);
}

/* One vector of gx_lut_fwd (loop fwd; gate: times g) or gx_lut_grad (loop
 * grad), in the twins' order of operations.  sigmoid: t = fma(a, k, GX_LUT_MAGIC),
 * which is fma(a, fma(a, 0, k), GX_LUT_MAGIC) exactly, and M starts at m_5
 * (m_6 = 0), as gx_lut_poly does.  *bm: the lanes gx_lut_ok rejects; the
 * forward GELU tables (xp = inf) cover x > 0 whole, so only x < -X or NaN. */
GX_INLINE gx_vf gx_body32(const gx_regs32 *R, gx_vf xv, gx_vf gv, int loop, int sigmoid, gx_vmf *bm)
{
    const gx_vf a = vf_absmin(xv, R->xc);                            /* gx_lut_clamp */
    const gx_vf t = sigmoid ? vf_fma(a, R->k, vf_set(GX_LUT_MAGIC))
                      : vf_fma(a, vf_fma(a, R->k2, R->k), vf_set(GX_LUT_MAGIC));
    const gx_vf_lut_idx p = vf_lut_prep(vf_index(t));
    const gx_vf e5 = vf_lut(R->m5c, p), e6 = vf_lut(R->m6h, p);
    const gx_vf d = vf_sub(a, vf_lo16(e5));
    gx_vf M = sigmoid ? e5 : vf_fma(e6, d, e5);                            /* gx_lut_poly */
    for (int q = 4; q >= 0; q--) M = vf_fma(M, d, vf_lut(R->m[q], p));
    const gx_vmf n = vf_signm(xv);
    const gx_vf B = vf_tail_to_cdf(n, vf_lo16(e6));
    gx_vf res;
    if (loop == GX_LOOP_GRAD) {
        const gx_vf sM = vf_selneg(n, M);
        res = vf_fma(B, gv, vf_mul(sM, gv));
        res = vf_maskmul(vf_special(gv), res, vf_add(B, sM), gv);
    } else {
        res = vf_fms(xv, B, M);
        if (loop == GX_LOOP_GATE) res = vf_mul(res, gv);
    }
    *bm = (loop != GX_LOOP_GRAD && !sigmoid) ? vf_bad_below(xv, R->nx) : vf_bad(xv, R->x);
    return res;
}
#endif

/* ------------------------------------ the 8-piece tables (gx_lut8.h) -- */
#if defined(GX_VEC) && GX_F32_PIECES == 8
typedef struct {
    gx_vf x, nx, xc, k, k2;
    gx_vf_tab8 m[9], su;
} gx_regs8;

GX_INLINE void gx_regs8_load(gx_regs8 *R, const gx_lut8 *T)
{
    R->x = vf_set(T->x);
    R->nx = vf_set(-T->x);
    R->xc = vf_set(T->xc);
    R->k = vf_set(T->k);
    R->k2 = vf_set(T->k2);
    for (int q = 0; q < 9; q++) R->m[q] = vf_tab8_load(T->m[q]);
    R->su = vf_tab8_load((const float *)T->su);
}

/* One vector of gx_lut8_fwd or gx_lut8_grad, in the twins' order of
 * operations; loop, sigmoid and *bm as for gx_body32. */
GX_INLINE gx_vf gx_body8(const gx_regs8 *R, gx_vf xv, gx_vf gv, int loop, int sigmoid, gx_vmf *bm)
{
    const gx_vf a = vf_absmin(xv, R->xc);
    const gx_vf t = sigmoid ? vf_fma(a, R->k, vf_set(GX_LUT_MAGIC))
                      : vf_fma(a, vf_fma(a, R->k2, R->k), vf_set(GX_LUT_MAGIC));
    const gx_vf_lut8_idx p = vf_lut8_prep(vf_index8(t));
    const gx_vf e8 = vf_lut8(R->m[8], p), e7 = vf_lut8(R->m[7], p);
    const gx_vf su = vf_lut8(R->su, p);
    const gx_vf d = vf_sub(a, vf_lo16(e8));
    gx_vf M = vf_fma(e8, d, e7);                                     /* gx_lut8_poly */
    for (int q = 6; q >= 0; q--) M = vf_fma(M, d, vf_lut8(R->m[q], p));
    /* B = h + e (gx_lut8_b) */
    const gx_vf base = vf_set(loop == GX_LOOP_GRAD ? 2.0f : 0.5f);
    const gx_vf H5 = vf_add(vf_lo16(e7), base);
    const gx_vf Sv = vf_hi16(su), U = vf_lo16(su);
    const gx_vf T = vf_fma(U, d, Sv);
    const gx_vf eT = vf_fma(U, d, vf_sub(Sv, T));
    const gx_vf Bp = vf_fma(d, T, H5);
    const gx_vf e = vf_fma(d, eT, vf_fma(d, T, vf_sub(H5, Bp)));
    const gx_vmf n = vf_signm(xv);
    const gx_vf B = vf_tail_to_cdf(n, vf_sub(Bp, base));
    gx_vf res;
    if (loop == GX_LOOP_GRAD) {
        const gx_vf sM = vf_selneg(n, vf_add(M, e));
        res = vf_fma(B, gv, vf_mul(sM, gv));
        res = vf_maskmul(vf_special(gv), res, vf_add(B, sM), gv);
    } else {
        res = vf_fms(xv, B, vf_fma(a, e, M));
        if (loop == GX_LOOP_GATE) res = vf_mul(res, gv);
    }
    *bm = (loop != GX_LOOP_GRAD && !sigmoid) ? vf_bad_below(xv, R->nx) : vf_bad(xv, R->x);
    return res;
}
#endif

/* ------------------------------------ the unit's scheme: one of them -- */
/* gx_f32_table: the table type the unit's float32 kernels read;
 * GX_F32_TABLE_OF(T32, T8): which of a split kernel's tables that is (the
 * TAB32 and TAB8 columns of GX_F32_SPLITS, gx_split_rows.h). */
#if GX_F32_PIECES == 8
typedef gx_lut8 gx_f32_table;
#define GX_F32_TABLE_OF(T32, T8) T8
#elif GX_F32_PIECES == 32
typedef gx_lut gx_f32_table;
#define GX_F32_TABLE_OF(T32, T8) T32
#else
#error "GX_F32_PIECES (the ISA header's) must be 8 or 32"
#endif

#ifdef GX_VEC
#if GX_F32_PIECES == 8
typedef gx_regs8 gx_f32_regs;
GX_INLINE void gx_f32_regs_load(gx_f32_regs *R, const gx_f32_table *T) { gx_regs8_load(R, T); }
GX_INLINE gx_vf gx_f32_body(const gx_f32_regs *R, gx_vf xv, gx_vf gv, int loop, int sigmoid, gx_vmf *bm)
{
    return gx_body8(R, xv, gv, loop, sigmoid, bm);
}
#else
typedef gx_regs32 gx_f32_regs;
GX_INLINE void gx_f32_regs_load(gx_f32_regs *R, const gx_f32_table *T) { gx_regs32_load(R, T); }
GX_INLINE gx_vf gx_f32_body(const gx_f32_regs *R, gx_vf xv, gx_vf gv, int loop, int sigmoid, gx_vmf *bm)
{
    return gx_body32(R, xv, gv, loop, sigmoid, bm);
}
#endif

/* W elements of storage ST at p, widened to float lanes, and back */
GX_INLINE gx_vf gx_vf_in(const void *p, int st)
{
    if (st == GX_ST_F32) return vf_load((const float *)p);
    if (st == GX_ST_F16) return vf_load_h((const uint16_t *)p);
    return vf_load_b((const uint16_t *)p);
}
GX_INLINE void gx_vf_out(void *p, gx_vf v, int st)
{
    if (st == GX_ST_F32) vf_store((float *)p, v);
    else if (st == GX_ST_F16) vf_store_h((uint16_t *)p, v);
#ifdef GX_HAVE_STORE_BN
    else if (st == GX_ST_BF16_INSN) vf_store_bn((uint16_t *)p, v);
#endif
    else vf_store_b((uint16_t *)p, v);
}

/* ------------------------------------------------- the loop skeleton -- */
/* One vector: W elements of storage st at xs (and gs) through the body into
 * os, the rejected lanes' bits into bad at element j (a multiple of W);
 * returns how many it rejected. */
GX_INLINE int gx_f32_vector(const gx_f32_regs *R, const void *xs, const void *gs, void *os,
                            uint64_t *bad, int j, int loop, int sigmoid, int st)
{
    uint64_t *const bw = bad + j / 64;      /* the rejected lanes' word */
    const int shift = j % 64;
    const gx_vf xv = gx_vf_in(xs, st);
    const gx_vf gv = loop != GX_LOOP_FWD ? gx_vf_in(gs, st) : xv;
    gx_vmf bm;
    const gx_vf r = gx_f32_body(R, xv, gv, loop, sigmoid, &bm);
    const uint64_t b = vf_mbits(bm);
    *bw |= b << shift;
    gx_vf_out(os, r, st);
    return vf_nbits(bm, b);
}

/* The last m < W elements, from j: through padded copies (zeros, which no
 * table rejects).  Its own function, with its own table registers, so that
 * the loop holds no vector across a call (memcpy): around one every vector
 * register is caller-saved, and GCC then keeps the loop's tables on the
 * stack (llvm-mca 19, AVX-512 bfloat16 gradient: 23 stack operands per
 * vector, 31.6 cycles per 16 on znver4 against 23.9). */
GX_INLINE int gx_f32_tail(const gx_f32_table *T, const void *x, const void *g, void *o, int j, int m,
                          uint64_t *bad, int loop, int sigmoid, int st)
{
    const size_t sz = st == GX_ST_F32 ? 4 : 2, off = (size_t)j * sz;
    unsigned char xb[4 * GX_VF_W] = {0}, gb[4 * GX_VF_W] = {0}, ob[4 * GX_VF_W];
    memcpy(xb, (const char *)x + off, (size_t)m * sz);
    if (loop != GX_LOOP_FWD) memcpy(gb, (const char *)g + off, (size_t)m * sz);
    gx_f32_regs R;
    gx_f32_regs_load(&R, T);
    const int nb = gx_f32_vector(&R, xb, gb, ob, bad, j, loop, sigmoid, st);
    memcpy((char *)o + off, ob, (size_t)m * sz);
    return nb;
}
static GX_NOINLINE int gx_f32_tail_call(const gx_f32_table *T, const void *x, const void *g, void *o,
                                        int j, int m, uint64_t *bad, int loop, int sigmoid, int st)
{
    return gx_f32_tail(T, x, g, o, j, m, bad, loop, sigmoid, st);
}
#ifdef GX_HAVE_STORE_BN
static GX_NOINLINE GX_BN_TARGET int gx_f32_tail_call_bf16_insn(const gx_f32_table *T, const void *x, const void *g,
                                                        void *o, int j, int m, uint64_t *bad, int loop, int sigmoid)
{
    return gx_f32_tail(T, x, g, o, j, m, bad, loop, sigmoid, GX_ST_BF16_INSN);
}
#endif

/* o[j] = the formula of table T at x[j] (and g[j] unless loop is forward) for
 * n <= GX_SPLIT_B elements of storage st; bit j of bad[j / 64] set for the
 * elements the table does not cover, whose o[j] the caller overwrites.
 * Returns how many it flagged.  Every argument but the arrays and n is a
 * constant of the kernel that calls it (below), so each kernel compiles to
 * its own loop over whole vectors; the last partial one is the tail's. */
GX_INLINE int gx_f32_loop(const gx_f32_table *T, const void *x, const void *g, void *o, int n,
                          uint64_t *bad, int loop, int sigmoid, int st)
{
    const size_t sz = st == GX_ST_F32 ? 4 : 2;       /* bytes per element */
    const int ng = loop != GX_LOOP_FWD;                 /* reads g */
    const char *xc = (const char *)x, *gc = (const char *)g;
    char *oc = (char *)o;
    gx_f32_regs R;
    gx_f32_regs_load(&R, T);
    int nb = 0, j = 0;
    for (int w = 0; w < (n + 63) / 64; w++) bad[w] = 0;
    for (; j + GX_VF_W <= n; j += GX_VF_W) {
        if (j % (int)(64 / sz) == 0) {      /* a line of each array ahead */
            GX_PREFETCH(xc + j * sz, GX_PF_BYTES);
            if (ng) GX_PREFETCH(gc + j * sz, GX_PF_BYTES);
            GX_PREFETCH(oc + j * sz, GX_PF_BYTES);
        }
        nb += gx_f32_vector(&R, xc + j * sz, ng ? gc + j * sz : NULL, oc + j * sz, bad, j, loop, sigmoid, st);
    }
    if (j < n) {
#ifdef GX_HAVE_STORE_BN
        if (st == GX_ST_BF16_INSN)
            nb += gx_f32_tail_call_bf16_insn(T, x, g, o, j, n - j, bad, loop, sigmoid);
        else
#endif
            nb += gx_f32_tail_call(T, x, g, o, j, n - j, bad, loop, sigmoid, st);
    }
    if (n % 64) bad[(n - 1) / 64] &= ((uint64_t)1 << (n % 64)) - 1u;
    return nb;
}
#else
/* The baseline: per element the scalar twin of the unit's tables and its
 * coverage test (float32 data only: st is GX_ST_F32). */
GX_INLINE int gx_f32_loop(const gx_f32_table *T, const void *x_, const void *g_, void *o_, int n,
                          uint64_t *bad, int loop, int sigmoid, int st)
{
    const float *x = (const float *)x_, *g = (const float *)g_;
    float *o = (float *)o_;
    int nb = 0;
    (void)sigmoid;
    (void)st;
    for (int w = 0; w < (n + 63) / 64; w++) bad[w] = 0;
    for (int j = 0; j < n; j++) {
#if GX_F32_PIECES == 8
        o[j] = loop == GX_LOOP_GRAD ? gx_lut8_grad(T, x[j], g[j])
             : (loop == GX_LOOP_GATE ? gx_lut8_fwd(T, x[j]) * g[j] : gx_lut8_fwd(T, x[j]));
        const int ok = gx_lut8_ok(T, x[j]);
#else
        o[j] = loop == GX_LOOP_GRAD ? gx_lut_grad(T, x[j], g[j])
             : (loop == GX_LOOP_GATE ? gx_lut_fwd(T, x[j]) * g[j] : gx_lut_fwd(T, x[j]));
        const int ok = gx_lut_ok(T, x[j]);
#endif
        bad[j / 64] |= (uint64_t)!ok << (j % 64);
        nb += !ok;
    }
    return nb;
}
#endif

/* ---------------------------------------------------------- the kernels -- */
/* gx_k_<name>_<isa>, one per table loop (the LOOP column of GX_F32_SPLITS,
 * gx_split_rows.h): T's formula over n float32 elements, the split driver's
 * first pass (gx_k_split.h).  lut: the GELU tables (exact, tanh); sig:
 * the sigmoid family's (SiLU, quick GELU); fwd, grad, gate: loop above. */
static GX_NOINLINE int GX_FN(lut_fwd)(const gx_f32_table *T, const float *x, const float *g, float *o,
                                      int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_FWD, 0, GX_ST_F32);
}
static GX_NOINLINE int GX_FN(lut_grad)(const gx_f32_table *T, const float *x, const float *g, float *o,
                                       int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_GRAD, 0, GX_ST_F32);
}
static GX_NOINLINE int GX_FN(lut_gate)(const gx_f32_table *T, const float *x, const float *g, float *o,
                                       int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_GATE, 0, GX_ST_F32);
}
static GX_NOINLINE int GX_FN(sig_fwd)(const gx_f32_table *T, const float *x, const float *g, float *o,
                                      int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_FWD, 1, GX_ST_F32);
}
static GX_NOINLINE int GX_FN(sig_grad)(const gx_f32_table *T, const float *x, const float *g, float *o,
                                       int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_GRAD, 1, GX_ST_F32);
}
static GX_NOINLINE int GX_FN(sig_gate)(const gx_f32_table *T, const float *x, const float *g, float *o,
                                       int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_GATE, 1, GX_ST_F32);
}

/* The same loops on 16-bit arrays (x, for a derivative g, and the result
 * float16 or bfloat16): each vector is widened in registers (exact), runs
 * the float32 body, and is rounded back to 16 bits by the very rounding of
 * the block pipeline's narrowing (gx_k_16bit.h, GX_FN(run_16bit)), so the
 * same bits as widening a block, running the float32 loop and narrowing
 * it, in one pass over the data.  _f16 float16, _bf16 bfloat16, _bf16_insn
 * bfloat16 rounded by the CPU's own conversion (vf_store_bn).  Forward
 * loops do not read g (NULL). */
#ifdef GX_VEC16
static GX_NOINLINE int GX_FN(lut_grad_f16)(const gx_f32_table *T, const uint16_t *x, const uint16_t *g,
                                         uint16_t *o, int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_GRAD, 0, GX_ST_F16);
}
static GX_NOINLINE int GX_FN(lut_grad_bf16)(const gx_f32_table *T, const uint16_t *x, const uint16_t *g,
                                         uint16_t *o, int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_GRAD, 0, GX_ST_BF16);
}
static GX_NOINLINE int GX_FN(sig_grad_f16)(const gx_f32_table *T, const uint16_t *x, const uint16_t *g,
                                         uint16_t *o, int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_GRAD, 1, GX_ST_F16);
}
static GX_NOINLINE int GX_FN(sig_grad_bf16)(const gx_f32_table *T, const uint16_t *x, const uint16_t *g,
                                         uint16_t *o, int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_GRAD, 1, GX_ST_BF16);
}
#if GX_VF_W >= 16
static GX_NOINLINE int GX_FN(lut_fwd_f16)(const gx_f32_table *T, const uint16_t *x, const uint16_t *g,
                                        uint16_t *o, int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_FWD, 0, GX_ST_F16);
}
#endif
static GX_NOINLINE int GX_FN(sig_fwd_f16)(const gx_f32_table *T, const uint16_t *x, const uint16_t *g,
                                        uint16_t *o, int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_FWD, 1, GX_ST_F16);
}
static GX_NOINLINE int GX_FN(sig_fwd_bf16)(const gx_f32_table *T, const uint16_t *x, const uint16_t *g,
                                        uint16_t *o, int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_FWD, 1, GX_ST_BF16);
}
#ifdef GX_HAVE_STORE_BN
static GX_NOINLINE GX_BN_TARGET int GX_FN(lut_grad_bf16_insn)(const gx_f32_table *T, const uint16_t *x,
                                                       const uint16_t *g, uint16_t *o, int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_GRAD, 0, GX_ST_BF16_INSN);
}
static GX_NOINLINE GX_BN_TARGET int GX_FN(sig_grad_bf16_insn)(const gx_f32_table *T, const uint16_t *x,
                                                       const uint16_t *g, uint16_t *o, int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_GRAD, 1, GX_ST_BF16_INSN);
}
static GX_NOINLINE GX_BN_TARGET int GX_FN(sig_fwd_bf16_insn)(const gx_f32_table *T, const uint16_t *x,
                                                      const uint16_t *g, uint16_t *o, int n, uint64_t *bad)
{
    return gx_f32_loop(T, x, g, o, n, bad, GX_LOOP_FWD, 1, GX_ST_BF16_INSN);
}
#endif
#endif
