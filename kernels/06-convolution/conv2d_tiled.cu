// 2D convolution, tiled with halo cells (the textbook's "input tile" kernel): a block of
// T x T threads loads a T x T input tile, halo included, one element per thread; the
// (T - 2R)^2 threads inside the halo then each compute one output from shared memory.
// Every tap is a shared-memory load, and 1 - (T - 2R)^2 / T^2 of the threads only load.
// T = blockDim.x = blockDim.y, chosen at launch; T > 2R is checked on the host.
#include "filter.cuh"

template <int R>
__global__ void conv2d_tiled(const float* __restrict__ in, float* __restrict__ out, int W,
                             int H) {
    extern __shared__ float tile[];                 // T x T
    constexpr int K = 2 * R + 1;
    const int T = blockDim.x, OUT = T - 2 * R;      // output tile: OUT x OUT
    const int x = blockIdx.x * OUT + threadIdx.x - R;
    const int y = blockIdx.y * OUT + threadIdx.y - R;
    tile[threadIdx.y * T + threadIdx.x] =
        (x >= 0 && x < W && y >= 0 && y < H) ? in[y * W + x] : 0.0f;
    __syncthreads();
    const int tx = threadIdx.x - R, ty = threadIdx.y - R;
    if (tx < 0 || tx >= OUT || ty < 0 || ty >= OUT || x >= W || y >= H) return;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i)
#pragma unroll
        for (int j = 0; j < K; ++j) acc += c_filter[i * K + j] * tile[(ty + i) * T + tx + j];
    out[y * W + x] = acc;
}
