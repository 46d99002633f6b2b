/*
 * gx_base.h -- the types and portable spellings every layer of src/ shares.
 *
 * THE LAYERS, lowest first.  A file includes, and uses names from, its own
 * layer and the ones below it, never one above (tests/test_layers.py checks
 * both, and that no include circle exists; `python tests/test_layers.py`
 * prints the include graph):
 *   base      src/gx_*.h: this header, the op table (gx_ops.h, rows
 *             generated into gx_ops_table.h) and the ISA table (gx_isas.h)
 *   math      src/math/: each formula once, with its scalar table twins;
 *             src/tables/: their fitted coefficients (generated data);
 *             src/runtime/: the thread pool and what it needs from the system
 *   simd      src/simd/<isa>.h: one ISA's primitives; simd/derived.h: what
 *             is written once over them
 *   kernels   src/kernels/: the loops and drivers over the primitives, each
 *             op's kernels, the 16-bit pipeline; one copy per ISA unit
 *   isa       src/isa/<isa>.c: one compile unit per row of gx_isas.h, with
 *             that ISA's flags
 *   dispatch  src/dispatch/: picks a unit at run time, threads a call (the C
 *             API, gx_api.h; the capsule for C++, gx_capi.h)
 *   testing   src/testing/: what only the tests call (the scalar twins over
 *             arrays, a probe job on the pool), built into its own module,
 *             gelu_ext._test_hooks; what that module reaches of the ufuncs'
 *             dispatch and pool (gx_hooks.h)
 *   python    src/python/: the Cython modules over the C API
 */
#ifndef GX_BASE_H
#define GX_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef ptrdiff_t gx_intp;   /* same width as npy_intp on every platform NumPy supports */

/* GX_F16: uint16_t IEEE half; GX_BF16: uint16_t bfloat16 (the upper half of a
 * float32, ml_dtypes.bfloat16). */
enum { GX_F32 = 0, GX_F64 = 1, GX_F16 = 2, GX_BF16 = 3, GX_NDT = 4 };

/* Bytes per element of dtype dt. */
static inline size_t gx_itemsize(int dt)
{
    return dt == GX_F64 ? 8 : (dt == GX_F16 || dt == GX_BF16) ? 2 : 4;
}

/* A contiguous kernel: in[k] points at n elements of input k, out at n outputs.
 * out may be the very same buffer as an input (in place), never a partial overlap.
 * op: the op it runs (gx_ops.h), which the 16-bit kernels, one per type for
 * every op, read; a float32 or float64 kernel is one op's and ignores it. */
typedef void (*gx_kernel)(const void *const *in, void *out, gx_intp n, int op);

/* gx_k_<name>_<isa>: the name of a per-ISA function; GX_ISA is the NAME
 * column of the gx_isas.h row an ISA unit (src/isa/<name>.c) compiles. */
#define GX_PASTE3_(a, b, c) a##_##b##_##c
#define GX_PASTE3(a, b, c) GX_PASTE3_(a, b, c)
#define GX_FN(name) GX_PASTE3(gx_k, name, GX_ISA)

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

/* The block of the split kernels (kernels/gx_k_split.h, and the packing
 * helpers of simd/avx512.h) and of the 16-bit one-pass kernels
 * (gx_k_16bit.h): GX_SPLIT_B float32 or 16-bit elements, half as many
 * float64 (the same bytes per buffer).  A multiple of 2048; large enough
 * that the packed calls run whole vectors and that the split's fixed cost
 * per block (the packing loop's exit, full's call and set-up) is paid
 * rarely, small enough for L1/L2: on AMD Zen 5, 2 N(0, 1) data, AVX-512,
 * the split adds 16 ns per 1024 elements at 8192 (21 at 4096, 66 at 1024)
 * to the table loop's 175.  The buffers live on the stack (GCC 12
 * -fstack-usage, AVX-512): 194 KiB for a two-input float32 split, 130 KiB
 * for a one-input one, 113 KiB for a float64 split, 209 KiB for a 16-bit
 * one-pass kernel; the deepest chain, a 16-bit fused-bias gradient
 * (GX_FN(run_16bit) 36 KiB, the bias block 16 KiB, the float32 split), ~247 KiB.
 * The pool's workers get >= 1 MiB (gx_pool.c). */
#ifndef GX_SPLIT_B
#define GX_SPLIT_B 8192
#endif

#endif
