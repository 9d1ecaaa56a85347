// Shared-memory load latency: the block copies a random single cycle of n slots into
// shared memory, then one thread follows it, j = s[j], timing `steps` dependent
// ld.shared with %clock64. Like chase.cu it returns the last index and the index sum.
#include "loads.cuh"

__device__ __forceinline__ unsigned ld_shared(unsigned addr) {
    unsigned v;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

extern "C" __global__ void smem_chase(const unsigned* next, int n, unsigned start, int steps,
                                      unsigned long long* out)
{
    extern __shared__ unsigned s[];
    for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = next[i];
    __syncthreads();
    if (threadIdx.x != 0) return;
    const unsigned base = ptx::smem_u32(s);
    unsigned j = start;
    for (int i = 0; i < 64; ++i) j = ld_shared(base + 4 * j);
    j = consume(j);
    const unsigned long long c0 = ptx::clock64_();
    unsigned long long sum = 0;
    for (int i = 0; i < steps; ++i) {
        j = ld_shared(base + 4 * j);
        sum += j;
    }
    j = consume(j);
    const unsigned long long c1 = ptx::clock64_();
    out[0] = c1 - c0;
    out[1] = j;
    out[2] = sum;
}
