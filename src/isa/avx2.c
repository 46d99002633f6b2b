/*
 * isa/avx2.c -- the AVX2 path (AVX2, FMA, F16C: 8 float lanes), compiled
 * with that ISA's flags (setup.py, ISA_FLAGS: -mavx2 -mfma -mf16c, MSVC
 * /arch:AVX2) and taken at run time only where the CPU has it (gx_isas.h).
 * Its kernels are gx_k_<name>_avx2: gx_k_lut_fwd_avx2 (exact GELU's table
 * loop, gx_loop_f32.h), gx_k_gelu_erf_f32_avx2 (its split kernel),
 * gx_k_lut64_fwd_avx2 (the float64 one, gx_loop_f64.h), ...;
 * the unit exports them as one table, gx_k_unit_avx2 (gx_unit_table.h), from
 * which gx_dispatch.c fills the dispatch tables.  Empty on other architectures.
 */
#define GX_ISA avx2
#include "kernels/gx_isa_unit.h"
#if GX_ARCH_X86_64
#include "simd/avx2.h"
#include "kernels/gx_isa_kernels.h"
#endif
