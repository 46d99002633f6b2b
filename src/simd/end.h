/*
 * simd/end.h -- forgets the primitives and loop macros of the row just
 * compiled (every name of the contract in gx_loops.h, and the defaults that
 * file gives the overridable ones), so the next row's header starts clean.
 * A primitive missing here shows as a "redefined" warning when the next
 * row's header defines it; an overridable default (GX_F32_TABLE_OF, GX_F32_TABLE_*,
 * GX_F64_TABLE_*) missing here would be kept silently, so they are listed.
 */
#ifndef GX_ISA
#error "src/simd/end.h is not standalone: gx_isa_compile.h includes it once per ISA row (GX_ISA)"
#endif
#undef GX_BN_TARGET
#undef GX_F32_ABSMIN
#undef GX_F32_ADD
#undef GX_F32_BAD
#undef GX_F32_BAD1
#undef GX_F32_FMA
#undef GX_F32_FMS
#undef GX_F32_I
#undef GX_F32_INDEX
#undef GX_F32_LO16
#undef GX_F32_LOAD
#undef GX_F32_LOAD_B
#undef GX_F32_LOAD_H
#undef GX_F32_LOOP
#undef GX_F32_LUT
#undef GX_F32_LUT_PREP
#undef GX_F32_LUT_IDX
#undef GX_F32_M
#undef GX_F32_MASKMUL
#undef GX_F32_MBITS
#undef GX_F32_NBITS
#undef GX_F32_MUL
#undef GX_F32_NEG
#undef GX_F32_SEL
#undef GX_F32_SEL1MH
#undef GX_F32_SELNEG
#undef GX_F32_SET
#undef GX_F32_SIGNM
#undef GX_F32_SPECIAL
#undef GX_F32_STORE
#undef GX_F32_STORE_B
#undef GX_F32_STORE_BN
#undef GX_F32_STORE_H
#undef GX_F32_SUB
#undef GX_F32_TAB
#undef GX_F32_TABLE_BODY
#undef GX_F32_TABLE_DECL
#undef GX_F32_TABLE_T
#undef GX_F32_TAB_LOAD
#undef GX_F32_TABLES8
#undef GX_F32_TAB8
#undef GX_F32_TAB8_LOAD
#undef GX_F32_INDEX8
#undef GX_F32_LUT8_PREP
#undef GX_F32_LUT8_IDX
#undef GX_F32_LUT8
#undef GX_F32_HI16
#undef GX_F32_TWIN_FWD
#undef GX_F32_TWIN_GRAD
#undef GX_F32_TWIN_OK
#undef GX_F32_V
#undef GX_F32_W
#undef GX_F64_ABSMIN
#undef GX_F64_BAD
#undef GX_F64_FMA
#undef GX_F64_FMS
#undef GX_F64_I
#undef GX_F64_INDEX
#undef GX_F64_LOAD
#undef GX_F64_LUT
#undef GX_F64_LUT_PREP
#undef GX_F64_LUT_IDX
#undef GX_F64_M
#undef GX_F64_MBITS
#undef GX_F64_NBITS
#undef GX_F64_SEL1MH
#undef GX_F64_SET
#undef GX_F64_SIGNM
#undef GX_F64_STORE
#undef GX_F64_SUB
#undef GX_F64_TAB
#undef GX_F64_TABLE_BODY
#undef GX_F64_TABLE_DECL
#undef GX_F64_TABLE_T
#undef GX_F64_TAB_LOAD
#undef GX_F64_V
#undef GX_F64_W
#undef GX_HAVE_GATHER16
#undef GX_HAVE_PACK_IDX
#undef GX_RNE16
#undef GX_F32_TABLE_OF
#undef GX_TABLE_LOOP
#undef GX_TABLE_TWIN
#undef GX_VEC
#undef GX_VEC16
#undef GX_ISA_FILL
/* the NEON header's own helpers */
#undef GX_NEON_FN1
#undef GX_NEON_FN2
#undef GX_NEON_FN3
#undef GX_NEON_U
#undef GX_NEON_F
#undef GX_NEON_FMA1
#undef GX_NEON_FMS1
#undef GX_NEON_ABSMIN1
#undef GX_NEON_LO161
#undef GX_NEON_HI161
#undef GX_NEON_INDEX81
#undef GX_NEON_SIGNM1
#undef GX_NEON_SEL1MH1
#undef GX_NEON_SELNEG1
#undef GX_NEON_SPECIAL1
#undef GX_NEON_BAD1_
#undef GX_NEON_BAD11
#undef GX_NEON_BIDX1
#undef GX_NEON_OUT64
