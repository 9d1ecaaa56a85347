// 3D convolution, tiled with halo cells and register-tiled along z: each thread computes
// PZ outputs stacked in z, so a block of BX x BY threads owns a BX x BY x PZ output tile
// and loads (BX + 2R)(BY + 2R)(PZ + 2R) inputs, halo included, into shared memory. A
// thread walks the PZ + 2R input planes its column touches: it reads its (2R+1)^2
// neighbourhood in each plane once into registers and adds it into every output plane
// that uses it. Shared-memory loads per output: (PZ + 2R)(2R+1)^2 / PZ instead of (2R+1)^3.
#include "filter.cuh"
#include "tile.cuh"

template <int R, int PZ>
__global__ void conv3d_regtile(const float* __restrict__ in, float* __restrict__ out, int W,
                               int H, int D) {
    extern __shared__ float tile[];
    constexpr int K = 2 * R + 1;
    const int IW = blockDim.x + 2 * R, IH = blockDim.y + 2 * R;
    const int x0 = blockIdx.x * blockDim.x, y0 = blockIdx.y * blockDim.y, z0 = blockIdx.z * PZ;
    const long long plane = static_cast<long long>(W) * H;
    load_planes<PZ + 2 * R>(tile, in, W, H, D, x0 - R, y0 - R, z0 - R, IW, IH);
    __syncthreads();

    float acc[PZ];
#pragma unroll
    for (int p = 0; p < PZ; ++p) acc[p] = 0.0f;
    const float* t = tile + threadIdx.y * IW + threadIdx.x;
#pragma unroll
    for (int a = 0; a < PZ + 2 * R; ++a) {                  // input plane a of this column
        float v[K * K];
#pragma unroll
        for (int b = 0; b < K; ++b)
#pragma unroll
            for (int c = 0; c < K; ++c) v[b * K + c] = t[(a * IH + b) * IW + c];
#pragma unroll
        for (int p = 0; p < PZ; ++p) {                      // output p uses filter plane a - p
            if (a - p >= 0 && a - p < K) {
#pragma unroll
                for (int q = 0; q < K * K; ++q) acc[p] += c_filter[(a - p) * K * K + q] * v[q];
            }
        }
    }
    const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
    if (x >= W || y >= H) return;
#pragma unroll
    for (int p = 0; p < PZ; ++p) {
        const int z = z0 + p;
        if (z < D) out[z * plane + static_cast<long long>(y) * W + x] = acc[p];
    }
}
