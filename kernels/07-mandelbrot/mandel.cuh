// The iteration of mandel.h for the GPU, in the same float32 operations and order:
//     x2 = x*x;  y2 = y*y;  escaped if x2 + y2 > 4;  t = x*y;
//     y = (t + t) + cy;  x = (x2 - y2) + cx;
// and pixel (i, j) at c = (x0 + i*dx, y0 + j*dy). Compiled with --fmad=false, no product
// and sum are fused into an FFMA, and every count equals the C reference's, pixel for
// pixel. (With NVRTC's default, --fmad=true, they are fused: see mandel_pixel's FMA build.)
#pragma once

__device__ __forceinline__ float pixel_x(int i, float x0, float dx) { return x0 + (float)i * dx; }

// The count of one pixel.
__device__ __forceinline__ int mandel_point(float cx, float cy, int max_iter)
{
    float x = 0.0f, y = 0.0f;
    int n = 0;
    for (; n < max_iter; ++n) {
        const float x2 = x * x, y2 = y * y;
        if (x2 + y2 > 4.0f) break;
        const float t = x * y;
        y = (t + t) + cy;
        x = (x2 - y2) + cx;
    }
    return n;
}
