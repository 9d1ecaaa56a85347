// 3D (volumetric) convolution, naive: one output per thread, a (2R+1)^3 filter in constant
// memory, every input a global load (L1 and L2 serve the reuse between neighbours). The
// tap loops unroll (R is compile-time) and the bounds test of each tap becomes a
// predicate on its load, not a branch. Zeros outside the W x H x D volume.
#include "filter.cuh"

template <int R>
__global__ void conv3d_naive(const float* __restrict__ in, float* __restrict__ out, int W,
                             int H, int D) {
    constexpr int K = 2 * R + 1;
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= W || y >= H || z >= D) return;
    float acc = 0.0f;
#pragma unroll
    for (int a = 0; a < K; ++a) {
        const int zz = z + a - R;
#pragma unroll
        for (int b = 0; b < K; ++b) {
            const int yy = y + b - R;
#pragma unroll
            for (int c = 0; c < K; ++c) {
                const int xx = x + c - R;
                const bool inside = zz >= 0 && zz < D && yy >= 0 && yy < H && xx >= 0 && xx < W;
                const float v = inside ? in[(zz * H + yy) * W + xx] : 0.0f;
                acc += c_filter[(a * K + b) * K + c] * v;
            }
        }
    }
    out[(z * H + y) * W + x] = acc;
}
