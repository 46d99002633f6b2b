/*
 * isa/neon.c -- the NEON path (aarch64's Advanced SIMD and FMA, which every
 * aarch64 CPU has: no extra flag).  Its kernels are gx_k_<name>_neon:
 * gx_k_lut_fwd_neon (exact GELU's table loop, gx_loop_f32.h), ...;
 * gx_k_fill_neon fills its dispatch table.  Empty on other architectures.
 */
#define GX_ISA neon
#include "gx_isa_unit.h"
#if GX_ARCH_AARCH64
#include "simd/neon.h"
#include "gx_isa_kernels.h"
#endif
