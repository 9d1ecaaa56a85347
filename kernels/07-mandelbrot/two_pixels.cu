// Two pixels per thread, in flight together (the CPU's two vectors, on the GPU): block
// (bx, by) covers 2 * blockDim.x columns, and thread tx computes columns tx and
// tx + blockDim.x of its row in one loop. A pixel that has escaped stops counting while
// its partner goes on; the loop ends when both have escaped.
#include "mandel.cuh"

extern "C" __global__ void mandel_two_pixels(int* __restrict__ out, int w, int h, float x0,
                                             float y0, float dx, float dy, int max_iter)
{
    const int ia = blockIdx.x * 2 * blockDim.x + threadIdx.x, ib = ia + blockDim.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (ia >= w || j >= h) return;
    const float cxa = pixel_x(ia, x0, dx), cxb = pixel_x(ib, x0, dx), cy = pixel_x(j, y0, dy);
    float xa = 0.0f, ya = 0.0f, xb = 0.0f, yb = 0.0f;
    int na = 0, nb = 0;
    bool live_a = true, live_b = ib < w;
    for (int n = 0; n < max_iter; ++n) {
        const float x2a = xa * xa, y2a = ya * ya, x2b = xb * xb, y2b = yb * yb;
        live_a = live_a && x2a + y2a <= 4.0f;
        live_b = live_b && x2b + y2b <= 4.0f;
        if (!(live_a || live_b)) break;
        na += live_a;
        nb += live_b;
        const float ta = xa * ya, tb = xb * yb;
        ya = (ta + ta) + cy;
        yb = (tb + tb) + cy;
        xa = (x2a - y2a) + cxa;
        xb = (x2b - y2b) + cxb;
    }
    out[(long long)j * w + ia] = na;
    if (ib < w) out[(long long)j * w + ib] = nb;
}
