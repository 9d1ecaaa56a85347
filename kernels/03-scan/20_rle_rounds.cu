// Run-length encoding in rounds, with no chain: one segment a block a round, every block
// reading every block's count. Compute capability 9.0 and later.
//
// In 17, 18 and 19 a tile's prefix comes from the sequencer, a chain through every tile in
// ticket order, and a block's scanners take their tiles in that order: a tile waits for
// the chain and for the scanner that holds it, and the ring turns at that pace (notes,
// eighth try: with the scanners' work and waits hidden, the ring, the chain and the
// reducers' reading still took 58 us a call). Here the only order is the rounds':
//   - the grid is resident all at once (a cooperative launch of G blocks). Round r is
//     G x SEG elements; block b owns segment t = r x G + b of it (a fixed assignment, no
//     tickets). One PRODUCER thread brings the block's segments into a ring of STAGES
//     stages by bulk copies.
//   - COUNTERS warps find the heads of each segment as it lands, a piece of 512 elements
//     at a time (8 a lane a step), and compact them into the round's SLOT: a piece of at
//     most 128 heads leaves each head's index in the piece (16 bits) and its value there.
//     Counter 0 then publishes ONE word for the segment (this call's epoch, its heads,
//     its last head's index in it + 1: 30 + 17 + 17 bits, one 64-bit store, no fence) and,
//     when no piece had more than 128 heads, frees the stage at once: the segment waits
//     for its prefix as 1.5 bytes an element, not 4. Counters wait for data and for a
//     free slot only.
//   - the POLLER warp reads the words of the block's rounds in order, K rounds a round
//     trip (lane l reads blocks l, l + 32, ... of each), and for each round whose G words
//     are all in, sums the heads and takes the largest last head of blocks 0 .. b-1 (the
//     segment's start) and of all G blocks (added to the running total of the rounds
//     before). Every block computes every round's total itself: nobody waits for another
//     block's prefix, only for its count, published as soon as its segment was counted.
//   - WRITERS warps take the segment's start, each piece's start from the pieces' counts,
//     and copy the pieces' runs out of the slot (values, and each run's length as the
//     difference of two heads' indices). A piece of more than 128 heads was not freed:
//     its writer reads it from the stage, half a step at a time staged in its slot.
// A run's length is written by the head after it; the last run's by block 0's poller once
// it has seen the last round, with the count.
// Deadlock freedom: a block publishes round r's word once its own segment of round r has
// landed and a slot is free; the landing waits only for its own stage of an earlier round
// and the slot for its own writers of round r - SLOTS, who wait for the words of round
// r - SLOTS: by induction every word is published, provided every block is resident,
// which the cooperative launch guarantees.
// DIAG, each taking one more part away: 1: no runs written (the words and the waits
// only); 2: and no words, nobody waits; 3: and no heads counted (the ring alone).
// Dynamic shared memory (rounds_smem in rle.py): STAGES * (16 + 4 * SEG) ring
// + SLOTS * (SEG / 512) * 128 * 6 slot bytes; (COUNTERS + WRITERS + 2) * 32 threads.
#include "18_rle_lean.cu"

// A segment's word: this call's epoch, its heads, its last head's index in it + 1 (0: none).
__device__ __forceinline__ unsigned long long round_word(unsigned epoch, unsigned heads,
                                                         unsigned last1) {
    return ((unsigned long long)epoch << 34) | ((unsigned long long)heads << 17) | last1;
}

// mbarrier arrival counting `count` arrivals at once.
__device__ __forceinline__ void mbar_arrive_count(unsigned long long* bar, unsigned count) {
    asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0], %1;\n}"
                 :: "r"(ptx::smem_u32(bar)), "r"(count) : "memory");
}

constexpr int ROUND_PIECE = 512;     // a counter's piece: 2 steps of 256 elements
constexpr int ROUND_CAP = 128;       // heads a piece compacts (a 16-bit index and a value)

template <int COUNTERS, int WRITERS, int SEG, int STAGES, int SLOTS, int MINB, int DIAG>
__global__ void __launch_bounds__((COUNTERS + WRITERS + 2) * 32, MINB)
rle_encode_rounds(const int* __restrict__ in, int* __restrict__ values,
                  int* __restrict__ lengths, int* __restrict__ count, long long n,
                  unsigned* /* (no ticket counter) */, unsigned num_segs,
                  unsigned long long* words, unsigned long long* /* (one word a segment) */,
                  unsigned epoch) {
#if __CUDA_ARCH__ >= 900
    using P = unsigned long long;
    constexpr int E = 8, STEP = 32 * E, HALO = 16, STAGE = HALO + 4 * SEG;
    constexpr int SUB = ROUND_PIECE, CAP = ROUND_CAP, PIECES = SEG / SUB, STEPS = SUB / STEP;
    constexpr int SLOT = PIECES * CAP * 6;   // a round's compacted heads: indices, then values
    // The poller: V words a lane a round (up to 160 x MINB blocks), K rounds a round trip.
    constexpr int V = 5 * MINB, K = V >= 15 ? 1 : 15 / V;
    constexpr int POLLER = COUNTERS + WRITERS, PRODUCER = POLLER + 1;
    static_assert(SEG % SUB == 0 && PIECES <= 32 && PIECES % COUNTERS == 0,
                  "whole pieces of 512 elements, at most 32, a multiple of the counters");
    static_assert(WRITERS >= 1 && WRITERS <= PIECES, "1 writer to one a piece");
    static_assert(STAGES >= 2 && STAGES <= 16 && SLOTS >= 2 && SLOTS <= 16,
                  "2 to 16 stages and slots");
    extern __shared__ __align__(128) unsigned char stages[];
    __shared__ P full[STAGES], empty[STAGES], counted[SLOTS], started[SLOTS], drained[SLOTS];
    __shared__ P s_pair[SLOTS][PIECES];     // each piece's (heads, last head + 1)
    __shared__ P s_start[SLOTS];            // the segment's start: (runs, last head + 1) before it

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned G = gridDim.x, b = blockIdx.x;
    const unsigned rounds = (num_segs - b + G - 1) / G;      // this block's segments
    const Runs op;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], WRITERS);
        }
        for (int c = 0; c < SLOTS; ++c) {
            mbar_init(&counted[c], COUNTERS * 32);
            mbar_init(&started[c], 1);
            mbar_init(&drained[c], WRITERS);
        }
        fence_mbar_init();
    }
    __syncthreads();
    unsigned char* const slots = stages + STAGES * STAGE;
    auto slot_idx = [&](int c, int piece) {
        return reinterpret_cast<unsigned short*>(slots + c * SLOT) + piece * CAP;
    };
    auto slot_val = [&](int c, int piece) {
        return reinterpret_cast<int*>(slots + c * SLOT + PIECES * CAP * 2) + piece * CAP;
    };
    // Step j of piece `piece` of segment t in stage s: x, the heads mask; the index.
    auto step = [&](int s, long long t, int piece, int j, Elems<E>& x, unsigned& m) {
        const int* tile = reinterpret_cast<const int*>(stages + (long long)s * STAGE + HALO);
        const int off = piece * SUB + j * STEP + lane * E;
        const long long i = t * SEG + off;
#pragma unroll
        for (int h = 0; h < E / 4; ++h) {
            const int4 q = *reinterpret_cast<const int4*>(tile + off + 4 * h);
            x.v[4 * h] = q.x; x.v[4 * h + 1] = q.y; x.v[4 * h + 2] = q.z; x.v[4 * h + 3] = q.w;
        }
        const int before = __shfl_up_sync(FULL_MASK, x.v[E - 1], 1);
        const int prev = lane == 0 ? tile[off - 1] : before;
        const bool edge = t == 0 || (t + 1) * SEG > n;
        m = edge ? heads_of<true>(x, prev, i, n) : heads_of<false>(x, prev, i, n);
        return i;
    };
    // Stage the heads of mask m (lane's elements at `at` in the piece) from slot q on.
    auto stage_heads = [&](unsigned short* idx, int* val, unsigned q, unsigned m,
                           const Elems<E>& x, unsigned at) {
#pragma unroll
        for (int k = 0; k < E; ++k) {
            if (m >> k & 1u) {
                idx[q] = (unsigned short)(at + k);
                val[q] = x.v[k];
                ++q;
            }
        }
    };

    if (warp == PRODUCER) {
        // Segment t's bytes, preceded (t > 0) by the HALO bytes before them, cut to a
        // multiple of 16; the input's last < 16 bytes stored by this thread.
        if (lane != 0) return;
        const unsigned char* src = reinterpret_cast<const unsigned char*>(in);
        for (unsigned p = 0; p < rounds; ++p) {
            const int s = p % STAGES;
            if (p >= STAGES) mbar_wait_parity(&empty[s], (p / STAGES - 1) & 1);
            const long long t = (long long)p * G + b;
            const long long lo = t * 4 * SEG - (t > 0 ? HALO : 0);
            const long long hi = min((t + 1) * 4 * SEG, n * 4);
            unsigned char* dst = stages + (long long)s * STAGE + (t > 0 ? 0 : HALO);
            const unsigned len = (unsigned)(hi - lo), len16 = len & ~15u;
            for (unsigned k = len16; k < len; k += 4)
                *reinterpret_cast<unsigned*>(dst + k) = *reinterpret_cast<const unsigned*>(src + lo + k);
            if (len16) {
                mbar_expect_tx(&full[s], len16);
                bulk_load(dst, src + lo, len16, &full[s]);
            } else {
                mbar_arrive(&full[s]);
            }
        }
        return;
    }

    if (warp < COUNTERS) {
        // A counter: pieces c, c + COUNTERS, ... of every segment as it lands, their heads
        // compacted into the round's slot (up to CAP a piece); counter 0 publishes the
        // segment's word and, when no piece has more than CAP heads, frees the stage.
        for (unsigned p = 0; p < rounds; ++p) {
            const int s = p % STAGES, c = p % SLOTS;
            const long long t = (long long)p * G + b;
            mbar_wait_parity(&full[s], (p / STAGES) & 1);
            if (p >= SLOTS) mbar_wait_parity(&drained[c], (p / SLOTS - 1) & 1);
#pragma unroll 1
            for (int piece = warp; piece < PIECES; piece += COUNTERS) {
                unsigned short* const idx = slot_idx(c, piece);
                int* const val = slot_val(c, piece);
                unsigned k = 0, hi = 0;
#pragma unroll
                for (int j = 0; j < (DIAG >= 3 ? 0 : STEPS); ++j) {
                    Elems<E> x;
                    unsigned m;
                    const long long i = step(s, t, piece, j, x, m);
                    const unsigned cnt = __popc(m);
                    const unsigned inc = warp_scan_add(cnt, lane);
                    const unsigned tot = __shfl_sync(FULL_MASK, inc, 31);
                    if (k + tot <= CAP) stage_heads(idx, val, k + inc - cnt, m, x, j * STEP + lane * E);
                    k += tot;
                    if (m) hi = (unsigned)i + 32u - __clz(m);
                }
                hi = __reduce_max_sync(FULL_MASK, hi);
                if (lane == 0) s_pair[c][piece] = ((P)k << 32) | hi;
            }
            mbar_arrive(&counted[c]);        // every lane, after its own stores
            bar_sync(1, COUNTERS * 32);
            if (warp == 0) {
                const P pc = lane < PIECES ? s_pair[c][lane] : P(0);
                const bool early = __all_sync(FULL_MASK, (unsigned)(pc >> 32) <= CAP);
                if (DIAG < 2) {
                    const P seg = warp_runs(pc);
                    const unsigned last1 = (unsigned)seg;
                    const unsigned rel = last1 ? (unsigned)(last1 - t * SEG) : 0u;
                    if (lane == 0) st_relaxed_u64(words + t, round_word(epoch, (unsigned)(seg >> 32), rel));
                }
                if (early && lane == 0) mbar_arrive_count(&empty[s], WRITERS);
            }
        }
        return;
    }

    if (warp == POLLER) {
        // The words of rounds r .. r + K - 1 a round trip (lane l: blocks l, l + 32, ...
        // of each), every round's counts folded where they land; the rounds from r on
        // whose G words are all in are handed to the writers, in order.
        if (DIAG >= 2) return;
        P running = 0;
        for (unsigned r = 0; r < rounds;) {
            unsigned c_all[K], h_all[K], c_bef[K], h_bef[K], miss = 0;
            P w[K][V];
#pragma unroll
            for (int k = 0; k < K; ++k)
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    const unsigned blk = lane + 32u * v;
                    const long long t = (long long)(r + k) * G + blk;
                    w[k][v] = r + k < rounds && blk < G && t < num_segs ? ld_relaxed_u64(words + t) : 0ull;
                }
#pragma unroll
            for (int k = 0; k < K; ++k) {
                c_all[k] = h_all[k] = c_bef[k] = h_bef[k] = 0;
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    const unsigned blk = lane + 32u * v;
                    const long long t = (long long)(r + k) * G + blk;
                    if (r + k >= rounds || blk >= G || t >= num_segs) continue;
                    if ((unsigned)(w[k][v] >> 34) != epoch) {
                        miss |= 1u << k;
                        continue;
                    }
                    const unsigned heads = (unsigned)(w[k][v] >> 17) & 0x1ffffu;
                    const unsigned rel = (unsigned)w[k][v] & 0x1ffffu;
                    const unsigned h = rel ? (unsigned)(t * SEG) + rel : 0u;
                    c_all[k] += heads;
                    h_all[k] = max(h_all[k], h);
                    if (blk < b) {
                        c_bef[k] += heads;
                        h_bef[k] = max(h_bef[k], h);
                    }
                }
            }
            miss = __reduce_or_sync(FULL_MASK, miss);
            const unsigned done = min(miss ? __ffs(miss) - 1 : (unsigned)K, rounds - r);
#pragma unroll
            for (int k = 0; k < K; ++k) {
                if (k < (int)done) {
                    const P before = ((P)__reduce_add_sync(FULL_MASK, c_bef[k]) << 32) |
                                     __reduce_max_sync(FULL_MASK, h_bef[k]);
                    const P all = ((P)__reduce_add_sync(FULL_MASK, c_all[k]) << 32) |
                                  __reduce_max_sync(FULL_MASK, h_all[k]);
                    if (lane == 0) {
                        // (the slot's writers of SLOTS rounds ago are done, as this
                        // block's word of this round says; the wait makes it explicit)
                        const unsigned q = r + k;
                        const int c = q % SLOTS;
                        if (q >= SLOTS) mbar_wait_parity(&drained[c], (q / SLOTS - 1) & 1);
                        s_start[c] = op(running, before);
                        mbar_arrive(&started[c]);
                    }
                    running = op(running, all);
                }
            }
            r += done;
        }
        // Block 0 saw every round: the last run's length and the count.
        if (b == 0 && lane == 0) {
            const unsigned runs = (unsigned)(running >> 32), h = (unsigned)running;
            if (DIAG == 0) lengths[runs - 1] = (int)(n - (h - 1));
            *count = (int)runs;
        }
        return;
    }

    // A writer: pieces w, w + WRITERS, ... of every round, from the round's slot (a piece
    // of at most CAP heads) or, for a piece of more, from the stage.
    const int wr = warp - COUNTERS;
    for (unsigned p = 0; p < rounds; ++p) {
        const int s = p % STAGES, c = p % SLOTS;
        const long long t = (long long)p * G + b;
        mbar_wait_parity(&counted[c], (p / SLOTS) & 1);
        if (DIAG < 2) mbar_wait_parity(&started[c], (p / SLOTS) & 1);
        const P pc = lane < PIECES ? s_pair[c][lane] : P(0);
        const bool early = __all_sync(FULL_MASK, (unsigned)(pc >> 32) <= CAP);
        if (DIAG == 0) {
            const P inc = warp_inclusive_scan_op(pc, lane, op);
            const P up = __shfl_up_sync(FULL_MASK, inc, 1);
            const P ex = op(s_start[c], lane == 0 ? P(0) : up);    // each piece's start
#pragma unroll 1
            for (int piece = wr; piece < PIECES; piece += WRITERS) {
                const P st = __shfl_sync(FULL_MASK, ex, piece);
                const unsigned heads = (unsigned)(__shfl_sync(FULL_MASK, pc, piece) >> 32);
                const unsigned pbase = (unsigned)(t * SEG + piece * SUB);
                unsigned run = (unsigned)(st >> 32), last1 = (unsigned)st;
                unsigned short* const idx = slot_idx(c, piece);
                int* const val = slot_val(c, piece);
                // Slots 0 .. nb-1 out: values[run ..], lengths[run - 1 ..]; idx in the piece.
                auto write_out = [&](unsigned nb) {
                    for (unsigned u = lane; u < nb; u += 32) {
                        const unsigned at = pbase + idx[u];
                        const unsigned prev1 = u ? pbase + idx[u - 1] + 1u : last1;
                        values[run + u] = val[u];
                        if (run + u > 0) lengths[run + u - 1] = (int)(at + 1u - prev1);
                    }
                    if (nb) last1 = pbase + idx[nb - 1] + 1u;
                    run += nb;
                };
                if (heads <= CAP) {
                    write_out(heads);
                } else {
                    // More heads than the slot holds: from the stage, half a step (128
                    // elements, at most CAP heads) staged in the piece's slot at a time.
#pragma unroll 1
                    for (int j = 0; j < STEPS; ++j) {
                        Elems<E> x;
                        unsigned m;
                        step(s, t, piece, j, x, m);
                        const unsigned cnt = __popc(m);
                        const unsigned inc2 = warp_scan_add(cnt, lane);
                        const unsigned half = __shfl_sync(FULL_MASK, inc2, 15);
                        const unsigned tot = __shfl_sync(FULL_MASK, inc2, 31);
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            if ((lane >> 4) == h)
                                stage_heads(idx, val, inc2 - cnt - (h ? half : 0u), m, x,
                                            j * STEP + lane * E);
                            __syncwarp();
                            write_out(h ? tot - half : half);
                            __syncwarp();
                        }
                    }
                }
                __syncwarp();
            }
        }
        __syncwarp();
        if (lane == 0) {
            mbar_arrive(&drained[c]);
            if (!early) mbar_arrive(&empty[s]);
        }
    }
#endif
}
