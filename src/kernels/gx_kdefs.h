/*
 * gx_kdefs.h -- what every kernel file uses, whatever the ISA: the naming of
 * per-ISA kernels (GX_FN), the bit helpers of the split masks, software
 * prefetch and the block sizes, and the names each ISA unit (src/isa/)
 * exports.  Included by gx_dispatch.c and by every unit (gx_isa_unit.h).
 */
#ifndef GX_KDEFS_H
#define GX_KDEFS_H

#include <stdint.h>
#include <string.h>

/* gx_k_<name>_<isa>: GX_ISA is the NAME column of the row being compiled */
#define GX_PASTE2_(a, b) a##_##b
#define GX_PASTE2(a, b) GX_PASTE2_(a, b)
#define GX_PASTE3_(a, b, c) a##_##b##_##c
#define GX_PASTE3(a, b, c) GX_PASTE3_(a, b, c)
#define GX_FN(name) GX_PASTE3(gx_k, name, GX_ISA)
#define GX_IF_0(...)
#define GX_IF_1(...) __VA_ARGS__
#define GX_IF(flag) GX_IF_##flag     /* GX_IF(1)(code) is code, GX_IF(0)(code) nothing */

#if defined(__GNUC__) || defined(__clang__)
#define GX_NOINLINE __attribute__((noinline))
#else
#define GX_NOINLINE
#endif

/* Trailing zeros and set bits of a 64-bit mask word (the split masks). */
#if defined(__GNUC__) || defined(__clang__)
#define GX_CTZ64(w) __builtin_ctzll(w)
#define GX_POPCNT64(w) __builtin_popcountll(w)
#else
static inline int gx_ctz64(uint64_t w) { int n = 0; while (!(w & 1u)) { w >>= 1; n++; } return n; }
#define GX_CTZ64(w) gx_ctz64(w)
static inline int gx_popcnt64(uint64_t w) { int n = 0; while (w) { w &= w - 1u; n++; } return n; }
#define GX_POPCNT64(w) gx_popcnt64(w)
#endif

/* Software prefetch for the loops that stream arrays larger than L2 (the
 * table loops of gx_loop_f32.h, ReLU): each touches, GX_PF_BYTES ahead of where
 * it works, one 64-byte line of every input and of the output (which a store
 * would otherwise fetch for ownership on demand).  Streamed from L3 or
 * memory, a loop with ~26 vector instructions per line keeps too few loads
 * in flight for the hardware prefetchers to hide the latency: on a 2-core
 * Intel Xeon (AVX-512), 1 thread, exact GELU runs 1.25-1.6x faster with it
 * at 2^20 and 2^22 float32 elements and the same at 2^16 (L2); ReLU
 * 1.2-1.4x at 2^20.  A prefetch never faults, so running past an array's
 * end is harmless; the address is formed as an integer (no out-of-bounds
 * pointer arithmetic).  It changes no arithmetic. */
#ifndef GX_PF_BYTES
#define GX_PF_BYTES 2048
#endif
#if defined(__GNUC__) || defined(__clang__)
#define GX_PREFETCH(p, bytes) __builtin_prefetch((const void *)((uintptr_t)(p) + (bytes)), 0, 3)
#else
#define GX_PREFETCH(p, bytes) ((void)0)
#endif

/* The block of the split kernels (gx_k_split.h) and of the 16-bit one-pass
 * kernels (gx_k_16bit.h): GX_SPLIT_B float32 or 16-bit elements, half as
 * many float64 (the same bytes per buffer).  A multiple of 2048; large
 * enough that the packed calls run whole vectors and that the split's
 * fixed cost per block (the packing loop's exit, full's call and set-up)
 * is paid rarely, small enough for L1/L2: on AMD Zen 5, 2 N(0, 1) data,
 * AVX-512, the split adds 16 ns per 1024 elements at 8192 (21 at 4096, 66
 * at 1024) to the table loop's 175.  The buffers live on the stack (GCC 12
 * -fstack-usage, AVX-512): 194 KiB for a two-input float32 split, 130 KiB
 * for a one-input one, 113 KiB for a float64 split, 209 KiB for a 16-bit
 * one-pass kernel; the deepest chain, a 16-bit fused-bias gradient
 * (GX_FN(run_16bit) 36 KiB, the bias block 16 KiB, the float32 split), ~247 KiB.
 * The pool's workers get >= 1 MiB (gx_pool.c). */
#ifndef GX_SPLIT_B
#define GX_SPLIT_B 8192
#endif

/* The float32 split kernels (gx_k_instances.h, gx_k_16bit.h): float32
 * lanes from the tables where they cover x (gx_lut_ok: |x| <= 4.5, 8 or 4.7,
 * and for forward GELU every x >= -4.5), the general formula FULL for the
 * rest, so per element ok(x) ? the scalar twin of the path's tables : the
 * gx_math.h formula, whatever the split.  The one list of which tables and
 * loop each runs; one row per kernel:
 *   KERNEL  the op's kernel (gx_ops.h): gx_k_KERNEL_f32_ISA
 *   NIN     inputs: 1, or 2 (a derivative's g, a gated form's up)
 *   LOOP    its table loop (gx_loop_f32.h)
 *   FULL    whose general formula (FULL_f32_full, gx_k_instances.h) takes
 *           the rest
 *   GATE    1: a gated form, FULL(gate) * up (the loop multiplies itself)
 *   ONE16   1: its 16-bit kernels run LOOP on the 16-bit data in one pass
 *           (gx_k_16bit.h; a forward op only with the plain_loads choice,
 *           where it beats reading the result table: SiLU's cheap formula),
 *           F16: its float16 kernels only, and only where a vector holds
 *           16 floats (AVX-512).  Forward GELU: a float16 call touches up
 *           to 32 of the result table's lines per binade, 8 times a
 *           bfloat16 call's, and inside a model a matmul has just evicted
 *           them; the table wins warm, the one pass in the model (AVX2's
 *           8-lane loop loses there too, so its table stays; bench/README),
 *           0: they widen blocks or read the result table
 *   TAB32   its 32-piece table (gx_lut.h): the baseline and AVX-512 paths'
 *   TAB8    its 8-piece table (gx_lut8.h): the AVX2 and NEON paths'
 *           (GX_F32_TABLE_OF, gx_loop_f32.h, picks one per path; gx_twin8 runs
 *           the scalar twins of TAB8 for the tests)
 * What LOOP computes follows from NIN and GATE: the forward formula (NIN 1),
 * the derivative times g (NIN 2), the forward formula times up (GATE).
 * lut_fwd and lut_gate test only x < -x (vf_bad_below, gx_loop_f32.h): their tables must be
 * forward GELU tables (xp = inf, GELU_FWD in src/tables/fit_lut.py); the
 * scalar twins test the whole range, so a mismatch shows as paths that
 * disagree. */
#define GX_F32_SPLITS(X)                                                    \
    X(gelu_erf, 1, lut_fwd, gelu_erf, 0, F16, gx_lut_erf, gx_lut8_erf)        \
    X(gelu_tanh, 1, lut_fwd, gelu_tanh, 0, F16, gx_lut_tanh, gx_lut8_tanh)    \
    X(gelu_erf_grad, 2, lut_grad, gelu_erf_grad, 0, 1, gx_lut_erf_grad, gx_lut8_erf_grad) \
    X(gelu_tanh_grad, 2, lut_grad, gelu_tanh_grad, 0, 1, gx_lut_tanh_grad, gx_lut8_tanh_grad) \
    X(silu, 1, sig_fwd, silu, 0, 1, gx_lut_silu, gx_lut8_silu)              \
    X(quick_gelu, 1, sig_fwd, quick_gelu, 0, 0, gx_lut_quick, gx_lut8_quick) \
    X(silu_grad, 2, sig_grad, silu_grad, 0, 1, gx_lut_silu_grad, gx_lut8_silu_grad) \
    X(quick_gelu_grad, 2, sig_grad, quick_gelu_grad, 0, 1, gx_lut_quick_grad, gx_lut8_quick_grad) \
    X(swiglu, 2, sig_gate, silu, 1, 0, gx_lut_silu, gx_lut8_silu)           \
    X(geglu_erf, 2, lut_gate, gelu_erf, 1, 0, gx_lut_erf, gx_lut8_erf)      \
    X(geglu_tanh, 2, lut_gate, gelu_tanh, 1, 0, gx_lut_tanh, gx_lut8_tanh)

/* Each op's number by its KERNEL column (gx_ops.h): GX_KID_gelu_erf_grad is
 * GX_OP_GELU_ERF_GRAD; lists keyed by kernel name index op tables with it. */
#define GX_KID_ROW_(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) GX_KID_##KERNEL = ID,
enum { GX_OPS(GX_KID_ROW_) };
#undef GX_KID_ROW_

/* The CPU-dependent loop choices (gx_dispatch.c sets them from the CPU; the
 * private setters change them and refill every table); the same bits
 * either way.  Each ISA unit has its own copy, GX_FN(choices), which its
 * kernels read and gx_fill writes.
 * plain_loads: the CPU is served best by plain loads -- its gathers are
 *   slow and its hardware prefetcher keeps up with a stream without
 *   software prefetch: ReLU on large arrays in the plain loop, not in
 *   prefetching blocks; 16-bit forward result tables read one load per
 *   element, not gathered; forward SiLU on 16-bit data in one pass, not
 *   through its result table (gx_k_16bit.h).
 * bf16cvt: bfloat16 results rounded by the CPU's own conversion where the
 *   ISA has one (GX_HAVE_STORE_BN, gx_loop_f32.h). */
typedef struct {
    int plain_loads;
    int bf16cvt;
} gx_choices;

/* What an ISA unit (src/isa/<name>.c, one per row of GX_ISAS) exports, its
 * one visible name, gx_k_unit_<name>: the kernel of each op per dtype (the
 * float16 and bfloat16 ones are the unit's 16-bit pipeline, the same for
 * every op); its loop choices, which gx_fill sets before the kernels run;
 * the pieces of its float32 tables (8: gx_lut8.h, 32: gx_lut.h). */
typedef struct {
    gx_kernel ops[GX_NOPS][GX_NDT];
    gx_choices *choices;
    int f32_pieces;
} gx_isa_unit;
#define GX_ISA_UNIT_DECL(ID, NAME, LEVEL, CPU, TARGET, VREG) \
    extern const gx_isa_unit GX_PASTE3(gx_k, unit, NAME);
GX_ISAS(GX_ISA_UNIT_DECL)

/* o[j] = T[x[j]], one load per element: compiled in gx_dispatch.c with the
 * build's own flags, where no gather exists to vectorise it into (the
 * plain_loads choice of the 16-bit result tables, gx_k_16bit.h). */
void gx_lut16_plain(const uint16_t *T, const uint16_t *x, uint16_t *o, gx_intp n);

/* A 16-bit type's conversions (gx_k_16bit.h): widen, exact; narrow, round
 * to nearest even. */
typedef void (*gx_widen_fn)(const uint16_t *, float *, int);
typedef void (*gx_narrow_fn)(const float *, uint16_t *, int);

#endif
