// 3D convolution, register-tiled four columns wide with a compile-time tile: each thread
// computes a 4 x PY x PZ block of outputs (four adjacent columns, PY rows, PZ planes), so a
// block of BX x BY threads owns a 4BX x (BY * PY) x PZ tile and loads it with its halo,
// rows padded to a multiple of four floats, in one unrolled sweep of 16-byte loads. A
// thread reads each input row of each plane it needs once (a few 16-byte shared-memory
// loads) and adds it into every output row and plane that uses it: per output,
// (PZ + 2R)(PY + 2R) / (PZ PY) rows of shared memory instead of (2R + 1)^2. Arrays whose
// width is not a multiple of 4 take the scalar loads and stores (vec = 0).
#include "filter.cuh"
#include "wide.cuh"

template <int R, int BX, int BY, int PY, int PZ>
__global__ void __launch_bounds__(BX * BY) conv3d_wide(const float* __restrict__ in,
                                                       float* __restrict__ out, int W, int H,
                                                       int D, int vec) {
    constexpr int K = 2 * R + 1, RP = (R + 3) / 4 * 4;
    constexpr int TW = 4 * BX, TH = BY * PY;
    constexpr int IW = TW + 2 * RP, IH = TH + 2 * R, ID = PZ + 2 * R;
    constexpr int NT = BX * BY;
    constexpr int NVR = (RP + R + 4 + 3) / 4;
    extern __shared__ float4 tile4[];                       // ID x IH x IW floats
    const float* tile = reinterpret_cast<const float*>(tile4);
    const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH, z0 = blockIdx.z * PZ;
    const int t = threadIdx.y * BX + threadIdx.x;
    if (vec)
        load_window_vec<ID, IH, IW / 4, NT>(tile4, in, W, H, D, x0 - RP, y0 - R, z0 - R, t);
    else
        load_window_scalar<ID, IH, IW, NT>(reinterpret_cast<float*>(tile4), in, W, H, D,
                                           x0 - RP, y0 - R, z0 - R, t);
    __syncthreads();

    float acc[PZ][PY][4];
#pragma unroll
    for (int a = 0; a < PZ; ++a)
#pragma unroll
        for (int p = 0; p < PY; ++p)
#pragma unroll
            for (int o = 0; o < 4; ++o) acc[a][p][o] = 0.0f;
    const float* base = tile + threadIdx.y * PY * IW + 4 * threadIdx.x;
#pragma unroll
    for (int a = 0; a < ID; ++a) {                          // input plane a
#pragma unroll
        for (int i = 0; i < PY + 2 * R; ++i) {              // input row i of this thread
            float v[4 * NVR];
#pragma unroll
            for (int q = 0; q < NVR; ++q) {
                const float4 w = reinterpret_cast<const float4*>(base + (a * IH + i) * IW)[q];
                v[4 * q] = w.x; v[4 * q + 1] = w.y; v[4 * q + 2] = w.z; v[4 * q + 3] = w.w;
            }
#pragma unroll
            for (int pz = 0; pz < PZ; ++pz) {               // output plane pz: filter plane a - pz
                if (a - pz < 0 || a - pz >= K) continue;
#pragma unroll
                for (int p = 0; p < PY; ++p) {              // output row p: filter row i - p
                    if (i - p < 0 || i - p >= K) continue;
#pragma unroll
                    for (int j = 0; j < K; ++j) {
                        const float f = c_filter[((a - pz) * K + (i - p)) * K + j];
#pragma unroll
                        for (int o = 0; o < 4; ++o) acc[pz][p][o] += f * v[RP - R + o + j];
                    }
                }
            }
        }
    }

    const int xo = x0 + 4 * threadIdx.x, yb = y0 + threadIdx.y * PY;
    const long long plane = static_cast<long long>(W) * H;
#pragma unroll
    for (int pz = 0; pz < PZ; ++pz) {
        if (z0 + pz >= D) break;
        float* dst = out + (z0 + pz) * plane + static_cast<long long>(yb) * W + xo;
#pragma unroll
        for (int p = 0; p < PY; ++p, dst += W) {
            if (yb + p >= H) break;
            if (vec) {
                if (xo < W) *reinterpret_cast<float4*>(dst) =
                    make_float4(acc[pz][p][0], acc[pz][p][1], acc[pz][p][2], acc[pz][p][3]);
            } else {
#pragma unroll
                for (int o = 0; o < 4; ++o)
                    if (xo + o < W) dst[o] = acc[pz][p][o];
            }
        }
    }
}
