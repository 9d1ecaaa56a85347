// The bulk-copy single pass's block (16_single_pass_bulk.cu tells the design): the
// producer's ring of bulk copies, the reducers' sums, the scanners' pieces and, in the
// block with ticket 0, the sequencer. CHAINED = true is the scan 16 launches; false is the
// probe in tiles_alone.cu (every tile scanned alone, no sequencer: what the chain costs).
// Compute capability 9.0 and later (cp.async.bulk).
#pragma once
#include "sequencer.cuh"

template <typename T, int SCANNERS, int REDUCERS, int TILE_BYTES, int STAGES, int WIDTH,
          int DELAY_NS, bool INCLUSIVE, bool CHAINED>
__device__ __forceinline__ void
scan_bulk_block(const T* __restrict__ in, T* __restrict__ out, long long n, unsigned* counter,
                unsigned num_tiles, unsigned long long* words_lo, unsigned long long* words_hi,
                unsigned epoch) {
#if __CUDA_ARCH__ >= 900
    constexpr int VEC = Vec16<T>::N;
    using Pack = typename Vec16<T>::Pack;
    constexpr int TILE = TILE_BYTES / (int)sizeof(T), PIECE = TILE / SCANNERS;
    constexpr int STEPS = PIECE / (32 * VEC);
    constexpr int PRODUCER = SCANNERS + REDUCERS, SEQUENCER = PRODUCER + 1;
    static_assert(SCANNERS >= 1 && SCANNERS <= 16 && REDUCERS >= 1 && SCANNERS % REDUCERS == 0,
                  "1 to 16 scanners, a multiple of the reducers");
    static_assert(TILE % (SCANNERS * 32 * VEC) == 0, "a tile is whole 512-byte steps of every piece");
    static_assert(STAGES >= 2, "two stages or more");
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ Ring<STAGES> ring;
    __shared__ T s_sum[STAGES][SCANNERS];

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const SplitStatus<T> st{words_lo, words_hi, epoch};
    ring_start(ring, SCANNERS, warp == PRODUCER && lane == 0, counter, num_tiles);
    if (warp == PRODUCER) {
        if (lane == 0)
            produce<STAGES, TILE_BYTES, 0>(ring, stages, reinterpret_cast<const unsigned char*>(in),
                                           n * (long long)sizeof(T), counter, num_tiles);
        return;
    }
    if (warp == SEQUENCER) {
        if (CHAINED && ring.first == 0) sequence<WIDTH, DELAY_NS>(st, num_tiles, T(0), Plus{}, lane);
        return;
    }
    auto tile_at = [&](int s) { return reinterpret_cast<const T*>(stages + (long long)s * TILE_BYTES); };

    if (warp >= SCANNERS) {
        // A reducer: the sum of a piece, element by element (past n: nothing).
        auto piece_sum = [&](int s, unsigned t, int piece) {
            const T* tile = tile_at(s);
            const long long base = (long long)t * TILE + piece * PIECE;
            const bool whole = (long long)(t + 1) * TILE <= n;
            T sum = T(0);
#pragma unroll 8
            for (int j = 0; j < STEPS; ++j) {
                const Pack q = *reinterpret_cast<const Pack*>(tile + piece * PIECE + (j * 32 + lane) * VEC);
                const long long i = base + (long long)(j * 32 + lane) * VEC;
#pragma unroll
                for (int k = 0; k < VEC; ++k) sum += (whole || i + k < n) ? q.v[k] : T(0);
            }
            return warp_reduce(sum);
        };
        reduce_tiles<STAGES, SCANNERS, REDUCERS>(ring, s_sum, num_tiles, st, CHAINED, T(0),
                                                 Plus{}, piece_sum, warp - SCANNERS, lane);
        return;
    }

    // A scanner: its piece of each tile, from the tile's prefix and the pieces before it.
    auto scan_piece = [&](int s, unsigned t, T start) {
        for (int w = 0; w < warp; ++w) start += s_sum[s][w];
        const T* tile = tile_at(s);
        const long long base = (long long)t * TILE + warp * PIECE;
        const bool whole = (long long)(t + 1) * TILE <= n;
        T carry = start;
#pragma unroll 4
        for (int j = 0; j < STEPS; ++j) {
            Pack q = *reinterpret_cast<const Pack*>(tile + warp * PIECE + (j * 32 + lane) * VEC);
            const long long i = base + (long long)(j * 32 + lane) * VEC;
            if (!whole) {
#pragma unroll
                for (int k = 0; k < VEC; ++k) if (i + k >= n) q.v[k] = T(0);
            }
            T sum = q.v[0];
#pragma unroll
            for (int k = 1; k < VEC; ++k) sum += q.v[k];
            const T inc = warp_inclusive_scan(sum, lane);
            const T exc = __shfl_up_sync(FULL_MASK, inc, 1);
            T run = lane == 0 ? carry : carry + exc;
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
                const T x = q.v[k];
                if (INCLUSIVE) { run += x; q.v[k] = run; }
                else { q.v[k] = run; run += x; }
            }
            carry += __shfl_sync(FULL_MASK, inc, 31);
            if (whole || i + VEC <= n) {
                __stcs(reinterpret_cast<uint4*>(out + i), bits_as<uint4>(q));
            } else {
#pragma unroll
                for (int k = 0; k < VEC; ++k) if (i + k < n) out[i + k] = q.v[k];
            }
        }
    };
    scan_tiles<STAGES, DELAY_NS>(ring, num_tiles, st, CHAINED, T(0), scan_piece, lane);
#endif
}
