// The lab's inline-PTX wrappers, for every chapter's kernels: include "common/ptx.cuh".
//
// Each wrapper is one instruction, named after it, with the PTX ISA's operand order.
// The cache operators of ld.global are hints the compiler and the hardware may override
// (PTX ISA, "Cache Operators"): what a load really does is in the SASS (LDG.E.*) and in
// the latency it shows, not in its name.
#pragma once

namespace ptx {

// Shared-memory address of a generic pointer, as the 32-bit value shared-space
// instructions take.
__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- global loads with an explicit cache operator ---------------------------------------
// .ca: cache at all levels; .cg: cache in L2, not L1; .cv: volatile, fetch again;
// .nc (ld.global.nc): the read-only (texture) path; .lu: last use.
#define PTX_LDG(NAME, QUAL)                                                                 \
    __device__ __forceinline__ unsigned NAME(const unsigned* p) {                          \
        unsigned v;                                                                        \
        asm volatile("ld.global" QUAL ".u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");   \
        return v;                                                                          \
    }
PTX_LDG(ld_ca, ".ca")
PTX_LDG(ld_cg, ".cg")
PTX_LDG(ld_cv, ".cv")
PTX_LDG(ld_lu, ".lu")
PTX_LDG(ld_nc, ".nc")
#undef PTX_LDG

// ---- clocks -------------------------------------------------------------------------------
// %clock64 counts the SM's cycles; %globaltimer counts nanoseconds (coarsely updated).
__device__ __forceinline__ unsigned long long clock64_() {
    unsigned long long c;
    asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(c) :: "memory");
    return c;
}
__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t) :: "memory");
    return t;
}

// ---- asynchronous copies global -> shared (sm_80+) ---------------------------------------
// src_bytes < the copy size: the rest of the destination is zero-filled (src_bytes 0 reads
// nothing), which is how a tile hanging over a matrix edge is loaded without a branch.
__device__ __forceinline__ void cp_async_cg16(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_ca4(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Wait until at most N committed groups of this thread are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

// ---- ldmatrix -----------------------------------------------------------------------------
// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}

}  // namespace ptx
