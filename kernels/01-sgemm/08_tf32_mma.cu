// Rung 08: TF32 tensor cores through inline PTX (mma.sync.aligned.m16n8k8, tf32 in,
// fp32 accumulate). C = A @ B, row-major fp32, any M, N, K. The kernel reads A and B^T:
// a pre-pass (run by the host code with the GEMM) rounds A to TF32 and rounds and
// transposes B, so both operands reach the GEMM with k contiguous.
//
// The design, and what each piece is predicted to buy:
// * Block tile BM x BN (default 128 x 256), BK = 16, one warp per WM x WN (64 x 64) warp
//   tile: 8 warps, 256 threads. A 64 x 64 warp tile issues 4 x 8 = 32 MMAs per k8 step.
//   128 fp32 accumulators per thread; ~230 registers, one block of 256 threads per SM.
// * Both fragments through ldmatrix. The A fragment (16 x 8, row-major) is four 8 x 4
//   blocks of A, one ldmatrix.x4. The B fragment of an n8-tile is b0 = B[t][g],
//   b1 = B[t+4][g]: in B (K x N) the pair sits in two k-rows, so with B as it comes a
//   warp needs two LDS.32 per n8-tile (16 per k8 step, rung 09 still works that way).
//   In B^T (N x K) it is two 8 x 4 blocks like A's, and one ldmatrix.x4 gives the b0, b1
//   of two n8-tiles, already in adjacent registers as mma.sync takes them. Per k8 step
//   and warp: 4 + 4 ldmatrix.x4 for 32 MMAs, instead of 4 ldmatrix + 16 LDS.32. The
//   shared-memory bytes are the same (4 KB per 64 KFLOP); the instructions in the
//   shared-memory queue drop from 20 to 8, and the profiler had shown warps stalled on
//   that queue being full (and the tensor pipe ~60 % busy). The price is the transpose,
//   done by the pre-pass that already rounded B: the same one read and one write of B,
//   through a shared-memory tile instead of a straight copy.
// * Operands rounded to TF32 (nearest, ties away) by that pre-pass (round_tf32 for A,
//   round_tf32_transpose for B, mma_tf32.cuh): the main loop hands the fragment bits to
//   the tensor cores as they are. Without rounding the tensor core truncates, and the
//   error is several times cuBLAS TF32's (measured). Rounding in the loop instead, with
//   one integer add per fragment value (half a TF32 ulp added, the low bits left for
//   the tensor core to drop: 32 adds per 32 MMAs), gave bit-identical results and was
//   slower than the pre-pass at 4096^3 and 8192^3 (the notes have the numbers).
// * A STAGES-deep cp.async pipeline (default 6 stages of BK = 16): the copies of tiles
//   k+1..k+5 are in flight while tile k is multiplied, with no registers spent on
//   staging and a single __syncthreads per k-tile. 6 x 24 KB = 144 KB of shared memory.
//   Shallow k-tiles with more stages keep the same bytes in flight and halve the work
//   between two barriers; the sweep measures BK 16 and 32 at 4 and 6 stages.
// * Fragments double-buffered in registers: the ldmatrix of k8 step ks+1 issue while the
//   32 MMAs of step ks run, and at the end of a k-tile the barrier and the first
//   fragments of the next tile come before the last step's MMAs. With 2 warps per
//   scheduler (one 8-warp block per SM, limited by registers), each warp must hide its
//   own load latency.
// * XOR-swizzled shared layouts (mma_tf32.cuh, a_swz for both k-panels): the ldmatrix
//   reads and the 16-byte cp.async writes are free of bank conflicts.
// * Grouped block rasterisation for L2 reuse, and an optional split-K over gridDim.z for
//   problems with too few output tiles to fill the GPU (128 x 128 x 32768 is one tile):
//   each split writes its partial product to its own slice of a workspace passed as C,
//   and splitk_reduce adds the slices into the real C.

#include "mma_tf32.cuh"

// EDGE: some tile crosses M or N, K % BK != 0, or !ALIGNED (the loaders then test).
template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool ALIGNED, bool EDGE>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
sgemm_tf32_mma(const float* __restrict__ A, const float* __restrict__ Bt,
               float* __restrict__ C, int M, int N, int K) {
    static_assert(EDGE || ALIGNED, "the untested kernel copies whole 16-byte chunks");
    using T = tc::Tiles<BM, BN, BK, WM, WN, STAGES>;
    extern __shared__ __align__(128) unsigned char smem[];
    const tc::Block<T> blk(smem, M, N, K);   // stages, warp, output tile, k-tiles
    C += (size_t)blockIdx.z * M * N;   // split-K: this split's slice of the workspace

    // A (M x K) and B^T (N x K): two k-panels of the same layout.
    tc::KPanel<BM, BK, T::THREADS, ALIGNED, EDGE> a_panel(A, M, K, blk.tm * BM, blk.kt0,
                                                          blk.tid, blk.As);
    tc::KPanel<BN, BK, T::THREADS, ALIGNED, EDGE> b_panel(Bt, N, K, blk.tn * BN, blk.kt0,
                                                          blk.tid, blk.Bs);
    auto load = [&](int stage) {
        a_panel.load(stage * (T::A_STAGE * 4));
        b_panel.load(stage * (T::B_STAGE * 4));
    };
    const tc::FragAddr<T, true> fa(blk.warp_m, blk.warp_n, blk.lane);

    float acc[T::MT][T::NT][4] = {};

    // Fragments of one k8 step, double-buffered in registers: those of step ks+1 are read
    // while the MMAs of step ks issue (across the k-tile boundary too). b[.][p] holds
    // b0, b1 of n8-tile 2p and b0, b1 of n8-tile 2p+1.
    unsigned a[2][T::MT][4], b[2][T::NT / 2][4];
    auto fragments = [&](int buf, int stage, int ks) {
        const unsigned a_base = blk.As + stage * (T::A_STAGE * 4);
        const unsigned b_base = blk.Bs + stage * (T::B_STAGE * 4);
#pragma unroll
        for (int mt = 0; mt < T::MT; ++mt)
            tc::ldmatrix_x4(a[buf][mt], a_base + fa.a[ks] + mt * 16 * BK * 4);
#pragma unroll
        for (int p = 0; p < T::NT / 2; ++p)
            tc::ldmatrix_x4(b[buf][p], b_base + fa.b[ks] + p * 16 * BK * 4);
    };

    tc::prologue<STAGES>(blk.nkt, load);
    tc::cp_async_wait<STAGES - 2>();
    __syncthreads();
    fragments(0, 0, 0);

    int read = 0, write = STAGES - 1;
    for (int t = 0; t < blk.nkt; ++t) {
        // The stage refilled here held tile t-1: every warp passed the barrier at the end
        // of tile t-1 after its last fragment read from it.
        if (t + STAGES - 1 < blk.nkt) load(write);
        tc::cp_async_commit();
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) {
            if (ks == BK / 8 - 1) {
                // One barrier per k-tile: it publishes tile t+1 to all warps and proves
                // every warp is done reading tile t.
                tc::cp_async_wait<STAGES - 2>();
                __syncthreads();
                read = (read + 1 == STAGES) ? 0 : read + 1;
                write = (write + 1 == STAGES) ? 0 : write + 1;
                fragments((ks + 1) & 1, read, 0);
            } else {
                fragments((ks + 1) & 1, read, ks + 1);
            }
#pragma unroll
            for (int j = 0; j < T::NT; ++j)
#pragma unroll
                for (int mt = 0; mt < T::MT; ++mt)
                    tc::mma_tf32(acc[mt][j], a[ks & 1][mt], b[ks & 1][j / 2][(j & 1) * 2],
                                 b[ks & 1][j / 2][(j & 1) * 2 + 1]);
        }
    }
    tc::cp_async_wait<0>();   // no copy may outlive the block (empty groups only, by now)

    tc::store_tile<T, ALIGNED>(C, M, N, blk.row0(), blk.col0(), acc, blk.lane);
}
