// Rung 06's warp-tiled main loop, which rung 07 (split-K) runs on a K range: the tile
// configuration (WarpTile), the cp.async copies of one K step (warptile_load), the
// fragments' outer product (outer_product), the pipelined loop over K (warptile_mainloop),
// the store of a thread's microtile (warptile_store) and the registers a block may ask for
// (WARPTILE_MIN_BLOCKS). 06_warptiling.cu says what each piece is for and why.
#pragma once

#include "common.cuh"

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
struct WarpTile {
    static constexpr int WARPS_N = BN / WN;
    static constexpr int NT = (BM / WM) * (BN / WN) * 32;    // threads per block
    static constexpr int LM = WM / TM;                       // lane grid inside a warp
    static constexpr int LN = WN / TN;
    static constexpr int AS_LD = BM + 4;                     // padded row of transposed A
    static constexpr int BS_LD = BN;
    static constexpr int A_STAGE = BK * AS_LD;               // floats per stage
    static constexpr int B_STAGE = BK * BS_LD;
    static constexpr int STAGE = A_STAGE + B_STAGE;
    // Tile loads: A as 4-byte elements, each thread 4 consecutive k of rows A_MSTEP
    // apart; B as 4-float chunks, each thread a fixed column chunk, rows B_KSTEP apart.
    static constexpr int A_MSTEP = NT / (BK / 4);
    static constexpr int A_ITERS = ceil_div(BM, A_MSTEP);
    static constexpr int B_CPR = BN / 4;                     // chunks per row of B tile
    static constexpr int B_KSTEP = NT / B_CPR;
    static constexpr int B_ITERS = ceil_div(BK, B_KSTEP);

    static_assert(BM % WM == 0 && BN % WN == 0, "warp tile must divide the block tile");
    static_assert(WM % TM == 0 && WN % TN == 0, "thread tile must divide the warp tile");
    static_assert((WM / TM) * (WN / TN) == 32, "a warp tile must hold exactly 32 microtiles");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "microtiles are built from float4 pieces");
    static_assert(BK % 4 == 0 && NT % (BK / 4) == 0, "threads*4 must be a multiple of BK");
    static_assert(BN % 4 == 0 && NT % (BN / 4) == 0, "threads*4 must be a multiple of BN");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
};

// Four consecutive k of one row of A into a column of As (transposed, LD floats a row):
// four 4-byte cp.async. TESTED: the copy of element j is made only when the row is inside
// the matrix (row_in) and so is its k (k_in(j)); otherwise it reads nothing (src-size 0,
// and its source pointer is the matrix base `A`) and leaves a zero. !TESTED: every element
// is inside.
template <int LD, bool TESTED, class KIn>
__device__ __forceinline__ void cp_async_a4(float* dst, const float* src, const float* A,
                                            bool row_in, KIn k_in) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const bool ok = row_in && k_in(j);
        const float* s = TESTED ? (ok ? src + j : A) : src + j;
        cp_async_4(dst + j * LD, s, ok ? 4 : 0);
    }
}

// Issue the cp.async copies of one K step: A rows [row0, row0+BM) x k [k0, k0+BK) into
// As (transposed), B k [k0, k0+BK) x columns [col0, col0+BN) into Bs. Elements with
// row >= M, k >= kend or column >= N arrive as zeros (src-size 0, and the source pointer
// is then replaced by the matrix base so that no address outside the matrix is formed).
// CHECK_MN = false: the block tile lies inside M x N (most blocks), no row/column tests.
// CHECK_K  = false: the whole K step lies below kend (every step but a partial last one).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, bool ALIGNED,
          bool CHECK_MN, bool CHECK_K>
__device__ __forceinline__ void warptile_load(float* As, float* Bs,
                                              const float* __restrict__ A,
                                              const float* __restrict__ B,
                                              int M, int N, int K, int row0, int col0,
                                              int k0, int kend, int tid) {
    using T = WarpTile<BM, BN, BK, WM, WN, TM, TN, STAGES>;

    // A: this thread copies k0 + ak .. k0 + ak + 3 of rows am, am + A_MSTEP, ... (four
    // 4-byte copies per row: the source offsets are compile-time immediates).
    const int ak = (tid % (BK / 4)) * 4;
    const int am = tid / (BK / 4);
    const float* a_src = A + (size_t)(row0 + am) * K + (k0 + ak);
    float* a_dst = As + ak * T::AS_LD + am;
#pragma unroll
    for (int l = 0; l < T::A_ITERS; ++l) {
        const int m = am + l * T::A_MSTEP;
        if (BM % T::A_MSTEP == 0 || m < BM) {
            cp_async_a4<T::AS_LD, CHECK_MN || CHECK_K>(
                a_dst + l * T::A_MSTEP, a_src + (size_t)l * T::A_MSTEP * K, A,
                !CHECK_MN || row0 + m < M,                                // the row
                [&](int j) { return !CHECK_K || k0 + ak + j < kend; });   // its k
        }
    }

    // B: this thread copies the 4 columns col0 + bn .. +3 of rows bk, bk + B_KSTEP, ...
    const int bn = (tid % T::B_CPR) * 4;
    const int bk = tid / T::B_CPR;
    const int gc = col0 + bn;
    const float* b_src = B + (size_t)(k0 + bk) * N + gc;
    float* b_dst = Bs + bk * T::BS_LD + bn;
#pragma unroll
    for (int l = 0; l < T::B_ITERS; ++l) {
        const int k = bk + l * T::B_KSTEP;
        if (BK % T::B_KSTEP == 0 || k < BK) {
            const bool k_ok = !CHECK_K || k0 + k < kend;
            const float* src = b_src + (size_t)l * T::B_KSTEP * N;
            float* dst = b_dst + l * T::B_KSTEP * T::BS_LD;
            if constexpr (ALIGNED) {
                // N % 4 == 0 and gc % 4 == 0: a chunk is all in (16 bytes) or all out.
                const bool ok = k_ok && (!CHECK_MN || gc < N);
                if (CHECK_MN || CHECK_K) src = ok ? src : B;
                cp_async_16(dst, src, ok ? 16 : 0);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const bool ok = k_ok && (!CHECK_MN || gc + j < N);
                    const float* s = (CHECK_MN || CHECK_K) ? (ok ? src + j : B) : src + j;
                    cp_async_4(dst + j, s, ok ? 4 : 0);
                }
            }
        }
    }
}

// acc += a b^T: TM x TN FFMAs. The outer loop runs over the longer fragment and the inner
// loop alternates direction (serpentine), so consecutive FFMAs share an operand and the
// turn of the inner loop shares one too. Measured on the H200 (4096^3 and 8192^3): with
// 8 x 16 thread tiles this order is 3-4% faster than rows-outer, with 8 x 8 and 12 x 8
// rows-outer is faster (the order changes only which registers ptxas can reuse).
template <int TM, int TN>
__device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float (&a)[TM],
                                              const float (&b)[TN]) {
    constexpr bool BY_COLUMN = TN > TM;           // the outer loop runs over b
    constexpr int OUTER = BY_COLUMN ? TN : TM, INNER = BY_COLUMN ? TM : TN;
#pragma unroll
    for (int o = 0; o < OUTER; ++o)
#pragma unroll
        for (int n = 0; n < INNER; ++n) {
            const int p = (o & 1) ? INNER - 1 - n : n;  // odd rounds run backwards
            const int i = BY_COLUMN ? p : o, j = BY_COLUMN ? o : p;
            acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
}

// acc += A[row0:row0+BM, kbegin:kend] @ B[kbegin:kend, col0:col0+BN] for this thread's
// microtile. smem holds STAGES * WarpTile::STAGE floats.
// EDGE = false: the caller guarantees that the tile lies inside M x N and that kend -
// kbegin is a multiple of BK; the kernel then contains no bounds test at all. EDGE = true:
// `interior` says whether this block's tile lies inside M x N, and copies are tested where
// needed. Two instantiations rather than one kernel with both paths: ptxas allocates
// registers for the whole kernel, and the tested copy path (one pointer and predicate per
// copy) raised the untested path's register use to the limit and slowed it by about a
// tenth (measured on the H200, chapters/notes/01-sgemm.md).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, bool ALIGNED,
          bool EDGE>
__device__ __forceinline__ void warptile_mainloop(const float* __restrict__ A,
                                                  const float* __restrict__ B,
                                                  int M, int N, int K, int row0, int col0,
                                                  int kbegin, int kend, bool interior,
                                                  float* smem, float (&acc)[TM][TN]) {
    using T = WarpTile<BM, BN, BK, WM, WN, TM, TN, STAGES>;
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wm0 = (warp / T::WARPS_N) * WM;          // warp's patch inside the block tile
    const int wn0 = (warp % T::WARPS_N) * WN;
    const int lm = lane / T::LN, ln = lane % T::LN;    // lane's place in the warp's grid
    const int a_off = wm0 + lm * 4;                    // + i*LM*4 for piece i
    const int b_off = wn0 + ln * 4;                    // + j*LN*4 for piece j

    const int ntiles = ceil_div(kend - kbegin, BK);
    const int nfull = (kend - kbegin) / BK;            // steps that need no k test

    // Copy K step s (0 <= s < ntiles) into stage `stage`. EDGE = false: every copy is
    // inside the matrices; this thread's source pointers are formed once and a K step
    // adds s*BK (A) or s*BK*N (B) to them. EDGE = true: without tests inside the matrix,
    // with every test at an edge or in a partial last K step.
    static_assert(EDGE || ALIGNED, "the untested kernel copies B in 16-byte chunks");
    const int ak = (tid % (BK / 4)) * 4, am = tid / (BK / 4);
    const int bc = (tid % T::B_CPR) * 4, bk = tid / T::B_CPR;
    const float* a_src = A + (size_t)(row0 + am) * K + (kbegin + ak);
    const float* b_src = B + (size_t)(kbegin + bk) * N + (col0 + bc);
    const int a_dst = ak * T::AS_LD + am;
    const int b_dst = T::A_STAGE + bk * T::BS_LD + bc;
    auto load = [&](int s, int stage) {
        float* st = smem + stage * T::STAGE;
        if constexpr (!EDGE) {
            const float* as = a_src + s * BK;
#pragma unroll
            for (int l = 0; l < T::A_ITERS; ++l)
                if (BM % T::A_MSTEP == 0 || am + l * T::A_MSTEP < BM)
                    cp_async_a4<T::AS_LD, false>(st + a_dst + l * T::A_MSTEP,
                                                 as + (size_t)l * T::A_MSTEP * K, A, true,
                                                 [](int) { return true; });
            const float* bs = b_src + (size_t)s * BK * N;
#pragma unroll
            for (int l = 0; l < T::B_ITERS; ++l)
                if (BK % T::B_KSTEP == 0 || bk + l * T::B_KSTEP < BK)
                    cp_async_16(st + b_dst + l * T::B_KSTEP * T::BS_LD,
                                bs + (size_t)l * T::B_KSTEP * N, 16);
        } else {
            float* as = st;
            float* bs = st + T::A_STAGE;
            if (interior && s < nfull)
                warptile_load<BM, BN, BK, WM, WN, TM, TN, STAGES, ALIGNED, false, false>(
                    as, bs, A, B, M, N, K, row0, col0, kbegin + s * BK, kend, tid);
            else
                warptile_load<BM, BN, BK, WM, WN, TM, TN, STAGES, ALIGNED, true, true>(
                    as, bs, A, B, M, N, K, row0, col0, kbegin + s * BK, kend, tid);
        }
    };

    // The fragments of one k: TM values of A, TN of B, float4 by float4 (06_warptiling.cu,
    // point 5).
    float a[2][TM], b[2][TN];
    auto fragments = [&](int buf, const float* st, int k) {
        const float* As = st;
        const float* Bs = st + T::A_STAGE;
#pragma unroll
        for (int i = 0; i < TM / 4; ++i)
            *reinterpret_cast<float4*>(&a[buf][i * 4]) = *reinterpret_cast<const float4*>(
                &As[k * T::AS_LD + a_off + i * T::LM * 4]);
#pragma unroll
        for (int j = 0; j < TN / 4; ++j)
            *reinterpret_cast<float4*>(&b[buf][j * 4]) = *reinterpret_cast<const float4*>(
                &Bs[k * T::BS_LD + b_off + j * T::LN * 4]);
    };

    // Prologue: put STAGES-1 tiles in flight. Always commit, even an empty group, so that
    // "group t" is tile t and wait_group<STAGES-2> below means "tile t+1 has landed".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ntiles) load(s, s);
        cp_async_commit();
    }
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    fragments(0, smem, 0);

    int read_stage = 0;                 // stage holding tile t
    int write_stage = STAGES - 1;       // stage that receives tile t + STAGES - 1
    for (int t = 0; t < ntiles; ++t) {
        // The stage refilled here held tile t-1: every warp passed the barrier at the end
        // of tile t-1 after its last fragment read from it.
        const int tn = t + STAGES - 1;
        if (tn < ntiles) load(tn, write_stage);
        cp_async_commit();

        const float* st = smem + read_stage * T::STAGE;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            // Fragments of k+1 are read while the FFMAs of k run (registers a/b[(k+1)&1]).
            // At the last k that means the first k of the next tile: wait for it, and one
            // barrier per tile both publishes it and frees the stage of tile t.
            if (k == BK - 1) {
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                read_stage = (read_stage + 1 == STAGES) ? 0 : read_stage + 1;
                write_stage = (write_stage + 1 == STAGES) ? 0 : write_stage + 1;
                fragments((k + 1) & 1, smem + read_stage * T::STAGE, 0);
            } else {
                fragments((k + 1) & 1, st, k + 1);
            }
            outer_product<TM, TN>(acc, a[k & 1], b[k & 1]);
        }
    }
    cp_async_wait<0>();                 // only empty groups remain; leave nothing in flight
}

// Store this thread's microtile into C (ld = N) at block origin (row0, col0).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, bool ALIGNED>
__device__ __forceinline__ void warptile_store(float* __restrict__ C, int M, int N,
                                               int row0, int col0,
                                               const float (&acc)[TM][TN]) {
    using T = WarpTile<BM, BN, BK, WM, WN, TM, TN, STAGES>;
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int r_base = row0 + (warp / T::WARPS_N) * WM + (lane / T::LN) * 4;
    const int c_base = col0 + (warp % T::WARPS_N) * WN + (lane % T::LN) * 4;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = r_base + (i / 4) * T::LM * 4 + (i % 4);
        if (r >= M) continue;
        float* crow = C + (size_t)r * N;
#pragma unroll
        for (int j4 = 0; j4 < TN / 4; ++j4) {
            const int c = c_base + j4 * T::LN * 4;
            if constexpr (ALIGNED) {
                // N % 4 == 0 and c % 4 == 0: c < N implies c + 3 < N.
                if (c < N)
                    *reinterpret_cast<float4*>(crow + c) =
                        make_float4(acc[i][j4 * 4 + 0], acc[i][j4 * 4 + 1],
                                    acc[i][j4 * 4 + 2], acc[i][j4 * 4 + 3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (c + j < N) crow[c + j] = acc[i][j4 * 4 + j];
            }
        }
    }
}

// Registers: __launch_bounds__(NT, 2) for NT <= 256 caps a thread at 65536 / (2 * NT)
// registers (128 at 256 threads) so that two blocks share an SM. A thread tile of more
// than 64 accumulators (8 x 16: the 128 x 256 / 256 x 128 "large tile" shapes) cannot
// live in 128 registers: those shapes ask for one block per SM (up to 255 registers).
#define WARPTILE_MIN_BLOCKS(BM, BN, WM, WN, TM, TN) \
    (((BM) / (WM)) * ((BN) / (WN)) * 32 <= 256 && (TM) * (TN) <= 64 ? 2 : 1)
