/*
 * isa/avx512.c -- the AVX-512 path (AVX512F/DQ/VL/BW, FMA, F16C: 16 float
 * lanes), compiled with that ISA's flags (setup.py, ISA_FLAGS; MSVC
 * /arch:AVX512) and taken at run time only where the CPU has it
 * (gx_isas.h).  Its kernels are gx_k_<name>_avx512: gx_k_lut_fwd_avx512
 * (exact GELU's table loop, gx_loop_f32.h), gx_k_lut_grad_bf16_insn_avx512 (the
 * bfloat16 gradient stored by AVX512-BF16), ...; the unit exports them as
 * one table, gx_k_unit_avx512 (gx_unit_table.h), from which gx_dispatch.c fills
 * the dispatch tables.  Empty on other architectures.
 */
#define GX_ISA avx512
#include "kernels/gx_isa_unit.h"
#if GX_ARCH_X86_64
#include "simd/avx512.h"
#include "kernels/gx_isa_kernels.h"
#endif
