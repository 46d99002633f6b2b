/*
 * gx_loops.h -- the table loops: the float32-lane formulas of gx_lut.h (on
 * float32 and on 16-bit arrays) and the float64-lane formulas of gx_lut64.h,
 * written once over the primitives of the ISA being compiled (its header,
 * the HEADER column of gx_isas.h, included just before this file).  Each
 * primitive performs one IEEE operation, an exact table fetch or an exact
 * select, in the order of the scalar twins, so every path gives the scalar
 * twins' bits.  Without primitives (the baseline, simd/scalar.h) the same
 * functions run the scalar twins element by element.
 *
 * Why intrinsics here when the rest is auto-vectorised: the table fetch.  GCC
 * does not vectorise the scalar twins at all (the data-dependent index), and
 * a gather per table costs more than the whole formula.
 *
 * THE PRIMITIVES (the contract an ISA header fulfils).  L is the lane type,
 * F32 (float lanes) or F64 (double lanes); every name below is GX_<L>_<NAME>,
 * the same for both lane types, and means the same for both unless it says.
 *   GX_VEC              defined: this ISA has the vector primitives below
 *   W                   lanes per vector (an integer constant, <= 64; NEON's
 *                       8 are a pair of registers)
 *   V, I, M             the types: vector, index vector, mask.  M is opaque:
 *                       the loops only pass it to the operations below
 *   LOAD(p), STORE(p,v) W unaligned elements
 *   SET(c)              c in every lane
 *   ADD SUB MUL (a,b)   one rounding each
 *   FMA(a,b,c)          a b + c, FMS(a,b,c): a b - c, one rounding each
 *   ABSMIN(x,X)         min(|x|, X) for X > 0, and X where x is NaN
 *   LO16(v)             F32: the float whose bits are v's low 16 bits shifted
 *                       up (gx_lut_lo16)
 *   INDEX(t)            the piece of every lane as an I: F32 from t = the
 *                       bits of GX_LUT_MAGIC + n, capped at 31
 *                       (gx_lut_index); F64 trunc(t) capped at 15
 *   TAB                 a table (32 floats, 16 doubles, 64-byte aligned) made
 *                       ready for LUT: TAB_LOAD(r, p) once per call
 *   LUT_IDX, LUT_PREP(i)  the index vector i made ready for LUT, and its
 *                       type (I and i itself where nothing is needed);
 *                       LUT(r, p): entry p of every lane, exact
 *   masks:
 *   SIGNM(x)            x's sign as a mask that SEL1MH and SELNEG read:
 *   SEL1MH(m, h)        x < 0 ? h : 1 - h   (sign set: h; -0 counts as < 0)
 *   SELNEG(m, M)        x < 0 ? M : -M (F32)
 *   MASKMUL(m, s, a, b) m ? a b : s (F32)
 *   SPECIAL(g)          g is +-0, +-inf or NaN (F32)
 *   BAD(x, X)           !(|x| <= X): |x| > X or NaN
 *   BAD1(x, NX)         !(x >= NX): x < NX or NaN (F32)
 *   MBITS(m)            to bits: a uint64 whose bit k is lane k (bits >= W
 *                       clear).  An ISA without a movemask builds it (NEON:
 *                       the lanes narrowed to bytes, read as 64 bits, their
 *                       bits gathered by one multiply)
 *   NBITS(m, b)         optional: the lanes set in m, given b = MBITS(m)
 *                       (default GX_POPCNT64(b); NEON has no scalar popcount)
 *   16-bit data in F32 lanes, where the header defines GX_VEC16:
 *   LOAD_H(p), LOAD_B(p)    W float16 / bfloat16 values widened (exact)
 *   STORE_H(p,v), STORE_B(p,v)  rounded to float16 (round to nearest even,
 *                       as gx_float_to_half) / bfloat16 (gx_float_to_bfloat16)
 *   STORE_BN(p,v)       optional: the bits of STORE_B by another instruction,
 *                       in functions compiled with GX_BN_TARGET; kernels with
 *                       it are the bf16cvt loop choice (gx_kernels.c)
 * Optional ISA helpers, used where the header defines them:
 *   GX_HAVE_PACK_IDX    GX_FN(pack_idx)(bad, m, want, idx): the split's
 *                       packing (gx_k_split.h says what it returns)
 *   GX_HAVE_GATHER16    GX_FN(gather16)(T, x, o, n): the 16-bit result table
 *                       read with gathers, whole vectors (gx_k_16bit.h)
 *   GX_ISA_FILL(t, c)   a statement run after the row's dispatch table is
 *                       filled (gx_isa_kernels.h): it may replace any
 *                       t[op][dtype] by a kernel of its own
 *
 * AN ISA WITH TABLES OF ITS OWN.  The loop skeleton (GX_TABLE_LOOP: loads,
 * the padded tail, prefetch, the bits of the rejected elements, stores)
 * never names a table's layout.  What it reads is the header's to choose;
 * each has a default here that a header may define first:
 *   GX_F32_TABLE_OF(T32, T8)  which of a float32 split kernel's tables its
 *                           loop reads (the TAB32 and TAB8 columns of
 *                           GX_F32_SPLITS, gx_kdefs.h): T32 by default, T8
 *                           with GX_F32_TABLES8; a header with a table set
 *                           of its own adds a column there
 *   GX_F32_TABLE_T          the table's type (gx_lut)
 *   GX_F32_TABLE_DECL(R, T) constants and TAB registers from one table,
 *                           declared as R##_name
 *   GX_F32_TABLE_BODY(R, ...)  one vector of results and its rejected lanes
 *                           (the formula, the fetch, the polynomial degree)
 The 8-piece tables of gx_lut8.h are such a set, shared by every ISA whose
 * header defines GX_F32_TABLES8 (AVX2; NEON): their DECL and BODY are below,
 * written over the primitives above plus these:
 *   TAB8                an 8-entry table (8 floats, or 8 uint32 read as
 *                       floats), 32-byte aligned, ready for LUT8:
 *                       TAB8_LOAD(r, p) once per call
 *   INDEX8(t)           the piece of every lane as an I, from t = the bits of
 *                       GX_LUT_MAGIC + n, capped at 7 (gx_lut8_index)
 *   LUT8_IDX, LUT8_PREP(i)  the same for LUT8 (NEON: the byte indices of
 *                       tbl); LUT8(r, p): entry p of every lane, exact (bits kept)
 *   HI16(v)             the float whose bits are v's high 16 bits, the low
 *                       ones cleared (gx_lut8_half)
 * (The float64 fetch, GX_F64_PIECE and its set, can be overridden the same way.)
 */
#ifndef GX_ISA
#error "src/gx_loops.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif

/* ------------------------------------------------ the loop skeleton -- */
/* GX_FN(fname)(T, x, g, o, n, bad): o[j] = the formula of table T at x[j]
 * (and g[j] if NG) for n <= GX_SPLIT_B elements of storage type TS; bit j
 * of bad[j / 64] set for the elements the table does not cover, whose o[j]
 * the caller overwrites.  Returns how many it flagged.  L: lane type; LD,
 * ST: how TS reaches the lanes and back; DECL(R, T): the table's constants
 * and registers, declared as R_<name>; BODY(R, xv, gv, res, bm, ...): one
 * vector's results and rejected lanes, reading them (R is the skeleton's
 * name for the set: no macro reads a variable it was not given). */
#ifdef GX_VEC
#ifndef GX_F32_NBITS
#define GX_F32_NBITS(m, b) GX_POPCNT64(b)
#endif
#ifndef GX_F64_NBITS
#define GX_F64_NBITS(m, b) GX_POPCNT64(b)
#endif
#define GX_TABLE_LOOP(fname, L, TS, TT, NG, LD, ST, ATTR, DECL, BODY, ...)  \
static GX_NOINLINE ATTR int GX_FN(fname)(const TT *T, const TS *x, const TS *g, \
                                         TS *o, int n, uint64_t *bad)        \
{                                                                           \
    int nb_ = 0;                                                            \
    DECL(R, T);                                                             \
    for (int w = 0; w < (n + 63) / 64; w++) bad[w] = 0;                     \
    for (int j = 0; j < n; j += GX_##L##_W) {                               \
        GX_##L##_V r, xv, gv;                                               \
        GX_##L##_M bm;                                                      \
        TS xb[GX_##L##_W], gb[GX_##L##_W], ob[GX_##L##_W];                  \
        const TS *xs = x + j, *gs = (NG) ? g + j : xs;                      \
        const int full = j + GX_##L##_W <= n;                               \
        if (j % (64 / (int)sizeof(TS)) == 0) {  /* a line of each array ahead */ \
            GX_PREFETCH(x + j, GX_PF_BYTES);                                \
            if (NG) GX_PREFETCH(g + j, GX_PF_BYTES);                        \
            GX_PREFETCH(o + j, GX_PF_BYTES);                                \
        }                                                                   \
        if (!full) {            /* the last partial vector, via a padded copy */ \
            for (int q = 0; q < GX_##L##_W; q++) {                          \
                xb[q] = j + q < n ? x[j + q] : 0;                           \
                gb[q] = (NG) && j + q < n ? g[j + q] : 0;                   \
            }                                                               \
            xs = xb;                                                        \
            gs = gb;                                                        \
        }                                                                   \
        xv = LD(xs);                                                        \
        gv = (NG) ? LD(gs) : xv;                                            \
        BODY(R, xv, gv, r, bm, __VA_ARGS__);                                \
        const uint64_t b = GX_##L##_MBITS(bm);                              \
        bad[j / 64] |= b << (j % 64);                                       \
        nb_ += GX_##L##_NBITS(bm, b);  /* padded lanes (0) are never flagged */ \
        if (full) {                                                         \
            ST(o + j, r);                                                   \
        } else {                                                            \
            ST(ob, r);                                                      \
            memcpy(o + j, ob, (size_t)(n - j) * sizeof(TS));                \
        }                                                                   \
    }                                                                       \
    if (n % 64) bad[(n - 1) / 64] &= ((uint64_t)1 << (n % 64)) - 1u;       \
    return nb_;                                                             \
}
#else
/* the baseline: per element the scalar twin ELEM(T, x, g, ...) and its
 * coverage test OK(T, x) (g: NULL for a one-input loop, whose ELEM does
 * not read it) */
#define GX_TABLE_TWIN(fname, TS, TT, ELEM, OK, ...)                         \
static GX_NOINLINE int GX_FN(fname)(const TT *T, const TS *x, const TS *g,  \
                                    TS *o, int n, uint64_t *bad)            \
{                                                                           \
    int nb_ = 0;                                                            \
    (void)g;                                                                \
    for (int w = 0; w < (n + 63) / 64; w++) bad[w] = 0;                     \
    for (int j = 0; j < n; j++) {                                           \
        o[j] = ELEM(T, x[j], g[j], __VA_ARGS__);                            \
        const int ok = OK(T, x[j]);                                         \
        bad[j / 64] |= (uint64_t)!ok << (j % 64);                           \
        nb_ += !ok;                                                         \
    }                                                                       \
    return nb_;                                                             \
}
#endif

/* ------------------------------- the 8-piece tables (gx_lut8.h) -- */
#ifdef GX_F32_TABLES8
#define GX_F32_TABLE_OF(T32, T8) T8
#define GX_F32_TABLE_T gx_lut8
#define GX_F32_TWIN_FWD gx_lut8_fwd
#define GX_F32_TWIN_GRAD gx_lut8_grad
#define GX_F32_TWIN_OK gx_lut8_ok
#ifdef GX_VEC
#define GX_F32_TABLE_DECL(R, T)                                             \
    const GX_F32_V R##_x = GX_F32_SET((T)->x), R##_nx = GX_F32_SET(-(T)->x); \
    const GX_F32_V R##_xc = GX_F32_SET((T)->xc);                            \
    const GX_F32_V R##_k = GX_F32_SET((T)->k), R##_k2 = GX_F32_SET((T)->k2); \
    GX_F32_TAB8 R##_m[9], R##_su;                                           \
    for (int q_ = 0; q_ < 9; q_++) GX_F32_TAB8_LOAD(R##_m[q_], (T)->m[q_]); \
    GX_F32_TAB8_LOAD(R##_su, (const float *)(T)->su);                       \
    (void)R##_nx
/* One vector of gx_lut8_fwd (G = 0; G = 2: times gv, a gated form) or
 * gx_lut8_grad (G = 1), in the twins' order of operations; S = 1 for the
 * sigmoid family's tables (k2 = 0: t = fma(a, k, GX_LUT_MAGIC), which is
 * fma(a, fma(a, 0, k), GX_LUT_MAGIC) exactly).  bm as for the 32-piece
 * tables: the forward GELU tables reject x < -X or NaN only. */
#define GX_F32_TABLE_BODY(R, xv, gv, res, bm, G, S)                         \
    do {                                                                    \
        const GX_F32_V a_ = GX_F32_ABSMIN(xv, R##_xc);                      \
        const GX_F32_V t_ = (S) ? GX_F32_FMA(a_, R##_k, GX_F32_SET(GX_LUT_MAGIC)) \
            : GX_F32_FMA(a_, GX_F32_FMA(a_, R##_k2, R##_k), GX_F32_SET(GX_LUT_MAGIC)); \
        const GX_F32_I i_ = GX_F32_INDEX8(t_);                              \
        const GX_F32_LUT8_IDX p_ = GX_F32_LUT8_PREP(i_);                    \
        const GX_F32_V e8_ = GX_F32_LUT8(R##_m[8], p_), e7_ = GX_F32_LUT8(R##_m[7], p_); \
        const GX_F32_V su_ = GX_F32_LUT8(R##_su, p_);                       \
        const GX_F32_V d_ = GX_F32_SUB(a_, GX_F32_LO16(e8_));               \
        GX_F32_V M_ = GX_F32_FMA(e8_, d_, e7_);              /* gx_lut8_poly */ \
        for (int q_ = 6; q_ >= 0; q_--) M_ = GX_F32_FMA(M_, d_, GX_F32_LUT8(R##_m[q_], p_)); \
        /* B = h + e (gx_lut8_b) */                                         \
        const GX_F32_V base_ = GX_F32_SET((G) == 1 ? 2.0f : 0.5f);          \
        const GX_F32_V H5_ = GX_F32_ADD(GX_F32_LO16(e7_), base_);           \
        const GX_F32_V S_ = GX_F32_HI16(su_), U_ = GX_F32_LO16(su_);         \
        const GX_F32_V T_ = GX_F32_FMA(U_, d_, S_);                         \
        const GX_F32_V eT_ = GX_F32_FMA(U_, d_, GX_F32_SUB(S_, T_));        \
        const GX_F32_V Bp_ = GX_F32_FMA(d_, T_, H5_);                       \
        const GX_F32_V e_ = GX_F32_FMA(d_, eT_, GX_F32_FMA(d_, T_, GX_F32_SUB(H5_, Bp_))); \
        const GX_F32_V h_ = GX_F32_SUB(Bp_, base_);                         \
        const GX_F32_M n_ = GX_F32_SIGNM(xv);                               \
        const GX_F32_V B_ = GX_F32_SEL1MH(n_, h_);                          \
        if ((G) == 1) {                                                     \
            const GX_F32_V sM_ = GX_F32_SELNEG(n_, GX_F32_ADD(M_, e_));     \
            res = GX_F32_FMA(B_, gv, GX_F32_MUL(sM_, gv));                  \
            res = GX_F32_MASKMUL(GX_F32_SPECIAL(gv), res, GX_F32_ADD(B_, sM_), gv); \
        } else {                                                            \
            res = GX_F32_FMS(xv, B_, GX_F32_FMA(a_, e_, M_));               \
            if ((G) == 2) res = GX_F32_MUL(res, gv);                        \
        }                                                                   \
        bm = ((G) != 1 && !(S)) ? GX_F32_BAD1(xv, R##_nx) : GX_F32_BAD(xv, R##_x); \
    } while (0)
#endif
#endif

#ifndef GX_F32_TABLE_OF
#define GX_F32_TABLE_OF(T32, T8) T32            /* gx_lut.h */
#endif

/* ------------------------------------------ float32 lanes (gx_lut.h) -- */
#ifndef GX_F32_TABLE_T
#define GX_F32_TABLE_T gx_lut
#define GX_F32_TWIN_FWD gx_lut_fwd
#define GX_F32_TWIN_GRAD gx_lut_grad
#define GX_F32_TWIN_OK gx_lut_ok
#endif
#ifdef GX_VEC
#ifndef GX_F32_TABLE_DECL
/* The tables of one gx_lut, ready for GX_F32_LUT, and its range constants. */
#define GX_F32_TABLE_DECL(R, T)                                             \
    const GX_F32_V R##_x = GX_F32_SET((T)->x), R##_nx = GX_F32_SET(-(T)->x); \
    const GX_F32_V R##_xc = GX_F32_SET((T)->xc);                            \
    const GX_F32_V R##_k = GX_F32_SET((T)->k), R##_k2 = GX_F32_SET((T)->k2); \
    GX_F32_TAB R##_m[5], R##_m5c, R##_m6h;                                  \
    for (int q_ = 0; q_ < 5; q_++) GX_F32_TAB_LOAD(R##_m[q_], (T)->m[q_]);  \
    GX_F32_TAB_LOAD(R##_m5c, (T)->m5c);                                     \
    GX_F32_TAB_LOAD(R##_m6h, (T)->m6h);                                     \
    (void)R##_nx
/* One vector of gx_lut_fwd (G = 0; G = 2: times gv, a gated form, the
 * rounded result times up) or gx_lut_grad (G = 1); S = 1 for the sigmoid
 * family's tables (k2 = 0: t = fma(a, k, GX_LUT_MAGIC), which is
 * fma(a, fma(a, 0, k), GX_LUT_MAGIC) exactly; m_6 = 0, so M_i starts at
 * m_5, as gx_lut_poly does).  bm: the lanes gx_lut_ok rejects; the forward
 * GELU tables (xp = inf) cover x > 0 whole, so only x < -X or NaN. */
#define GX_F32_TABLE_BODY(R, xv, gv, res, bm, G, S)                         \
    do {                                                                    \
        const GX_F32_V a_ = GX_F32_ABSMIN(xv, R##_xc);        /* gx_lut_clamp */ \
        const GX_F32_V t_ = (S) ? GX_F32_FMA(a_, R##_k, GX_F32_SET(GX_LUT_MAGIC)) \
            : GX_F32_FMA(a_, GX_F32_FMA(a_, R##_k2, R##_k), GX_F32_SET(GX_LUT_MAGIC)); \
        const GX_F32_I i_ = GX_F32_INDEX(t_);                               \
        const GX_F32_LUT_IDX p_ = GX_F32_LUT_PREP(i_);                      \
        const GX_F32_V e5_ = GX_F32_LUT(R##_m5c, p_), e6_ = GX_F32_LUT(R##_m6h, p_); \
        const GX_F32_V d_ = GX_F32_SUB(a_, GX_F32_LO16(e5_));               \
        const GX_F32_V M_ = GX_F32_FMA(GX_F32_FMA(GX_F32_FMA(GX_F32_FMA(GX_F32_FMA( \
            (S) ? e5_ : GX_F32_FMA(e6_, d_, e5_),                           \
            d_, GX_F32_LUT(R##_m[4], p_)), d_, GX_F32_LUT(R##_m[3], p_)),   \
            d_, GX_F32_LUT(R##_m[2], p_)), d_, GX_F32_LUT(R##_m[1], p_)),   \
            d_, GX_F32_LUT(R##_m[0], p_));                    /* gx_lut_poly */ \
        const GX_F32_V h_ = GX_F32_LO16(e6_);                               \
        const GX_F32_M n_ = GX_F32_SIGNM(xv);                               \
        const GX_F32_V B_ = GX_F32_SEL1MH(n_, h_);                          \
        if ((G) == 1) {                                                     \
            const GX_F32_V sM_ = GX_F32_SELNEG(n_, M_);                     \
            res = GX_F32_FMA(B_, gv, GX_F32_MUL(sM_, gv));                  \
            res = GX_F32_MASKMUL(GX_F32_SPECIAL(gv), res, GX_F32_ADD(B_, sM_), gv); \
        } else {                                                            \
            res = GX_F32_FMS(xv, B_, M_);                                   \
            if ((G) == 2) res = GX_F32_MUL(res, gv);                        \
        }                                                                   \
        bm = ((G) != 1 && !(S)) ? GX_F32_BAD1(xv, R##_nx) : GX_F32_BAD(xv, R##_x); \
    } while (0)
#endif
#define GX_F32_LOOP(fname, G, S)                                            \
    GX_TABLE_LOOP(fname, F32, float, GX_F32_TABLE_T, (G) != 0, GX_F32_LOAD, GX_F32_STORE, , \
                  GX_F32_TABLE_DECL, GX_F32_TABLE_BODY, G, S)
#else
/* G as for the vector body: the forward twin, the derivative's times g,
 * the forward's times g */
#define GX_F32_TWIN_ELEM(T, xj, gj, G)                                      \
    ((G) == 1 ? GX_F32_TWIN_GRAD(T, xj, gj)                                 \
     : ((G) == 2 ? GX_F32_TWIN_FWD(T, xj) * (gj) : GX_F32_TWIN_FWD(T, xj)))
#define GX_F32_LOOP(fname, G, S)                                            \
    GX_TABLE_TWIN(fname, float, GX_F32_TABLE_T, GX_F32_TWIN_ELEM, GX_F32_TWIN_OK, G)
#endif
GX_F32_LOOP(lut_fwd, 0, 0)
GX_F32_LOOP(lut_grad, 1, 0)
GX_F32_LOOP(sig_fwd, 0, 1)      /* the sigmoid family's tables (SiLU, quick GELU) */
GX_F32_LOOP(sig_grad, 1, 1)
GX_F32_LOOP(lut_gate, 2, 0)     /* the gated forms: times up in the same loop */
GX_F32_LOOP(sig_gate, 2, 1)

/* The same loops on 16-bit arrays (x, for a derivative g, and the result
 * float16 or bfloat16): each vector is widened in registers (exact), runs
 * the float32 body, and is rounded back to 16 bits by the very rounding of
 * the block pipeline's narrowing (gx_k_16bit.h, narrow_run), so the same
 * bits as widening a block, running the float32 loop and narrowing it, in
 * one pass over the data.  _h float16, _b bfloat16, _bn bfloat16 through
 * STORE_BN. */
#ifdef GX_VEC16
#define GX_F16_LOOP(fname, G, S, LD, ST, ATTR)                              \
    GX_TABLE_LOOP(fname, F32, uint16_t, GX_F32_TABLE_T, (G) != 0, LD, ST, ATTR, \
                  GX_F32_TABLE_DECL, GX_F32_TABLE_BODY, G, S)
GX_F16_LOOP(lut_grad_h, 1, 0, GX_F32_LOAD_H, GX_F32_STORE_H, )
GX_F16_LOOP(lut_grad_b, 1, 0, GX_F32_LOAD_B, GX_F32_STORE_B, )
GX_F16_LOOP(sig_grad_h, 1, 1, GX_F32_LOAD_H, GX_F32_STORE_H, )
GX_F16_LOOP(sig_grad_b, 1, 1, GX_F32_LOAD_B, GX_F32_STORE_B, )
GX_F16_LOOP(sig_fwd_h, 0, 1, GX_F32_LOAD_H, GX_F32_STORE_H, )     /* forward: g unused (NULL) */
GX_F16_LOOP(sig_fwd_b, 0, 1, GX_F32_LOAD_B, GX_F32_STORE_B, )
#ifdef GX_F32_STORE_BN
GX_F16_LOOP(lut_grad_bn, 1, 0, GX_F32_LOAD_B, GX_F32_STORE_BN, GX_BN_TARGET)
GX_F16_LOOP(sig_grad_bn, 1, 1, GX_F32_LOAD_B, GX_F32_STORE_BN, GX_BN_TARGET)
GX_F16_LOOP(sig_fwd_bn, 0, 1, GX_F32_LOAD_B, GX_F32_STORE_BN, GX_BN_TARGET)
#endif
#undef GX_F16_LOOP
#endif
#undef GX_F32_LOOP
#undef GX_F32_TWIN_ELEM

/* --------------------------------------- float64 lanes (gx_lut64.h) -- */
/* GX_FN(lut64_fwd): gx_lut64_fwd's operations in double lanes, rejecting
 * !gx_lut64_ok (NaN, |x| > T->x). */
#ifndef GX_F64_TABLE_T
#define GX_F64_TABLE_T gx_lut64
#endif
#ifdef GX_VEC
/* The fetch: ix = GX_F64_PIECES(R, i), each lane's piece i made ready;
 * GX_F64_PIECE(R, ix, f), column f (c, h, m1l) of every lane's piece, and
 * GX_F64_PIECE_M(R, ix, q), its m[q] (R: DECL's register set).  By default
 * a register table per column (TAB_LOAD once per call, LUT_PREP once per
 * vector, LUT per fetch); an ISA that loads each lane's row of
 * gx_lut64_rows instead (simd/avx2.h) defines TABLE_DECL, LUT_IDX and
 * these three. */
#ifndef GX_F64_PIECE
#define GX_F64_TABLE_DECL(R, T)                                             \
    const GX_F64_V R##_x = GX_F64_SET((T)->x), R##_k = GX_F64_SET((T)->k);  \
    const GX_F64_V R##_k2 = GX_F64_SET((T)->k2), R##_k3 = GX_F64_SET((T)->k3); \
    const GX_F64_V R##_t0 = GX_F64_SET((T)->t0);                            \
    GX_F64_TAB R##_c, R##_h, R##_m[16], R##_m1l;                            \
    GX_F64_TAB_LOAD(R##_c, (T)->c);                                         \
    GX_F64_TAB_LOAD(R##_h, (T)->h);                                         \
    GX_F64_TAB_LOAD(R##_m1l, (T)->m1l);                                     \
    for (int q_ = 0; q_ < 16; q_++) GX_F64_TAB_LOAD(R##_m[q_], (T)->m[q_])
#define GX_F64_PIECES(R, i) GX_F64_LUT_PREP(i)
#define GX_F64_PIECE(R, ix, f) GX_F64_LUT(R##_##f, ix)
#define GX_F64_PIECE_M(R, ix, q) GX_F64_LUT(R##_m[q], ix)
#endif
/* gx_lut64_fwd, lane by lane */
#define GX_F64_TABLE_BODY(R, xv, gv, res, bm, unused)                       \
    do {                                                                    \
        const GX_F64_V a_ = GX_F64_ABSMIN(xv, R##_x);                       \
        const GX_F64_I i_ = GX_F64_INDEX(GX_F64_FMA(a_, GX_F64_FMA(a_,      \
            GX_F64_FMA(a_, R##_k3, R##_k2), R##_k), R##_t0));               \
        const GX_F64_LUT_IDX ix_ = GX_F64_PIECES(R, i_);                    \
        const GX_F64_V d_ = GX_F64_SUB(a_, GX_F64_PIECE(R, ix_, c));        \
        GX_F64_V p_ = GX_F64_PIECE_M(R, ix_, 15);                           \
        for (int q_ = 14; q_ >= 1; q_--) p_ = GX_F64_FMA(p_, d_, GX_F64_PIECE_M(R, ix_, q_)); \
        p_ = GX_F64_FMA(p_, d_, GX_F64_FMA(GX_F64_PIECE(R, ix_, m1l), d_, GX_F64_PIECE_M(R, ix_, 0))); \
        res = GX_F64_FMS(xv, GX_F64_SEL1MH(GX_F64_SIGNM(xv), GX_F64_PIECE(R, ix_, h)), p_); \
        bm = GX_F64_BAD(xv, R##_x);                                         \
        (void)gv;                                                           \
    } while (0)
GX_TABLE_LOOP(lut64_fwd, F64, double, GX_F64_TABLE_T, 0, GX_F64_LOAD, GX_F64_STORE, ,
              GX_F64_TABLE_DECL, GX_F64_TABLE_BODY, 0)
#else
#define GX_F64_TWIN_ELEM(T, xj, gj, unused) gx_lut64_fwd(T, xj)
GX_TABLE_TWIN(lut64_fwd, double, GX_F64_TABLE_T, GX_F64_TWIN_ELEM, gx_lut64_ok, 0)
#undef GX_F64_TWIN_ELEM
#endif
