// What rungs 10 and 12 of the SGEMM ladder (wgmma fed by TMA, sm_90a) share besides the
// instruction wrappers of wgmma.cuh: the k-tile, B's TMA boxes, the register-buffer index,
// where each thread's B^T fragment values lie in a stage and which columns of C its C^T
// accumulators stand for, the epilogue that stores them, and the padding copy that the
// host runs where a row of A or B does not start on 16 bytes. Both rungs compute C^T =
// B^T A^T with B^T as the register operand; 10_wgmma_tma.cu says why.
#pragma once

#include "common.cuh"
#include "wgmma.cuh"

namespace wgt {

constexpr int BK = 32;                 // k per stage: 128 bytes of a row, the swizzle width
constexpr int B_BOX = 32 * BK * 4;     // 4 KB: one TMA box of B, 32 k-rows x 32 n

// A compile-time register-buffer index (the fragment buffers are indexed by constants
// only).
template <int V>
struct Buf {
    static constexpr int value = V;
};

// The column of C (within the block's tile) that row 16 w + g + 8 h of this consumer's
// 64-row slice of C^T stands for: box 2 c + (2 w + h) / 4, chunk pair q, q + 4 with
// q = (2 w + h) % 4, and within them n = 4 q + g % 4 (g < 4) or 16 + 4 q + g % 4 (g >= 4).
__device__ __forceinline__ int frag_col(int c, int w, int h, int g) {
    const int combo = 2 * w + h;
    return (2 * c + combo / 4) * 32 + (combo % 4) * 4 + (g & 3) + (g >> 2) * 16;
}

// Byte offsets, from a stage's base, of this thread's B^T fragment values at k8 step 0
// (step kk adds kk * 1024: 8 rows of 128 bytes): off[h][x] for rows g + 8 h and columns
// t + 4 x of the step, B's boxes starting `b_at` bytes into the stage. Row k of a box
// holds chunk j at j ^ (k % 8), and (8 kk + t + 4 x) % 8 = t + 4 x.
__device__ __forceinline__ void frag_offsets(unsigned (&off)[2][2], int b_at, int c, int w,
                                             int g, int t) {
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int x = 0; x < 2; ++x) {
            const int n = frag_col(c, w, h, g);
            const int k = t + 4 * x;
            off[h][x] = b_at + (n / 32) * B_BOX + k * 128 + ((((n % 32) / 4) ^ k) * 16) +
                        (n % 4) * 4;
        }
}

// The epilogue: d[4 j + 2 h + e] is C^T row 16 w + g + 8 h, column 8 j + 2 t + e, i.e. C
// row (m) m0 + 8 j + e with m0 = the block's first row + 2 t, column (n) n0 + frag_col(c,
// w, h, g) with n0 = the block's first column; stored straight from the accumulators,
// guarded at the edges.
template <int BM, int NACC>
__device__ __forceinline__ void store_ct(float* __restrict__ C, int M, int N, int m0,
                                         int n0, int c, int w, int g, const float (&d)[NACC]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int n = n0 + frag_col(c, w, h, g);
        if (n >= N) continue;
#pragma unroll
        for (int j = 0; j < BM / 8; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int m = m0 + 8 * j + e;
                if (m < M) C[(size_t)m * N + n] = d[4 * j + 2 * h + e];
            }
    }
}

}  // namespace wgt

// Only where a row of A or B does not start on 16 bytes: Y (R rows of ldy floats, ldy a
// multiple of 4, Y 16-byte aligned) = X (R x Cn, row-major). Columns Cn..ldy-1 of Y are
// left as they are: never read (the tensor map's width is Cn).
template <bool VEC4>
__global__ void __launch_bounds__(256)
pad_copy(const float* __restrict__ X, float* __restrict__ Y, int R, int Cn, int ldy) {
    for (int r = blockIdx.y; r < R; r += gridDim.y) {
        const float* x = X + (size_t)r * Cn;
        float* y = Y + (size_t)r * ldy;
        if (VEC4) {     // Cn % 4 == 0 and X 16-byte aligned
            for (int c = (blockIdx.x * blockDim.x + threadIdx.x) * 4; c < Cn;
                 c += gridDim.x * blockDim.x * 4)
                *reinterpret_cast<float4*>(y + c) = *reinterpret_cast<const float4*>(x + c);
        } else {
            for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < Cn; c += gridDim.x * blockDim.x)
                y[c] = x[c];
        }
    }
}
