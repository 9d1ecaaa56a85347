/* AVX-512 (compiled with -mavx512f): a float sum, the tail loaded under a __mmask16. */
#include <immintrin.h>
#include <stdint.h>

float sum_avx512(const float *x, int64_t n)
{
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        acc = _mm512_add_ps(acc, _mm512_loadu_ps(x + i));
    __mmask16 tail = (__mmask16)((1u << (n - i)) - 1u);
    acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(tail, x + i));
    return _mm512_reduce_add_ps(acc);
}
