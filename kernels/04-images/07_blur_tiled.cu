// Box blur through shared memory (a tiled stencil). A block of bx × by threads first
// copies its input tile, (bx + 2R) × (by + 2R) bytes with the halo, into shared memory
// (each input byte once per block, clamped at the image's edges), waits for the whole
// tile, then each thread sums its (2R+1)² window from shared memory instead of global
// memory. The tile is dynamic shared memory, sized from the block at launch.
#include "box.cuh"

template <int R>
__global__ void blur_tiled(const unsigned char* __restrict__ in,
                           unsigned char* __restrict__ out, int width, int height)
{
    extern __shared__ unsigned char tile[];
    const int tw = blockDim.x + 2 * R, th = blockDim.y + 2 * R;
    const int x0 = blockIdx.x * blockDim.x - R, y0 = blockIdx.y * blockDim.y - R;
    const int nthreads = blockDim.x * blockDim.y;
    for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < tw * th; i += nthreads) {
        const int ty = i / tw, tx = i - ty * tw;
        tile[i] = in[(long long)clamp_to(y0 + ty, height - 1) * width
                     + clamp_to(x0 + tx, width - 1)];
    }
    __syncthreads();
    const int x = x0 + R + threadIdx.x, y = y0 + R + threadIdx.y;
    if (x >= width || y >= height) return;
    unsigned sum = 0;
#pragma unroll
    for (int dy = 0; dy <= 2 * R; ++dy) {
        const unsigned char* row = tile + (threadIdx.y + dy) * tw + threadIdx.x;
#pragma unroll
        for (int dx = 0; dx <= 2 * R; ++dx) sum += row[dx];
    }
    out[(long long)y * width + x] = (unsigned char)box_mean<R>(sum);
}
