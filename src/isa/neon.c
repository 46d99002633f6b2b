/*
 * isa/neon.c -- the NEON path (aarch64's Advanced SIMD and FMA, which every
 * aarch64 CPU has: no extra flag).  Its kernels are gx_k_<name>_neon:
 * gx_k_lut_fwd_neon (exact GELU's table loop, gx_loop_f32.h), ...;
 * the unit exports them as one table, gx_k_unit_neon (gx_unit_table.h), from
 * which gx_dispatch.c fills the dispatch tables.  Empty on other architectures.
 */
#define GX_ISA neon
#include "kernels/gx_isa_unit.h"
#if GX_ARCH_AARCH64
#include "simd/neon.h"
#include "kernels/gx_isa_kernels.h"
#endif
