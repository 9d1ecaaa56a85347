// Run-length encoding on 16's structure: tiles land in a shared-memory ring by bulk
// copies, one sequencer warp hands out prefixes, and the pass writes the runs' values AND
// lengths — no second kernel. Compute capability 9.0 and later.
//
// A tile's status value is a pair packed in 64 bits: (run heads in it) << 32 | (index of
// its last head + 1, or 0 if it has none). Pairs combine by adding the counts and keeping
// the later head (a max: indices grow with the tiles), so the sequencer's exclusive prefix
// of tile t says both where the tile's first run goes and where the run before it started.
// A head at index i that is run r stores values[r] = x[i] and lengths[r - 1] = i - (start of
// run r - 1); the tile holding the last element stores the last run's length and the count.
// Bytes: the input read once (4n), values and lengths written (8 per run).
//
// The stage of tile t > 0 begins 16 bytes before the tile (the element before it comes with
// the bulk copy). Reducers count each piece's heads and find its last one. A scanner's step
// is 32 x E elements, E a lane: its head mask, then ONE warp scan of (heads, last head)
// pairs packed in 32 bits (the run of the lane's first head, and where the run before it
// started), then a store of the value and of the previous run's length for each head.
// All but the stores comes before the prefix: a scanner takes its piece into registers with
// its heads and step scans, frees the stage, and only then waits (scan_tiles_early).
// (The runs that took its parts away one at a time, scan.rle_bulk_parts, timed this file as
// it was at commit 422e8fc, where each part could be compiled out.)
// The staged writes: a scanner puts each head's value and the previous run's length into a
// slot of its staging area (2 x 32E words), then the warp writes the step's runs out as two
// contiguous ranges, instead of a scattered 4-byte store per head.
// Dynamic shared memory: STAGES * (16 + TILE_BYTES) + SCANNERS * 2 * 32 * E * 4 bytes;
// (SCANNERS + REDUCERS + 2) * 32 threads.
#include "sequencer.cuh"

// (heads << 32 | last head + 1) pairs, combined in order.
struct Runs {
    __device__ __forceinline__ unsigned long long operator()(unsigned long long a,
                                                             unsigned long long b) const {
        return (((a >> 32) + (b >> 32)) << 32) | max(a & 0xffffffffull, b & 0xffffffffull);
    }
};

// The largest v of the warp, in every lane.
__device__ __forceinline__ unsigned warp_max(unsigned v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = max(v, __shfl_xor_sync(FULL_MASK, v, d));
    return v;
}

// E elements of one lane (4: one 16-byte vector, 8: two, 16: four).
template <int E> struct Elems { int v[E]; };

// The heads among the E elements `x` at index i (bit k: element i + k starts a run); `prev`
// is the element before them. CHECK: the tile holds index 0 or ends past n (the last one),
// so each element is also checked against both; other tiles skip the 64-bit compares.
template <bool CHECK, int E>
__device__ __forceinline__ unsigned heads_of(const Elems<E>& x, int prev, long long i, long long n) {
    unsigned m = 0;
#pragma unroll
    for (int k = 0; k < E; ++k) {
        const int p = k == 0 ? prev : x.v[k - 1];
        if (CHECK) m |= (unsigned)(i + k < n && (i + k == 0 || x.v[k] != p)) << k;
        else m |= (unsigned)(x.v[k] != p) << k;
    }
    return m;
}

// A step's (heads, last head) pair in 32 bits: heads << 16 | (last head's index in the
// step + 1, 0 if none); a step is at most 512 elements, so both halves fit in 16 bits.
// (Sums of such pairs over a warp stay below 2^16 in both halves: at most 512 heads.)
__device__ __forceinline__ unsigned step_pair(unsigned a, unsigned b) {
    return (((a >> 16) + (b >> 16)) << 16) | max(a & 0xffffu, b & 0xffffu);
}
__device__ __forceinline__ unsigned warp_scan_pairs(unsigned v, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned u = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v = step_pair(u, v);
    }
    return v;
}

template <int SCANNERS, int REDUCERS, int TILE_BYTES, int STAGES, int WIDTH, int DELAY_NS,
          int E>
__global__ void __launch_bounds__((SCANNERS + REDUCERS + 2) * 32, 1)
rle_encode_bulk(const int* __restrict__ in, int* __restrict__ values,
                int* __restrict__ lengths, int* __restrict__ count, long long n,
                unsigned* counter, unsigned num_tiles, unsigned long long* words_lo,
                unsigned long long* words_hi, unsigned epoch) {
#if __CUDA_ARCH__ >= 900
    using P = unsigned long long;
    constexpr int HALO = 16, STAGE = HALO + TILE_BYTES;
    constexpr int TILE = TILE_BYTES / 4, PIECE = TILE / SCANNERS, STEP = 32 * E;
    constexpr int STEPS = PIECE / STEP;
    static_assert(E == 4 || E == 8 || E == 16, "E: 4, 8 or 16 elements a lane a step");
    constexpr int PRODUCER = SCANNERS + REDUCERS, SEQUENCER = PRODUCER + 1;
    static_assert(SCANNERS >= 1 && SCANNERS <= 16 && REDUCERS >= 1 && SCANNERS % REDUCERS == 0,
                  "1 to 16 scanners, a multiple of the reducers");
    static_assert(PIECE % STEP == 0, "a piece is whole steps");
    static_assert(STAGES >= 2, "two stages or more");
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ Ring<STAGES> ring;
    __shared__ P s_sum[STAGES][SCANNERS];

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const SplitStatus<P> st{words_lo, words_hi, epoch};
    const Runs op;
    // Each scanner's staging area after the ring: a step's values, then its lengths.
    int* const staged = reinterpret_cast<int*>(stages + STAGES * STAGE) + warp * 2 * STEP;
    ring_start(ring, SCANNERS, warp == PRODUCER && lane == 0, counter, num_tiles);
    if (warp == PRODUCER) {
        if (lane == 0)
            produce<STAGES, TILE_BYTES, HALO>(ring, stages, reinterpret_cast<const unsigned char*>(in),
                                              n * 4, counter, num_tiles);
        return;
    }
    if (warp == SEQUENCER) {
        if (ring.first == 0) sequence<WIDTH, DELAY_NS>(st, num_tiles, P(0), op, lane);
        return;
    }
    auto tile_at = [&](int s) {
        return reinterpret_cast<const int*>(stages + (long long)s * STAGE + HALO);
    };
    // Lane's E elements of step j of `piece`, and the element before them (tile[-1]: the
    // halo, the previous tile's last element).
    auto row = [&](const int* tile, int piece, int j, int& prev) {
        const int off = piece * PIECE + j * STEP + lane * E;
        Elems<E> x;
#pragma unroll
        for (int h = 0; h < E / 4; ++h) {
            const int4 q = *reinterpret_cast<const int4*>(tile + off + 4 * h);
            x.v[4 * h] = q.x; x.v[4 * h + 1] = q.y; x.v[4 * h + 2] = q.z; x.v[4 * h + 3] = q.w;
        }
        const int before = __shfl_up_sync(FULL_MASK, x.v[E - 1], 1);
        prev = lane == 0 ? tile[off - 1] : before;
        return x;
    };

    if (warp >= SCANNERS) {
        // A reducer: a piece's (heads, last head + 1) pair.
        auto piece_sum = [&](int s, unsigned t, int piece) {
            const int* tile = tile_at(s);
            const long long base = (long long)t * TILE + piece * PIECE;
            const bool edge = t == 0 || (long long)(t + 1) * TILE > n;
            unsigned c = 0, hi = 0;
#pragma unroll 4
            for (int j = 0; j < STEPS; ++j) {
                int prev;
                const Elems<E> x = row(tile, piece, j, prev);
                const long long i = base + j * STEP + lane * E;
                const unsigned m = edge ? heads_of<true>(x, prev, i, n)
                                        : heads_of<false>(x, prev, i, n);
                c += __popc(m);
                if (m) hi = (unsigned)i + 32u - __clz(m);
            }
            return ((P)warp_reduce(c) << 32) | warp_max(hi);
        };
        reduce_tiles<STAGES, SCANNERS, REDUCERS>(ring, s_sum, num_tiles, st, true, P(0), op,
                                                 piece_sum, warp - SCANNERS, lane);
        return;
    }

    // A scanner: its piece of each tile in two halves. take (before the prefix): the piece's
    // elements into registers, their heads and the step scans, and what the stage's sums say
    // of the pieces before it; the stage is then freed, so the ring refills while the
    // prefix is on its way. finish (with the prefix): each step's runs staged and written.
    struct Taken {
        Elems<E> x[STEPS];
        unsigned m[STEPS], exc[STEPS], tot[STEPS];
        P before, total;          // the pieces before this warp's; all of them (last tile)
    };
    auto take = [&](int s, unsigned t) {
        Taken k;
        const int* tile = tile_at(s);
        const long long base = (long long)t * TILE + warp * PIECE;
        const bool edge = t == 0 || (long long)(t + 1) * TILE > n;
#pragma unroll
        for (int j = 0; j < STEPS; ++j) {
            int prev;
            k.x[j] = row(tile, warp, j, prev);
            const long long i = base + j * STEP + lane * E;
            const unsigned m = edge ? heads_of<true>(k.x[j], prev, i, n)
                                    : heads_of<false>(k.x[j], prev, i, n);
            const unsigned mine = m ? ((unsigned)__popc(m) << 16) | (lane * E + 32u - __clz(m)) : 0u;
            const unsigned inc = warp_scan_pairs(mine, lane);
            const unsigned up = __shfl_up_sync(FULL_MASK, inc, 1);
            k.m[j] = m;
            k.exc[j] = lane == 0 ? 0u : up;
            k.tot[j] = __shfl_sync(FULL_MASK, inc, 31);
        }
        k.before = P(0);
        for (int w = 0; w < warp; ++w) k.before = op(k.before, s_sum[s][w]);
        k.total = k.before;
        if (t == num_tiles - 1)
            for (int w = warp; w < SCANNERS; ++w) k.total = op(k.total, s_sum[s][w]);
        return k;
    };
    auto finish = [&](const Taken& k, unsigned t, P tile_start) {
        const P start = op(tile_start, k.before);
        const unsigned base = (unsigned)((long long)t * TILE + warp * PIECE);
        // run: heads before this step; last: index + 1 of the last head before it
        unsigned run = (unsigned)(start >> 32), last = (unsigned)(start & 0xffffffffull);
#pragma unroll
        for (int j = 0; j < STEPS; ++j) {
            const unsigned step0 = base + j * STEP;               // the step's first index
            // Stage the step's runs: slot q = (run index - run) holds run q's value and the
            // length of the run before it.
            unsigned q = k.exc[j] >> 16;
            unsigned h = (k.exc[j] & 0xffffu) ? step0 + (k.exc[j] & 0xffffu) : last;
#pragma unroll
            for (int e = 0; e < E; ++e) {
                if (k.m[j] >> e & 1u) {
                    const unsigned idx = step0 + lane * E + e;
                    staged[q] = k.x[j].v[e];
                    staged[STEP + q] = (int)(idx + 1 - h);
                    h = idx + 1;
                    ++q;
                }
            }
            const unsigned heads = k.tot[j] >> 16;
            __syncwarp();
            // ... and write them out contiguously: values[run ..], lengths[run - 1 ..].
            for (unsigned i = lane; i < heads; i += 32) {
                values[run + i] = staged[i];
                if (run + i > 0) lengths[run + i - 1] = staged[STEP + i];
            }
            __syncwarp();
            run += heads;
            if (k.tot[j] & 0xffffu) last = step0 + (k.tot[j] & 0xffffu);
        }
        if (t == num_tiles - 1 && warp == 0 && lane == 0) {   // the last run, the count
            const P total = op(tile_start, k.total);
            const unsigned runs = (unsigned)(total >> 32), h = (unsigned)(total & 0xffffffffull);
            lengths[runs - 1] = (int)(n - (h - 1));
            *count = (int)runs;
        }
    };
    scan_tiles_early<STAGES, DELAY_NS>(ring, num_tiles, st, true, P(0), take, finish,
                                       lane);
#endif
}
