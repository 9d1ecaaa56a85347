// The seed's first GPU version: full warps launched, one lane of each doing the work.
// Warp k owns pixels 32k .. 32k + 31 of the image (row-major), as in mandel_pixel with
// 1-D blocks; its lane 0 computes them one after another while the other 31 lanes idle.
#include "mandel.cuh"

extern "C" __global__ void mandel_one_lane(int* __restrict__ out, int w, int h, float x0,
                                           float y0, float dx, float dy, int max_iter)
{
    if (threadIdx.x % 32 != 0) return;
    const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long end = min(first + 32, (long long)w * h);
    int i = (int)(first % w), j = (int)(first / w);
    for (long long p = first; p < end; ++p) {
        out[p] = mandel_point(pixel_x(i, x0, dx), pixel_x(j, y0, dy), max_iter);
        if (++i == w) {
            i = 0;
            ++j;
        }
    }
}
