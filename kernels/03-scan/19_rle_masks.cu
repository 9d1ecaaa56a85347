// Run-length encoding with each head found once: 18's ring and status pairs, with the work
// split differently between the warps of a block. Compute capability 9.0 and later.
//
// In 18 the reducers find a tile's heads to count them, and the scanners find them again,
// element by element, to stage them: under Nsight Compute its scanners' work is two thirds
// of its 31 million warp instructions at 2^25 (notes, seventh try). Here:
//   - the REDUCERS find the heads (8 elements a lane a step, as 18) and leave them in shared
//     memory as head masks, one 32-bit word for 32 consecutive elements, beside the piece's
//     (heads, last head + 1) pair; every reducer lane arrives on the stage's `masked`
//     barrier after its stores, so each store is released by its own thread;
//   - a SCANNER's piece is 1024 elements, 32 mask words: lane l takes word l, one warp scan
//     of the 32 popcounts gives each lane the slot of its first head, and the lane walks its
//     word's set bits only (ffs, clear the lowest bit). A piece of at most CAP heads (every
//     piece of runs of 1-15) stages each head's index in the piece (16 bits) and its value
//     before the prefix, frees the stage, then waits; the copy-out takes a run's length as
//     the difference of two staged indices. A piece of more heads keeps its stage, waits,
//     and is staged and written CAP slots at a time, the values read from the tile;
//   - SEQ sequencer warps share the chain (the block that took ticket 0 runs them): warp k
//     takes windows k, k + SEQ, ... of 32 x WIDTH tiles, loads and waits for its window's
//     aggregates without waiting for anyone, and publishes once the warp before it hands it
//     the running total through shared memory (one warp walked 18's chain at about 77 tiles
//     a microsecond). SEQ = 1 is 18's sequencer, which publishes every round up to the
//     first tile not yet in;
//   - GROUPS groups of SCANNERS scanner warps: group g takes the tiles at ring positions
//     g, g + GROUPS, ..., so that GROUPS of a block's tiles wait for their prefixes at once
//     (STAGES a multiple of GROUPS: a stage always goes to the same group).
//   DIAG: 18's diagnostics, each taking one more part away (1: no scanner work; 2: and the
//   reducers publish without reading; 3: and nobody waits for a prefix; 4: and no
//   sequencer).
// A tile is SCANNERS x 1024 int32. Dynamic shared memory (masks_smem in rle.py):
// STAGES * (16 + 4096 * SCANNERS) ring + STAGES * 128 * SCANNERS masks
// + SCANNERS * GROUPS * 6 * CAP staging bytes; (SCANNERS * GROUPS + REDUCERS + 1 + SEQ) * 32
// threads.
#include "18_rle_lean.cu"

constexpr int MASK_PIECE = 1024;     // a scanner's piece: 32 words of 32 elements
constexpr int MASK_CAP = 256;        // staged slots a scanner (a 16-bit index and a value)

// Whether the phase of parity `parity` of the mbarrier has completed (one look, no wait).
__device__ __forceinline__ bool mbar_test_parity(unsigned long long* bar, unsigned parity) {
    unsigned done;
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(ptx::smem_u32(bar)), "r"(parity) : "memory");
    return done != 0u;
}

// SEQ warps (me = 0 .. SEQ-1) in one block walk the chain of 18's sequence(), window by
// window: window w (32 x WIDTH tiles from w x 32 x WIDTH) belongs to warp w % SEQ. A warp
// polls its window until every aggregate is in, scans it, waits for `carry_win` to say w,
// takes the running total from `carry`, hands the next total on, then publishes the
// window's exclusive prefixes.
template <int WIDTH, int SEQ, int DELAY_NS, typename T, typename Op>
__device__ __forceinline__ void sequence_shared(const SplitStatus<T>& st, unsigned num_tiles,
                                                T identity, Op op, int lane, int me,
                                                T* carry, unsigned* carry_win) {
    static_assert(WIDTH >= 1 && WIDTH <= 8 && SEQ >= 1 && SEQ <= 4,
                  "WIDTH: 1 to 8 tiles a lane; 1 to 4 sequencer warps");
    constexpr long long WIN = 32LL * WIDTH;
    for (long long w = me; w * WIN < (long long)num_tiles; w += SEQ) {
        const long long first = w * WIN + (long long)WIDTH * lane;
        T value[WIDTH];
        unsigned need = 0;
#pragma unroll
        for (int v = 0; v < WIDTH; ++v) {
            value[v] = identity;
            if (first + v < num_tiles) need |= 1u << v;
        }
        while (true) {                               // every load of the window in flight
            unsigned long long a[WIDTH], b[WIDTH];
#pragma unroll
            for (int v = 0; v < WIDTH; ++v) {
                a[v] = b[v] = 0ull;
                if (need >> v & 1u) st.load(first + v, a[v], b[v]);
            }
#pragma unroll
            for (int v = 0; v < WIDTH; ++v) {
                T x;
                if ((need >> v & 1u) && st.holds(a[v], b[v], ST_AGGREGATE, x)) {
                    value[v] = x;
                    need &= ~(1u << v);
                }
            }
            if (!__any_sync(FULL_MASK, need != 0u)) break;
            __nanosleep(DELAY_NS);
        }
        T sum = identity;
#pragma unroll
        for (int v = 0; v < WIDTH; ++v) sum = op(sum, value[v]);
        const T inc = warp_inclusive_scan_op(sum, lane, op);
        const T up = __shfl_up_sync(FULL_MASK, inc, 1);
        const T window = __shfl_sync(FULL_MASK, inc, 31);
        T running = identity;
        if (lane == 0) {
            if (w > 0) {
                while (*(volatile unsigned*)carry_win != (unsigned)w) { }
                __threadfence_block();
                running = *(volatile T*)carry;
            }
            *(volatile T*)carry = op(running, window);      // the next window's, first
            __threadfence_block();
            *(volatile unsigned*)carry_win = (unsigned)(w + 1);
        }
        running = __shfl_sync(FULL_MASK, running, 0);
        T prefix = lane == 0 ? running : op(running, up);
#pragma unroll
        for (int v = 0; v < WIDTH; ++v) {
            if (first + v < num_tiles) {
                st.publish(first + v, ST_PREFIX, prefix);
                prefix = op(prefix, value[v]);
            }
        }
    }
}

template <int SCANNERS, int REDUCERS, int STAGES, int WIDTH, int SEQ, int DELAY_NS, int MINB,
          int GROUPS, int DIAG>
__global__ void __launch_bounds__((SCANNERS * GROUPS + REDUCERS + 1 + SEQ) * 32, MINB)
rle_encode_masks(const int* __restrict__ in, int* __restrict__ values,
                 int* __restrict__ lengths, int* __restrict__ count, long long n,
                 unsigned* counter, unsigned num_tiles, unsigned long long* words_lo,
                 unsigned long long* words_hi, unsigned epoch) {
#if __CUDA_ARCH__ >= 900
    using P = unsigned long long;
    constexpr int E = 8, STEP = 32 * E, HALO = 16;
    constexpr int TILE = SCANNERS * MASK_PIECE, TILE_BYTES = 4 * TILE, STAGE = HALO + TILE_BYTES;
    constexpr int WORDS = TILE / 32, CAP = MASK_CAP;
    constexpr int PRODUCER = SCANNERS * GROUPS + REDUCERS, SEQUENCER = PRODUCER + 1;
    static_assert(GROUPS >= 1 && STAGES % GROUPS == 0,
                  "the stages a whole number of rounds of the scanner groups");
    static_assert(SCANNERS >= 1 && SCANNERS <= 16 && REDUCERS >= 1 && SCANNERS % REDUCERS == 0,
                  "1 to 16 scanners, a multiple of the reducers");
    static_assert(STAGES >= 2 && MINB >= 1, "two stages or more, a block an SM or more");
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ Ring<STAGES> ring;
    __shared__ P s_sum[STAGES][SCANNERS];
    __shared__ P s_carry;
    __shared__ unsigned s_carry_win;
    // masked[s]: every lane of a reducer arrives once it has stored its part of a piece's
    // masks (SCANNERS x 32 arrivals a tile), so each mask store is released by its own
    // thread to the scanners that wait on it.
    __shared__ unsigned long long masked[STAGES];
    __shared__ unsigned s_end;          // the ring position past the last tile, once seen
    unsigned* const masks = reinterpret_cast<unsigned*>(stages + STAGES * STAGE);

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const SplitStatus<P> st{words_lo, words_hi, epoch};
    const Runs op;
    if (threadIdx.x == 0) {
        s_carry_win = 0u;
        s_end = 0xffffffffu;
        for (int k = 0; k < STAGES; ++k) mbar_init(&masked[k], SCANNERS * 32);
    }   // (ring_start fences the barriers' initialisation and meets the block)
    ring_start(ring, SCANNERS, warp == PRODUCER && lane == 0, counter, num_tiles);
    if (warp == PRODUCER) {
        if (lane == 0)
            produce<STAGES, TILE_BYTES, HALO>(ring, stages, reinterpret_cast<const unsigned char*>(in),
                                              n * 4, counter, num_tiles);
        return;
    }
    if (warp >= SEQUENCER) {
        if (DIAG < 4 && ring.first == 0) {
            if (SEQ == 1)     // 18's: publishes each round up to the first tile not yet in
                sequence<WIDTH, DELAY_NS>(st, num_tiles, P(0), op, lane);
            else
                sequence_shared<WIDTH, SEQ, DELAY_NS>(st, num_tiles, P(0), op, lane,
                                                      warp - SEQUENCER, &s_carry, &s_carry_win);
        }
        return;
    }
    auto tile_at = [&](int s) {
        return reinterpret_cast<const int*>(stages + (long long)s * STAGE + HALO);
    };

    if (warp >= SCANNERS * GROUPS) {
        // A reducer: a piece's heads as 32 mask words (lanes 4k .. 4k+3 of a step make word
        // k of it), and its (heads, last head + 1) pair.
        auto piece_sum = [&](int s, unsigned t, int piece) {
            const int* tile = tile_at(s);
            unsigned* const mw = masks + s * WORDS + piece * 32;
            const long long base = (long long)t * TILE + piece * MASK_PIECE;
            const bool edge = t == 0 || (long long)(t + 1) * TILE > n;
            unsigned c = 0, hi = 0;
#pragma unroll
            for (int j = 0; j < (DIAG >= 2 ? 0 : MASK_PIECE / STEP); ++j) {
                const int off = piece * MASK_PIECE + j * STEP + lane * E;
                const long long i = base + j * STEP + lane * E;
                Elems<E> x;
#pragma unroll
                for (int h = 0; h < E / 4; ++h) {
                    const int4 q = *reinterpret_cast<const int4*>(tile + off + 4 * h);
                    x.v[4 * h] = q.x; x.v[4 * h + 1] = q.y; x.v[4 * h + 2] = q.z; x.v[4 * h + 3] = q.w;
                }
                const int before = __shfl_up_sync(FULL_MASK, x.v[E - 1], 1);
                const int prev = lane == 0 ? tile[off - 1] : before;
                const unsigned m = edge ? heads_of<true>(x, prev, i, n) : heads_of<false>(x, prev, i, n);
                c += __popc(m);
                if (m) hi = (unsigned)i + 32u - __clz(m);
                unsigned word = m << (8 * (lane & 3));
                word |= __shfl_xor_sync(FULL_MASK, word, 1);
                word |= __shfl_xor_sync(FULL_MASK, word, 2);
                if ((lane & 3) == 0) mw[j * 8 + (lane >> 2)] = word;
            }
            mbar_arrive(&masked[s]);
            return warp_runs(((P)c << 32) | hi);
        };
        reduce_tiles<STAGES, SCANNERS, REDUCERS>(ring, s_sum, num_tiles, st, true, P(0), op,
                                                 piece_sum, warp - SCANNERS * GROUPS, lane);
        return;
    }

    // A scanner: piece `piece` of the tiles at ring positions group, group + GROUPS, ...
    // (each group waits for its own tiles' prefixes). Its staging: CAP 16-bit indices in
    // the piece, then CAP values.
    const int piece = warp % SCANNERS, group = warp / SCANNERS;
    unsigned short* const sidx =
        reinterpret_cast<unsigned short*>(masks + STAGES * WORDS) + warp * 3 * CAP;
    int* const sval = reinterpret_cast<int*>(sidx + CAP);
    for (unsigned p = group;; p += GROUPS) {
        const int s = p % STAGES;
        // The group that finds the position past the last tile tells the others, which
        // may be waiting for a later position that never fills.
        while (!mbar_test_parity(&ring.summed[s], (p / STAGES) & 1))
            if (GROUPS > 1 && *(volatile unsigned*)&s_end <= p) return;
        const unsigned t = ring.tile[s];
        if (t >= num_tiles) {
            if (GROUPS > 1 && lane == 0) *(volatile unsigned*)&s_end = p;
            return;
        }
        unsigned long long a = 0ull, b = 0ull;
        if (DIAG < 3 && lane == 0) st.load(t, a, b);         // the first poll, early
        // The lane's word, the slot of its first head, the piece's heads.
        mbar_wait_parity(&masked[s], (p / STAGES) & 1);
        const unsigned word = DIAG >= 1 ? 0u : masks[s * WORDS + piece * 32 + lane];
        const unsigned cnt = __popc(word);
        const unsigned inc = warp_scan_add(cnt, lane);
        const unsigned tot = __shfl_sync(FULL_MASK, inc, 31);
        const P before = warp_runs(lane < piece ? s_sum[s][lane] : P(0));
        const P total = t == num_tiles - 1 ? warp_runs(lane < SCANNERS ? s_sum[s][lane] : P(0))
                                           : P(0);
        const int* const tile = tile_at(s) + piece * MASK_PIECE;
        unsigned q = inc - cnt, bits = word;
        // At most CAP heads (every piece of runs of 1-15): stage indices AND values before
        // the prefix, free the stage, then wait. Else the stage is held to the end.
        const bool early = tot <= CAP;
        if (early) {
            while (bits != 0u) {
                const unsigned idx = lane * 32 + __ffs(bits) - 1;
                sidx[q] = (unsigned short)idx;
                sval[q] = tile[idx];
                bits &= bits - 1u;
                ++q;
            }
            __syncwarp();
            if (lane == 0) mbar_arrive(&ring.empty[s]);
        }
        P tile_start = P(0);
        if (DIAG < 3) {
            if (lane == 0 && !st.holds(a, b, ST_PREFIX, tile_start))
                tile_start = wait_prefix<DELAY_NS>(st, t);
            tile_start = __shfl_sync(FULL_MASK, tile_start, 0);
        }
        const P start = op(tile_start, before);
        const unsigned pbase = (unsigned)((long long)t * TILE + piece * MASK_PIECE);
        const unsigned run = (unsigned)(start >> 32);
        unsigned last = (unsigned)(start & 0xffffffffull);   // index + 1 of the last head before
        // Slots b0 .. b0 + nb - 1 out contiguously: values[run + b0 ..], lengths[run + b0 - 1 ..].
        auto write_out = [&](unsigned b0, unsigned nb, bool staged_values) {
            for (unsigned i = lane; i < nb; i += 32) {
                const unsigned idx = sidx[i];
                const unsigned prev = i ? pbase + sidx[i - 1] + 1u : last;
                const unsigned r = run + b0 + i;
                values[r] = staged_values ? sval[i] : tile[idx];
                if (r > 0) lengths[r - 1] = (int)(pbase + idx + 1u - prev);
            }
            last = pbase + sidx[nb - 1] + 1u;
        };
        if (early) {
            if (tot) write_out(0, tot, true);
        } else {
            for (unsigned b0 = 0; b0 < tot; b0 += CAP) {
                while (bits != 0u && q < b0 + CAP) {
                    sidx[q - b0] = (unsigned short)(lane * 32 + __ffs(bits) - 1);
                    bits &= bits - 1u;
                    ++q;
                }
                __syncwarp();
                write_out(b0, min((unsigned)CAP, tot - b0), false);
                __syncwarp();
            }
        }
        if (DIAG == 0 && t == num_tiles - 1 && piece == 0 && lane == 0) {  // the last run, the count
            const P all = op(tile_start, total);
            const unsigned runs = (unsigned)(all >> 32), h = (unsigned)(all & 0xffffffffull);
            lengths[runs - 1] = (int)(n - (h - 1));
            *count = (int)runs;
        }
        __syncwarp();
        if (!early && lane == 0) mbar_arrive(&ring.empty[s]);
    }
#endif
}
