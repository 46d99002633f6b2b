/* simd/avx512.h */
#include <immintrin.h>
