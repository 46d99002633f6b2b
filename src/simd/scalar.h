/*
 * simd/scalar.h -- the baseline path: no vector primitives (GX_VEC is not
 * defined), so the table loops of gx_loop_f32.h and gx_loop_f64.h run the
 * scalar twins of gx_lut.h and gx_lut64.h element by element, and the split
 * kernels pack with the bit-by-bit loop (gx_k_split.h).  Whatever the
 * compiler makes of the rest with the build's own flags (SSE2 on x86-64) is
 * this path.  Included by src/isa/baseline.c only.
 */
#ifndef GX_ISA
#error "src/simd/scalar.h is not standalone: src/isa/baseline.c includes it (GX_ISA)"
#endif
#define GX_F32_PIECES 32        /* the scalar twins of the 32-piece tables (gx_lut.h) */
