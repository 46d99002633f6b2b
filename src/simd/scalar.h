/* simd/scalar.h -- the baseline path: no vector primitives. */
