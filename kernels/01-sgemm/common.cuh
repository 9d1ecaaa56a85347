// What the rungs of the SGEMM ladder share: ceil_div, the dot product of rungs 01 and 02,
// the tile copies and the register outer product of rungs 04 and 05, the grouped block
// order of rungs 06, 07, 10 and 12, and thin wrappers around the asynchronous
// global->shared copy instructions of sm_80+ (cp.async) for the FP32 rungs.
#pragma once

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// ---- Rungs 01 and 02: one thread, one element of C -------------------------------------
// C[row][col] = sum_k A[row][k] * B[k][col], straight from global memory. The two rungs run
// this same loop; what they change is which thread gets which (row, col).
__device__ __forceinline__ void dot_element(const float* __restrict__ A,
                                            const float* __restrict__ B, float* __restrict__ C,
                                            int M, int N, int K, int row, int col) {
    if (row >= M || col >= N) return;

    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
}

// ---- Rungs 04 and 05: block tiles through shared memory, microtiles in registers -------
// Copy rows [r0, r0 + ROWS) x columns [c0, c0 + COLS) of the row-major R x Cn matrix X into
// the shared array s, NT threads: consecutive threads take consecutive columns (coalesced
// reads), an element outside X arrives as 0 (it adds nothing to a dot product).
// TRANSPOSED: element (r, c) lands in s[c][r] (rung 04's As[k][m]), else in s[r][c].
template <int ROWS, int COLS, int NT, bool TRANSPOSED, int D0, int D1>
__device__ __forceinline__ void load_tile(float (&s)[D0][D1], const float* __restrict__ X,
                                          int R, int Cn, int r0, int c0, int tid) {
    static_assert((ROWS * COLS) % NT == 0, "tile loads must split evenly");
#pragma unroll
    for (int l = 0; l < ROWS * COLS / NT; ++l) {
        const int i = tid + l * NT;
        const int r = i / COLS, c = i % COLS;
        const int gr = r0 + r, gc = c0 + c;
        const float v = (gr < R && gc < Cn) ? X[(size_t)gr * Cn + gc] : 0.0f;
        if constexpr (TRANSPOSED) s[c][r] = v; else s[r][c] = v;
    }
}

// acc += a b^T: the TM x TN FMAs of one k, every operand in a register.
template <int TM, int TN>
__device__ __forceinline__ void microtile_fma(float (&acc)[TM][TN], const float (&a)[TM],
                                              const float (&b)[TN]) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

// ---- Rungs 06, 07, 10, 12: the order of the blocks -------------------------------------
// Block index pid -> (block-row bm, block-col bn), GROUP_M block-rows at a time:
// consecutive blocks sweep the block-columns of GROUP_M block-rows together, so the blocks
// running at once share a few A row-panels and B column-panels, which L2 keeps.
template <int GROUP_M = 8>
__device__ __forceinline__ void grouped_block(int pid, int tiles_m, int tiles_n,
                                              int& bm, int& bn) {
    const int per_group = GROUP_M * tiles_n;
    const int first_m = (pid / per_group) * GROUP_M;
    const int rows = min(tiles_m - first_m, GROUP_M);
    const int in_group = pid % per_group;
    bm = first_m + in_group % rows;
    bn = in_group / rows;
}

// ---- cp.async (sm_80+) -----------------------------------------------------------------
// cp.async copies 4, 8 or 16 bytes from global to shared memory without passing through
// registers, so the copy of the next tile overlaps the arithmetic on the current one.
// The "src-size" operand says how many source bytes are real; the rest of the copy is
// filled with zeros. That is how the kernels load tiles that hang over the edge of a
// matrix: an out-of-range element is copied with src-size 0 and arrives as 0.0f, which
// contributes nothing to the dot products.

// Shared-memory address of a generic pointer, as the 32-bit value cp.async expects.
__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16-byte copy that bypasses L1 (.cg). Both addresses must be 16-byte aligned.
// src_bytes in [0, 16]; bytes past src_bytes are zero-filled.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(smem_u32(smem_dst)), "l"(gmem_src), "r"(src_bytes));
}

// 4-byte copy through L1 (.ca; .cg only exists for 16 bytes). src_bytes is 0 or 4.
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(smem_u32(smem_dst)), "l"(gmem_src), "r"(src_bytes));
}

// Close the group of copies issued so far by this thread.
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::);
}

// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
}
