// A probe, not a scan: 16's block with no sequencer, every tile scanned alone (its
// output is each tile's own inclusive or exclusive scan). Timed beside 16 in the same
// rounds (scan.bulk), it says what the chain of prefixes costs: the rest is the ring, the
// loads and the stores. Compute capability 9.0 and later (cp.async.bulk).
#include "bulk_scan.cuh"

template <typename T, int SCANNERS, int REDUCERS, int TILE_BYTES, int STAGES, int WIDTH,
          int DELAY_NS, bool INCLUSIVE>
__global__ void __launch_bounds__((SCANNERS + REDUCERS + 2) * 32, 1)
scan_tiles_alone(const T* __restrict__ in, T* __restrict__ out, long long n, unsigned* counter,
                 unsigned num_tiles, unsigned long long* words_lo, unsigned long long* words_hi,
                 unsigned epoch) {
    scan_bulk_block<T, SCANNERS, REDUCERS, TILE_BYTES, STAGES, WIDTH, DELAY_NS, INCLUSIVE, false>(
        in, out, n, counter, num_tiles, words_lo, words_hi, epoch);
}
