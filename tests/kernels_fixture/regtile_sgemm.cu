// Fixture: a register-tiled SGEMM of the size and shape of a real chapter kernel
// (about 200 lines with the TF32 fixture). Each thread computes a TM x TN tile of C
// from float4 reads of shared memory: the inner loop is LDS.128 followed by FFMAs.
//
// C (M, N) = A (M, K) @ B (K, N), row major, any M, N, K.
// Block: (BM / TM) * (BN / TN) threads. Shared: As is stored transposed (BK x BM).
#include "common/tile_util.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_regtile(const float* __restrict__ A, const float* __restrict__ B,
              float* __restrict__ C, int M, int N, int K)
{
    static_assert(TM % 4 == 0 && TN % 4 == 0, "TM and TN must be multiples of 4");
    constexpr int THREADS = (BM / TM) * (BN / TN);
    static_assert((BM * BK) % THREADS == 0, "A tile must split evenly over threads");
    static_assert((BK * BN) % THREADS == 0, "B tile must split evenly over threads");

    __shared__ __align__(16) float As[BK][BM];
    __shared__ __align__(16) float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);
    const int ty = tid / (BN / TN);
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    float a_frag[TM];
    float b_frag[TN];

    const int tiles = ceil_div_dev(K, BK);
    for (int t = 0; t < tiles; ++t) {
        const int k0 = t * BK;
        // Load the A tile transposed and the B tile, guarding the edges.
#pragma unroll
        for (int e = tid; e < BM * BK; e += THREADS) {
            const int r = e / BK, c = e % BK;
            As[c][r] = load_or_zero(A, row0 + r, k0 + c, M, K, K);
        }
#pragma unroll
        for (int e = tid; e < BK * BN; e += THREADS) {
            const int r = e / BN, c = e % BN;
            Bs[r][c] = load_or_zero(B, k0 + r, col0 + c, K, N, N);
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&As[k][ty * TM + i]);
                a_frag[i + 0] = v.x; a_frag[i + 1] = v.y;
                a_frag[i + 2] = v.z; a_frag[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[k][tx * TN + j]);
                b_frag[j + 0] = v.x; b_frag[j + 1] = v.y;
                b_frag[j + 2] = v.z; b_frag[j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
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
