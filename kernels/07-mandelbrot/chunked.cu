// One pixel per thread, with fewer branches: U steps run with no branch between them,
// their U escape tests chained into one predicate (one FSETP per step), and one branch per
// U steps where mandel_point takes two per step. A chunk in which the pixel escaped is
// undone (the orbit restored from before it) and replayed one step at a time, so the count
// is exactly mandel_point's: the chunk only moves the branch, never the arithmetic.
#include "mandel.cuh"

template <int U>
__global__ void mandel_chunked(int* __restrict__ out, int w, int h, float x0, float y0,
                               float dx, float dy, int max_iter)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= w || j >= h) return;
    const float cx = pixel_x(i, x0, dx), cy = pixel_x(j, y0, dy);
    float x = 0.0f, y = 0.0f;
    int n = 0;
    for (; n <= max_iter - U; n += U) {        // whole chunks (no overflow near 2^31)
        const float xs = x, ys = y;
        bool escaped = false;
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const float x2 = x * x, y2 = y * y;
            escaped |= x2 + y2 > 4.0f;
            const float t = x * y;
            y = (t + t) + cy;
            x = (x2 - y2) + cx;
        }
        if (escaped) {          // somewhere in these U steps: replay them one by one
            x = xs;
            y = ys;
            break;
        }
    }
    for (; n < max_iter; ++n) {  // the chunk that escaped, or the last max_iter % U steps
        const float x2 = x * x, y2 = y * y;
        if (x2 + y2 > 4.0f) break;
        const float t = x * y;
        y = (t + t) + cy;
        x = (x2 - y2) + cx;
    }
    out[(long long)j * w + i] = n;
}
