// Busy for `ns` nanoseconds of %globaltimer, one thread: the stream is held while it
// spins, so that a call enqueued behind it starts only once it ends, by which time the
// host has finished enqueueing that call. Events around such a call time its work on the
// GPU without the host's part before its first launch (perflab.timing.call_parts).
#include "common/ptx.cuh"

extern "C" __global__ void spin_ns(unsigned long long ns)
{
    const unsigned long long t0 = ptx::globaltimer();
    while (ptx::globaltimer() - t0 < ns) { }
}
