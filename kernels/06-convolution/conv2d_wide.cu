// 2D convolution, register-tiled four columns wide with a compile-time tile: each thread
// computes a 4 x PY patch (four adjacent columns, PY rows), so a block of BX x BY threads
// owns a 4BX x (BY * PY) output tile. R, BX, BY and PY are template arguments: the tile
// loader is one unrolled sweep of 16-byte loads (each row of the tile padded on both sides
// to a multiple of four floats, so every load and every shared-memory row is 16-byte
// aligned), a thread reads each input row it needs as a few 16-byte shared-memory loads
// and adds it into every output row that uses it, and its results leave as 16-byte
// stores. What is left per output is the FFMAs and a few instructions. Arrays whose
// width is not a multiple of 4 take the scalar loads and stores (vec = 0), same arithmetic.
#include "filter.cuh"
#include "wide.cuh"

template <int R, int BX, int BY, int PY>
__global__ void __launch_bounds__(BX * BY) conv2d_wide(const float* __restrict__ in,
                                                       float* __restrict__ out, int W, int H,
                                                       int vec) {
    constexpr int K = 2 * R + 1, RP = (R + 3) / 4 * 4;      // halo columns, rounded up to 4
    constexpr int TW = 4 * BX, TH = BY * PY;                // output tile
    constexpr int IW = TW + 2 * RP, IH = TH + 2 * R;        // input tile (IW % 4 == 0)
    constexpr int NT = BX * BY;
    constexpr int NVR = (RP + R + 4 + 3) / 4;               // 16-byte loads per input row
    extern __shared__ float4 tile4[];                       // IH x IW floats
    const float* tile = reinterpret_cast<const float*>(tile4);
    const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
    const int t = threadIdx.y * BX + threadIdx.x;
    if (vec)
        load_window_vec<1, IH, IW / 4, NT>(tile4, in, W, H, 1, x0 - RP, y0 - R, 0, t);
    else
        load_window_scalar<1, IH, IW, NT>(reinterpret_cast<float*>(tile4), in, W, H, 1,
                                          x0 - RP, y0 - R, 0, t);
    __syncthreads();

    float acc[PY][4];
#pragma unroll
    for (int p = 0; p < PY; ++p)
#pragma unroll
        for (int o = 0; o < 4; ++o) acc[p][o] = 0.0f;
    const float* base = tile + threadIdx.y * PY * IW + 4 * threadIdx.x;
#pragma unroll
    for (int i = 0; i < PY + 2 * R; ++i) {                  // input row i of this thread
        float v[4 * NVR];                                   // columns 4tx - RP .. of the tile
#pragma unroll
        for (int q = 0; q < NVR; ++q) {
            const float4 w = reinterpret_cast<const float4*>(base + i * IW)[q];
            v[4 * q] = w.x; v[4 * q + 1] = w.y; v[4 * q + 2] = w.z; v[4 * q + 3] = w.w;
        }
#pragma unroll
        for (int p = 0; p < PY; ++p) {                      // output row p uses filter row i - p
            if (i - p >= 0 && i - p < K) {
#pragma unroll
                for (int j = 0; j < K; ++j) {
                    const float f = c_filter[(i - p) * K + j];
#pragma unroll
                    for (int o = 0; o < 4; ++o) acc[p][o] += f * v[RP - R + o + j];
                }
            }
        }
    }

    const int xo = x0 + 4 * threadIdx.x, yb = y0 + threadIdx.y * PY;
    float* dst = out + static_cast<long long>(yb) * W + xo;
#pragma unroll
    for (int p = 0; p < PY; ++p, dst += W) {
        if (yb + p >= H) break;
        if (vec) {
            if (xo < W) *reinterpret_cast<float4*>(dst) = make_float4(acc[p][0], acc[p][1],
                                                                      acc[p][2], acc[p][3]);
        } else {
#pragma unroll
            for (int o = 0; o < 4; ++o)
                if (xo + o < W) dst[o] = acc[p][o];
        }
    }
}
