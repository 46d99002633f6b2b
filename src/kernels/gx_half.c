/*
 * gx_half.c -- what gx_half.h declares, compiled once with the build's own
 * flags (setup.py, kernel_sources): every ISA unit calls these copies.
 */
#include "gx_half.h"

#include <math.h>

float gx_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    float f;
    if (e == 0) {                       /* zero or subnormal: m * 2^-24, exact */
        f = ldexpf((float)m, -24);
        return sign ? -f : f;
    }
    if (e == 31)
        bits = sign | 0x7f800000u | (m << 13);
    else
        bits = sign | ((e + 112u) << 23) | (m << 13);
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t gx_float_to_half(float f)
{
    uint32_t x, ax, sign;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)                   /* NaN: keep it quiet and payload-ish */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u)                  /* >= 65520 rounds to inf (ties to even) */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) {                 /* below 2^-14: subnormal half or zero */
        float a;
        memcpy(&a, &ax, sizeof a);
        /* a * 2^24 is exact; nearbyintf rounds half to even */
        return (uint16_t)(sign | (uint32_t)nearbyintf(a * 16777216.0f));
    }
    {
        uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu);
        uint32_t rem = ax & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;  /* carry is right */
        return (uint16_t)(sign | h);
    }
}

void gx_lut16_plain(const uint16_t *T, const uint16_t *x, uint16_t *o, gx_intp n)
{
    for (gx_intp j = 0; j < n; j++) o[j] = T[x[j]];
}
