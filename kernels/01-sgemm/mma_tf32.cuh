// Shared pieces of the mma.sync tensor-core rungs (08 TF32, 09 3xTF32, 11 TF32 split-K) of
// the SGEMM ladder.
//
// What lives here, and why it is shared: the inline-PTX wrappers (cp.async with a
// predicate, cvt.rna.tf32, mma.sync m16n8k8; the rest is the lab's, common/ptx.cuh), the
// operand pre-passes (rounding, and for rung 08 the rounding transpose of B), the
// shared-memory layouts with their XOR swizzles, the global->shared panel loaders with
// zero-fill at the edges, the thread-block rasterisation, a block's share of the work
// (Block: its stages, its warp, its output tile, its k-tiles), the pipeline's prologue, and
// the epilogue. Rung 08 reads B transposed (both operands k-contiguous, both fragments
// through ldmatrix); rungs 09 and 11 read B as it comes, K x N, with one LDS.32 per
// fragment value; otherwise the kernels differ only in their inner step.
//
// Everything here is plain CUDA C++17 compiled by NVRTC: no host code, no CUDA headers.
//
// ---------------------------------------------------------------------------------------
// The m16n8k8 TF32 fragments (PTX ISA, "Matrix fragments for mma.m16n8k8", .tf32).
// A lane is split as   g = lane / 4   (the "groupID")   and   t = lane % 4.
//   A (16x8, row):  a0 = A[g][t]     a1 = A[g+8][t]     a2 = A[g][t+4]     a3 = A[g+8][t+4]
//   B (8x8,  col):  b0 = B[t][g]     b1 = B[t+4][g]                       (B is K x N)
//   C (16x8):       c0 = C[g][2t]    c1 = C[g][2t+1]    c2 = C[g+8][2t]    c3 = C[g+8][2t+1]
// ---------------------------------------------------------------------------------------
#pragma once

#include "common/ptx.cuh"

namespace tc {

// ---- PTX wrappers ----------------------------------------------------------------------
// The lab's (common/ptx.cuh): a generic pointer's shared address, cp.async's commit and
// wait, ldmatrix. Here, the cp.async forms that take a predicate, and the TF32 ones.
using ptx::cp_async_commit;
using ptx::cp_async_wait;     // wait until at most N committed groups are still in flight
using ptx::smem_u32;

// 16-byte asynchronous copy global -> shared, bypassing L1 (.cg). When `pred` is false
// the source size is 0: nothing is read and the 16 shared bytes are zero-filled, which
// is how every out-of-range element of a tile becomes a harmless 0 in the dot products.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, bool pred) {
    ptx::cp_async_cg16(dst, src, pred ? 16 : 0);
}

// 4-byte form for the unaligned path (rows of A or B that do not start on 16 bytes).
// Only .ca exists for 4-byte copies.
__device__ __forceinline__ void cp_async4(unsigned dst, const void* src, bool pred) {
    ptx::cp_async_ca4(dst, src, pred ? 4 : 0);
}

// ldmatrix reads four 8x8 matrices of 16-bit values; lanes 8i..8i+7 give the row
// addresses of matrix i and lane l receives, of each matrix, row l/4, 16-bit columns
// 2(l%4), 2(l%4)+1. Seen as 32-bit values, an 8x8 b16 matrix is an 8x4 fp32 block and
// lane l gets element (l/4, l%4): exactly the (g, t) pattern of the TF32 A fragment.
// One instruction therefore loads a whole 16x8 A fragment (a0..a3).
using ptx::ldmatrix_x4;

// Round an fp32 value to TF32 (10-bit mantissa), to nearest, ties away from zero. Without
// it the tensor core simply ignores the 13 low mantissa bits (truncation), which biases
// every product towards zero.
__device__ __forceinline__ unsigned to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// 3xTF32 split: x = big + small + O(2^-22 |x|). big is x rounded to TF32; small is the
// rounding error, itself rounded to TF32 (the subtraction is exact in fp32).
__device__ __forceinline__ void split_tf32(float x, unsigned& big, unsigned& small) {
    big = to_tf32(x);
    small = to_tf32(x - __uint_as_float(big));
}

// 3xTF32 split of a value x' that the pre-pass left as big + small (22 significant bits,
// see round_3xtf32 in 09_3xtf32.cu): big = x' rounded to TF32 (nearest, ties away: add
// half a TF32 ulp to the magnitude bits, clear the 13 low bits) and small = x' - big,
// exact in fp32 and already a TF32 value. 3 instructions (IADD, LOP3, FADD) instead of the
// 2 x (cvt + test) + FADD of split_tf32. No Inf/NaN test is needed: where x' is +-Inf or
// NaN (the pre-pass lets them through and raises its flag), small = x' - big is NaN, and
// the element it reaches is computed again by rung 09's fp32 pass.
__device__ __forceinline__ void split_pre(float x, unsigned& big, unsigned& small) {
    big = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    small = __float_as_uint(x - __uint_as_float(big));
}

// D = A * B + D on one 16x8x8 TF32 tile, fp32 accumulate.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4],
                                         unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- The tile configuration ------------------------------------------------------------

template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_>
struct Tiles {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
    static constexpr int STAGES = STAGES_;
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int MT = WM / 16;          // m16 tiles per warp
    static constexpr int NT = WN / 8;           // n8 tiles per warp
    static constexpr int A_STAGE = BM * BK;     // floats per stage
    static constexpr int B_STAGE = BK * BN;
    static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * 4;

    static_assert(BM % WM == 0 && BN % WN == 0, "warp tile must divide the block tile");
    static_assert(WM % 16 == 0 && WN % 32 == 0, "WM a multiple of 16, WN of 32");
    static_assert(BK == 16 || BK == 32, "BK is 16 or 32");
    static_assert(STAGES >= 2, "at least double buffering");
};

// ---- Shared-memory layouts -------------------------------------------------------------
//
// A stage: BM rows x BK floats, row-major, 16-byte chunks permuted within each row.
//   With BK = 32 a row is 128 B, i.e. all 32 banks, so the 8 rows an ldmatrix phase reads
//   at the same logical column would all hit the same 4 banks (8-way conflict). XOR-ing
//   the chunk index with (row % 8) spreads them over the 8 chunk positions: conflict-free.
//   With BK = 16 a row is 64 B and two rows share the 32 banks; XOR with (row/2) % 4 does
//   the same job.
template <int BK>
__device__ __forceinline__ int a_swz(int row) {
    return BK == 32 ? (row & 7) : ((row >> 1) & 3);
}

// Byte offset of 16-byte chunk `chunk` of row `row` in such a stage (KPanel's layout; also
// rung 08's B^T stage, BN rows of BK).
template <int BK>
__device__ __forceinline__ unsigned kpanel_off(int row, int chunk) {
    return (row * BK + ((chunk ^ a_swz<BK>(row)) * 4)) * 4;
}

// B stage: BK rows x BN floats, row-major (as in global memory), chunks permuted.
//   The B fragment is b0 = B[t][g], b1 = B[t+4][g]: one LDS.32 per register, a warp
//   reading 4 k-rows x 8 consecutive columns. In a plain row-major tile the 4 rows
//   (BN*4 bytes apart, a multiple of 128) land on the same 8 banks: a 4-way conflict.
//   The 8 columns of an n8-tile are 2 chunks; XOR-ing the chunk index with 2*(k % 4)
//   sends the 4 rows to 4 different chunk pairs: all 32 banks, conflict-free.
//   Why LDS.32 and not LDS.128: mma.sync takes b0, b1 in two *adjacent* registers, and
//   b0, b1 come from two different k-rows. A 128-bit load of a row fills four adjacent
//   registers with four columns of one row, so every pair would need two register moves
//   (the compiler emits ~1.4 moves per MMA). Two LDS.32 per n8-tile write the pair
//   directly; shared-memory wavefronts are the same (a 128-bit warp load is 4 of them).
__device__ __forceinline__ int b_swz(int k) { return (k & 3) << 1; }

// ---- Global -> shared tile loaders -----------------------------------------------------
// Each thread copies fixed 16-byte chunks of every stage: the chunk column is fixed per
// thread and its rows step by ROWS_PER_PASS, so per k-tile only one pointer moves and the
// row/column guards are computed once, as bit masks; only the k guard changes from tile
// to tile. Two panel shapes:
//   KPanel: ROWS rows of a row-major matrix whose rows run along k (A: M x K; for rung 08
//           also B transposed, N x K); a stage is ROWS x BK, swizzled by a_swz.
//   NPanel: BK rows (k) of a row-major K x N matrix, COLS columns (B); swizzled by b_swz.
// ALIGNED (K % 4 == 0 and N % 4 == 0, 16-byte-aligned bases): one cp.async.cg of 16 B per
//   chunk; a chunk is then either wholly inside the matrix or wholly outside it.
// !ALIGNED: the same chunks as four 4-byte cp.async.ca, each element guarded on its own.
// A chunk outside the matrix reads nothing (src-size 0) and is zero-filled; the address
// handed to cp.async is then the matrix base anyway, never an out-of-range one.
// A whole k-tile inside the matrix takes a path with no tests at all; the others test
// every chunk. EDGE = false: the caller guarantees every k-tile of every block is inside
// (M, N, K multiples of the tile, ALIGNED), and the tested path is not compiled in: it
// would otherwise claim registers for the whole kernel.
template <int ROWS, int BK, int THREADS, bool ALIGNED, bool EDGE>
struct KPanel {
    static constexpr int CPR = BK / 4;                     // 16-byte chunks per row
    static constexpr int ROWS_PER_PASS = THREADS / CPR;
    static constexpr int PASSES = ROWS / ROWS_PER_PASS;
    static_assert(THREADS % CPR == 0 && ROWS % ROWS_PER_PASS == 0, "k-panel tile loads");
    static_assert(PASSES <= 32, "the loader keeps one row-guard bit per pass");

    const float* X;
    const float* ptr;       // this thread's pass-0 chunk in the next k-tile
    size_t pass;            // floats between passes: ROWS_PER_PASS rows
    int K, k, k_next;       // k of the pass-0 chunk; first k of the next k-tile
    unsigned rows_ok;       // bit p: the row of pass p is inside the matrix
    unsigned dst;           // shared offset (bytes) of the pass-0 chunk in stage 0
    bool interior;          // all ROWS rows of the block are inside

    __device__ __forceinline__ KPanel(const float* X_, int R, int K_, int row0, int kt0,
                                      int tid, unsigned smem)
        : X(X_), K(K_) {
        const int r = tid / CPR, c = tid % CPR;
        const int row = row0 + r;
        k = kt0 * BK + c * 4;
        k_next = kt0 * BK;
        pass = (size_t)ROWS_PER_PASS * K;
        ptr = X + (size_t)row * K + k;
        rows_ok = 0;
#pragma unroll
        for (int p = 0; p < PASSES; ++p)
            rows_ok |= (row + p * ROWS_PER_PASS < R ? 1u : 0u) << p;
        dst = smem + kpanel_off<BK>(r, c);
        interior = row0 + ROWS <= R;
    }

    // Shared offset of pass p relative to pass 0. The swizzle depends on row % 8 only:
    // when ROWS_PER_PASS is a multiple of 8 (every block of 128 threads or more) the
    // chunk position repeats and the offset is a constant; small blocks recompute it.
    __device__ __forceinline__ unsigned pass_dst(int p) const {
        if (ROWS_PER_PASS % 8 == 0) return p * ROWS_PER_PASS * BK * 4;
        const int tid = threadIdx.x, r0 = tid / CPR, c = tid % CPR;
        const int r = r0 + p * ROWS_PER_PASS;
        return kpanel_off<BK>(r, c) - kpanel_off<BK>(r0, c);
    }

    // Copy the next k-tile into the stage at byte offset `stage_off`, then step to the
    // following k-tile.
    __device__ __forceinline__ void load(unsigned stage_off) {
        const unsigned d = dst + stage_off;
        if (!EDGE || (ALIGNED && interior && k_next + BK <= K)) {
            const float* src = ptr;
#pragma unroll
            for (int p = 0; p < PASSES; ++p, src += pass) cp_async16(d + pass_dst(p), src, true);
        } else {
            // An opaque copy of the row mask: without it the compiler hoists one predicate
            // per pass out of the k loop, and with 8 passes that costs ~40 registers.
            unsigned ok_rows = rows_ok;
            asm volatile("" : "+r"(ok_rows));
            // The pass pointers are a running sum (one 64-bit add per pass) rather than
            // ptr + p * pass: hoisting p * pass for every pass would cost 2 registers each.
            const float* src = ptr;
#pragma unroll
            for (int p = 0; p < PASSES; ++p, src += pass) {
                const unsigned to = d + pass_dst(p);
                const bool row_ok = (ok_rows >> p) & 1u;
                if (ALIGNED) {
                    const bool ok = row_ok && k < K;
                    cp_async16(to, ok ? src : X, ok);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const bool ok = row_ok && k + e < K;
                        cp_async4(to + 4 * e, ok ? src + e : X, ok);
                    }
                }
            }
        }
        ptr += BK;
        k += BK;
        k_next += BK;
    }
};

template <int BK, int COLS, int THREADS, bool ALIGNED, bool EDGE>
struct NPanel {
    static constexpr int CPR = COLS / 4;                   // 16-byte chunks per k-row
    static constexpr int ROWS_PER_PASS = THREADS / CPR;
    static constexpr int PASSES = BK / ROWS_PER_PASS;
    static_assert(THREADS % CPR == 0 && BK % ROWS_PER_PASS == 0, "n-panel tile loads");

    const float* X;
    const float* ptr;       // this thread's pass-0 chunk in the next k-tile
    size_t pass;            // floats between passes: ROWS_PER_PASS k-rows
    int N, K, k, k_next;    // k-row of the pass-0 chunk; first k of the next k-tile
    unsigned cols_ok;       // bit e: column col + e is < N
    unsigned dst;           // shared offset (bytes) of the pass-0 chunk in stage 0
    bool interior;          // all COLS columns of the block are inside

    __device__ __forceinline__ NPanel(const float* X_, int N_, int K_, int col0, int kt0,
                                      int tid, unsigned smem)
        : X(X_), N(N_), K(K_) {
        const int r = tid / CPR, c = tid % CPR;
        const int col = col0 + c * 4;
        k = kt0 * BK + r;
        k_next = kt0 * BK;
        pass = (size_t)ROWS_PER_PASS * N;
        ptr = X + (size_t)k * N + col;
        cols_ok = 0;
#pragma unroll
        for (int e = 0; e < 4; ++e) cols_ok |= (col + e < N ? 1u : 0u) << e;
        dst = smem + (r * COLS + ((c ^ b_swz(r)) * 4)) * 4;
        interior = col0 + COLS <= N;
    }

    // As KPanel::pass_dst, with the period of b_swz (k % 4).
    __device__ __forceinline__ unsigned pass_dst(int p) const {
        if (ROWS_PER_PASS % 4 == 0) return p * ROWS_PER_PASS * COLS * 4;
        const int tid = threadIdx.x, r0 = tid / CPR, c = tid % CPR;
        const int r = r0 + p * ROWS_PER_PASS;
        return (r * COLS + ((c ^ b_swz(r)) * 4)) * 4 - (r0 * COLS + ((c ^ b_swz(r0)) * 4)) * 4;
    }

    __device__ __forceinline__ void load(unsigned stage_off) {
        const unsigned d = dst + stage_off;
        const float* src = ptr;
        if (!EDGE || (ALIGNED && interior && k_next + BK <= K)) {
#pragma unroll
            for (int p = 0; p < PASSES; ++p, src += pass) cp_async16(d + pass_dst(p), src, true);
        } else {
#pragma unroll
            for (int p = 0; p < PASSES; ++p, src += pass) {
                const unsigned to = d + pass_dst(p);
                const bool k_ok = k + p * ROWS_PER_PASS < K;
                if (ALIGNED) {
                    const bool ok = k_ok && (cols_ok & 1u);
                    cp_async16(to, ok ? src : X, ok);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const bool ok = k_ok && ((cols_ok >> e) & 1u);
                        cp_async4(to + 4 * e, ok ? src + e : X, ok);
                    }
                }
            }
        }
        ptr += (size_t)BK * N;
        k += BK;
        k_next += BK;
    }
};

// Both operands of one block tile, as rungs 09 and 11 read them: A (M x K) as a k-panel,
// B (K x N) as an n-panel. The A stages come first in shared memory, then the B stages.
template <class T, bool ALIGNED, bool EDGE = true>
struct Loader {
    KPanel<T::BM, T::BK, T::THREADS, ALIGNED, EDGE> a;
    NPanel<T::BK, T::BN, T::THREADS, ALIGNED, EDGE> b;

    __device__ __forceinline__ Loader(const float* A, const float* B, int M, int N, int K,
                                      int tm, int tn, int kt0, int tid, unsigned As, unsigned Bs)
        : a(A, M, K, tm * T::BM, kt0, tid, As), b(B, N, K, tn * T::BN, kt0, tid, Bs) {}

    __device__ __forceinline__ void load(int stage) {
        a.load(stage * (T::A_STAGE * 4));
        b.load(stage * (T::B_STAGE * 4));
    }
};

// ---- Fragment addressing ---------------------------------------------------------------
// Per-lane shared byte offsets, computed once: fragment loads in the main loop are then a
// per-lane register plus a compile-time displacement (k step, m-tile, t/t+4 row).

// B_KPANEL = false (rung 09): B is a K x N n-panel, read with LDS.32 (b_off below).
// B_KPANEL = true (rung 08): B arrives transposed (N x K) in a k-panel and is read with
//   ldmatrix like A: an 8 x 4 block of B^T rows n0..n0+7, k 4c..4c+3 gives lane (g, t)
//   B^T[g][t] = B[t][g], exactly b0 (c even) or b1 (c odd) of one n8-tile.
template <class T, bool B_KPANEL = false>
struct FragAddr {
    unsigned a[T::BK / 8];                   // ldmatrix row address of m-tile 0, per k8 step
    unsigned b[B_KPANEL ? T::BK / 8 : 4];    // see below

    __device__ __forceinline__ FragAddr(int warp_m, int warp_n, int lane) {
        // ldmatrix: lanes 0-7 -> rows 0-7 / k 0-3 (a0), 8-15 -> rows 8-15 / k 0-3 (a1),
        // 16-23 -> rows 0-7 / k 4-7 (a2), 24-31 -> rows 8-15 / k 4-7 (a3).
        const int row = warp_m * T::WM + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
        for (int ks = 0; ks < T::BK / 8; ++ks) a[ks] = kpanel_off<T::BK>(row, ks * 2 + (lane >> 4));
        if constexpr (B_KPANEL) {
            // ldmatrix of n8-tiles 2p, 2p+1: lanes 0-7 -> n 0-7 / k 0-3 (b0 of 2p), 8-15 ->
            // n 0-7 / k 4-7 (b1 of 2p), 16-23 and 24-31 the same for n 8-15 (tile 2p+1):
            // the two registers of each pair land adjacent, as mma.sync takes them.
            const int n = warp_n * T::WN + (lane & 7) + (lane >> 4) * 8;
#pragma unroll
            for (int ks = 0; ks < T::BK / 8; ++ks)
                b[ks] = kpanel_off<T::BK>(n, ks * 2 + ((lane >> 3) & 1));
        } else {
            // B: n8-tile j of the warp covers chunks c0 + 2j, c0 + 2j + 1 (c0 = warp_n*WN/4);
            // lane g reads chunk c0 + 2j + g/4, word g % 4, of k-row t. The XOR with 2t only
            // touches chunk bits 1-2, i.e. j % 4: j = 4q + r reads physical chunk
            // c0 + 8q + (2(r ^ t) + g/4). Four per-lane offsets (r = 0..3) cover every j,
            // k step (+8 rows) and t+4 row (+4 rows, same t % 4) with immediates.
            const int g = lane >> 2, t = lane & 3;
            const int c0 = warp_n * (T::WN / 4);
#pragma unroll
            for (int r = 0; r < 4; ++r)
                b[r] = (t * T::BN + (c0 + 2 * (r ^ t) + (g >> 2)) * 4 + (g & 3)) * 4;
        }
    }
};

// Byte offset of B fragment value b_h (h = 0: k-row t, h = 1: k-row t+4) of n8-tile j in
// k step ks, from the stage base.
template <class T>
__device__ __forceinline__ unsigned b_off(const FragAddr<T>& fa, int ks, int h, int j) {
    return fa.b[j & 3] + ((ks * 8 + 4 * h) * T::BN + (j >> 2) * 32) * 4;
}

// ---- Epilogue --------------------------------------------------------------------------
// acc[mt][j] holds, for lane (g, t), C[g][2t], C[g][2t+1] (c0, c1) and the same two
// columns of row g+8 (c2, c3) of the 16x8 tile (mt, j). A warp's store instruction thus
// writes 8 rows x 32 contiguous bytes: whole 32-byte sectors. float2 stores when N is
// even (the aligned path has N % 4 == 0), guarded scalar stores otherwise.
template <class T, bool ALIGNED>
__device__ __forceinline__ void store_tile(float* C, int M, int N, int row0, int col0,
                                           const float (&acc)[T::MT][T::NT][4], int lane) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + mt * 16 + g + 8 * h;
            if (row >= M) continue;
            float* out = C + (size_t)row * N;
#pragma unroll
            for (int j = 0; j < T::NT; ++j) {
                const int col = col0 + j * 8 + 2 * t;
                if (ALIGNED) {
                    if (col < N)   // N even: the float2 is all in or all out
                        *reinterpret_cast<float2*>(out + col) =
                            make_float2(acc[mt][j][2 * h], acc[mt][j][2 * h + 1]);
                } else {
                    if (col < N) out[col] = acc[mt][j][2 * h];
                    if (col + 1 < N) out[col + 1] = acc[mt][j][2 * h + 1];
                }
            }
        }
}

// The K range of split `z` of `splits`, in k-tiles. A split may be empty (then its
// partial sums are zeros, still written).
__device__ __forceinline__ void k_range(int K, int BK, int& kt0, int& nkt) {
    const int KT = (K + BK - 1) / BK;
    const int per = (KT + gridDim.z - 1) / gridDim.z;
    kt0 = blockIdx.z * per;
    nkt = max(0, min(KT, kt0 + per) - kt0);
}

// ---- Thread-block rasterisation --------------------------------------------------------
// Blocks are numbered along a 1-D grid and walked in groups of GROUP_M block-rows,
// column by column inside a group: the ~132 blocks resident at once then share a few
// A row-panels and B column-panels, which stay in the 50 MB L2, instead of streaming
// all of B per block-row. Predicted effect: DRAM traffic down ~1.6x at 8192^3.
template <int GROUP_M>
__device__ __forceinline__ void block_tile(int tiles_m, int tiles_n, int& tm, int& tn) {
    const int bid = blockIdx.x;
    const int per_group = GROUP_M * tiles_n;
    const int group = bid / per_group;
    const int first_m = group * GROUP_M;
    const int rows = min(tiles_m - first_m, GROUP_M);
    const int in_group = bid - group * per_group;
    tm = first_m + in_group % rows;
    tn = in_group / rows;
}

// ---- A block's share of the work, and the start of its k-tile loop ---------------------
// Where a block works: the shared offsets of stage 0 of A and of B, its warp's place in
// the block tile, its output tile (block_tile, in groups of 8 block-rows) and its k-tiles
// (under split-K, the range of blockIdx.z).
template <class T>
struct Block {
    unsigned As, Bs;
    int tid, lane, warp_m, warp_n;
    int tm, tn;         // the output tile
    int kt0, nkt;       // the first k-tile, and how many

    __device__ __forceinline__ Block(const unsigned char* smem, int M, int N, int K) {
        As = smem_u32(smem);
        Bs = As + T::STAGES * T::A_STAGE * 4;
        tid = threadIdx.x;
        lane = tid & 31;
        const int warp = tid >> 5;
        warp_m = warp / T::WARPS_N;
        warp_n = warp % T::WARPS_N;
        block_tile<8>((M + T::BM - 1) / T::BM, (N + T::BN - 1) / T::BN, tm, tn);
        k_range(K, T::BK, kt0, nkt);
    }

    // The first row and column of C that this warp's tile covers.
    __device__ __forceinline__ int row0() const { return tm * T::BM + warp_m * T::WM; }
    __device__ __forceinline__ int col0() const { return tn * T::BN + warp_n * T::WN; }
};

// Fill STAGES-1 stages: load(s) issues the copies of k-tile s into stage s. Every step
// commits a group, even an empty one, so that wait_group<STAGES-2> always means "the next
// k-tile to be used is here".
template <int STAGES, class Load>
__device__ __forceinline__ void prologue(int nkt, Load&& load) {
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nkt) load(s);
        cp_async_commit();
    }
}

// The frame of rungs 09 and 11, which read B as it comes (K x N, one LDS.32 per fragment
// value) and differ only in their inner step: the block's stages and output tile, the
// loader, the fragment addresses, the accumulators, the k-tile pipeline, and the store of
// the tile into this split's slice of C (blockIdx.z). For each k-tile t: wait for its
// copies, one barrier (it publishes tile t to every warp and proves every warp is done with
// tile t-1, whose stage is refilled next), the refill, then step(acc, fa, a_base, b_base,
// ks) for each k8 step: a_base is tile t's A stage (a shared-space address for ldmatrix),
// b_base its B stage as a generic pointer.
// The A fragments of k8 step ks for the warp's MT m-tiles, as fp32 bits (ldmatrix).
template <class T>
__device__ __forceinline__ void load_a(unsigned (&a)[T::MT][4], const FragAddr<T>& fa,
                                       unsigned a_base, int ks) {
#pragma unroll
    for (int mt = 0; mt < T::MT; ++mt) ldmatrix_x4(a[mt], a_base + fa.a[ks] + mt * 16 * T::BK * 4);
}

template <class T, bool ALIGNED, class Step>
__device__ __forceinline__ void gemm_kn(const float* __restrict__ A,
                                        const float* __restrict__ B, float* __restrict__ C,
                                        int M, int N, int K, Step&& step) {
    extern __shared__ __align__(128) unsigned char smem[];
    const Block<T> blk(smem, M, N, K);
    const char* Bs_ptr = reinterpret_cast<const char*>(smem) + T::STAGES * T::A_STAGE * 4;
    C += (size_t)blockIdx.z * M * N;

    Loader<T, ALIGNED> loader(A, B, M, N, K, blk.tm, blk.tn, blk.kt0, blk.tid, blk.As, blk.Bs);
    const FragAddr<T> fa(blk.warp_m, blk.warp_n, blk.lane);

    float acc[T::MT][T::NT][4] = {};

    prologue<T::STAGES>(blk.nkt, [&](int s) { loader.load(s); });

    int read = 0, write = T::STAGES - 1;
    for (int t = 0; t < blk.nkt; ++t) {
        cp_async_wait<T::STAGES - 2>();
        __syncthreads();
        if (t + T::STAGES - 1 < blk.nkt) loader.load(write);
        cp_async_commit();

        const unsigned a_base = blk.As + read * (T::A_STAGE * 4);
        const char* b_base = Bs_ptr + read * (T::B_STAGE * 4);
#pragma unroll
        for (int ks = 0; ks < T::BK / 8; ++ks) step(acc, fa, a_base, b_base, ks);
        read = (read + 1 == T::STAGES) ? 0 : read + 1;
        write = (write + 1 == T::STAGES) ? 0 : write + 1;
    }
    cp_async_wait<0>();   // no copy may outlive the block (empty groups only, by now)

    store_tile<T, ALIGNED>(C, M, N, blk.row0(), blk.col0(), acc, blk.lane);
}

}  // namespace tc

// Operand pre-pass of rung 08: Y[i] = tf32(X[i]). Run on A (and, transposed, on B: the
// kernel below) into scratch arrays before the GEMM, it takes the conversion out of the
// main loop, where every value is converted once per fragment load of every warp that
// reads it (4x for A, 2x for B with 2 x 4 warps of 64 x 64), at the cost of one read and
// one write of each operand: ~1 GB, ~0.25 ms at 8192^3 against a ~5-7 ms GEMM. float4 when both pointers
// are 16-byte aligned; a scalar loop does the rest (and everything otherwise).
__device__ __forceinline__ float round_operand(float x) {
    return __uint_as_float(tc::to_tf32(x));
}

extern "C" __global__ void __launch_bounds__(256)
round_tf32(const float* __restrict__ X, float* __restrict__ Y, long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long done = 0;
    if (((reinterpret_cast<unsigned long long>(X) | reinterpret_cast<unsigned long long>(Y)) &
         15) == 0) {
        const long long n4 = n / 4;
        for (long long i = first; i < n4; i += stride) {
            float4 v = reinterpret_cast<const float4*>(X)[i];
            v.x = round_operand(v.x);
            v.y = round_operand(v.y);
            v.z = round_operand(v.z);
            v.w = round_operand(v.w);
            reinterpret_cast<float4*>(Y)[i] = v;
        }
        done = n4 * 4;
    }
    for (long long i = done + first; i < n; i += stride) Y[i] = round_operand(X[i]);
}

// Rung 08's pre-pass for B: Y = tf32(X) transposed, X an R x Cn row-major matrix (B, K x N)
// and Y Cn x R (B^T, N x K), so that B reaches the GEMM with k contiguous, as A does, and
// both fragments come from ldmatrix. A 32 x 32 tile passes through shared memory (33
// columns: the column reads are conflict-free); a warp reads and writes whole 128-byte
// rows. The traffic is round_tf32's: one read and one write of B. Grid: ceil(Cn/32) x
// ceil(R/32) blocks of 256 threads (R < 2^21: the grid's y limit).
extern "C" __global__ void __launch_bounds__(256)
round_tf32_transpose(const float* __restrict__ X, float* __restrict__ Y, int R, int Cn) {
    __shared__ float tile[32][33];
    const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
#pragma unroll
    for (int i = ty; i < 32; i += 8) {
        const int r = r0 + i, c = c0 + tx;
        if (r < R && c < Cn) tile[i][tx] = round_operand(X[(size_t)r * Cn + c]);
    }
    __syncthreads();
#pragma unroll
    for (int i = ty; i < 32; i += 8) {
        const int c = c0 + i, r = r0 + tx;
        if (c < Cn && r < R) Y[(size_t)c * R + r] = tile[tx][i];
    }
}

// Split-K reduction: C[i] = sum over s of W[s][i], W holding `splits` partial products of
// size MN. Run once after a split-K launch; memory-bound and short (splits*MN*4 bytes).
template <bool VEC4>
__global__ void __launch_bounds__(256)
splitk_reduce(const float* __restrict__ W, float* __restrict__ C, long long MN, int splits) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    if (VEC4) {
        const long long n4 = MN / 4;
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
            float4 s = reinterpret_cast<const float4*>(W)[i];
            for (int z = 1; z < splits; ++z) {
                const float4 q = reinterpret_cast<const float4*>(W + z * MN)[i];
                s.x += q.x; s.y += q.y; s.z += q.z; s.w += q.w;
            }
            reinterpret_cast<float4*>(C)[i] = s;
        }
    } else {
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < MN; i += stride) {
            float s = W[i];
            for (int z = 1; z < splits; ++z) s += W[z * MN + i];
            C[i] = s;
        }
    }
}
