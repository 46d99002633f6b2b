/* simd/avx2.h */
#include <immintrin.h>
