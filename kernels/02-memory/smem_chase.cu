// Shared-memory load latency: the block copies a random single cycle of n slots into
// shared memory as shared-space addresses, then one thread follows it, a = s[a], timing
// `steps` dependent ld.shared with %clock64. Like chase.cu it returns where the walk ended
// and the sum of the slot indices it visited, for the host to check.
#include "common/ptx.cuh"

__device__ __forceinline__ unsigned ld_shared(unsigned addr) {
    unsigned v;
    asm volatile("ld.volatile.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

extern "C" __global__ void smem_chase(const unsigned* next, int n, unsigned start, int steps,
                                      unsigned long long* out)
{
    extern __shared__ unsigned s[];
    const unsigned base = ptx::smem_u32(s);
    for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = base + 4 * next[i];
    __syncthreads();
    if (threadIdx.x != 0) return;
    unsigned a = base + 4 * start;
    for (int i = 0; i < n; ++i) a = ld_shared(a);          // one lap
    const unsigned long long c0 = ptx::clock64_();
    unsigned long long sum = 0;
    for (int i = 0; i < steps; ++i) {
        a = ld_shared(a);
        sum += (a - base) >> 2;                            // off the chain
    }
    const unsigned long long c1 = ptx::clock64_();
    out[0] = c1 - c0;
    out[1] = (a - base) >> 2;
    out[2] = sum;
}
