// Depthwise 3D convolution, tiled with halo cells: the same operation as the cached
// kernel (slice z with its own (2R+1)^2 filter), but each BX x BY block loads its tile of
// one slice with the halo, (BX + 2R) x (BY + 2R), into shared memory first, so every tap
// is a shared-memory load and the tap loops hold no branch.
#include "filter.cuh"
#include "tile.cuh"

template <int R>
__global__ void conv3d_depthwise_tiled(const float* __restrict__ in, float* __restrict__ out,
                                       int W, int H, int D) {
    extern __shared__ float tile[];
    constexpr int K = 2 * R + 1;
    const int IW = blockDim.x + 2 * R, IH = blockDim.y + 2 * R;
    const int x0 = blockIdx.x * blockDim.x, y0 = blockIdx.y * blockDim.y, z = blockIdx.z;
    const long long plane = static_cast<long long>(W) * H;
    load_window<1>(tile, in + z * plane, W, H, x0 - R, y0 - R, IW, IH);
    __syncthreads();
    const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
    if (x >= W || y >= H) return;
    const float* f = c_filter + z * K * K;
    const float* t = tile + threadIdx.y * IW + threadIdx.x;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i)
#pragma unroll
        for (int j = 0; j < K; ++j) acc += f[i * K + j] * t[i * IW + j];
    out[z * plane + static_cast<long long>(y) * W + x] = acc;
}
