// Rung 04 — register tiling (a TM x TN microtile per thread).
//
// Rung 03 spends two shared-memory loads per FMA. Here each thread computes a TM x TN
// block of C (4 x 4 by default) held in registers. For each k it loads TM values of A
// (a column slice of the A tile) and TN values of B (a row slice of the B tile) into
// registers, then issues TM*TN FMAs from registers: an outer product. Shared-memory
// loads per FMA fall from 2 to (TM+TN)/(TM*TN) = 0.5, and because the TM values are
// contiguous they come in one 16-byte load (LDS.128 in SASS) instead of four.
//
// To make the A slice contiguous the A tile is stored TRANSPOSED in shared memory,
// As[k][m], padded by 4 floats per row: the padding spreads the transposing writes over
// all banks (row stride 132 ≡ 4 mod 32) and keeps every row 16-byte aligned for LDS.128.
//
// Block tile BM x BN (128 x 128), stepping BK (8) along K. Threads: (BM/TM)*(BN/TN)
// = 32 x 32 = 1024, each loading BM*BK/1024 floats of A and BK*BN/1024 of B per step.
// Global traffic per output element: 2K/128 floats (vs 2K/32 in rung 03).
// Cost: 1024 threads per block caps registers at 64 per thread and the SM holds only
// two such blocks; rung 05 trades threads for a bigger microtile.
//
// Launch: block (BM/TM)*(BN/TN) threads (1-D), grid (ceil(N/BN), ceil(M/BM)).

#include "common.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_regtile(const float* __restrict__ A, const float* __restrict__ B,
              float* __restrict__ C, int M, int N, int K) {
    constexpr int NT = (BM / TM) * (BN / TN);   // threads per block
    constexpr int PAD = 4;
    static_assert(TM % 4 == 0 && TN % 4 == 0, "microtile rows/cols are read as float4");
    static_assert(BM % TM == 0 && BN % TN == 0, "microtile must divide the block tile");

    __shared__ __align__(16) float As[BK][BM + PAD];   // A tile, transposed: As[k][m]
    __shared__ __align__(16) float Bs[BK][BN];         // B tile as is:       Bs[k][n]

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);           // which TN-wide column strip
    const int ty = tid / (BN / TN);           // which TM-tall row strip
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    float a[TM], b[TN];

    for (int k0 = 0; k0 < K; k0 += BK) {
        // A tile: BM x BK, consecutive threads walk k (contiguous in global memory), stored
        // transposed; B tile: BK x BN, consecutive threads walk n (common.cuh).
        load_tile<BM, BK, NT, true>(As, A, M, K, row0, k0, tid);
        load_tile<BK, BN, NT, false>(Bs, B, K, N, k0, col0, tid);
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            // TM + TN floats from shared memory, as float4 loads ...
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4*>(&a[i]) =
                    *reinterpret_cast<const float4*>(&As[k][ty * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&b[j]) =
                    *reinterpret_cast<const float4*>(&Bs[k][tx * TN + j]);
            // ... then TM * TN FMAs from registers.
            microtile_fma(acc, a, b);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty * TM + i;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = col0 + tx * TN + j;
            if (c < N) C[(size_t)r * N + c] = acc[i][j];
        }
    }
}
