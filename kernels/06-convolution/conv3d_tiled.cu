// 3D convolution, tiled with halo cells (the 2D "input tile" kernel one dimension up): a
// block of T^3 threads loads a T^3 input tile, one element each; the (T - 2R)^3 threads
// inside the halo compute one output each from shared memory. With T = 8 and R = 1 that
// is 216 outputs for 512 threads, and every one of the 27 taps is a shared-memory load.
#include "filter.cuh"

template <int R>
__global__ void conv3d_tiled(const float* __restrict__ in, float* __restrict__ out, int W,
                             int H, int D) {
    extern __shared__ float tile[];                 // T^3, T = blockDim.x = .y = .z
    constexpr int K = 2 * R + 1;
    const int T = blockDim.x, OUT = T - 2 * R;
    const int x = blockIdx.x * OUT + threadIdx.x - R;
    const int y = blockIdx.y * OUT + threadIdx.y - R;
    const int z = blockIdx.z * OUT + threadIdx.z - R;
    tile[(threadIdx.z * T + threadIdx.y) * T + threadIdx.x] =
        (x >= 0 && x < W && y >= 0 && y < H && z >= 0 && z < D) ? in[(z * H + y) * W + x] : 0.0f;
    __syncthreads();
    const int tx = threadIdx.x - R, ty = threadIdx.y - R, tz = threadIdx.z - R;
    if (tx < 0 || tx >= OUT || ty < 0 || ty >= OUT || tz < 0 || tz >= OUT || x >= W ||
        y >= H || z >= D)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int a = 0; a < K; ++a)
#pragma unroll
        for (int b = 0; b < K; ++b)
#pragma unroll
            for (int c = 0; c < K; ++c)
                acc += c_filter[(a * K + b) * K + c] * tile[((tz + a) * T + ty + b) * T + tx + c];
    out[(z * H + y) * W + x] = acc;
}
