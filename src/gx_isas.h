/*
 * gx_isas.h -- the one list of instruction sets.  Everything else derives
 * from it: the enum below, gx_best_isa and the dispatch tables
 * (gx_dispatch.c), the ISA units' exported names (gx_unit_table.h), the
 * names Python sees (gx_isa_name: _ufuncs.ISA_NAMES, GELU_EXT_ISA,
 * show_config) and the vectorisation guard (tests/test_vectorised.py reads
 * each row's register prefix).
 *
 * One row per ISA path, in increasing LEVEL (a higher row is preferred):
 *   ID      enum constant (GX_ISA_...)
 *   NAME    suffix of its kernels (gx_k_<kernel>_<NAME>) and the name Python
 *           uses; also names its unit, src/isa/<NAME>.c, and its primitives
 *           header, src/simd/<NAME>.h (the baseline's: simd/scalar.h)
 *   LEVEL   0 for the scalar baseline, then 1, 2, ... in order of preference
 *   CPU     int CPU(void): 1 if this CPU (and OS) runs the path
 *   TARGET  the features its unit is compiled for, in GCC's target syntax:
 *           the one place they are written: setup.py reads this column and
 *           gives the unit these (-mavx2 -mfma -mf16c); "" for the
 *           baseline and for NEON, which take the build's own flags.  A row
 *           keeps X(ID, NAME, LEVEL, CPU, "TARGET", VREG) on its first line
 *           or continuation lines, the shape setup.py's isa_targets parses
 *   VREG    a regular expression for its vector registers in objdump's
 *           output ("" baseline): %ymm, %zmm, v0.4s
 *
 * The architecture guard: a row exists only inside its architecture's
 * #if block below, as GX_ISA_ROW<k> (k = 1, 2, ...: the row's slot; the
 * baseline is GX_ISA_ROW0 everywhere).  GX_ISAS(X) expands the rows this
 * build has, so a row for another architecture names nothing here.
 *
 * Adding an ISA: its primitives header under src/simd/ (see gx_loop_f32.h, THE
 * PRIMITIVES), its unit src/isa/<NAME>.c named in setup.py's ISA_UNITS, its
 * CPU check function below, and one row in its architecture's block
 * (README, "Adding an ISA").  Up to GX_ISA_SLOTS rows per architecture.
 */
#ifndef GX_ISAS_H
#define GX_ISAS_H

#define GX_ISA_ROW0(X) X(GX_ISA_BASELINE, baseline, 0, gx_cpu_baseline, "", "")

static inline int gx_cpu_baseline(void) { return 1; }

/* ------------------------------------------------------------- x86-64 -- */
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(_MSC_VER))
#define GX_ARCH_X86_64 1
#define GX_ISA_ROW1(X) X(GX_ISA_AVX2, avx2, 1, gx_cpu_avx2, "avx2,fma,f16c", "%ymm")
#define GX_ISA_ROW2(X) X(GX_ISA_AVX512, avx512, 2, gx_cpu_avx512,               \
                         "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,f16c", "%zmm")

/* The CPU checks read CPUID and XCR0 (whether the OS saves the vector
 * registers) themselves, on every compiler: GCC's __builtin_cpu_supports
 * is not MSVC's, and GCC 12's does not know F16C.  The two primitives have
 * one spelling per compiler family; the logic above them is one. */
#if defined(__GNUC__)      /* (not <cpuid.h>: its __cpuid macro breaks mingw-w64's <intrin.h>) */
static inline void gx_cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
    __asm__ __volatile__("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}
static inline unsigned long long gx_xcr0(void)
{
    unsigned lo, hi;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}
#else                       /* MSVC, clang-cl */
#include <intrin.h>
static inline void gx_cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
    int v[4];
    __cpuidex(v, (int)leaf, (int)sub);
    for (int i = 0; i < 4; i++) r[i] = (unsigned)v[i];
}
static inline unsigned long long gx_xcr0(void) { return _xgetbv(0); }
#endif

/* CPUID leaf 1 ECX: FMA (bit 12), OSXSAVE (27: XCR0 can be read), AVX (28),
 * F16C (29); leaf 7 subleaf 0 EBX: AVX2 (5), AVX512F (16), AVX512DQ (17),
 * AVX512BW (30), AVX512VL (31); XCR0: the OS saves the XMM and YMM state
 * (bits 1, 2) and for AVX-512 the opmask and ZMM state (5, 6, 7).
 * level 1: the AVX2 path's features; 2: the AVX-512 path's (and AVX2's). */
static inline int gx_cpu_x86(int level)
{
    const unsigned leaf1 = 1u << 12 | 1u << 27 | 1u << 28 | 1u << 29;
    const unsigned avx512 = 1u << 16 | 1u << 17 | 1u << 30 | 1u << 31;
    unsigned r[4];
    unsigned long long xcr0;
    gx_cpuid(0, 0, r);
    if (r[0] < 7) return 0;
    gx_cpuid(1, 0, r);
    if ((r[2] & leaf1) != leaf1) return 0;
    xcr0 = gx_xcr0();
    if ((xcr0 & 0x6) != 0x6) return 0;
    gx_cpuid(7, 0, r);
    if (!(r[1] & (1u << 5))) return 0;
    return level < 2 || ((r[1] & avx512) == avx512 && (xcr0 & 0xe6) == 0xe6);
}
static inline int gx_cpu_avx2(void) { return gx_cpu_x86(1); }
static inline int gx_cpu_avx512(void) { return gx_cpu_x86(2); }
/* AVX512-BF16 (the bfloat16 rounding of the AVX-512 path, bf16cvt): that
 * path's checks and CPUID leaf 7 subleaf 1 EAX bit 5 (the subleaf exists
 * when leaf 7 subleaf 0 EAX >= 1) */
static inline int gx_cpu_avx512bf16(void)
{
    unsigned r[4];
    if (!gx_cpu_avx512()) return 0;
    gx_cpuid(7, 0, r);
    if (r[0] < 1) return 0;
    gx_cpuid(7, 1, r);
    return (r[0] >> 5) & 1;
}
/* CPUID vendor "AuthenticAMD" (leaf 0: EBX, EDX, ECX) */
static inline int gx_cpu_amd(void)
{
    unsigned r[4];
    gx_cpuid(0, 0, r);
    return r[1] == 0x68747541u && r[3] == 0x69746e65u && r[2] == 0x444d4163u;
}

/* ------------------------------------------------------------ aarch64 -- */
/* NEON (Advanced SIMD) and FMA are part of every aarch64 CPU: the row's
 * check says yes and its unit needs no flag of its own (the build's own
 * flags, which name no CPU: setup.py).  It is a row of its own, above the
 * baseline, so that GELU_EXT_ISA=baseline still runs the scalar twins (the
 * x86 baseline's bits) for comparison. */
#elif (defined(__aarch64__) && defined(__GNUC__)) || defined(_M_ARM64)
#define GX_ARCH_AARCH64 1
#define GX_ISA_ROW1(X) X(GX_ISA_NEON, neon, 1, gx_cpu_neon, "", "\\bv[0-9]+\\.")
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
#define GX_ISA_SLOTS 4      /* rows per architecture: GX_ISA_ROW0..3 */

#define GX_ISAS(X) GX_ISA_ROW0(X) GX_ISA_ROW1(X) GX_ISA_ROW2(X) GX_ISA_ROW3(X)

#define GX_ISA_ENUM_(ID, NAME, LEVEL, CPU, TARGET, VREG) ID,
enum { GX_ISAS(GX_ISA_ENUM_) GX_NISA };
#undef GX_ISA_ENUM_

#endif
