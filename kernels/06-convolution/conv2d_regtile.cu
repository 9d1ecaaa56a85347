// 2D convolution, tiled with halo cells and register-tiled: each thread computes PY
// outputs of one column, so a block of BX x BY threads owns a BX x (BY * PY) output tile
// and loads it with its halo, (BX + 2R) x (BY * PY + 2R) floats, into shared memory.
// A thread then walks the PY + 2R input rows its outputs touch: it reads the 2R + 1
// values of each row once into registers and adds them into every output row that uses
// that input row. Shared-memory loads per output fall from (2R+1)^2 to
// (PY + 2R)(2R + 1) / PY; the FFMAs stay (2R+1)^2, with the filter in constant memory.
// The block shape is chosen at launch; R and PY are compile-time (the loops unroll).
#include "filter.cuh"
#include "tile.cuh"

template <int R, int PY>
__global__ void conv2d_regtile(const float* __restrict__ in, float* __restrict__ out, int W,
                               int H) {
    extern __shared__ float tile[];
    constexpr int K = 2 * R + 1;
    const int TW = blockDim.x, TH = blockDim.y * PY;        // output tile
    const int IW = TW + 2 * R, IH = TH + 2 * R;             // input tile, halo included
    const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
    load_window<PY>(tile, in, W, H, x0 - R, y0 - R, IW, IH);
    __syncthreads();

    float acc[PY];
#pragma unroll
    for (int p = 0; p < PY; ++p) acc[p] = 0.0f;
    const float* t = tile + threadIdx.y * PY * IW + threadIdx.x;
#pragma unroll
    for (int i = 0; i < PY + 2 * R; ++i) {                  // input row i of this thread
        float v[K];
#pragma unroll
        for (int j = 0; j < K; ++j) v[j] = t[i * IW + j];
#pragma unroll
        for (int p = 0; p < PY; ++p) {                      // output p uses filter row i - p
            if (i - p >= 0 && i - p < K) {
#pragma unroll
                for (int j = 0; j < K; ++j) acc[p] += c_filter[(i - p) * K + j] * v[j];
            }
        }
    }
    const int x = x0 + threadIdx.x;
    if (x >= W) return;
#pragma unroll
    for (int p = 0; p < PY; ++p) {
        const int y = y0 + threadIdx.y * PY + p;
        if (y < H) out[y * W + x] = acc[p];
    }
}
