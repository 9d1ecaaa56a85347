// Rung 06 — warp tiling with a multi-stage cp.async pipeline: the fast FP32 kernel.
//
// Block tile BM x BN (default 128 x 256), K steps of BK (32), NT = (BM/WM)*(BN/WN)*32
// threads. What changes against rung 05, and why:
//
// 1. Warp tiling. Each warp owns a WM x WN (64 x 64) piece of the block tile; inside it
//    the 32 lanes form an LM x LN = (WM/TM) x (WN/TN) grid (8 x 4) and each lane owns a
//    TM x TN (8 x 16) microtile made of 4 x 4 pieces spaced LM*4 rows / LN*4 columns
//    apart. A warp's shared-memory reads then touch only WM + WN floats per k (8 distinct
//    float4 of A, 4 of B; the other lanes get broadcasts), so one k step is
//    6 LDS.128 + 128 FFMA per thread and shared-memory bandwidth stays well under the
//    FMA rate. Warps also map to a compact 64 x 64 patch, which the hardware schedules
//    independently (the level between block and thread that rungs 04-05 skipped).
//
// 2. Asynchronous copies, STAGES deep. Tiles travel global -> shared with cp.async (no
//    registers, no waiting): while the block computes on tile t, tiles t+1 ..
//    t+STAGES-1 are in flight. One __syncthreads per K step.
//      - B rows are copied 16 bytes at a time (cp.async.cg, L1 bypassed) when N % 4 == 0
//        (template ALIGNED), 4 bytes at a time otherwise.
//      - A is stored transposed (As[k][m]) so a lane's 4 rows are one float4; the
//        transposition is done by the copy itself, one 4-byte cp.async.ca per element
//        (each thread copies 4 consecutive k of a row, BK/4 threads cover the row;
//        4 copies per row share one pointer with immediate offsets).
//      - Edges: the src-size operand zero-fills out-of-range elements; no branch in
//        the inner loop, every C store is guarded.
//
// 3. Padding. As rows are BM + 4 floats: 16-byte aligned for LDS.128, and the transposing
//    4-byte writes of a warp spread over the banks (at most 2-way).
//    B rows need no padding: they are written and read as contiguous 16-byte chunks.
//
// 4. Grouped block order. Blocks are numbered so that GROUP_M consecutive block-rows
//    sweep the block-columns together: the B panels a wave of blocks reads are reused
//    from L2 by GROUP_M block-rows before they are evicted.
//
// 5. Fragments double-buffered in registers. The float4s of k+1 are read while the
//    FFMAs of k run, and at the last k of a tile the barrier and the first reads of the
//    next tile come before the last k's FFMAs: no warp starts a tile waiting for its
//    first shared loads. The FFMAs of one k run in a serpentine order over the longer
//    fragment (outer_product, warptile.cuh), which changes only which operands ptxas can
//    keep in its reuse cache. Both were found by measuring (chapters/notes/01-sgemm.md):
//    with one block of 8 warps per SM, 2 warps per scheduler must hide every latency,
//    and the profiler showed shared-load waits and register-read conflicts as the main
//    stalls between issues.
//
// 6. Interior blocks (the tile lies inside M x N) and full K steps take a copy path with
//    no bounds tests: one pointer per row and compile-time offsets. A problem whose tiles
//    all lie inside and whose K is a multiple of BK runs a kernel with nothing else in it
//    (EDGE = false); otherwise edge blocks and a partial last K step pay for the tests
//    and the zero-fill (see warptile_mainloop, warptile.cuh, for why two kernels).
//
// Per block and K step: (BM + BN) * BK * 4 bytes from L2/DRAM feed 2 * BM * BN * BK
// flops: 43 flops per byte at 128 x 256, enough to stay compute bound.
// SASS (sm_90, 128 x 256 x 32, interior path): 93% of the instructions are FFMA, ~90%
// of them with a .reuse operand; 237 registers, no spills.
//
// Tile shapes. A thread tile of more than 64 accumulators (8 x 16) cannot live in the
// 128 registers that two 256-thread blocks per SM allow: 128 x 256 runs one block per SM
// (see WARPTILE_MIN_BLOCKS, warptile.cuh), 128 x 128 with 8 x 8 thread tiles two. The sweep
// (sgemm.sweep) measures both, with BK 16/32 and 2/3 stages; the defaults are its
// fastest. The lab's Python side picks the shape per problem by how full the last wave
// is (3072^3: 288 tiles of 128 x 256 = 2.18 waves of 132, which neither shape fixes:
// rung 07 splits that last wave).
//
// Dynamic shared memory: STAGES * BK * ((BM + 4) + BN) * 4 bytes
// (3 * 32 * 388 * 4 = 148,992 B at the defaults).
// Launch: block NT threads (1-D), grid ceil(M/BM) * ceil(N/BN) blocks (1-D).
//
// The main loop and its pieces are in warptile.cuh, so that rung 07 (split-K) reuses them
// on a K range.

#include "warptile.cuh"

// EDGE: some tile crosses M or N, or K % BK != 0 (see warptile_mainloop).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, bool ALIGNED,
          bool EDGE>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, WARPTILE_MIN_BLOCKS(BM, BN, WM, WN, TM, TN))
sgemm_warptile(const float* __restrict__ A, const float* __restrict__ B,
               float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) float smem[];

    int bm, bn;
    grouped_block(blockIdx.x, ceil_div(M, BM), ceil_div(N, BN), bm, bn);
    const int row0 = bm * BM, col0 = bn * BN;

    float acc[TM][TN] = {};
    const bool interior = !EDGE || (row0 + BM <= M && col0 + BN <= N);
    warptile_mainloop<BM, BN, BK, WM, WN, TM, TN, STAGES, ALIGNED, EDGE>(
        A, B, M, N, K, row0, col0, 0, K, interior, smem, acc);
    warptile_store<BM, BN, BK, WM, WN, TM, TN, STAGES, ALIGNED>(C, M, N, row0, col0, acc);
}
