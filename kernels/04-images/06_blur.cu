// Box blur, one output pixel per thread over a 2D grid (PMPP chapter 3). Thread (x, y)
// sums the (2R+1)² input pixels around (x, y), each a 1-byte load from global memory;
// neighbouring threads load the same pixels, and L1 serves the repeats. PMPP averages only
// the pixels inside the image; here a pixel past an edge takes the nearest edge pixel's
// value, as SciPy's mode "nearest" does, so the library computes the same blur.
#include "box.cuh"

template <int R>
__global__ void blur_naive(const unsigned char* __restrict__ in,
                           unsigned char* __restrict__ out, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    unsigned sum = 0;
#pragma unroll
    for (int dy = -R; dy <= R; ++dy) {
        const unsigned char* row = in + (long long)clamp_to(y + dy, height - 1) * width;
#pragma unroll
        for (int dx = -R; dx <= R; ++dx) sum += row[clamp_to(x + dx, width - 1)];
    }
    out[(long long)y * width + x] = (unsigned char)box_mean<R>(sum);
}
