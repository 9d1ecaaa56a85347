// RGB -> gray, one pixel per thread over a 2D grid (PMPP chapter 3). Thread (x, y) reads
// the three bytes of pixel (x, y) of an interleaved height × width × 3 image (three 1-byte
// loads) and writes one byte. The grid is rounded up to whole blocks in x and in y, so
// both guards are needed.
#include "luma.cuh"

extern "C" __global__ void rgb_to_gray(const unsigned char* __restrict__ rgb,
                                       unsigned char* __restrict__ gray, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        const long long p = (long long)y * width + x;
        gray[p] = (unsigned char)luma(rgb[3 * p], rgb[3 * p + 1], rgb[3 * p + 2]);
    }
}
