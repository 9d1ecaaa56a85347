// The bulk-copy kernels' shared parts (16, 17; compute capability 9.0 and later):
//   - a ring of STAGES shared-memory stages that one producer thread fills with a tile
//     each by a bulk copy (cp.async.bulk: one instruction moves the whole tile), each stage
//     with three mbarriers: full (the tile landed), summed (its sums are in shared memory),
//     empty (it may be refilled);
//   - the SEQUENCER: one warp in the whole grid that turns tile aggregates into tile
//     prefixes, in ticket order.
//
// Why a sequencer. In every look-back so far (03 … 15) each tile in flight walks back over
// its predecessors' status words itself: with a thousand tiles in flight, a thousand warps
// read and poll the same few L2 lines of the most recent words, and the look-back set the
// pace (notes, fifth try). Here the warps of a tile publish its AGGREGATE and never read
// another tile's word; one warp reads each aggregate once (32 x WIDTH words a round
// trip), scans them and writes each tile's EXCLUSIVE prefix into the tile's own word
// (state PREFIX); the tile's warps poll that one word. Every status word is written twice
// and read about twice, whatever the number of tiles in flight.
//
// Why reducers apart from scanners. The sequencer is a chain: tile t's prefix waits for
// every aggregate before it, so an aggregate published late holds up every SM. A block's
// REDUCER warps sum each tile as soon as it lands and publish its aggregate; they never
// wait for a prefix. Its SCANNER warps take the tiles in order, wait for each one's prefix
// and write it out. The ring between them absorbs the prefix's latency.
//
// Status words (SplitStatus below) carry lookback.cuh's tag (an epoch per call and a
// state), with two differences: a PREFIX holds the exclusive prefix (what comes before the
// tile), written by the sequencer, not the inclusive one written by the tile; and an
// 8-byte value is two tagged words, not a fenced flag and value.
//
// Deadlock freedom. A producer takes a ticket only when it holds a free stage and starts
// its copy at once, so every ticket taken is loading, and reducers wait for nothing but
// data: every aggregate gets published. The sequencer runs in a block that holds a ticket
// (the one that took ticket 0), so it reaches every tile; scanners wait only for it.
#pragma once
#include "lookback.cuh"
#include "handoff.cuh"

constexpr unsigned NO_TILE = 0xffffffffu;

__device__ __forceinline__ void mbar_expect_tx(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(ptx::smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void fence_mbar_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// `bytes` (a multiple of 16, from 16-byte aligned addresses) from global to shared memory;
// their arrival completes that many bytes of the mbarrier's transaction count.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes,
                                          unsigned long long* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];"
                 :: "r"(ptx::smem_u32(dst)), "l"(src), "r"(bytes), "r"(ptx::smem_u32(bar))
                 : "memory");
}

// The ring's bookkeeping in static shared memory.
template <int STAGES> struct Ring {
    unsigned long long full[STAGES];    // producer -> reducers: the tile has landed
    unsigned long long summed[STAGES];  // reducers -> scanners: its piece sums are written
    unsigned long long empty[STAGES];   // scanners -> producer: the stage may be refilled
    unsigned tile[STAGES];              // the stage's ticket (NO_TILE past the last)
    unsigned first;                     // the producer's first ticket
};

// The producer (one thread). Position p of the ring is stage p % STAGES; a stage holds
// HALO bytes, then TILE_BYTES: tile t's bytes [t * TILE_BYTES, (t + 1) * TILE_BYTES) of the
// input, preceded (t > 0) by the HALO bytes before them. The copy's length is cut to a
// multiple of 16; the input's last < 16 bytes are stored by this thread (4-byte words).
// After a ticket past the last tile it marks the stage NO_TILE and stops.
template <int STAGES, int TILE_BYTES, int HALO>
__device__ __forceinline__ void produce(Ring<STAGES>& ring, unsigned char* stages,
                                        const unsigned char* src, long long nbytes,
                                        unsigned* counter, unsigned num_tiles) {
    static_assert(TILE_BYTES % 16 == 0 && HALO % 16 == 0, "16-byte multiples");
    constexpr int STAGE = HALO + TILE_BYTES;
    for (unsigned p = 0;; ++p) {
        const int s = p % STAGES;
        if (p >= STAGES) mbar_wait_parity(&ring.empty[s], (p / STAGES - 1) & 1);
        const unsigned t = p == 0 ? ring.first : next_ticket(counter, num_tiles);
        ring.tile[s] = t;
        if (t >= num_tiles) {
            mbar_arrive(&ring.full[s]);
            return;
        }
        const long long lo = (long long)t * TILE_BYTES - (t > 0 ? HALO : 0);
        const long long hi = min((long long)(t + 1) * TILE_BYTES, nbytes);
        unsigned char* dst = stages + (long long)s * STAGE + (t > 0 ? 0 : HALO);
        const unsigned len = (unsigned)(hi - lo), len16 = len & ~15u;
        for (unsigned b = len16; b < len; b += 4)
            *reinterpret_cast<unsigned*>(dst + b) = *reinterpret_cast<const unsigned*>(src + lo + b);
        if (len16) {
            mbar_expect_tx(&ring.full[s], len16);
            bulk_load(dst, src + lo, len16, &ring.full[s]);
        } else {
            mbar_arrive(&ring.full[s]);
        }
    }
}

// Combining operators: sums for the scan, (run heads, last head) for the encoder.
struct Plus {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

template <typename T, typename Op>
__device__ __forceinline__ T warp_inclusive_scan_op(T v, int lane, Op op) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const T u = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v = op(u, v);
    }
    return v;
}

// The status of one call, without a fence anywhere: a value of 4 bytes lives in one 64-bit
// word a tile, (epoch << 2 | state) << 32 | its bits, as in lookback.cuh; a value of 8 bytes
// is split into two such words, `lo` and `hi`, each with its own tag. A reader takes a value
// only when both its words carry this call's tag for the state it wants, so it never mixes
// halves, and no fence is needed between a value and its flag (each word is written and
// read with one access). (lookback.cuh's 8-byte status is a flag and a value, fenced
// between: a fence waits for the memory system, about a microsecond under a full load,
// and one a word made the first version of this sequencer slower than the tiles it
// serves: int64 at 0.32 of the copy, the encoder at 0.95x torch.unique_consecutive.)
template <typename T> struct SplitStatus {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte values");
    static constexpr bool WIDE = sizeof(T) == 8;
    unsigned long long* lo;
    unsigned long long* hi;                  // 8-byte values only
    unsigned epoch;

    __device__ __forceinline__ unsigned tag(unsigned state) const { return (epoch << 2) | state; }

    __device__ __forceinline__ void publish(long long t, unsigned state, T value) const {
        const unsigned long long top = (unsigned long long)tag(state) << 32;
        if constexpr (WIDE) {
            const unsigned long long b = bits_as<unsigned long long>(value);
            st_relaxed_u64(lo + t, top | (b & 0xffffffffull));
            st_relaxed_u64(hi + t, top | (b >> 32));
        } else {
            st_relaxed_u64(lo + t, top | bits_as<unsigned>(value));
        }
    }
    // The raw words of tile t (both loads issued before either is used).
    __device__ __forceinline__ void load(long long t, unsigned long long& a,
                                         unsigned long long& b) const {
        a = ld_relaxed_u64(lo + t);
        b = WIDE ? ld_relaxed_u64(hi + t) : 0ull;
    }
    // Whether the words hold `state` of this call; the value they hold.
    __device__ __forceinline__ bool holds(unsigned long long a, unsigned long long b,
                                          unsigned state, T& value) const {
        const unsigned want = tag(state);
        if constexpr (WIDE) {
            value = bits_as<T>((b << 32) | (a & 0xffffffffull));
            return (unsigned)(a >> 32) == want && (unsigned)(b >> 32) == want;
        } else {
            value = bits_as<T>((unsigned)(a & 0xffffffffull));
            return (unsigned)(a >> 32) == want;
        }
    }
};

// Wait for tile t's PREFIX (the exclusive prefix the sequencer wrote); one thread.
template <int DELAY_NS, typename T>
__device__ __forceinline__ T wait_prefix(const SplitStatus<T>& st, long long t) {
    T value;
    while (true) {
        unsigned long long a, b;
        st.load(t, a, b);
        if (st.holds(a, b, ST_PREFIX, value)) return value;
        __nanosleep(DELAY_NS);
    }
}

// The sequencer (all 32 lanes of one warp). A round reads 32 x WIDTH words, lane l the
// WIDTH tiles base + WIDTH l + v (v = 0 .. WIDTH-1) in one go. The ready tiles from `base`
// on, up to the first one not yet published, get their exclusive prefixes: each lane folds
// its ready tiles in registers, ONE warp scan of the lane totals gives each lane the prefix
// of its first tile, and the lane walks its tiles from it; `base` moves past them. When
// nothing was ready it pauses DELAY_NS before the next round trip. (The first form, a warp
// scan for each column of 32 tiles, WIDTH scans a round one after the other, kept up with
// 80 of the encoder's tiles a microsecond where its ring alone brings 126; this one, 111:
// notes, sixth try.)
template <int WIDTH, int DELAY_NS, typename T, typename Op>
__device__ __forceinline__ void sequence(const SplitStatus<T>& st, unsigned num_tiles,
                                         T identity, Op op, int lane) {
    static_assert(WIDTH >= 1 && WIDTH <= 16, "WIDTH: 1 to 16 tiles a lane");
    T running = identity;
    long long base = 0;
    while (base < num_tiles) {
        const long long first = base + (long long)WIDTH * lane;   // this lane's first tile
        unsigned long long a[WIDTH], b[WIDTH];
#pragma unroll
        for (int v = 0; v < WIDTH; ++v) {           // every load in flight at once
            a[v] = b[v] = 0ull;
            if (first + v < num_tiles) st.load(first + v, a[v], b[v]);
        }
        T value[WIDTH];
        int k = WIDTH;                              // this lane's ready tiles: 0 .. k-1
#pragma unroll
        for (int v = WIDTH - 1; v >= 0; --v) {
            const bool ready = first + v < num_tiles && st.holds(a[v], b[v], ST_AGGREGATE, value[v]);
            if (!ready) k = v;
        }
        // The round's ready run: every tile of lanes 0 .. stop-1 and k of lane `stop`.
        const unsigned whole = __ballot_sync(FULL_MASK, k == WIDTH);
        const int stop = whole == FULL_MASK ? 32 : __ffs(~whole) - 1;
        const int mine = lane < stop ? WIDTH : lane == stop ? k : 0;
        T sum = identity;
#pragma unroll
        for (int v = 0; v < WIDTH; ++v)
            if (v < mine) sum = op(sum, value[v]);
        const T inc = warp_inclusive_scan_op(sum, lane, op);
        const T up = __shfl_up_sync(FULL_MASK, inc, 1);
        T prefix = lane == 0 ? running : op(running, up);
#pragma unroll
        for (int v = 0; v < WIDTH; ++v) {
            if (v < mine) {
                st.publish(first + v, ST_PREFIX, prefix);
                prefix = op(prefix, value[v]);
            }
        }
        running = op(running, __shfl_sync(FULL_MASK, inc, 31));
        const int stop_k = __shfl_sync(FULL_MASK, k, stop & 31);
        const long long moved = (long long)stop * WIDTH + (stop < 32 ? stop_k : 0);
        base += moved;
        if (moved == 0) __nanosleep(DELAY_NS);
    }
}

// ---- the block's roles (16, 17) --------------------------------------------------------
// The start of a block: thread 0 initialises the ring's barriers (`empties` arrivals free
// a stage: one a scanner warp), the producer's lane takes the block's first ticket, and the
// block meets once. After this, each warp goes its own way: no __syncthreads again.
template <int STAGES>
__device__ __forceinline__ void ring_start(Ring<STAGES>& ring, unsigned empties,
                                           bool producer_lane, unsigned* counter,
                                           unsigned num_tiles) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&ring.full[s], 1);
            mbar_init(&ring.summed[s], 1);
            mbar_init(&ring.empty[s], empties);
        }
        fence_mbar_init();
    }
    if (producer_lane) ring.first = next_ticket(counter, num_tiles);
    __syncthreads();
}

// A reducer warp (r of REDUCERS): every tile as it lands, pieces r, r + REDUCERS, ... of
// the SCANNERS pieces; piece_sum(stage, tile, piece) is the piece's value (in every lane),
// left in s_sum[stage][piece]. The reducers meet at named barrier 1; reducer 0 folds the
// pieces in order, publishes the tile's AGGREGATE (if `publish`) and tells the scanners.
template <int STAGES, int SCANNERS, int REDUCERS, typename V, typename Op, typename PieceSum>
__device__ __forceinline__ void reduce_tiles(Ring<STAGES>& ring, V (*s_sum)[SCANNERS],
                                             unsigned num_tiles, const SplitStatus<V>& st,
                                             bool publish, V identity, Op op,
                                             PieceSum piece_sum, int r, int lane) {
    for (unsigned p = 0;; ++p) {
        const int s = p % STAGES;
        mbar_wait_parity(&ring.full[s], (p / STAGES) & 1);
        const unsigned t = ring.tile[s];
        if (t >= num_tiles) {
            if (r == 0 && lane == 0) mbar_arrive(&ring.summed[s]);
            return;
        }
#pragma unroll 1
        for (int piece = r; piece < SCANNERS; piece += REDUCERS) {
            const V v = piece_sum(s, t, piece);
            if (lane == 0) s_sum[s][piece] = v;
        }
        bar_sync(1, REDUCERS * 32);
        if (r == 0 && lane == 0) {
            if (publish) {
                V total = identity;
#pragma unroll
                for (int w = 0; w < SCANNERS; ++w) total = op(total, s_sum[s][w]);
                st.publish(t, ST_AGGREGATE, total);
            }
            mbar_arrive(&ring.summed[s]);
        }
    }
}

// A scanner warp: the tiles in ring order; for each, once its sums are in (summed) and,
// if `wait`, its PREFIX is written, body(stage, tile, prefix) does this warp's piece; then
// the warp frees its share of the stage.
template <int STAGES, int DELAY_NS, typename V, typename Body>
__device__ __forceinline__ void scan_tiles(Ring<STAGES>& ring, unsigned num_tiles,
                                           const SplitStatus<V>& st, bool wait, V identity,
                                           Body body, int lane) {
    for (unsigned p = 0;; ++p) {
        const int s = p % STAGES;
        mbar_wait_parity(&ring.summed[s], (p / STAGES) & 1);
        const unsigned t = ring.tile[s];
        if (t >= num_tiles) return;
        V start = identity;
        if (wait) {
            if (lane == 0) start = wait_prefix<DELAY_NS>(st, t);
            start = __shfl_sync(FULL_MASK, start, 0);
        }
        body(s, t, start);
        __syncwarp();
        if (lane == 0) mbar_arrive(&ring.empty[s]);
    }
}

// A scanner warp that frees each stage BEFORE its prefix comes: take(stage, tile) keeps in
// registers all the warp needs of the stage; the warp frees its share of the stage; then
// finish(taken, tile, prefix) writes the piece out. The prefix's latency (the sequencer's
// chain) is then spent outside the ring, which refills meanwhile: a stage is held from the
// bulk copy to the copy-out only. The first poll of the prefix is issued before the copy-out.
template <int STAGES, int DELAY_NS, typename V, typename Take, typename Finish>
__device__ __forceinline__ void scan_tiles_early(Ring<STAGES>& ring, unsigned num_tiles,
                                                 const SplitStatus<V>& st, bool wait,
                                                 V identity, Take take, Finish finish,
                                                 int lane) {
    for (unsigned p = 0;; ++p) {
        const int s = p % STAGES;
        mbar_wait_parity(&ring.summed[s], (p / STAGES) & 1);
        const unsigned t = ring.tile[s];
        if (t >= num_tiles) return;
        unsigned long long a = 0ull, b = 0ull;
        if (wait && lane == 0) st.load(t, a, b);
        const auto taken = take(s, t);
        __syncwarp();
        if (lane == 0) mbar_arrive(&ring.empty[s]);
        V start = identity;
        if (wait) {
            if (lane == 0 && !st.holds(a, b, ST_PREFIX, start))
                start = wait_prefix<DELAY_NS>(st, t);
            start = __shfl_sync(FULL_MASK, start, 0);
        }
        finish(taken, t, start);
    }
}
