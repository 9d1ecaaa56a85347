// Run-length encoding on a smaller instruction budget: 17's encoder with fewer instructions
// in every step of its scanners. Compute capability 9.0 and later.
//
// Under Nsight Compute, 17 at 2^25 executes about 48 million warp instructions, 34 million
// of them in its scanners' work, and its SMs issue an instruction in about 60 % of their
// cycles: the encoder is paid in instructions more than in bytes (notes, seventh try).
// 18 keeps 17's ring, sequencer, status pairs (heads << 32 | last head + 1), early release
// and staged writes (17_rle_bulk.cu, included for its helpers), and changes what a step
// costs:
//   - the scan counts heads only. A lane's heads in a step (at most E) and in the next step
//     share one 32-bit shuffle scan, 16 bits each; the exclusive count is the inclusive one
//     minus the lane's own, with no second shuffle. (17 scans (heads, last head) pairs, one
//     scan a step.)
//   - a scanner stages each head's value and its index + 1; the copy-out takes a run's
//     length as the difference of two staged indices, so nothing runs from element to
//     element of a lane, and the last head of a step is the last staged index.
//   - a scanner sums the pieces before its own with two warp reductions (redux.sync: the
//     counts added, the last heads' maximum); 17 folds them one after the other.
//   - MINB blocks an SM, the registers capped to fit: one block's waits overlap another's
//     work. (The reducers sum with the same warp reductions.)
//   DIAG: 17's diagnostics, each taking one more part away (1: no scanner work; 2: and
//   the reducers publish without reading; 3: and nobody waits for a prefix; 4: and no
//   sequencer).
// Dynamic shared memory: STAGES * (16 + TILE_BYTES) + SCANNERS * 2 * 32 * E * 4 bytes;
// (SCANNERS + REDUCERS + 2) * 32 threads.
#include "17_rle_bulk.cu"

// Inclusive warp scan of 32-bit sums: two steps' head counts side by side, 16 bits each
// (a step holds at most 512 heads, so neither half carries into the other).
__device__ __forceinline__ unsigned warp_scan_add(unsigned v, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned u = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v += u;
    }
    return v;
}

// The (heads, last head + 1) pairs of the warp's lanes combined (Runs), in every lane.
__device__ __forceinline__ unsigned long long warp_runs(unsigned long long v) {
    const unsigned c = __reduce_add_sync(FULL_MASK, (unsigned)(v >> 32));
    const unsigned h = __reduce_max_sync(FULL_MASK, (unsigned)(v & 0xffffffffull));
    return ((unsigned long long)c << 32) | h;
}

template <int SCANNERS, int REDUCERS, int TILE_BYTES, int STAGES, int WIDTH, int DELAY_NS,
          int E, int MINB, int DIAG>
__global__ void __launch_bounds__((SCANNERS + REDUCERS + 2) * 32, MINB)
rle_encode_lean(const int* __restrict__ in, int* __restrict__ values,
                int* __restrict__ lengths, int* __restrict__ count, long long n,
                unsigned* counter, unsigned num_tiles, unsigned long long* words_lo,
                unsigned long long* words_hi, unsigned epoch) {
#if __CUDA_ARCH__ >= 900
    using P = unsigned long long;
    constexpr int HALO = 16, STAGE = HALO + TILE_BYTES;
    constexpr int TILE = TILE_BYTES / 4, PIECE = TILE / SCANNERS, STEP = 32 * E;
    constexpr int STEPS = PIECE / STEP, PAIRS = (STEPS + 1) / 2;
    static_assert(E == 4 || E == 8 || E == 16, "E: 4, 8 or 16 elements a lane a step");
    constexpr int PRODUCER = SCANNERS + REDUCERS, SEQUENCER = PRODUCER + 1;
    static_assert(SCANNERS >= 1 && SCANNERS <= 16 && REDUCERS >= 1 && SCANNERS % REDUCERS == 0,
                  "1 to 16 scanners, a multiple of the reducers");
    static_assert(PIECE % STEP == 0, "a piece is whole steps");
    static_assert(STAGES >= 2 && MINB >= 1, "two stages or more, a block an SM or more");
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ Ring<STAGES> ring;
    __shared__ P s_sum[STAGES][SCANNERS];

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const SplitStatus<P> st{words_lo, words_hi, epoch};
    const Runs op;
    // Each scanner's staging area after the ring: a step's values, then its heads' indices.
    int* const staged = reinterpret_cast<int*>(stages + STAGES * STAGE) + warp * 2 * STEP;
    ring_start(ring, SCANNERS, warp == PRODUCER && lane == 0, counter, num_tiles);
    if (warp == PRODUCER) {
        if (lane == 0)
            produce<STAGES, TILE_BYTES, HALO>(ring, stages, reinterpret_cast<const unsigned char*>(in),
                                              n * 4, counter, num_tiles);
        return;
    }
    if (warp == SEQUENCER) {
        if (DIAG < 4 && ring.first == 0) sequence<WIDTH, DELAY_NS>(st, num_tiles, P(0), op, lane);
        return;
    }
    // Lane's E elements of step j of `piece`, and the element before them (tile[-1]: the
    // halo, the previous tile's last element); `edge`: the tile holds index 0 or ends past n.
    auto row = [&](const int* tile, int piece, int j, long long i, bool edge, unsigned& m) {
        const int off = piece * PIECE + j * STEP + lane * E;
        Elems<E> x;
#pragma unroll
        for (int h = 0; h < E / 4; ++h) {
            const int4 q = *reinterpret_cast<const int4*>(tile + off + 4 * h);
            x.v[4 * h] = q.x; x.v[4 * h + 1] = q.y; x.v[4 * h + 2] = q.z; x.v[4 * h + 3] = q.w;
        }
        const int before = __shfl_up_sync(FULL_MASK, x.v[E - 1], 1);
        const int prev = lane == 0 ? tile[off - 1] : before;
        m = edge ? heads_of<true>(x, prev, i, n) : heads_of<false>(x, prev, i, n);
        return x;
    };
    auto tile_at = [&](int s) {
        return reinterpret_cast<const int*>(stages + (long long)s * STAGE + HALO);
    };

    if (warp >= SCANNERS) {
        // A reducer: a piece's (heads, last head + 1) pair.
        auto piece_sum = [&](int s, unsigned t, int piece) {
            const int* tile = tile_at(s);
            const long long base = (long long)t * TILE + piece * PIECE;
            const bool edge = t == 0 || (long long)(t + 1) * TILE > n;
            unsigned c = 0, hi = 0;
#pragma unroll 4
            for (int j = 0; j < (DIAG >= 2 ? 0 : STEPS); ++j) {
                const long long i = base + j * STEP + lane * E;
                unsigned m;
                row(tile, piece, j, i, edge, m);
                c += __popc(m);
                if (m) hi = (unsigned)i + 32u - __clz(m);
            }
            return warp_runs(((P)c << 32) | hi);
        };
        reduce_tiles<STAGES, SCANNERS, REDUCERS>(ring, s_sum, num_tiles, st, true, P(0), op,
                                                 piece_sum, warp - SCANNERS, lane);
        return;
    }

    // A scanner: take (before the prefix) = the piece's elements and head masks into
    // registers, the heads before each lane in each step, and the pieces before this
    // warp's; then the stage is freed. finish (with the prefix) = each step's runs staged
    // and written out.
    struct Taken {
        Elems<E> x[STEPS];
        unsigned m[STEPS];
        unsigned exc[PAIRS], tot[PAIRS];   // two steps' counts: heads before the lane; in the step
        P before, total;          // the pieces before this warp's; all of them (last tile)
    };
    auto take = [&](int s, unsigned t) {
        Taken k;
        const int* tile = tile_at(s);
        const long long base = (long long)t * TILE + warp * PIECE;
        const bool edge = t == 0 || (long long)(t + 1) * TILE > n;
#pragma unroll
        for (int j = 0; j < (DIAG >= 1 ? 0 : STEPS); ++j)
            k.x[j] = row(tile, warp, j, base + j * STEP + lane * E, edge, k.m[j]);
#pragma unroll
        for (int p = 0; p < (DIAG >= 1 ? 0 : PAIRS); ++p) {
            const unsigned v = __popc(k.m[2 * p]) | (2 * p + 1 < STEPS ? __popc(k.m[2 * p + 1]) << 16 : 0u);
            const unsigned inc = warp_scan_add(v, lane);
            k.exc[p] = inc - v;
            k.tot[p] = __shfl_sync(FULL_MASK, inc, 31);
        }
        k.before = warp_runs(lane < warp ? s_sum[s][lane] : P(0));
        k.total = t == num_tiles - 1 ? warp_runs(lane < SCANNERS ? s_sum[s][lane] : P(0)) : P(0);
        return k;
    };
    auto finish = [&](const Taken& k, unsigned t, P tile_start) {
        const P start = op(tile_start, k.before);
        const unsigned base = (unsigned)((long long)t * TILE + warp * PIECE);
        // run: heads before this step; last: index + 1 of the last head before it
        unsigned run = (unsigned)(start >> 32), last = (unsigned)(start & 0xffffffffull);
#pragma unroll
        for (int j = 0; j < (DIAG >= 1 ? 0 : STEPS); ++j) {
            const int sh = 16 * (j & 1);
            // Slot q (run index - run) of the step: run q's value and its head's index + 1.
            unsigned q = (k.exc[j / 2] >> sh) & 0xffffu;
            const unsigned first = base + j * STEP + lane * E + 1;
#pragma unroll
            for (int e = 0; e < E; ++e) {
                if (k.m[j] >> e & 1u) {
                    staged[q] = k.x[j].v[e];
                    staged[STEP + q] = (int)(first + e);
                    ++q;
                }
            }
            const unsigned heads = (k.tot[j / 2] >> sh) & 0xffffu;
            __syncwarp();
            // ... and write them out contiguously: values[run ..], lengths[run - 1 ..].
            for (unsigned i = lane; i < heads; i += 32) {
                const unsigned here = (unsigned)staged[STEP + i];
                const unsigned prev = i ? (unsigned)staged[STEP + i - 1] : last;
                values[run + i] = staged[i];
                if (run + i > 0) lengths[run + i - 1] = (int)(here - prev);
            }
            if (heads) last = (unsigned)staged[STEP + heads - 1];
            __syncwarp();
            run += heads;
        }
        if (DIAG == 0 && t == num_tiles - 1 && warp == 0 && lane == 0) {   // the last run, the count
            const P total = op(tile_start, k.total);
            const unsigned runs = (unsigned)(total >> 32), h = (unsigned)(total & 0xffffffffull);
            lengths[runs - 1] = (int)(n - (h - 1));
            *count = (int)runs;
        }
    };
    scan_tiles_early<STAGES, DELAY_NS>(ring, num_tiles, st, DIAG < 3, P(0), take, finish,
                                       lane);
#endif
}
