/*
 * simd/derived.h -- operations written once over the primitives (the
 * contract at the top of kernels/gx_loop_f32.h), for every vector ISA.  Each
 * vector header (avx2.h, avx512.h, neon.h) includes it after its 32-bit
 * integer lanes.
 */
#ifndef GX_SIMD_DERIVED_H
#define GX_SIMD_DERIVED_H

#include "math/gx_math.h"

/* gx_float_to_bfloat16 (kernels/gx_half.h) in integer lanes: round to nearest
 * even by adding 0x7fff + the kept part's lowest bit, NaN kept quiet with
 * its sign and top payload bits */
GX_INLINE void vf_store_b(uint16_t *p, gx_vf v)
{
    const gx_vu u = vf_bits(v), hi = vu_shr16(u);
    const gx_vu r = vu_shr16(vu_add(u, vu_add(vu_set(0x7fff), vu_and(hi, vu_set(1)))));
    const gx_vmu nan = vu_gt(vu_and(u, vu_set(0x7fffffff)), vu_set(0x7f800000));
    vu_store16(p, vu_sel(nan, vu_or(hi, vu_set(0x40)), r));
}

#endif
