// Single pass, one read: tiles land in a shared-memory ring by bulk copies, and one
// sequencer warp for the whole grid turns aggregates into prefixes (sequencer.cuh).
// Compute capability 9.0 and later (cp.async.bulk).
//
// 14 never held data while it waited, but every chunk still walked back over its
// predecessors itself, and those walks set the pace (0.76 of the copy with, 0.87 without).
// Here the walks are gone. Persistent blocks, one an SM; in each
//   - the producer (one thread) takes a ticket whenever a stage is free and bulk-copies
//     that tile into it (TILE_BYTES in one instruction; up to STAGES tiles in the ring);
//   - REDUCERS warps sum each tile as it lands, one sum per scanner's piece, and publish
//     the tile's AGGREGATE;
//   - SCANNERS warps take the tiles in order, wait for each one's PREFIX, scan it from
//     shared memory into global memory and free its stage;
//   - one more warp, in the block that took ticket 0 only, is the sequencer.
// Memory traffic is the copy's: the input read once, the output written once, two status
// words a tile.
//
// Layout: scanner w owns the contiguous piece [w * PIECE, (w + 1) * PIECE) of a tile; step
// j of lane l is the 16-byte vector (j * 32 + l) of the piece (a warp reads 512 contiguous
// bytes of shared memory a step: no bank conflicts), stored to the same place in global
// memory. Reducer r sums pieces r, r + REDUCERS, ... into s_sum[stage][piece]; a scanner
// adds the sums of the pieces before its own to the tile's prefix, so the scan needs no
// barrier.
// Dynamic shared memory: STAGES * TILE_BYTES; (SCANNERS + REDUCERS + 2) * 32 threads.
// The block's work, the producer's, the reducers' and the scanners', is in bulk_scan.cuh.
#include "bulk_scan.cuh"

template <typename T, int SCANNERS, int REDUCERS, int TILE_BYTES, int STAGES, int WIDTH,
          int DELAY_NS, bool INCLUSIVE>
__global__ void __launch_bounds__((SCANNERS + REDUCERS + 2) * 32, 1)
scan_bulk(const T* __restrict__ in, T* __restrict__ out, long long n, unsigned* counter,
          unsigned num_tiles, unsigned long long* words_lo, unsigned long long* words_hi,
          unsigned epoch) {
    scan_bulk_block<T, SCANNERS, REDUCERS, TILE_BYTES, STAGES, WIDTH, DELAY_NS, INCLUSIVE, true>(
        in, out, n, counter, num_tiles, words_lo, words_hi, epoch);
}
