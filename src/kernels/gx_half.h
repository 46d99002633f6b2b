/*
 * gx_half.h -- 16-bit floats (float16 and bfloat16) one element at a time,
 * for the 16-bit pipeline (gx_k_16bit.h): the conversions to and from
 * float32, and the plain read of a 16-bit result table.  The functions
 * declared here are compiled once, with the build's own flags (gx_half.c),
 * not in every ISA unit.
 */
#ifndef GX_HALF_H
#define GX_HALF_H

#include "gx_base.h"

/* float16 <-> float32, round to nearest even (NaN and inf kept). */
float gx_half_to_float(uint16_t h);
uint16_t gx_float_to_half(float f);

/* bfloat16 <-> float32.  Widening is exact: the bfloat16 bits are the upper
 * 16 bits of the float32.  Narrowing rounds to nearest even by adding
 * 0x7fff + (the kept part's lowest bit) before the shift: a carry out of the
 * mantissa steps the exponent, which is the right answer (up to inf above
 * the largest bfloat16, from the largest subnormal to the smallest normal),
 * and -0.0, subnormals and inf come out right with no branch.  Only NaN needs
 * its own case (the add could carry it into inf or the sign): its sign and
 * top payload bits are kept and it is made quiet.  Plain integer operations,
 * so the loops that call these vectorise on every ISA path with the same
 * bits (gx_k_16bit.h, b2f/f2b; in vector lanes, vf_store_b in simd/derived.h). */
static inline float gx_bfloat16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t gx_float_to_bfloat16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t q = (u >> 16) | 0x40u;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? q : r);
}

/* o[j] = T[x[j]], one load per element: the plain_loads choice of the 16-bit
 * result tables (gx_k_16bit.h, lut16).  Compiled with the build's own flags,
 * where no gather exists for the compiler to vectorise it into. */
void gx_lut16_plain(const uint16_t *T, const uint16_t *x, uint16_t *o, gx_intp n);

#endif
