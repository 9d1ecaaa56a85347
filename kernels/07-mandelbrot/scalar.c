// Scalar C: one pixel at a time, the reference every other path is compared with.
// mandel_scalar_x2 keeps two pixels in flight in one loop (instruction-level parallelism:
// the two dependency chains interleave), iterating until both have escaped.
#include "mandel.h"

static inline int32_t point(float cx, float cy, int32_t max_iter)
{
    float x = 0.0f, y = 0.0f;
    int32_t n = 0;
    for (; n < max_iter; ++n) {
        const float x2 = x * x, y2 = y * y;
        if (x2 + y2 > 4.0f) break;
        const float t = x * y;
        y = (t + t) + cy;
        x = (x2 - y2) + cx;
    }
    return n;
}

int mandel_scalar(MANDEL_ARGS)
{
    if (MANDEL_BAD_ARGS) return -1;
#define ROW(j)                                                                 \
    {                                                                          \
        const float cy = y0 + (float)(j) * dy;                                 \
        for (int64_t i = 0; i < w; ++i)                                        \
            out[(j) * w + i] = point(x0 + (float)i * dx, cy, max_iter);        \
    }
    MANDEL_ROWS(h, threads, ROW);
#undef ROW
    return 0;
}

// Pixels a and b advance together; `live` says which still iterate (once escaped, a
// pixel stays escaped: its count stops while the other goes on).
static inline void point_x2(float cxa, float cxb, float cy, int32_t max_iter,
                            int32_t *na, int32_t *nb)
{
    float xa = 0.0f, ya = 0.0f, xb = 0.0f, yb = 0.0f;
    int32_t a = 0, b = 0, live_a = 1, live_b = 1;
    for (int32_t n = 0; n < max_iter; ++n) {
        const float x2a = xa * xa, y2a = ya * ya, x2b = xb * xb, y2b = yb * yb;
        live_a &= x2a + y2a <= 4.0f;
        live_b &= x2b + y2b <= 4.0f;
        if (!(live_a | live_b)) break;
        a += live_a;
        b += live_b;
        const float ta = xa * ya, tb = xb * yb;
        ya = (ta + ta) + cy;
        yb = (tb + tb) + cy;
        xa = (x2a - y2a) + cxa;
        xb = (x2b - y2b) + cxb;
    }
    *na = a;
    *nb = b;
}

int mandel_scalar_x2(MANDEL_ARGS)
{
    if (MANDEL_BAD_ARGS) return -1;
#define ROW(j)                                                                     \
    {                                                                              \
        const float cy = y0 + (float)(j) * dy;                                     \
        int32_t *o = out + (j) * w;                                                \
        int64_t i = 0;                                                             \
        for (; i + 1 < w; i += 2)                                                  \
            point_x2(x0 + (float)i * dx, x0 + (float)(i + 1) * dx, cy, max_iter,   \
                     o + i, o + i + 1);                                            \
        if (i < w) o[i] = point(x0 + (float)i * dx, cy, max_iter);                 \
    }
    MANDEL_ROWS(h, threads, ROW);
#undef ROW
    return 0;
}
