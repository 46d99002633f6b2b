/*
 * gx_isas.h -- the one list of instruction sets.  Everything else derives
 * from it: the enum below, gx_best_isa and the dispatch tables
 * (gx_kernels.c), the kernels compiled once per row (gx_isa_compile.h), the
 * names Python sees (gx_isa_name: _ufuncs.ISA_NAMES, GELU_EXT_ISA,
 * show_config) and the vectorisation guard (tests/test_vectorised.py reads
 * each row's register prefix).
 *
 * One row per ISA path, in increasing LEVEL (a higher row is preferred):
 *   ID      enum constant (GX_ISA_...)
 *   NAME    suffix of its kernels (gx_k_<kernel>_<NAME>) and the name Python
 *           uses; also names its primitives header, HEADER
 *   LEVEL   0 for the scalar baseline, then 1, 2, ... in order of preference
 *   CPU     int CPU(void): 1 if this CPU (and OS) runs the path
 *   TARGET  the target string its kernels are compiled with (GCC's and
 *           clang's syntax: GX_TARGET_PUSH, gx_kdefs.h; "" for the
 *           baseline, which takes the build's own flags, and for a block
 *           that defines GX_ISA_NO_TARGET_PRAGMA: aarch64)
 *   HEADER  its primitives header (src/simd/, the contract in gx_loops.h)
 *   VREG    a regular expression for its vector registers in objdump's
 *           output ("" baseline): %ymm, %zmm, v0.4s
 *
 * The architecture guard: a row exists only inside its architecture's
 * #if block below, as GX_ISA_ROW<k> (k = 1, 2, ...: the row's slot; the
 * baseline is GX_ISA_ROW0 everywhere).  GX_ISAS(X) expands the rows this
 * build has, so a row for another architecture names nothing here.
 *
 * Adding an ISA: its primitives header under src/simd/ (see gx_loops.h, THE
 * PRIMITIVES), its CPU check function below, and one row in its
 * architecture's block (README, "Adding an ISA").  gx_kernels.c compiles up
 * to GX_ISA_SLOTS rows per architecture.
 */
#ifndef GX_ISAS_H
#define GX_ISAS_H

#define GX_ISA_ROW0(X) X(GX_ISA_BASELINE, baseline, 0, gx_cpu_baseline, "", "simd/scalar.h", "")

static inline int gx_cpu_baseline(void) { return 1; }

/* ------------------------------------------------------------- x86-64 -- */
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
#define GX_ARCH_X86_64 1
#define GX_ISA_ROW1(X) X(GX_ISA_AVX2, avx2, 1, gx_cpu_avx2,                     \
                         "avx2,fma,f16c", "simd/avx2.h", "%ymm")
#define GX_ISA_ROW2(X) X(GX_ISA_AVX512, avx512, 2, gx_cpu_avx512,               \
                         "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,f16c",    \
                         "simd/avx512.h", "%zmm")

#include <cpuid.h>
#include <immintrin.h>      /* before any row's target block (GX_TARGET_PUSH) */
/* F16C (the float16 conversions of both vector paths): CPUID leaf 1, ECX bit
 * 29.  GCC 12's __builtin_cpu_supports does not know it. */
static inline int gx_cpu_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
}
static inline int gx_cpu_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && gx_cpu_f16c();
}
static inline int gx_cpu_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("fma") && gx_cpu_f16c();
}

/* ------------------------------------------------------------ aarch64 -- */
/* NEON (Advanced SIMD) and FMA are part of every aarch64 CPU: the row's
 * check says yes and its kernels need no target pragma (the build's own
 * flags, which name no CPU: setup.py).  It is a row of its own, above the
 * baseline, so that GELU_EXT_ISA=baseline still runs the scalar twins (the
 * x86 baseline's bits) for comparison. */
#elif defined(__aarch64__) && defined(__GNUC__)
#define GX_ARCH_AARCH64 1
#define GX_ISA_NO_TARGET_PRAGMA 1
#define GX_ISA_ROW1(X) X(GX_ISA_NEON, neon, 1, gx_cpu_neon, "", "simd/neon.h", "\\bv[0-9]+\\.")
static inline int gx_cpu_neon(void) { return 1; }
#endif

/* Rows a block above does not define are empty. */
#ifndef GX_ISA_ROW1
#define GX_ISA_ROW1(X)
#endif
#ifndef GX_ISA_ROW2
#define GX_ISA_ROW2(X)
#endif
#ifndef GX_ISA_ROW3
#define GX_ISA_ROW3(X)
#endif
#define GX_ISA_SLOTS 4      /* slots gx_kernels.c compiles: GX_ISA_ROW0..3 */

#define GX_ISAS(X) GX_ISA_ROW0(X) GX_ISA_ROW1(X) GX_ISA_ROW2(X) GX_ISA_ROW3(X)

#define GX_ISA_ENUM_(ID, NAME, LEVEL, CPU, TARGET, HEADER, VREG) ID,
enum { GX_ISAS(GX_ISA_ENUM_) GX_NISA };
#undef GX_ISA_ENUM_

/* The columns of one row, for gx_isa_compile.h: GX_ISA_ROW<k>(GX_ISA_COL_...) */
#define GX_ISA_COL_ONE(ID, NAME, LEVEL, CPU, TARGET, HEADER, VREG) +1
#define GX_ISA_COL_NAME(ID, NAME, LEVEL, CPU, TARGET, HEADER, VREG) NAME
#define GX_ISA_COL_LEVEL(ID, NAME, LEVEL, CPU, TARGET, HEADER, VREG) LEVEL
#define GX_ISA_COL_TARGET(ID, NAME, LEVEL, CPU, TARGET, HEADER, VREG) TARGET
#define GX_ISA_COL_HEADER(ID, NAME, LEVEL, CPU, TARGET, HEADER, VREG) HEADER

/* The table's columns, for code that cannot expand the macro (Cython). */
int gx_nisa(void);
const char *gx_isa_name(int isa);     /* NULL outside 0 <= isa < gx_nisa() */
const char *gx_isa_target(int isa);
const char *gx_isa_vreg(int isa);
int gx_isa_level(int isa);            /* -1 outside the table */
int gx_isa_cpu(int isa);              /* 1 if this CPU runs the path */
int gx_isa_f32_pieces(int isa);       /* its float32 tables: 8 (gx_lut8.h) or 32 (gx_lut.h) */

#endif
