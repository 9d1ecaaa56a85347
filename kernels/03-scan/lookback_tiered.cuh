// A two-level decoupled look-back, for the chunked kernels (14, 15). In their pipeline
// every chunk of a wave (one chunk a block) is looked back while its wave-mates are, so
// the nearest PREFIX is one to two grids back: each look-back reads G to 2G status words
// (G blocks), a wave G^2, all among the few L2 lines of the most recent words, and those
// hot lines, not the round trips, set the pace.
//
// Here chunks are grouped into super-chunks of S consecutive tickets, with a status word
// of their own (the same format, at index num_chunks + super in the same arrays). Chunk t
// (super s = t / S, r = t % S) reads
//   1. the r chunks of its own super-chunk before it (one word a lane, one round trip):
//      if one holds a PREFIX, the nearest one ends the walk (the usual rule);
//   2. otherwise the super-chunks before s, 32 a round trip, summing super AGGREGATEs
//      back to the nearest super PREFIX (lookback_polled.cuh's walk on the super words).
// The last chunk of a super-chunk publishes the super-chunk's AGGREGATE as soon as step 1
// has seen all its chunks' aggregates (before its own step 2: no chain forms), and its
// PREFIX (its own inclusive prefix) at the end. About S / 2 + G / S words a chunk
// instead of G … 2G: for G = 528 and S = 32, ~30–50.
#pragma once
#include "lookback_polled.cuh"

// The same status arrays, shifted to the super-chunk words.
template <typename T>
__device__ __forceinline__ TileStatus<T> super_status(const TileStatus<T>& st,
                                                     unsigned num_chunks) {
    return TileStatus<T>{st.words + num_chunks, st.flags + num_chunks,
                         st.aggregate + num_chunks, st.prefix + num_chunks, st.epoch};
}

// The exclusive prefix of chunk t > 0, whose aggregate is `agg`; called by all 32 lanes of
// one warp; publishes the super-chunk's AGGREGATE and PREFIX when t ends one (the chunk's
// own PREFIX is the caller's).
template <int DELAY_NS, int S, typename T>
__device__ __forceinline__ T look_back_tiered(const TileStatus<T>& st, unsigned num_chunks,
                                              long long t, T agg, int lane) {
    static_assert(S >= 2 && S <= 32, "S: 2 to 32 chunks a super-chunk");
    const TileStatus<T> sup = super_status(st, num_chunks);
    const long long s = t / S;
    const int r = (int)(t % S);
    T value = T(0);
    unsigned state = ST_AGGREGATE;
    if (lane < r) state = wait_polled<DELAY_NS>(st, t - 1 - lane, value);
    const unsigned prefixes = __ballot_sync(FULL_MASK, lane < r && state == ST_PREFIX);
    const int nearest = prefixes ? __ffs(prefixes) - 1 : 31;
    const T near = warp_reduce(lane < r && lane <= nearest ? value : T(0));
    T exclusive;
    if (prefixes) {
        exclusive = near;
    } else {
        if (r == S - 1 && lane == 0) sup.publish(s, ST_AGGREGATE, near + agg);
        exclusive = look_back_polled<DELAY_NS, 1>(sup, s, lane) + near;
    }
    if (r == S - 1 && lane == 0) sup.publish(s, ST_PREFIX, exclusive + agg);
    return exclusive;
}
