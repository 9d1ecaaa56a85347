// The block-internal synchronisation of the look-ahead kernels (12, 13): a named barrier
// for the data warps alone, and an mbarrier through which the look-back warp hands the
// tile's exclusive prefix to them (one arrival with release semantics; the data warps wait
// on its first phase with acquire semantics), so the look-back warp never meets the data
// warps at a barrier and can exit as soon as it has handed over.
#pragma once
#include "common/ptx.cuh"

// Named barrier `id` of `threads` threads (a multiple of 32): arrive and wait.
__device__ __forceinline__ void bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;"
                 :: "r"(ptx::smem_u32(bar)), "r"(count) : "memory");
}
// (arrive: release at CTA scope by default; test_wait / try_wait: acquire at CTA scope)
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
    asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared.b64 st, [%0];\n}"
                 :: "r"(ptx::smem_u32(bar)) : "memory");
}
// Wait until the phase with parity `parity` of the mbarrier has completed (try_wait, which
// may suspend the thread for a while, on sm_90; test_wait, which only looks, before).
__device__ __forceinline__ void mbar_wait_parity(unsigned long long* bar, unsigned parity) {
#if __CUDA_ARCH__ >= 900
    asm volatile("{\n .reg .pred done;\n WAIT:\n"
                 " mbarrier.try_wait.parity.shared.b64 done, [%0], %1;\n"
                 " @!done bra WAIT;\n}"
                 :: "r"(ptx::smem_u32(bar)), "r"(parity) : "memory");
#else
    asm volatile("{\n .reg .pred done;\n WAIT:\n"
                 " mbarrier.test_wait.parity.shared.b64 done, [%0], %1;\n"
                 " @!done bra WAIT;\n}"
                 :: "r"(ptx::smem_u32(bar)), "r"(parity) : "memory");
#endif
}
