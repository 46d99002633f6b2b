/*
 * gx_k_split.h -- the split driver, per ISA (included by gx_isa_kernels.h):
 * a float32 or float64 kernel that runs a table loop of gx_loop_f32.h or gx_loop_f64.h where the
 * table covers an element and the general formula of gx_math.h elsewhere
 * (GX_FN(split_f32), GX_FN(split_f64)), the packing of the elements each
 * formula takes (GX_FN(pack_...)/GX_FN(put_...), also used by the 16-bit
 * one-pass kernels of gx_k_16bit.h) and the general formula over an array
 * (GX_FULL_FN).
 */
#ifndef GX_ISA
#error "src/gx_k_split.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif
/* The float32 kernels: out[i] = the table formula where it covers x[i],
 * else FULL (the general double formula), i.e. the same bits as the
 * elementwise select, without computing both for every element.  Per block of
 * GX_BLK(T) elements, LUT runs on the whole block and flags the elements it
 * does not cover (NaN included) in a bit mask; if they are the minority they
 * are packed into a buffer, FULL runs on it and the results are put back;
 * otherwise FULL runs on the whole block and the covered elements are
 * patched from LUT the same way.  Packing visits only the set bits of each
 * 64-bit mask word (count trailing zeros): the work follows the number of
 * packed elements.  Which formula an element gets depends on its value only
 * (not on the block or thread split).  In place (out == an input) the block's
 * inputs are copied first; NumPy never passes partially overlapping arrays.
 * NIN = 2: a derivative kernel, g = in[1] travels with x.  The block,
 * GX_BLK(T), and why it is that size: gx_kdefs.h. */
/* Packing, with the ISA's GX_FN(pack_idx) where its header has one
 * (GX_HAVE_PACK_IDX: AVX-512), else bit by bit: the first GX_PACK_U set
 * bits of each mask word are taken without a branch (a step past the last
 * set bit writes a clamped index that k does not count, into the buffers'
 * slack, GX_PACK_SLACK) and a loop takes the rest.  Rare elements fall a
 * few to a word: a loop run once per set bit would mispredict its exit once
 * per word, half the cost of the split on normally distributed data.  The
 * steps (pack, put back, the driver) are functions per element type, in
 * gx_k_split_t.h; the AVX-512 indices pad to whole vectors (simd/avx512.h
 * says how, and what it saves). */
#define GX_PACK_U 3
#ifdef GX_HAVE_PACK_IDX
#define GX_PACK_SLACK 16
#else
#define GX_PACK_SLACK GX_PACK_U
#endif
#define GX_ST float
#define GX_ST_SFX f32
#define GX_ST_TT gx_f32_table
#include "gx_k_split_t.h"
#define GX_ST double
#define GX_ST_SFX f64
#define GX_ST_TT gx_lut64
#include "gx_k_split_t.h"
#define GX_ST uint16_t          /* the 16-bit one-pass kernels' packing (gx_k_16bit.h) */
#define GX_ST_SFX u16
#include "gx_k_split_t.h"
/* FULL: the general double formula (gx_math.h) over an array.  Its own
 * never-inlined function, so it gets the registers to itself (inlined into
 * the driver, the formula's constants spill to the stack and its loop runs
 * 20% slower). */
#define GX_FULL_FN(name, T, FULL1, GRAD)                                    \
    static GX_NOINLINE void GX_FN(name##_full)(const T *x, const T *g, T *o, int n) \
    {                                                                       \
        (void)g;                                                            \
        _Pragma("omp simd")                                                 \
        for (int j = 0; j < n; j++)                                         \
            o[j] = GRAD ? (T)(FULL1(x[j]) * (double)g[j]) : (T)FULL1(x[j]); \
    }
