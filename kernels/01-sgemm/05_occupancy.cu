// Rung 05 — fewer, fatter threads: 256 threads per block, an 8 x 8 microtile each.
//
// Rung 04 used 1024 threads with 4 x 4 microtiles: registers are capped at 64 per thread
// and every k step costs 2 LDS.128 for 16 FMAs. Here the same 128 x 128 block tile is
// covered by (128/8) * (128/8) = 256 threads, each holding 64 accumulators:
//   - shared loads per FMA: (8 + 8) / 64 = 0.25 (half of rung 04): 4 LDS.128 per 64 FFMA;
//   - __launch_bounds__(256, 2) asks the compiler to fit in 128 registers so that at
//     least two blocks (16 warps) share an SM: while one block waits at __syncthreads or
//     on its global loads, the other one computes;
//   - shared memory is 2 * 8 * 132 * 4 B ≈ 8.4 KB per block, far from any limit.
//
// The 8 rows (and 8 columns) a thread owns are two groups of 4, half a tile apart
// (rows ty*4 and BM/2 + ty*4). Each float4 read of a B row by a half-warp is then
// 256 contiguous bytes — no two lanes of a phase in the same bank — where 8 contiguous
// columns per thread would make lanes 32 bytes apart collide.
//
// Launch: block (BM/TM)*(BN/TN) threads (1-D), grid (ceil(N/BN), ceil(M/BM)).

#include "common.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 2)
sgemm_occupancy(const float* __restrict__ A, const float* __restrict__ B,
                float* __restrict__ C, int M, int N, int K) {
    constexpr int NT = (BM / TM) * (BN / TN);
    constexpr int PAD = 4;
    constexpr int TXS = BN / TN;              // threads across the tile
    constexpr int TYS = BM / TM;              // threads down the tile
    static_assert(TM % 4 == 0 && TN % 4 == 0, "microtile is made of 4-wide groups");
    static_assert(BM % TM == 0 && BN % TN == 0, "microtile must divide the block tile");

    __shared__ __align__(16) float As[BK][BM + PAD];   // transposed A tile
    __shared__ __align__(16) float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % TXS, ty = tid / TXS;
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    // Row of group gi (of TM/4 groups) for this thread: gi * (BM/(TM/4)) + ty*4 + ii.
    constexpr int RSTEP = TYS * 4;            // = BM / (TM/4)
    constexpr int CSTEP = TXS * 4;            // = BN / (TN/4)

    float acc[TM][TN] = {};
    float a[TM], b[TN];

    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile<BM, BK, NT, true>(As, A, M, K, row0, k0, tid);     // as in rung 04
        load_tile<BK, BN, NT, false>(Bs, B, K, N, k0, col0, tid);
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int g = 0; g < TM / 4; ++g)
                *reinterpret_cast<float4*>(&a[g * 4]) =
                    *reinterpret_cast<const float4*>(&As[k][g * RSTEP + ty * 4]);
#pragma unroll
            for (int g = 0; g < TN / 4; ++g)
                *reinterpret_cast<float4*>(&b[g * 4]) =
                    *reinterpret_cast<const float4*>(&Bs[k][g * CSTEP + tx * 4]);
            microtile_fma(acc, a, b);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + (i / 4) * RSTEP + ty * 4 + (i % 4);
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = col0 + (j / 4) * CSTEP + tx * 4 + (j % 4);
            if (c < N) C[(size_t)r * N + c] = acc[i][j];
        }
    }
}
