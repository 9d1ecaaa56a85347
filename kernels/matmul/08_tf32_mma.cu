// Rung 08: TF32 tensor cores through inline PTX (mma.sync.aligned.m16n8k8, tf32 in,
// fp32 accumulate). C = A @ B, row-major fp32, any M, N, K.
//
// The design, and what each piece is predicted to buy:
// * Block tile BM x BN (default 128 x 256), BK = 16, one warp per WM x WN (64 x 64) warp
//   tile: 8 warps, 256 threads. A 64 x 64 warp tile issues 4 x 8 = 32 MMAs per k8 step
//   against 4 ldmatrix.x4 (A) + 16 LDS.32 (B): 4 KB of shared-memory reads per 64 KFLOP.
//   At the mma.sync ceiling that is ~60% of the SM's shared-memory bandwidth (~80% with
//   the cp.async writes), so the tensor cores, not shared memory, should set the pace.
//   128 fp32 accumulators per thread; ~230 registers, one block of 256 threads per SM.
// * A STAGES-deep cp.async pipeline (default 6 stages of BK = 16): the copies of tiles
//   k+1..k+5 are in flight while tile k is multiplied, with no registers spent on
//   staging and a single __syncthreads per k-tile. 6 x 24 KB = 144 KB of shared memory.
//   Shallow k-tiles with more stages keep the same bytes in flight and halve the work
//   between two barriers; the sweep measures BK 16 and 32 at 4 and 6 stages.
// * Fragments double-buffered in registers: the ldmatrix/LDS of k8 step ks+1 issue
//   while the 32 MMAs of step ks run, and at the end of a k-tile the barrier and the
//   first fragments of the next tile come before the last step's MMAs. With 2 warps per
//   scheduler (one 8-warp block per SM, limited by registers), each warp must hide its
//   own load latency; the profiler showed the tensor pipe ~60% busy, the warps waiting
//   on the pipe, on fixed latencies and on a full shared-load queue.
// * XOR-swizzled shared layouts (mma_tf32.cuh): ldmatrix for A, LDS.32 for B and the
//   16-byte cp.async writes are all free of bank conflicts.
// * Operands rounded to TF32 (nearest, ties away) once, by a pre-pass (PRE = true, the
//   default where there is no split-K; round_tf32 in mma_tf32.cuh): the main loop hands
//   the fragment bits to the tensor cores as they are. PRE = false rounds in the loop with
//   cvt.rna after the fragment loads, once per fragment value and warp: 32 conversions
//   per 32 MMAs, each an Inf/NaN test plus an integer add in SASS (the tensor core ignores
//   the low 13 bits). Both give bit-identical operands, hence identical results.
//   SASS (sm_90, default tile): 578 instructions per k-tile and warp with the cvt (128
//   HMMA, 128 FSETP, ~150 IMAD), 322 without (128 HMMA, 67 LDS, 16 LDSM, 12 LDGSTS, the
//   rest loader bookkeeping): 4.5 -> 2.5 issue slots per MMA. On the H200 an HMMA
//   m16n8k8 TF32 takes ~7 cycles of its sub-partition's tensor pipe at the measured
//   ~300 TFLOP/s ceiling, and 2 warps share a scheduler: 2 x 578 issue slots per
//   2 x 128 x 7 tensor cycles was 65% of the issue bandwidth, with the conversions also
//   in the dependency chain from each load to its MMA.
//   Prediction (the measurement to check first): the GEMM kernel 156 -> 190-215 TFLOP/s at
//   8192^3, the pre-pass (1 GB of traffic, ~0.25 ms) costing ~4% of that, so 180-205
//   end to end, 0.52-0.59x cuBLAS TF32. What is left after that: one barrier per k-tile
//   with one block per SM (the tensor pipe drains while warps meet), and shared memory
//   at ~77% of its bandwidth at the ceiling (128 KB of fragment reads + 48 KB of cp.async
//   writes per k-tile per SM, ~1400 cycles, against ~1800 cycles of MMAs).
// * Grouped block rasterisation for L2 reuse, and an optional split-K over gridDim.z for
//   problems with too few output tiles to fill the GPU (128 x 128 x 32768 is one tile):
//   each split writes its partial product to its own slice of a workspace passed as C,
//   and splitk_reduce adds the slices into the real C.
#include "matmul/mma_tf32.cuh"

// EDGE: some tile crosses M or N, K % BK != 0, or !ALIGNED (the loader then tests).
template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool PRE, bool ALIGNED, bool EDGE>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
sgemm_tf32_mma(const float* __restrict__ A, const float* __restrict__ B,
               float* __restrict__ C, int M, int N, int K) {
    using T = tc::Tiles<BM, BN, BK, WM, WN, STAGES>;
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned As = tc::smem_u32(smem);
    const unsigned Bs = As + STAGES * T::A_STAGE * 4;
    const char* Bs_ptr = reinterpret_cast<const char*>(smem) + STAGES * T::A_STAGE * 4;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp / T::WARPS_N, warp_n = warp % T::WARPS_N;

    int tm, tn;
    tc::block_tile<8>((M + BM - 1) / BM, (N + BN - 1) / BN, tm, tn);
    int kt0, nkt;
    tc::k_range(K, BK, kt0, nkt);
    C += (size_t)blockIdx.z * M * N;   // split-K: this split's slice of the workspace

    tc::Loader<T, ALIGNED, EDGE> loader(A, B, M, N, K, tm, tn, kt0, tid, As, Bs);
    const tc::FragAddr<T> fa(warp_m, warp_n, lane);

    float acc[T::MT][T::NT][4];
#pragma unroll
    for (int i = 0; i < T::MT; ++i)
#pragma unroll
        for (int j = 0; j < T::NT; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

    // Fragments of one k8 step, double-buffered in registers: those of step ks+1 are read
    // while the MMAs of step ks issue (across the k-tile boundary too).
    unsigned a[2][T::MT][4], b[2][T::NT][2];
    auto fragments = [&](int buf, int stage, int ks) {
        const unsigned a_base = As + stage * (T::A_STAGE * 4);
        const char* b_base = Bs_ptr + stage * (T::B_STAGE * 4);
#pragma unroll
        for (int mt = 0; mt < T::MT; ++mt) {
            tc::ldmatrix_x4(a[buf][mt], a_base + fa.a[ks] + mt * 16 * BK * 4);
#pragma unroll
            for (int r = 0; r < 4; ++r)
                a[buf][mt][r] = tc::tf32_operand<PRE>(__uint_as_float(a[buf][mt][r]));
        }
#pragma unroll
        for (int j = 0; j < T::NT; ++j) {
            // b0 = B[t][g], b1 = B[t+4][g]: two LDS.32 straight into the register pair.
            b[buf][j][0] = tc::tf32_operand<PRE>(
                *reinterpret_cast<const float*>(b_base + tc::b_off(fa, ks, 0, j)));
            b[buf][j][1] = tc::tf32_operand<PRE>(
                *reinterpret_cast<const float*>(b_base + tc::b_off(fa, ks, 1, j)));
        }
    };

    // Prologue: fill STAGES-1 stages. Every step commits a group, even an empty one, so
    // that wait_group<STAGES-2> below always means "the next tile is here".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nkt) loader.load(s);
        tc::cp_async_commit();
    }
    tc::cp_async_wait<STAGES - 2>();
    __syncthreads();
    fragments(0, 0, 0);

    int read = 0, write = STAGES - 1;
    for (int t = 0; t < nkt; ++t) {
        // The stage refilled here held tile t-1: every warp passed the barrier at the end
        // of tile t-1 after its last fragment read from it.
        if (t + STAGES - 1 < nkt) loader.load(write);
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
                    tc::mma_tf32(acc[mt][j], a[ks & 1][mt], b[ks & 1][j][0], b[ks & 1][j][1]);
        }
    }
    tc::cp_async_wait<0>();   // no copy may outlive the block (empty groups only, by now)

    tc::store_tile<T, ALIGNED>(C, M, N, tm * BM + warp_m * WM, tn * BN + warp_n * WN, acc, lane);
}
