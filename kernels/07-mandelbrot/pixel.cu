// One pixel per thread, full warps: thread (tx, ty) of block (bx, by) computes pixel
// (bx * blockDim.x + tx, by * blockDim.y + ty). The 32 lanes of a warp are 32 pixels side
// by side (or a 16 x 2, 8 x 4 ... patch when blockDim.x < 32), and the warp iterates until
// the last of them has escaped.
#include "mandel.cuh"

extern "C" __global__ void mandel_pixel(int* __restrict__ out, int w, int h, float x0,
                                        float y0, float dx, float dy, int max_iter)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < w && j < h)
        out[(long long)j * w + i] = mandel_point(pixel_x(i, x0, dx), pixel_x(j, y0, dy), max_iter);
}
