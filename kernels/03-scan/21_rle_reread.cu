// Run-length encoding in rounds, each segment read twice: from memory to count its heads,
// from L2 to write its runs. Compute capability 9.0 and later.
//
// 20 brings each segment into a shared-memory ring, and its counters compact every head
// into a slot (an index and a value) so that the segment can wait for its start in fewer
// bytes: under Nsight Compute that compaction and the writers' copy-out are 30 of its 35
// million warp instructions at 2^25, and the SMs issue in about half their cycles (notes,
// ninth try). Here nothing holds the data while the round's words come in:
//   - COUNTERS warps read their pieces of the block's segment straight into registers (a
//     piece is 512 elements: 4 chunks of 128, one 16-byte vector a lane a chunk), count
//     the heads and find the last one: about 20 instructions for 128 elements, no shared
//     stores but one pair a piece. With PF, a counter's loads of its next pieces are in
//     flight while it counts these. Counters add their heads into shared atomics; the
//     last of a block's counters to finish a segment (a shared counter says which) takes
//     the sums and publishes the segment's word, as 20's counter 0 does, and nobody waits
//     for anybody.
//   - the POLLER warp is 20's: it reads every block's word of each round and hands the
//     writers the segment's start (the runs and the last head before it).
//   - WRITERS warps read their pieces again, most of them from L2 (a round is G segments,
//     4.3 MB on 132 SMs, and the counters run at most SLOTS rounds ahead), with a
//     streaming load (last use), find the heads again, stage each head's index and value
//     in the warp's staging area (one 32-bit scan for the 4 chunks' counts, 8 bits each)
//     and copy the piece's runs out as 20's writers do.
// DRAM reads stay 4n if the re-reads hit L2; L2 serves 8n.
// DIAG, each taking one more part away: 1: no runs written (the words and the waits
// only); 2: and no words, nobody waits (the counting alone); 3: and no heads counted (the
// counters' loads alone).
// The counters' and the poller's roles are functions here (count_rounds, poll_rounds), so
// that 22 takes them as they are.
// Dynamic shared memory (reread_smem in rle.py): WRITERS * 512 * 6 staging bytes;
// (COUNTERS + WRITERS + 1) * 32 threads.
#include "20_rle_rounds.cu"

constexpr int REREAD_PIECE = 512;    // a piece: 4 chunks of 128 elements

// A piece's 4 chunks (chunk j: lane's 4 elements from base + 128 j + 4 lane) and the
// element before the piece (every lane; 0 for the first piece). CHECK: the piece holds
// index 0 or ends past n (elements past n read as 0). STREAM: the last read (evict first).
template <bool CHECK, bool STREAM>
__device__ __forceinline__ void load_piece(const int* __restrict__ in, long long base, long long n,
                                           int lane, Elems<4> (&x)[4], int& before) {
    before = base > 0 && base <= n ? __ldg(in + base - 1) : 0;
    if (!CHECK) {
        const int4* p = reinterpret_cast<const int4*>(in + base) + lane;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int4 q = STREAM ? __ldcs(p + 32 * j) : __ldg(p + 32 * j);
            x[j].v[0] = q.x; x[j].v[1] = q.y; x[j].v[2] = q.z; x[j].v[3] = q.w;
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const long long i = base + 128 * j + 4 * lane + k;
            x[j].v[k] = i < n ? __ldg(in + i) : 0;
        }
}

// The head masks of a piece's chunks (bit k of m[j]: element base + 128 j + 4 lane + k).
template <bool CHECK>
__device__ __forceinline__ void piece_heads(const Elems<4> (&x)[4], int before, long long base,
                                            long long n, int lane, unsigned (&m)[4]) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int up = __shfl_up_sync(FULL_MASK, x[j].v[3], 1);
        const int last = __shfl_sync(FULL_MASK, x[j > 0 ? j - 1 : 0].v[3], 31);
        const int prev = lane != 0 ? up : j == 0 ? before : last;
        m[j] = heads_of<CHECK>(x[j], prev, base + 128 * j + 4 * lane, n);
    }
}

// What a block's roles share, a slot a round in flight: the counters' arrivals, the
// segment's start, the writers' drain; each piece's pair, the segment's sums; and (22) the
// head masks, one 32-bit word for 32 elements.
template <int SLOTS, int PIECES, int SEG>
struct RoundsShared {
    unsigned long long counted[SLOTS], started[SLOTS], drained[SLOTS];
    unsigned long long pair[SLOTS][PIECES];  // each piece's (heads, last head + 1)
    unsigned long long start[SLOTS];         // the segment's start: (runs, last head + 1) before it
    unsigned done[SLOTS];                    // counters done with the slot's segments, ever
    unsigned heads[SLOTS], last[SLOTS];      // the segment's heads, last head + 1 (shared sums)
    unsigned mask[SLOTS][SEG / 32];
};

// A piece's head masks (m: piece_heads's) as words, bit e of word w for element 32 w + e:
// chunk j's word 4 j + l / 8 is the nibbles of lanes 8 (l / 8) ... + 7, gathered by
// shuffles; lane 8 q stores it.
__device__ __forceinline__ void store_masks(unsigned* words, const unsigned (&m)[4], int lane) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        unsigned v = m[j] << (4 * (lane & 7));
        v |= __shfl_xor_sync(FULL_MASK, v, 1);
        v |= __shfl_xor_sync(FULL_MASK, v, 2);
        v |= __shfl_xor_sync(FULL_MASK, v, 4);
        if ((lane & 7) == 0) words[4 * j + (lane >> 3)] = v;
    }
}

// The shared state made ready (thread 0), before the block's barrier: `arrivals` on each
// slot's counted barrier (one a counter warp, four with masks), `writers` on its drain.
template <int SLOTS, int PIECES, int SEG>
__device__ __forceinline__ void rounds_init(RoundsShared<SLOTS, PIECES, SEG>& sh, int arrivals,
                                            int writers) {
    for (int c = 0; c < SLOTS; ++c) {
        mbar_init(&sh.counted[c], arrivals);
        mbar_init(&sh.started[c], 1);
        mbar_init(&sh.drained[c], writers);
        sh.done[c] = sh.heads[c] = sh.last[c] = 0;
    }
    fence_mbar_init();
}

// A counter (warp `warp` of COUNTERS): pieces warp, warp + COUNTERS, ... of each of the
// block's segments, their heads counted from registers into the slot's pair of each piece
// and the shared sums; the last counter done with a segment publishes its word. MASKS:
// also each piece's head masks in the slot (22).
template <int COUNTERS, int SEG, int SLOTS, int PF, int DIAG, bool MASKS, int PIECES>
__device__ __forceinline__ void count_rounds(RoundsShared<SLOTS, PIECES, SEG>& sh,
                                             const int* __restrict__ in, long long n,
                                             int* count, unsigned long long* words,
                                             unsigned epoch, unsigned G, unsigned b,
                                             unsigned rounds, int lane, int warp) {
    using P = unsigned long long;
    constexpr int SUB = REREAD_PIECE, PPC = PIECES / COUNTERS;
    Elems<4> x[PPC][4];
    int before[PPC];
    auto load = [&](unsigned p, Elems<4> (&y)[PPC][4], int (&bef)[PPC]) {
#pragma unroll
        for (int k = 0; k < PPC; ++k) {
            const long long base = ((long long)p * G + b) * SEG + (warp + k * COUNTERS) * SUB;
            if (base + SUB <= n) load_piece<false, false>(in, base, n, lane, y[k], bef[k]);
            else load_piece<true, false>(in, base, n, lane, y[k], bef[k]);
        }
    };
    unsigned sink = 0;                   // (a diagnostic's results, kept alive)
    if (PF && rounds) load(0, x, before);
    for (unsigned p = 0; p < rounds; ++p) {
        const int c = p % SLOTS;
        const long long t = (long long)p * G + b;
        Elems<4> nx[PPC][4];
        int nbef[PPC];
        if (!PF) load(p, x, before);
        else if (p + 1 < rounds) load(p + 1, nx, nbef);
        if (DIAG < 2 && p >= SLOTS) mbar_wait_parity(&sh.drained[c], (p / SLOTS - 1) & 1);
        unsigned seg_heads = 0, seg_hi = 0;      // this counter's part of the segment
#pragma unroll
        for (int k = 0; k < PPC; ++k) {
            const int piece = warp + k * COUNTERS;
            const long long base = t * SEG + piece * SUB;
            unsigned c_heads = 0, hi = 0;
            if (DIAG < 3) {
                unsigned m[4];
                if (base == 0 || base + SUB > n) piece_heads<true>(x[k], before[k], base, n, lane, m);
                else piece_heads<false>(x[k], before[k], base, n, lane, m);
                if (MASKS) store_masks(sh.mask[c] + piece * (SUB / 32), m, lane);
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    c_heads += __popc(m[j]);
                    if (m[j]) hi = (unsigned)(base + 128 * j + 4 * lane) + 32u - __clz(m[j]);
                }
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)      // (the loads kept, their values unused)
                    sink ^= (unsigned)(x[k][j].v[0] ^ x[k][j].v[1] ^ x[k][j].v[2] ^
                                       x[k][j].v[3] ^ before[k]);
            }
            const P pair = warp_runs(((P)c_heads << 32) | hi);
            seg_heads += (unsigned)(pair >> 32);
            seg_hi = max(seg_hi, (unsigned)pair);
            if (DIAG >= 2) sink ^= seg_heads ^ seg_hi;
            else if (lane == 0) sh.pair[c][piece] = pair;
        }
        if (PF) {
#pragma unroll
            for (int k = 0; k < PPC; ++k) {
                before[k] = nbef[k];
#pragma unroll
                for (int j = 0; j < 4; ++j) x[k][j] = nx[k][j];
            }
        }
        if (DIAG >= 2) continue;
        // The last counter done with this segment publishes its word: the segment's
        // heads and last head gathered by shared atomics, taken (and cleared for the
        // slot's next segment) by the last one.
        unsigned last = 0;
        // (with MASKS, lanes 8, 16 and 24 stored mask words too: each arrives after its
        // own stores, COUNTERS x 4 arrivals in all)
        if (MASKS && lane != 0 && (lane & 7) == 0) mbar_arrive(&sh.counted[c]);
        if (lane == 0) {
            atomicAdd(&sh.heads[c], seg_heads);
            atomicMax(&sh.last[c], seg_hi);
            __threadfence_block();
            last = atomicAdd(&sh.done[c], 1u) == (p / SLOTS) * COUNTERS + COUNTERS - 1;
            __threadfence_block();
            mbar_arrive(&sh.counted[c]);
            if (last) {
                const unsigned all = atomicExch(&sh.heads[c], 0u);
                const unsigned last1 = atomicExch(&sh.last[c], 0u);
                const unsigned rel = last1 ? (unsigned)(last1 - t * SEG) : 0u;
                st_relaxed_u64(words + t, round_word(epoch, all, rel));
            }
        }
    }
    if (DIAG >= 2 && n < 0) *count = (int)sink;   // (never: keeps a diagnostic's work)
}

// 20's poller: the words of rounds r .. r + K - 1 a round trip (lane l: blocks l, l + 32,
// ... of each); the rounds from r on whose G words are all in are handed to the writers,
// in order; block 0's writes the last run's length and the count.
template <int SEG, int SLOTS, int MINB, int DIAG, int PIECES>
__device__ __forceinline__ void poll_rounds(RoundsShared<SLOTS, PIECES, SEG>& sh,
                                            const unsigned long long* words, unsigned num_segs,
                                            unsigned epoch, int* lengths, int* count,
                                            long long n, unsigned G, unsigned b,
                                            unsigned rounds, int lane) {
    using P = unsigned long long;
    // V words a lane a round (up to 160 x MINB blocks), K rounds a round trip.
    constexpr int V = 5 * MINB, K = V >= 15 ? 1 : 15 / V;
    const Runs op;
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
                    const unsigned q = r + k;
                    const int c = q % SLOTS;
                    if (q >= SLOTS) mbar_wait_parity(&sh.drained[c], (q / SLOTS - 1) & 1);
                    sh.start[c] = op(running, before);
                    mbar_arrive(&sh.started[c]);
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
}

template <int COUNTERS, int WRITERS, int SEG, int SLOTS, int MINB, int PF, int DIAG>
__global__ void __launch_bounds__((COUNTERS + WRITERS + 1) * 32, MINB)
rle_encode_reread(const int* __restrict__ in, int* __restrict__ values,
                  int* __restrict__ lengths, int* __restrict__ count, long long n,
                  unsigned* /* (no ticket counter) */, unsigned num_segs,
                  unsigned long long* words, unsigned long long* /* (one word a segment) */,
                  unsigned epoch) {
#if __CUDA_ARCH__ >= 900
    using P = unsigned long long;
    constexpr int SUB = REREAD_PIECE, PIECES = SEG / SUB;
    constexpr int PPC = PIECES / COUNTERS, PPW = PIECES / WRITERS;
    constexpr int POLLER = COUNTERS + WRITERS;
    static_assert(SEG % SUB == 0 && PIECES <= 32, "whole pieces of 512 elements, at most 32");
    static_assert(PIECES % COUNTERS == 0 && PPC <= 4, "1 to 4 pieces a counter a segment");
    static_assert(PIECES % WRITERS == 0 && PPW <= 4, "1 to 4 pieces a writer a segment");
    static_assert(SLOTS >= 2 && SLOTS <= 16, "2 to 16 slots");
    extern __shared__ __align__(16) unsigned char staging[];
    __shared__ RoundsShared<SLOTS, PIECES, SEG> sh;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned G = gridDim.x, b = blockIdx.x;
    const unsigned rounds = (num_segs - b + G - 1) / G;      // this block's segments
    const Runs op;
    if (threadIdx.x == 0) rounds_init(sh, COUNTERS, WRITERS);
    __syncthreads();
    if (warp < COUNTERS) {
        count_rounds<COUNTERS, SEG, SLOTS, PF, DIAG, false>(sh, in, n, count, words, epoch, G,
                                                            b, rounds, lane, warp);
        return;
    }
    if (warp == POLLER) {
        if (DIAG < 2) poll_rounds<SEG, SLOTS, MINB, DIAG>(sh, words, num_segs, epoch, lengths,
                                                          count, n, G, b, rounds, lane);
        return;
    }

    // A writer: pieces wr, wr + WRITERS, ... of every round, read again.
    if (DIAG >= 2) return;
    const int wr = warp - COUNTERS;
    unsigned short* const idx = reinterpret_cast<unsigned short*>(staging) + wr * SUB;
    int* const val = reinterpret_cast<int*>(staging + WRITERS * SUB * 2) + wr * SUB;
    for (unsigned p = 0; p < rounds; ++p) {
        const int c = p % SLOTS;
        const long long t = (long long)p * G + b;
        mbar_wait_parity(&sh.counted[c], (p / SLOTS) & 1);
        Elems<4> x[PPW][4];
        int before[PPW];
        if (DIAG == 0) {
#pragma unroll
            for (int k = 0; k < PPW; ++k) {
                const long long base = t * SEG + (wr + k * WRITERS) * SUB;
                if (base + SUB <= n) load_piece<false, true>(in, base, n, lane, x[k], before[k]);
                else load_piece<true, true>(in, base, n, lane, x[k], before[k]);
            }
        }
        mbar_wait_parity(&sh.started[c], (p / SLOTS) & 1);
        if (DIAG == 0) {
            const P pc = lane < PIECES ? sh.pair[c][lane] : P(0);
            const P inc = warp_inclusive_scan_op(pc, lane, op);
            const P up = __shfl_up_sync(FULL_MASK, inc, 1);
            const P ex = op(sh.start[c], lane == 0 ? P(0) : up);    // each piece's start
#pragma unroll
            for (int k = 0; k < PPW; ++k) {
                const int piece = wr + k * WRITERS;
                const long long base = t * SEG + piece * SUB;
                const P st = __shfl_sync(FULL_MASK, ex, piece);
                unsigned run = (unsigned)(st >> 32), last1 = (unsigned)st;
                unsigned m[4];
                if (base == 0 || base + SUB > n) piece_heads<true>(x[k], before[k], base, n, lane, m);
                else piece_heads<false>(x[k], before[k], base, n, lane, m);
                // Each chunk's heads of lanes before this one: one scan, 8 bits a chunk
                // (a chunk holds at most 128 heads).
                const unsigned cnt = __popc(m[0]) | __popc(m[1]) << 8 | __popc(m[2]) << 16 |
                                     __popc(m[3]) << 24;
                const unsigned incl = warp_scan_add(cnt, lane), tot = __shfl_sync(FULL_MASK, incl, 31);
                const unsigned excl = incl - cnt;
                unsigned at = 0;                     // the chunk's first slot
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    unsigned q = at + (excl >> (8 * j) & 0xffu);
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        if (m[j] >> e & 1u) {
                            idx[q] = (unsigned short)(128 * j + 4 * lane + e);
                            val[q] = x[k][j].v[e];
                            ++q;
                        }
                    }
                    at += tot >> (8 * j) & 0xffu;
                }
                __syncwarp();
                const unsigned pbase = (unsigned)base;
                for (unsigned u = lane; u < at; u += 32) {
                    const unsigned head = pbase + idx[u];
                    const unsigned prev1 = u ? pbase + idx[u - 1] + 1u : last1;
                    values[run + u] = val[u];
                    if (run + u > 0) lengths[run + u - 1] = (int)(head + 1u - prev1);
                }
                __syncwarp();
            }
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(&sh.drained[c]);
    }
#endif
}
