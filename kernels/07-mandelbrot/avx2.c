// AVX2: eight pixels of a row in one 256-bit register per coordinate. A vector mask
// (all ones in a lane that still iterates) is ANDed with each step's test, the count of
// a live lane goes up by one (subtracting the mask's -1), and the loop ends when no lane
// is live. mandel_avx2_x2 keeps two vectors (16 pixels) in flight per iteration.
#include <immintrin.h>

#include "mandel.h"

// Lanes 0 .. k-1 of a mask (k = the pixels left in the row, at most 8).
static inline __m256 first_lanes(int64_t k)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), lane));
}

// cx of pixels i .. i+7: (float)(i + k) is (float)i + k exactly (i < 2^24).
static inline __m256 column_cx(int64_t i, float x0, float dx)
{
    const __m256 lane = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 fi = _mm256_add_ps(_mm256_set1_ps((float)i), lane);
    return _mm256_add_ps(_mm256_set1_ps(x0), _mm256_mul_ps(fi, _mm256_set1_ps(dx)));
}

// One step of every lane; returns the new live mask.
#define STEP(x, y, cx, live, count)                                                 \
    {                                                                              \
        const __m256 x2 = _mm256_mul_ps(x, x), y2 = _mm256_mul_ps(y, y);           \
        live = _mm256_and_ps(live, _mm256_cmp_ps(_mm256_add_ps(x2, y2), four,     \
                                                 _CMP_LE_OQ));                     \
        count = _mm256_sub_epi32(count, _mm256_castps_si256(live));                \
        const __m256 t = _mm256_mul_ps(x, y);                                      \
        y = _mm256_add_ps(_mm256_add_ps(t, t), cy);                                \
        x = _mm256_add_ps(_mm256_sub_ps(x2, y2), cx);                              \
    }

static void row_x1(int32_t *o, int64_t w, float x0, float dx, float cy_, int32_t max_iter)
{
    const __m256 four = _mm256_set1_ps(4.0f), cy = _mm256_set1_ps(cy_);
    for (int64_t i = 0; i < w; i += 8) {
        const __m256 cx = column_cx(i, x0, dx), tail = first_lanes(w - i);
        __m256 x = _mm256_setzero_ps(), y = x, live = tail;
        __m256i count = _mm256_setzero_si256();
        for (int32_t n = 0; n < max_iter; ++n) {
            STEP(x, y, cx, live, count);
            if (_mm256_testz_ps(live, live)) break;      // no sign bit set: none live
        }
        _mm256_maskstore_epi32(o + i, _mm256_castps_si256(tail), count);
    }
}

static void row_x2(int32_t *o, int64_t w, float x0, float dx, float cy_, int32_t max_iter)
{
    const __m256 four = _mm256_set1_ps(4.0f), cy = _mm256_set1_ps(cy_);
    for (int64_t i = 0; i < w; i += 16) {
        const __m256 cxa = column_cx(i, x0, dx), cxb = column_cx(i + 8, x0, dx);
        const __m256 taila = first_lanes(w - i), tailb = first_lanes(w - i - 8);
        __m256 xa = _mm256_setzero_ps(), ya = xa, xb = xa, yb = xa;
        __m256 livea = taila, liveb = tailb;
        __m256i na = _mm256_setzero_si256(), nb = na;
        for (int32_t n = 0; n < max_iter; ++n) {
            STEP(xa, ya, cxa, livea, na);
            STEP(xb, yb, cxb, liveb, nb);
            const __m256 any = _mm256_or_ps(livea, liveb);
            if (_mm256_testz_ps(any, any)) break;
        }
        _mm256_maskstore_epi32(o + i, _mm256_castps_si256(taila), na);
        _mm256_maskstore_epi32(o + i + 8, _mm256_castps_si256(tailb), nb);
    }
}

int mandel_avx2(MANDEL_ARGS)
{
    if (MANDEL_BAD_ARGS) return -1;
#define ROW(j) row_x1(out + (j) * w, w, x0, dx, y0 + (float)(j) * dy, max_iter)
    MANDEL_ROWS(h, threads, ROW);
#undef ROW
    return 0;
}

int mandel_avx2_x2(MANDEL_ARGS)
{
    if (MANDEL_BAD_ARGS) return -1;
#define ROW(j) row_x2(out + (j) * w, w, x0, dx, y0 + (float)(j) * dy, max_iter)
    MANDEL_ROWS(h, threads, ROW);
#undef ROW
    return 0;
}
