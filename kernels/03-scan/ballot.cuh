// Run-length encoding in one pass, the heads found by warp ballots and compacted at once.
//
// Every encoder from 13 to 22 kept a tile's data (in registers, in a shared-memory stage or
// in L2 for a second read) until the tile's place among the runs was known, and every one
// paid for that wait with its data held or read again. Here a tile holds only what it will
// write: its runs.
//   - Each warp takes a PIECE of consecutive elements, 32 at a time, lane l element l (one
//     coalesced 4-byte load a lane, BATCH chunks in flight). A head is an element that
//     differs from the one before it: the one before comes from the lane before (one
//     shuffle), at lane 0 from the chunk before. One ballot gives the chunk's 32 head
//     flags; a head's rank among the warp's heads is the warp's count so far plus the
//     popcount of the flags below its lane. Each head stores its value and its index in the
//     piece at that rank in shared memory, at once: about fifteen warp
//     instructions for 32 elements, and the chunk's registers are free again.
//   - A tile is WARPS pieces. Its pair, (heads, last head + 1), is its AGGREGATE;
//     Merrill & Garland's decoupled look-back (as 03's, on the pair: counts add, last heads
//     take the maximum) gives its exclusive prefix, then its PREFIX is published; a lane
//     reads WIDTH predecessors a round trip.
//   - Blocks are persistent, and nothing waits for a prefix but the LOOK-BACK warp (one
//     more warp of the block), which publishes each tile's aggregate, finds its prefix and
//     takes the tickets. A tile's staged runs wait in one of three stages: while the WALKER
//     warps walk tile t_i, t_{i-1} waits for its prefix (a whole walk after its aggregate
//     was published), and at the block barrier after the walk each walker copies out its
//     piece of t_{i-2}: run r's value at r, run r - 1's length (its head's index minus the
//     one before). The last tile's look-back writes the last run's length and the run count.
//   - Before that copy-out a walker issues the loads of its next piece's first batch, so
//     they are in flight while it writes.
//   - Tickets come from the atomic counter, two ahead: a tile only ever waits on tiles of
//     smaller tickets, all taken by running blocks, and the smallest tile without a prefix
//     always finds every predecessor's (so every wait ends, whether or not every block of
//     the grid is resident).
// A piece with more than CAP heads stages the first CAP; at its copy-out it walks the rest
// of its piece again (from L2) and writes those runs itself. DRAM reads 4n, writes 8 bytes
// a run. Any GPU with warp reductions (compute capability 8.0 and later).
// SEQ > 0: instead of look-backs, a SEQUENCER warp (in the block that took ticket 0; one
// more warp in every block) scans the aggregates in ticket order and writes each tile's
// exclusive prefix; the look-back warp waits on its own tile's words.
// Dynamic shared memory (ballot_smem in rle.py): STAGES * WARPS * CAP * 8 bytes (a head's
// value and index side by side; the body takes the stage's layout as a policy, PairStage
// here); (WARPS + 1 + (SEQ > 0)) * 32 threads.
#include "lookback.cuh"

// The stages a block's staged runs rotate through (3: t_i walked, t_{i-1} waiting for its
// prefix, t_{i-2} copied out; with 2 a tile's prefix was needed one walk after its
// aggregate, as the twelfth try had it).
constexpr int STAGES = 3;

// The pair of a tile (or of everything before it) in two tagged words, each a 64-bit
// store: (tag << 32 | heads) and (tag << 32 | last head + 1, 0 for none). A reader takes
// them only when both carry the same tag of this call.
struct PairStatus {
    unsigned long long* lo;
    unsigned long long* hi;
    unsigned epoch;

    __device__ __forceinline__ void publish(long long t, unsigned state, unsigned heads,
                                            unsigned last1) const {
        const unsigned long long top = (unsigned long long)((epoch << 2) | state) << 32;
        st_relaxed_u64(lo + t, top | heads);
        st_relaxed_u64(hi + t, top | last1);
    }
    // Wait until tile t has published this call; its state, heads and last head + 1.
    __device__ __forceinline__ unsigned wait(long long t, unsigned& heads,
                                             unsigned& last1) const {
        int spins = 0;
        while (true) {
            const unsigned long long a = ld_relaxed_u64(lo + t), b = ld_relaxed_u64(hi + t);
            const unsigned ta = (unsigned)(a >> 32), tb = (unsigned)(b >> 32);
            if (ta == tb && (ta >> 2) == epoch && (ta & 3u) != ST_INVALID) {
                heads = (unsigned)a;
                last1 = (unsigned)b;
                return ta & 3u;
            }
            if (++spins > 4) __nanosleep(64);
        }
    }
};

// The words of tiles first + STEP * k (k < K) that lie in [0, limit), all loads in flight
// at once, polled until each carries this call's tag (the others read as zero).
template <int K, int STEP>
__device__ __forceinline__ void load_published(const PairStatus& st, long long first,
                                               long long limit, unsigned long long (&a)[K],
                                               unsigned long long (&b)[K]) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const long long t = first + STEP * k;
        a[k] = b[k] = 0;
        if (t >= 0 && t < limit) { a[k] = ld_relaxed_u64(st.lo + t); b[k] = ld_relaxed_u64(st.hi + t); }
    }
    for (int spins = 0;; ++spins) {
        bool all = true;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const long long t = first + STEP * k;
            const unsigned ta = (unsigned)(a[k] >> 32), tb = (unsigned)(b[k] >> 32);
            if (t >= 0 && t < limit
                && !(ta == tb && (ta >> 2) == st.epoch && (ta & 3u) != ST_INVALID)) {
                all = false;
                a[k] = ld_relaxed_u64(st.lo + t);
                b[k] = ld_relaxed_u64(st.hi + t);
            }
        }
        if (all) return;
        if (spins > 4) __nanosleep(64);
    }
}

// The exclusive pair of tile `tile` (> 0), called by one whole warp: lane l reads the
// WIDTH predecessors tile - 1 - l * WIDTH - k (k < WIDTH, nearest first), so a round trip
// covers 32 * WIDTH tiles; what lies up to the nearest PREFIX contributes.
template <int WIDTH>
__device__ __forceinline__ void look_back_pair(const PairStatus& st, long long tile, int lane,
                                               unsigned& heads, unsigned& last1) {
    heads = 0;
    last1 = 0;
    long long window = tile - 1;
    while (true) {
        unsigned long long a[WIDTH], b[WIDTH];
        const long long first = window - lane * WIDTH;          // this lane's nearest
        load_published<WIDTH, -1>(st, first, tile, a, b);
        unsigned h = 0, l1 = 0;
        bool found = false;
#pragma unroll
        for (int k = 0; k < WIDTH; ++k) {
            if (found) continue;
            const bool prefix = first - k < 0 || ((unsigned)(a[k] >> 32) & 3u) == ST_PREFIX;
            h += (unsigned)a[k];                       // (0 before tile 0: nothing)
            l1 = max(l1, (unsigned)b[k]);
            found = prefix;
        }
        const unsigned prefixes = __ballot_sync(FULL_MASK, found);
        const int nearest = prefixes ? __ffs(prefixes) - 1 : 31;
        const bool take = lane <= nearest;
        heads += __reduce_add_sync(FULL_MASK, take ? h : 0u);
        last1 = max(last1, __reduce_max_sync(FULL_MASK, take ? l1 : 0u));
        if (prefixes) return;
        window -= 32 * WIDTH;
    }
}

// The SEQUENCER (one warp of the grid, in the block that took ticket 0): reads the
// aggregates of the next 32 * SEQ tiles in ticket order a round trip (lane l tiles
// l * SEQ + k), and for the run of them already published from the first on, scans them
// and writes each tile's EXCLUSIVE pair as its PREFIX; then it goes on from the first tile
// not yet published. A tile waits on its own words only. (It never waits for a tile past
// one it has not published: a block's next tile's aggregate may wait on its tile's prefix.)
template <int SEQ>
__device__ __forceinline__ void sequence(const PairStatus& st, unsigned num_tiles, int lane) {
    unsigned run_h = 0, run_l = 0;
    for (long long base = 0; base < num_tiles;) {
        unsigned long long a[SEQ], b[SEQ];
        const long long first = base + lane * SEQ;
        int ready = 0;                                 // this lane's tiles published, in order
#pragma unroll
        for (int k = 0; k < SEQ; ++k) {
            a[k] = b[k] = 0;
            if (first + k < num_tiles) { a[k] = ld_relaxed_u64(st.lo + first + k);
                                         b[k] = ld_relaxed_u64(st.hi + first + k); }
        }
#pragma unroll
        for (int k = 0; k < SEQ; ++k) {
            const unsigned ta = (unsigned)(a[k] >> 32), tb = (unsigned)(b[k] >> 32);
            const bool ok = first + k >= num_tiles
                || (ta == tb && (ta >> 2) == st.epoch && (ta & 3u) == ST_AGGREGATE);
            if (ready == k && ok) ready = k + 1;
        }
        const unsigned whole = __ballot_sync(FULL_MASK, ready == SEQ);
        const int stop = ~whole ? __ffs(~whole) - 1 : 32;           // first lane not whole
        const int take = lane < stop ? SEQ : lane == stop ? ready : 0;
        unsigned sh = 0, sl = 0;
#pragma unroll
        for (int k = 0; k < SEQ; ++k)
            if (k < take) { sh += (unsigned)a[k]; sl = max(sl, (unsigned)b[k]); }
        unsigned ih = sh, il = sl;                     // inclusive scan over the lanes
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned uh = __shfl_up_sync(FULL_MASK, ih, d), ul = __shfl_up_sync(FULL_MASK, il, d);
            if (lane >= d) { ih += uh; il = max(il, ul); }
        }
        const unsigned el = __shfl_up_sync(FULL_MASK, il, 1);
        unsigned ph = run_h + ih - sh, pl = max(run_l, lane ? el : 0u);
#pragma unroll
        for (int k = 0; k < SEQ; ++k) {
            if (k < take && first + k < num_tiles) st.publish(first + k, ST_PREFIX, ph, pl);
            ph += (unsigned)a[k];
            pl = max(pl, (unsigned)b[k]);
        }
        const int moved = stop * SEQ + (stop < 32 ? __shfl_sync(FULL_MASK, ready, stop & 31) : 0);
        run_h += __shfl_sync(FULL_MASK, ih, 31);
        run_l = max(run_l, __shfl_sync(FULL_MASK, il, 31));
        if (moved == 0) __nanosleep(64);
        base += moved;
    }
}

// The block's barrier between the walkers and the look-back warp (the sequencer's warp
// takes no part in it).
template <int THREADS>
__device__ __forceinline__ void tile_barrier() {
    asm volatile("bar.sync 1, %0;" :: "n"(THREADS) : "memory");
}

// A walker's stage: room for CAP heads of its piece, one of SLOTS (STAGES * WARPS) in the
// block's dynamic shared memory. This layout keeps a head's value and its index in the
// piece side by side, 8 bytes a head: put() is one 8-byte shared store, and the copy-out
// reads both with one load. The walk keeps a CURSOR, here the shared address of the next
// head (start(), then advance() by k heads), so that ranking a head costs one multiply-add.
template <int CAP, int SLOTS>
struct PairStage {
    static constexpr int BYTES = 8;                    // shared memory a head
    int2* run;
    unsigned addr;                                     // (its shared address)
    __device__ __forceinline__ PairStage(unsigned char* staging, int slot)
        : run(reinterpret_cast<int2*>(staging) + slot * CAP),
          addr((unsigned)__cvta_generic_to_shared(run)) {}
    __device__ __forceinline__ unsigned start() const { return addr; }
    __device__ __forceinline__ unsigned advance(unsigned c, unsigned k) const { return c + 8u * k; }
    __device__ __forceinline__ bool room(unsigned c) const { return c < addr + 8u * CAP; }
    __device__ __forceinline__ unsigned count(unsigned c) const { return (c - addr) / 8u; }
    // The head at cursor c (value v at index `at` in the piece), stored where `on`.
    __device__ __forceinline__ void put(unsigned c, bool on, int v, int at) const {
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %0, 0;\n\t"
                     "@p st.shared.v2.b32 [%1], {%2, %3};\n\t}"
                     :: "r"((int)on), "r"(c), "r"(v), "r"(at) : "memory");
    }
    __device__ __forceinline__ int2 head(unsigned r) const { return run[r]; }  // (value, index)
    __device__ __forceinline__ int index(unsigned r) const { return run[r].y; }
};

// A batch of a walk: chunks c0 .. c0 + BATCH - 1 of the piece at pbase, lane l element l of
// each (FULL: the whole piece lies inside [0, n); elements past n read as 0).
template <int BATCH, bool FULL>
__device__ __forceinline__ void load_batch(int (&v)[BATCH], const int* __restrict__ in,
                                           long long pbase, long long n, int lane, int c0) {
    const int* p = in + pbase + lane;
#pragma unroll
    for (int j = 0; j < BATCH; ++j)
        v[j] = (FULL || pbase + (c0 + j) * 32 + lane < n) ? __ldg(p + (c0 + j) * 32) : 0;
}

// The heads of a loaded batch found by ballots, ranked, and the first CAP of the piece
// staged (`cur`: the stage's cursor at the next head). `carry` (lane 0): the element
// before the batch.
template <int BATCH, bool FULL, class Stage>
__device__ __forceinline__ void stage_batch(const int (&v)[BATCH], long long pbase,
                                            long long n, int lane, int c0, int& carry,
                                            unsigned& cur, const Stage& stage) {
    const unsigned below = (1u << lane) - 1u;
#pragma unroll
    for (int j = 0; j < BATCH; ++j) {
        const int s = __shfl_sync(FULL_MASK, v[j], (lane + 31) & 31);
        const int prev = lane ? s : carry;
        carry = s;                                     // lane 0: this chunk's last element
        const int at = (c0 + j) * 32 + lane;
        const bool head = v[j] != prev && (FULL || pbase + at < n);
        const unsigned flags = __ballot_sync(FULL_MASK, head);
        const unsigned mine = stage.advance(cur, __popc(flags & below));
        stage.put(mine, head && stage.room(mine), v[j], at);
        cur = stage.advance(cur, __popc(flags));
    }
}

// A warp's walk over its piece: heads found by ballots, ranked, the first CAP staged in
// `stage`. Returns the piece's head count. `carry` (lane 0): the element before the piece.
// `v` holds the first batch if `loaded` (its loads were issued before the copy-out of an
// older tile).
template <int PIECE, int BATCH, int CAP, bool FULL, class Stage>
__device__ __forceinline__ unsigned walk_piece(const int* __restrict__ in, long long pbase,
                                               long long n, int lane, int carry,
                                               const Stage& stage, int (&v)[BATCH],
                                               bool loaded) {
    constexpr int NB = PIECE / 32 / BATCH;             // batches in the piece
    unsigned cur = stage.start();
    if (!loaded) load_batch<BATCH, FULL>(v, in, pbase, n, lane, 0);
#pragma unroll 1
    for (int b = 0; b < NB; ++b) {
        if (b) load_batch<BATCH, FULL>(v, in, pbase, n, lane, b * BATCH);
        stage_batch<BATCH, FULL>(v, pbase, n, lane, b * BATCH, carry, cur, stage);
    }
    return stage.count(cur);
}

// The index in the piece of its last head, or -1: a walk back from its end (for a piece
// with more heads than it staged).
__device__ __forceinline__ int last_head(const int* __restrict__ in, long long pbase,
                                         int chunks, long long n, int lane) {
    for (int c = chunks - 1; c >= 0; --c) {
        const long long i = pbase + (long long)c * 32 + lane;
        const bool head = i < n && (i == 0 || __ldg(in + i) != __ldg(in + i - 1));
        const unsigned flags = __ballot_sync(FULL_MASK, head);
        if (flags) return c * 32 + 31 - __clz(flags);
    }
    return -1;
}

// Copy out a piece's runs once its tile's prefix is known: `g` the rank of its first head,
// `prev1` the index + 1 of the head before it (0 for none), `heads` its head count, the
// first min(heads, CAP) staged in `stage`. Then, for a piece with more heads than staged, a
// walk over the rest of the piece (from L2), writing runs CAP and on itself.
template <int PIECE, int CAP, class Stage>
__device__ __forceinline__ void write_piece(const int* __restrict__ in,
                                            int* __restrict__ values, int* __restrict__ lengths,
                                            const Stage& stage, long long pbase, long long n,
                                            unsigned heads, unsigned g, unsigned prev1, int lane) {
    const unsigned staged = min(heads, (unsigned)CAP);
    for (unsigned i = lane; i < staged; i += 32) {
        const int2 r = stage.head(i);
        values[g + i] = r.x;
        const long long before_at = i ? pbase + stage.index(i - 1) : (long long)prev1 - 1;
        if (g + i > 0) lengths[g + i - 1] = (int)(pbase + r.y - before_at);
    }
    if (heads <= CAP) return;
    // From the chunk of the last staged head, whose heads before it get ranks below CAP.
    const int at0 = stage.index(CAP - 1);
    const int c0 = at0 / 32, lane0 = at0 % 32;
    int last_at = at0;                                 // uniform: the last head seen
    const bool full = pbase + PIECE <= n;
    unsigned cnt = 0;
    for (int c = c0; c < PIECE / 32; ++c) {
        const long long i = pbase + (long long)c * 32 + lane;
        const int v = (full || i < n) ? __ldg(in + i) : 0;
        const int pv = (i > 0 && (full || i < n)) ? __ldg(in + i - 1) : 0;
        const bool head = (i == 0 || v != pv) && (full || i < n);
        const unsigned flags = __ballot_sync(FULL_MASK, head);
        if (c == c0) cnt = CAP - 1 - __popc(flags & ((1u << lane0) - 1u));
        const unsigned below = flags & ((1u << lane) - 1u);
        const unsigned r = cnt + __popc(below);
        if (head && r >= CAP) {
            values[g + r] = v;
            const int p = below ? c * 32 + 31 - __clz(below) : last_at;
            lengths[g + r - 1] = c * 32 + lane - p;
        }
        cnt += __popc(flags);
        if (flags) last_at = c * 32 + 31 - __clz(flags);
    }
}

// The call's epoch, a kernel argument: the host advances it every call.
struct EpochArgument {
    unsigned value;
    __device__ __forceinline__ void take(unsigned*) const {}
    __device__ __forceinline__ unsigned get(unsigned) const { return value; }
    __device__ __forceinline__ void advance() const {}
};

// The encoder's body, for any way of giving it its epoch (`Epoch`: take() stores it in the
// block's shared word before the block's first ticket, get() gives it, advance() is called
// once a call, when the last tile's prefix is known) and any layout of its stages (`Stage`:
// PairStage's interface).
template <int WARPS, int PIECE, int BATCH, int CAP, int WIDTH, int SEQ, class Epoch,
          template <int, int> class Stage = PairStage>
__device__ __forceinline__ void
encode_ballot(const int* __restrict__ in, int* __restrict__ values, int* __restrict__ lengths,
              int* __restrict__ count, long long n, unsigned* counter, unsigned num_tiles,
              unsigned long long* lo, unsigned long long* hi, Epoch ep) {
    static_assert(PIECE % (32 * BATCH) == 0 && PIECE <= 65536, "whole batches, at most 65536");
    static_assert(CAP >= 32 && CAP <= PIECE && CAP % 32 == 0, "32 to PIECE staged heads");
    static_assert(WARPS >= 1 && WARPS <= 31, "1 to 31 walker warps");
    static_assert(WIDTH >= 1 && WIDTH <= 8, "1 to 8 predecessors a lane a round trip");
    static_assert(SEQ >= 0 && SEQ <= 4, "no sequencer, or 1 to 4 tiles a lane");
    constexpr long long TILE = (long long)WARPS * PIECE;
    constexpr unsigned NO_TILE = 0xffffffffu;
    constexpr int S = STAGES, LAG = STAGES - 2;       // a tile's prefix is found LAG tiles late
    extern __shared__ __align__(16) unsigned char staging[];     // S * WARPS stages
    using Slot = Stage<CAP, S * WARPS>;
    __shared__ unsigned s_tile[2];                     // tickets by iteration parity
    __shared__ unsigned s_heads[S][WARPS];             // each piece's heads
    __shared__ int s_last[S][WARPS];                   // its last head's index in the tile, or -1
    __shared__ unsigned s_ex[S][2];                    // the tile's exclusive pair
    // a walker's own record of its piece of each staged tile: the tile, the piece's place
    // in it, its heads, the index in the tile of the head before it (or -1)
    __shared__ int4 s_held[S][WARPS];

    __shared__ unsigned s_epoch;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    constexpr int PAIR = (WARPS + 1) * 32;             // walkers and the look-back warp
    if (threadIdx.x == WARPS * 32) {
        ep.take(&s_epoch);
        s_tile[0] = next_ticket(counter, num_tiles);
    }
    __syncthreads();
    const PairStatus st{lo, hi, ep.get(s_epoch)};
    if (warp == WARPS + 1) {                           // the sequencer's warp
        if constexpr (SEQ > 0)
            if (s_tile[0] == 0) sequence<SEQ>(st, num_tiles, lane);
        return;
    }

    if (warp == WARPS) {                               // the look-back warp
        if (lane == 0) s_tile[1] = s_tile[0] < num_tiles ? next_ticket(counter, num_tiles)
                                                         : NO_TILE;
        unsigned held_t = NO_TILE, held_heads = 0, held_last1 = 0;  // t_{i-1}'s aggregate
        for (int i = 0;; ++i) {
            tile_barrier<PAIR>();                      // (A) tile t_i's pieces are walked
            const unsigned t = s_tile[i & 1], t1 = s_tile[(i + 1) & 1];
            if (t >= num_tiles && (LAG == 0 || held_t >= num_tiles)) return;
            __syncwarp();
            if (lane == 0) s_tile[i & 1] = t < num_tiles && t1 < num_tiles
                                           ? next_ticket(counter, num_tiles) : NO_TILE;
            unsigned agg_heads = 0, agg_last1 = 0;
            if (t < num_tiles) {                       // t_i's aggregate, published
                const unsigned h = lane < WARPS ? s_heads[i % S][lane] : 0u;
                const int l = lane < WARPS ? s_last[i % S][lane] : -1;
                agg_heads = __reduce_add_sync(FULL_MASK, h);
                const int agg_l = __reduce_max_sync(FULL_MASK, l);
                agg_last1 = agg_l < 0 ? 0u : (unsigned)((long long)t * TILE + agg_l) + 1u;
                if (lane == 0 && (SEQ > 0 || t > 0))
                    st.publish(t, ST_AGGREGATE, agg_heads, agg_last1);
            }
            // the tile whose prefix is found now: t_i, or t_{i-1} with three stages
            const unsigned pt = LAG ? held_t : t;
            const unsigned p_heads = LAG ? held_heads : agg_heads;
            const unsigned p_last1 = LAG ? held_last1 : agg_last1;
            held_t = t, held_heads = agg_heads, held_last1 = agg_last1;
            if (pt >= num_tiles) continue;
            unsigned ex_heads = 0, ex_last1 = 0;
            if (SEQ > 0) {                             // the sequencer writes its prefix
                for (int spins = 0; st.wait(pt, ex_heads, ex_last1) != ST_PREFIX; ++spins)
                    if (spins > 2) __nanosleep(128);
            } else if (pt > 0) {
                look_back_pair<WIDTH>(st, pt, lane, ex_heads, ex_last1);
            }
            const unsigned in_heads = ex_heads + p_heads, in_last1 = max(ex_last1, p_last1);
            if (lane == 0) {
                if (SEQ == 0) st.publish(pt, ST_PREFIX, in_heads, in_last1);
                s_ex[(i - LAG) % S][0] = ex_heads;
                s_ex[(i - LAG) % S][1] = ex_last1;
                if (pt == num_tiles - 1) {             // the last run and the count
                    *count = (int)in_heads;
                    ep.advance();
                    if (in_heads > 0)
                        lengths[in_heads - 1] = (int)(n - (long long)(in_last1 - 1));
                }
            }
        }
    }

    // A walker warp: walk its piece of tile t_i into stage i % S, meet the others at (A),
    // then copy out its piece of t_{i-1-LAG}, whose prefix the look-back warp found meanwhile.
    unsigned t = s_tile[0];
    int v[BATCH];                                      // the first batch of the next piece
    bool loaded = false;                               // (loaded before the copy-out)
    for (int i = 0;; ++i) {
        const long long tbase = (long long)t * TILE, pbase = tbase + (long long)warp * PIECE;
        const Slot stage(staging, (i % S) * WARPS + warp);
        unsigned heads = 0;
        if (t < num_tiles) {
            int carry = 0;
            if (lane == 0 && pbase > 0 && pbase <= n) carry = __ldg(in + pbase - 1);
            if (lane == 0 && pbase == 0) carry = ~__ldg(in);   // element 0 is always a head
            if (pbase + PIECE <= n) {
                heads = walk_piece<PIECE, BATCH, CAP, true>(in, pbase, n, lane, carry, stage,
                                                            v, loaded);
            } else {                                   // the last tile's, a chunk at a time
                int one[1];
                heads = walk_piece<PIECE, 1, CAP, false>(in, pbase, n, lane, carry, stage,
                                                         one, false);
            }
            __syncwarp();
            const int last = heads == 0 ? -1
                           : heads <= CAP ? stage.index(heads - 1)
                           : last_head(in, pbase, PIECE / 32, n, lane);
            if (lane == 0) {
                s_heads[i % S][warp] = heads;
                s_last[i % S][warp] = last < 0 ? -1 : warp * PIECE + last;
            }
        }
        tile_barrier<PAIR>();                          // (A)
        unsigned g_in = 0;
        int bl = -1;
        if (t < num_tiles) {                           // this piece's place in t_i
            g_in = __reduce_add_sync(FULL_MASK, lane < warp ? s_heads[i % S][lane] : 0u);
            bl = __reduce_max_sync(FULL_MASK, lane < warp ? s_last[i % S][lane] : -1);
        }
        const unsigned t_next = t < num_tiles ? s_tile[(i + 1) & 1] : NO_TILE;
        const long long next_pbase = (long long)t_next * TILE + (long long)warp * PIECE;
        loaded = t_next < num_tiles && next_pbase + PIECE <= n;
        if (loaded)                                    // its loads in flight during the copy-out
            load_batch<BATCH, true>(v, in, next_pbase, n, lane, 0);
        const int j = (i + S - 1 - LAG) % S;           // the stage of t_{i-1-LAG}
        const int4 held = i >= 1 + LAG ? s_held[j][warp] : make_int4(-1, 0, 0, -1);
        if ((unsigned)held.x < num_tiles) {                // copy it out
            const long long held_tbase = (long long)(unsigned)held.x * TILE;
            const unsigned g = s_ex[j][0] + (unsigned)held.y;
            const unsigned prev1 = held.w < 0 ? s_ex[j][1]
                                              : (unsigned)(held_tbase + held.w) + 1u;
            write_piece<PIECE, CAP>(in, values, lengths, Slot(staging, j * WARPS + warp),
                                    held_tbase + (long long)warp * PIECE, n, (unsigned)held.z,
                                    g, prev1, lane);
        }
        const unsigned newest = LAG ? (unsigned)s_held[(i + S - 1) % S][warp].x : t;
        __syncwarp();
        if (t >= num_tiles && (LAG == 0 || i < 1 || newest >= num_tiles)) return;
        if (lane == 0) s_held[i % S][warp] = make_int4((int)t, (int)g_in, (int)heads, bl);
        __syncwarp();
        t = t_next;
    }
}

template <int WARPS, int PIECE, int BATCH, int CAP, int MINB, int WIDTH, int SEQ>
__global__ void __launch_bounds__((WARPS + 1 + (SEQ > 0)) * 32, MINB)
rle_encode_ballot(const int* __restrict__ in, int* __restrict__ values,
                  int* __restrict__ lengths, int* __restrict__ count, long long n,
                  unsigned* counter, unsigned num_tiles, unsigned long long* lo,
                  unsigned long long* hi, unsigned epoch) {
    encode_ballot<WARPS, PIECE, BATCH, CAP, WIDTH, SEQ>(
        in, values, lengths, count, n, counter, num_tiles, lo, hi, EpochArgument{epoch});
}
