// Load latency: one thread follows a chain of dependent loads, j = next[j], so that each
// load's address is the value the previous load returned and no two are ever in flight.
// The chain is a single cycle laid out by the host: a random order of its slots (no
// prefetcher or coalescer can guess the next address) or a fixed stride.
//
// `warm` steps first bring the working set into whatever level holds it; then `steps`
// timed steps, read with %clock64 (the SM's cycles) and %globaltimer (nanoseconds), whose
// ratio is the SM clock during the walk. The walk's last index and the sum of the indices
// it visited go back to the host, which follows the same cycle and checks both.
#include "loads.cuh"

template <int OP>
__global__ void chase(const unsigned* next, unsigned start, int warm, int steps,
                      unsigned long long* out)
{
    unsigned j = start;
    for (int i = 0; i < warm; ++i) j = load_op<OP>(next + j);
    j = consume(j);
    const unsigned long long c0 = ptx::clock64_();
    const unsigned long long t0 = ptx::globaltimer();
    unsigned long long sum = 0;
    for (int i = 0; i < steps; ++i) {
        j = load_op<OP>(next + j);
        sum += j;                       // off the chain: the next address needs only j
    }
    j = consume(j);
    const unsigned long long c1 = ptx::clock64_();
    const unsigned long long t1 = ptx::globaltimer();
    out[0] = c1 - c0;
    out[1] = t1 - t0;
    out[2] = j;
    out[3] = sum;
}
