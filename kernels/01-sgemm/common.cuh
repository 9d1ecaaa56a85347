// Small helpers shared by the SGEMM rungs: ceil_div and thin wrappers around the
// asynchronous global->shared copy instructions of sm_80+ (cp.async).
//
// cp.async copies 4, 8 or 16 bytes from global to shared memory without passing through
// registers, so the copy of the next tile overlaps the arithmetic on the current one.
// The "src-size" operand says how many source bytes are real; the rest of the copy is
// filled with zeros. That is how the kernels load tiles that hang over the edge of a
// matrix: an out-of-range element is copied with src-size 0 and arrives as 0.0f, which
// contributes nothing to the dot products.
#pragma once

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

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
