// Load latency: one thread follows a chain of pointers, p = *p, so that each load's
// address is the value the previous load returned: no two loads are ever in flight, and
// nothing but the load itself stands between one and the next. The chain is a single
// cycle laid out by the host: a random order of its slots (no prefetcher or coalescer can
// guess the next address) or a fixed stride.
//
// `warm` steps first (a whole lap where the buffer may fit a cache), then `steps` timed
// steps, read with %clock64 (the SM's cycles) and %globaltimer (nanoseconds), whose ratio
// is the SM clock during the walk. The last pointer and the sum of every pointer visited
// go back to the host, which follows the same cycle and checks both.
#include "loads.cuh"

template <int OP>
__global__ void chase(const void* start, int warm, int steps, unsigned long long* out)
{
    const void* p = start;
    unsigned long long sum = 0;
    for (int i = 0; i < warm; ++i) {
        p = load_ptr<OP>(p);
        sum += reinterpret_cast<unsigned long long>(p);   // off the chain
    }
    const unsigned long long c0 = ptx::clock64_();
    const unsigned long long t0 = ptx::globaltimer();
    for (int i = 0; i < steps; ++i) {
        p = load_ptr<OP>(p);
        sum += reinterpret_cast<unsigned long long>(p);
    }
    const unsigned long long c1 = ptx::clock64_();
    const unsigned long long t1 = ptx::globaltimer();
    out[0] = c1 - c0;
    out[1] = t1 - t0;
    out[2] = reinterpret_cast<unsigned long long>(p);
    out[3] = sum;
}
