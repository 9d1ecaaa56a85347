// Fixture: a TF32 tensor-core SGEMM through the PTX mma.sync m16n8k8 instruction
// (no headers needed). One warp computes a 16 x (8 * NT) tile of C with NT mmas per
// k-step (a run of HMMAs in the SASS); a block of WARPS_M x WARPS_N warps computes
// (16 * WARPS_M) x (8 * NT * WARPS_N).
#include "common/tile_util.cuh"

__device__ __forceinline__ unsigned to_tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const unsigned (&a)[4],
                                                 const unsigned (&b)[2])
{
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int WARPS_M, int WARPS_N, int NT>
__global__ void __launch_bounds__(32 * WARPS_M * WARPS_N)
sgemm_tf32_mma(const float* __restrict__ A, const float* __restrict__ B,
               float* __restrict__ C, int M, int N, int K)
{
    constexpr int BM = 16 * WARPS_M, BN = 8 * NT * WARPS_N, BK = 8;
    __shared__ float As[BM][BK + 4];
    __shared__ float Bs[BK][BN + 4];

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int g = lane / 4, q = lane % 4;          // mma fragment coordinates

    float d[NT][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = tid; e < BM * BK; e += blockDim.x)
            As[e / BK][e % BK] = load_or_zero(A, row0 + e / BK, k0 + e % BK, M, K, K);
        for (int e = tid; e < BK * BN; e += blockDim.x)
            Bs[e / BN][e % BN] = load_or_zero(B, k0 + e / BN, col0 + e % BN, K, N, N);
        __syncthreads();

        unsigned a[4], b[NT][2];
        const int r = wm * 16, c = wn * 8 * NT;
        a[0] = to_tf32(As[r + g][q]);
        a[1] = to_tf32(As[r + g + 8][q]);
        a[2] = to_tf32(As[r + g][q + 4]);
        a[3] = to_tf32(As[r + g + 8][q + 4]);
#pragma unroll
        for (int t = 0; t < NT; ++t) {
            b[t][0] = to_tf32(Bs[q][c + 8 * t + g]);
            b[t][1] = to_tf32(Bs[q + 4][c + 8 * t + g]);
        }
#pragma unroll
        for (int t = 0; t < NT; ++t) mma_m16n8k8_tf32(d[t], a, b[t]);
        __syncthreads();
    }

    const int r = row0 + wm * 16 + g;
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        const int c = col0 + (wn * NT + t) * 8 + 2 * q;
        if (r < M && c < N) C[(size_t)r * N + c] = d[t][0];
        if (r < M && c + 1 < N) C[(size_t)r * N + c + 1] = d[t][1];
        if (r + 8 < M && c < N) C[(size_t)(r + 8) * N + c] = d[t][2];
        if (r + 8 < M && c + 1 < N) C[(size_t)(r + 8) * N + c + 1] = d[t][3];
    }
}
