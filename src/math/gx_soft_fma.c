/*
 * gx_soft_fma.c -- fma and fmaf for the builds whose C library rounds them
 * twice (mingw-w64: gx_soft_fma.h); empty elsewhere.  The baseline path's
 * scalar code calls fma() wherever its error analysis needs one, and with
 * no FMA instruction to expand it into the compiler calls the library's.
 * Defined here, these are the ones the extension links: libmingwex is a
 * static library, whose members are pulled only for names still
 * undefined.  A file of their own, because a definition of fma in the
 * kernels' file would stop the compiler from expanding fma() inline on the
 * vector paths (measured: GCC then calls them from the AVX2 and AVX-512
 * kernels too).
 */
#include "gx_soft_fma.h"

#if GX_SOFT_FMA
double fma(double a, double b, double c) { return gx_soft_fma(a, b, c); }
float fmaf(float a, float b, float c) { return gx_soft_fmaf(a, b, c); }
#else
typedef int gx_soft_fma_unused;     /* ISO C: a file declares something */
#endif
