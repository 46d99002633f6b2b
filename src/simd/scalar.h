/*
 * simd/scalar.h -- the baseline path: no vector primitives (GX_VEC is not
 * defined), so the table loops of gx_loops.h run the scalar twins of
 * gx_lut.h and gx_lut64.h element by element, and the split kernels pack
 * with the bit-by-bit loop (gx_k_split.h).  Whatever the compiler makes of
 * the rest with the build's own flags (SSE2 on x86-64) is this path.
 */
#ifndef GX_ISA
#error "src/simd/scalar.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif
