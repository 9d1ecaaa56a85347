// AVX-512: sixteen pixels of a row in one 512-bit register per coordinate, and a
// __mmask16 mask register deciding which lanes still iterate. The compare is itself
// masked (only live lanes are tested, the result is the new mask), the count goes up
// under the mask, and the loop ends when the mask is zero. mandel_avx512_x2 keeps two
// vectors (32 pixels) in flight per iteration.
#include <immintrin.h>

#include "mandel.h"

// cx of pixels i .. i+15: (float)(i + k) is (float)i + k exactly (i < 2^24).
static inline __m512 column_cx(int64_t i, float x0, float dx)
{
    const __m512 lane = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512 fi = _mm512_add_ps(_mm512_set1_ps((float)i), lane);
    return _mm512_add_ps(_mm512_set1_ps(x0), _mm512_mul_ps(fi, _mm512_set1_ps(dx)));
}

// Lanes 0 .. k-1 (k = the pixels left in the row; none when k <= 0).
static inline __mmask16 first_lanes(int64_t k)
{
    return k >= 16 ? (__mmask16)0xFFFF : k <= 0 ? (__mmask16)0 : (__mmask16)((1u << k) - 1);
}

#define STEP(x, y, cx, live, count)                                                 \
    {                                                                              \
        const __m512 x2 = _mm512_mul_ps(x, x), y2 = _mm512_mul_ps(y, y);           \
        live = _mm512_mask_cmp_ps_mask(live, _mm512_add_ps(x2, y2), four,         \
                                       _CMP_LE_OQ);                                \
        count = _mm512_mask_add_epi32(count, live, count, one);                    \
        const __m512 t = _mm512_mul_ps(x, y);                                      \
        y = _mm512_add_ps(_mm512_add_ps(t, t), cy);                                \
        x = _mm512_add_ps(_mm512_sub_ps(x2, y2), cx);                              \
    }

static void row_x1(int32_t *o, int64_t w, float x0, float dx, float cy_, int32_t max_iter)
{
    const __m512 four = _mm512_set1_ps(4.0f), cy = _mm512_set1_ps(cy_);
    const __m512i one = _mm512_set1_epi32(1);
    for (int64_t i = 0; i < w; i += 16) {
        const __m512 cx = column_cx(i, x0, dx);
        const __mmask16 tail = first_lanes(w - i);
        __m512 x = _mm512_setzero_ps(), y = x;
        __mmask16 live = tail;
        __m512i count = _mm512_setzero_si512();
        for (int32_t n = 0; n < max_iter; ++n) {
            STEP(x, y, cx, live, count);
            if (!live) break;
        }
        _mm512_mask_storeu_epi32(o + i, tail, count);
    }
}

static void row_x2(int32_t *o, int64_t w, float x0, float dx, float cy_, int32_t max_iter)
{
    const __m512 four = _mm512_set1_ps(4.0f), cy = _mm512_set1_ps(cy_);
    const __m512i one = _mm512_set1_epi32(1);
    for (int64_t i = 0; i < w; i += 32) {
        const __m512 cxa = column_cx(i, x0, dx), cxb = column_cx(i + 16, x0, dx);
        const __mmask16 taila = first_lanes(w - i), tailb = first_lanes(w - i - 16);
        __m512 xa = _mm512_setzero_ps(), ya = xa, xb = xa, yb = xa;
        __mmask16 livea = taila, liveb = tailb;
        __m512i na = _mm512_setzero_si512(), nb = na;
        for (int32_t n = 0; n < max_iter; ++n) {
            STEP(xa, ya, cxa, livea, na);
            STEP(xb, yb, cxb, liveb, nb);
            if (!(livea | liveb)) break;
        }
        _mm512_mask_storeu_epi32(o + i, taila, na);
        _mm512_mask_storeu_epi32(o + i + 16, tailb, nb);
    }
}

int mandel_avx512(MANDEL_ARGS)
{
    if (MANDEL_BAD_ARGS) return -1;
#define ROW(j) row_x1(out + (j) * w, w, x0, dx, y0 + (float)(j) * dy, max_iter)
    MANDEL_ROWS(h, threads, ROW);
#undef ROW
    return 0;
}

int mandel_avx512_x2(MANDEL_ARGS)
{
    if (MANDEL_BAD_ARGS) return -1;
#define ROW(j) row_x2(out + (j) * w, w, x0, dx, y0 + (float)(j) * dy, max_iter)
    MANDEL_ROWS(h, threads, ROW);
#undef ROW
    return 0;
}
