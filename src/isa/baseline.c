/*
 * isa/baseline.c -- the baseline path: the kernels with the build's own
 * flags only (SSE2 on x86-64), scalar table twins (simd/scalar.h).  Every
 * architecture has it; GELU_EXT_ISA=baseline runs it on any CPU.
 * Its kernels are gx_k_<name>_baseline: gx_k_lut_fwd_baseline (exact GELU's
 * table loop, gx_loop_f32.h), gx_k_gelu_erf_f32_baseline (its split
 * kernel, gx_k_ops.h), ...; the unit exports them as one table,
 * gx_k_unit_baseline (gx_unit_table.h), from which gx_dispatch.c fills the
 * dispatch tables.
 */
#define GX_ISA baseline
#include "kernels/gx_isa_unit.h"
#include "simd/scalar.h"
#include "kernels/gx_isa_kernels.h"
