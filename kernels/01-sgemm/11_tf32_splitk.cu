// Rung 11: split-K on the tensor cores, with the operands as they are stored. For the
// skinny problem (128 x 128 x 32768: one output tile, 1 GFLOP on 32 MB of operands) rung
// 08 spends most of its time in its pre-pass, which rounds A and rounds and transposes B
// (one read and one write of each, 64 MB of traffic for a kernel that needs 32 MB), and
// its split-K reduction is a serial loop over the slices in too few threads. This rung
// removes both:
// * No pre-pass: A (M x K) streams in as a k-panel and B (K x N) as an n-panel, straight
//   from the matrices, as rung 09 reads them. The A fragments come from ldmatrix, the B
//   fragments from two LDS.32 per n8-tile (mma_tf32.cuh, FragAddr with B as stored), and
//   every fragment value is rounded to TF32 in the loop (cvt.rna: 16 of A and 16 of B per
//   32 MMAs of a 64 x 64 warp tile; the kernel is waiting on memory, not issuing).
// * Many slices of K over gridDim.z, each block a whole BM x BN tile over K / slices,
//   its partial product written to its own slice of a workspace (S x M x N floats).
// * A reduction that is parallel over the slices too (splitk_sum below): each output
//   float4 is summed by 8 threads, each over every 8th slice, then those 8 partial sums
//   are added in shared memory in a fixed order. The sum is deterministic (the same order
//   every run), and each thread has S / 8 independent loads in flight instead of S
//   dependent ones.
//
// Prediction for 128 x 128 x 32768 on an H200 (132 SMs): the GEMM reads 32 MB once;
// at ~3.5-4 TB/s that is 8-9 us if every SM keeps enough bytes in flight (each holds
// STAGES k-tiles of 32 KB: 3 x 32 KB per block, 2 blocks an SM, ~190 KB in flight at
// ~1 us of latency = ~190 GB/s an SM, well above the ~30 GB/s its share of DRAM needs).
// The 1 GFLOP is ~3.5 us of the measured mma.sync ceiling, so the loads set the time.
// The workspace (128 slices x 64 KB = 8 MB) is written to L2 and read back by the
// reduction: ~2-3 us. Total ~12-15 us against cuBLAS TF32's ~31 us recorded: >= 2x.
#include "mma_tf32.cuh"

// EDGE handling is the loaders' (KPanel/NPanel test rows, columns and k against the
// matrix); ALIGNED: K % 4 == 0, N % 4 == 0 and 16-byte aligned bases (16-byte cp.async),
// else 4-byte cp.async.
template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool ALIGNED>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
sgemm_tf32_splitk(const float* __restrict__ A, const float* __restrict__ B,
                  float* __restrict__ W, int M, int N, int K) {
    using T = tc::Tiles<BM, BN, BK, WM, WN, STAGES>;
    // Tiles, cp.async pipeline, this split's slice of W (blockIdx.z) and epilogue:
    // mma_tf32.cuh's frame, as rung 09 runs it. This rung's k8 step: one product.
    tc::gemm_kn<T, ALIGNED>(A, B, W, M, N, K, [](auto& acc, const auto& fa, unsigned a_base,
                                                 const char* b_base, int ks) {
        unsigned a[T::MT][4];
        tc::load_a<T>(a, fa, a_base, ks);
#pragma unroll
        for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
            for (int r = 0; r < 4; ++r) a[mt][r] = tc::to_tf32(__uint_as_float(a[mt][r]));
#pragma unroll
        for (int j = 0; j < T::NT; ++j) {
            const unsigned b0 = tc::to_tf32(
                *reinterpret_cast<const float*>(b_base + tc::b_off(fa, ks, 0, j)));
            const unsigned b1 = tc::to_tf32(
                *reinterpret_cast<const float*>(b_base + tc::b_off(fa, ks, 1, j)));
#pragma unroll
            for (int mt = 0; mt < T::MT; ++mt) tc::mma_tf32(acc[mt][j], a[mt], b0, b1);
        }
    });
}

// C[i] = sum over z of W[z][i] for the `splits` slices of MN floats each. A block of
// 32 x GROUPS threads covers 32 float4 (or, !VEC4, 32 floats) of C: thread (x, g) adds
// slices g, g + GROUPS, g + 2 GROUPS, ... of its element, the GROUPS partial sums meet in
// shared memory and are added in the order g = 0, 1, ...: the same order on every run.
template <bool VEC4> struct Word { using type = float; };
template <> struct Word<true> { using type = float4; };

template <bool VEC4, int GROUPS>
__global__ void __launch_bounds__(32 * GROUPS)
splitk_sum(const float* __restrict__ W, float* __restrict__ C, long long MN, int splits) {
    using V = typename Word<VEC4>::type;
    __shared__ V part[GROUPS][32];
    const int x = threadIdx.x & 31, g = threadIdx.x >> 5;
    const long long n = VEC4 ? MN / 4 : MN;
    const long long i = (long long)blockIdx.x * 32 + x;
    const V* w = reinterpret_cast<const V*>(W);
    const long long slice = n;   // elements of V per slice
    V s;
    if constexpr (VEC4) s = make_float4(0.f, 0.f, 0.f, 0.f); else s = 0.f;
    if (i < n) {
#pragma unroll 4
        for (int z = g; z < splits; z += GROUPS) {
            const V q = w[(long long)z * slice + i];
            if constexpr (VEC4) { s.x += q.x; s.y += q.y; s.z += q.z; s.w += q.w; }
            else s += q;
        }
    }
    part[g][x] = s;
    __syncthreads();
    if (g == 0 && i < n) {
#pragma unroll
        for (int h = 1; h < GROUPS; ++h) {
            const V q = part[h][x];
            if constexpr (VEC4) { s.x += q.x; s.y += q.y; s.z += q.z; s.w += q.w; }
            else s += q;
        }
        reinterpret_cast<V*>(C)[i] = s;
    }
}
