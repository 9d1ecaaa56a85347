// The seed's latency probe, reproduced: read the clock, issue one load, read the clock.
// A load does not stall the thread that issues it; only an instruction that reads its
// result waits. So with WAIT = false the two clock reads bracket the issue of the load,
// not its trip to memory, and every cache operator and every level gives about the same
// few cycles. WAIT = true stores the loaded value to shared memory before the second
// clock read: the store cannot issue until the value has arrived.
#include "loads.cuh"

template <int OP, bool WAIT>
__global__ void seed_probe(const unsigned* a, int n, int stride, unsigned long long* out)
{
    __shared__ unsigned sink_slot;
    const unsigned slot = ptx::smem_u32(&sink_slot);
    unsigned long long total = 0;
    unsigned sink = 0;
    for (int i = 0; i < n; ++i) {
        const unsigned long long c0 = ptx::clock64_();
        const unsigned v = load_op<OP>(a + (long long)i * stride);
        if (WAIT) asm volatile("st.volatile.shared.u32 [%0], %1;\n" :: "r"(slot), "r"(v) : "memory");
        const unsigned long long c1 = ptx::clock64_();
        total += c1 - c0;
        sink += v;
    }
    out[0] = total;
    out[1] = sink;
}
