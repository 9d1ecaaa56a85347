// Run-length encoding on the look-ahead single pass (12): the input is read once, and only
// the runs are written, their values and their lengths, in the same pass. Per tile:
//   the data warps copy the tile into shared memory (cp.async), count its run heads (an
//   element that differs from the one before it) and find the index of its last head,
//   publish the count as the tile's AGGREGATE; the look-back warp meanwhile finds the
//   number of runs before the tile (lookback_polled.cuh) and hands it over (handoff.cuh);
//   then every data thread walks its rows once more: a warp scan of the head counts gives
//   each head its run's position, a warp max-scan of the head indices the index of the
//   head before it, and each head writes its value and the length of the run before it.
// A run that crosses into later tiles: its length is known only where the next run starts.
// So each tile writes the start of its first run (starts[position], nothing else) and the
// position and start of its last run (tail_pos, tail_start); rle_tails, a second tiny
// kernel over the tiles, sets the length of every tile's last run from the next run's start.
// Dynamic shared memory: BLOCK * ITEMS * 4 bytes; BLOCK + 32 threads a block.
#include "lookback_polled.cuh"
#include "pipeline.cuh"
#include "handoff.cuh"

__device__ __forceinline__ int warp_inclusive_max(int v, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int u = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v = max(u, v);
    }
    return v;
}

// The run heads of one 16-byte row at stage offset `off` (tile element index), as a
// 4-bit mask; `row` its values. The element before the row is the previous stage word,
// or, for the tile's first, `before` (the last element of the previous tile).
__device__ __forceinline__ unsigned row_heads(const int* stage, int off, int before,
                                              long long base, long long n, const int4& row) {
    const int prev = off > 0 ? stage[off - 1] : before;
    const long long i = base + off;
    const int x[4] = {row.x, row.y, row.z, row.w};
    unsigned m = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const int p = k == 0 ? prev : x[k - 1];
        const bool head = i + k < n && (i + k == 0 || x[k] != p);
        m |= (unsigned)head << k;
    }
    return m;
}

template <int BLOCK, int ITEMS, int MIN_BLOCKS, int DELAY_NS>
__global__ void __launch_bounds__(BLOCK + 32, MIN_BLOCKS)
rle_encode_lookahead(const int* __restrict__ in, int* __restrict__ values,
                     int* __restrict__ lengths, int* __restrict__ starts,
                     int* __restrict__ tail_pos, int* __restrict__ tail_start,
                     int* __restrict__ count, long long n, unsigned* counter,
                     unsigned num_tiles, unsigned long long* words, unsigned epoch) {
    constexpr int VEC = 4;
    static_assert(ITEMS % VEC == 0 && ITEMS <= 64, "ITEMS: whole 16-byte vectors, at most 64");
    static_assert(BLOCK % 32 == 0 && BLOCK + 32 <= 1024, "BLOCK: whole warps, one more fits");
    constexpr int WARPS = BLOCK / 32;
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    int* stage = reinterpret_cast<int*>(smem_raw);
    __shared__ unsigned s_tile;
    __shared__ int s_count[WARPS], s_last[WARPS];
    __shared__ int s_excl;
    __shared__ unsigned long long s_handoff;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const TileStatus<int> st{words, nullptr, nullptr, nullptr, epoch};
    if (threadIdx.x == 0) mbar_init(&s_handoff, 1);
    const long long tile = take_ticket(counter, num_tiles, &s_tile);   // __syncthreads

    if (warp == WARPS) {                             // the look-back warp
        const int excl = tile > 0 ? look_back_polled<DELAY_NS, 1>(st, tile, lane) : 0;
        if (lane == 0) {
            s_excl = excl;
            mbar_arrive(&s_handoff);
        }
        return;
    }

    const long long base = tile * TILE;             // the data warps
    const int before = (threadIdx.x == 0 && base > 0) ? in[base - 1] : 0;
    issue_tile<int, ITEMS>(stage, in, base, n, warp, lane);
    ptx::cp_async_commit();
    ptx::cp_async_wait<0>();
    bar_sync(1, BLOCK);                              // every row in: neighbours read them
    const int mine = warp * 32 * ITEMS + lane * VEC;   // stage offset of this thread's row 0

    // First walk: this thread's heads and its last head's index, then the warp's.
    int heads = 0, last = -1;
#pragma unroll 4
    for (int j = 0; j < ITEMS / VEC; ++j) {
        const int off = mine + j * 32 * VEC;
        const int4 row = *reinterpret_cast<const int4*>(stage + off);
        const unsigned m = row_heads(stage, off, before, base, n, row);
        heads += __popc(m);
        if (m) last = (int)(base + off) + 31 - __clz(m);
    }
    heads = warp_reduce(heads);
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) last = max(last, __shfl_xor_sync(FULL_MASK, last, d));
    if (lane == 0) { s_count[warp] = heads; s_last[warp] = last; }
    bar_sync(1, BLOCK);
    int pos = 0, total = 0, prev_head = -1, tile_last = -1;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        const int c = s_count[w], l = s_last[w];
        if (w < warp) { pos += c; prev_head = max(prev_head, l); }
        total += c;
        tile_last = max(tile_last, l);
    }
    if (warp == 0 && lane == 0) st.publish(tile, tile == 0 ? ST_PREFIX : ST_AGGREGATE, total);
    mbar_wait_parity(&s_handoff, 0);
    const int excl = s_excl;
    if (warp == 0 && lane == 0) {
        if (tile > 0) st.publish(tile, ST_PREFIX, excl + total);
        tail_pos[tile] = total > 0 ? excl + total - 1 : -1;
        tail_start[tile] = tile_last;
        if (tile == num_tiles - 1) *count = excl + total;
    }
    pos += excl;

    // Second walk: each head's position (scan of the counts) and the index of the head
    // before it (max-scan of the last heads); write the value and the previous run's length.
#pragma unroll 2
    for (int j = 0; j < ITEMS / VEC; ++j) {
        const int off = mine + j * 32 * VEC;
        const int4 row = *reinterpret_cast<const int4*>(stage + off);
        const unsigned m = row_heads(stage, off, before, base, n, row);
        const int c = __popc(m);
        const int l = m ? (int)(base + off) + 31 - __clz(m) : -1;
        const int inc_c = warp_inclusive_scan(c, lane);
        const int inc_l = warp_inclusive_max(l, lane);
        int p = pos + inc_c - c;
        const int up_l = __shfl_up_sync(FULL_MASK, inc_l, 1);
        int h = lane > 0 ? max(prev_head, up_l) : prev_head;
        const int x[4] = {row.x, row.y, row.z, row.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            if (m & (1u << k)) {
                const int i = (int)(base + off) + k;
                values[p] = x[k];
                if (h >= 0) lengths[p - 1] = i - h;    // the run before ends here
                else starts[p] = i;                     // the tile's first run
                h = i;
                ++p;
            }
        }
        pos += __shfl_sync(FULL_MASK, inc_c, 31);
        prev_head = max(prev_head, __shfl_sync(FULL_MASK, inc_l, 31));
    }
}

// The length of every tile's last run: up to the start of the next run (the first run of a
// later tile, whose start that tile wrote) or to n.
extern "C" __global__ void rle_tails(const int* __restrict__ tail_pos,
                                     const int* __restrict__ tail_start,
                                     const int* __restrict__ starts,
                                     const int* __restrict__ count, int* __restrict__ lengths,
                                     unsigned num_tiles, long long n) {
    const int runs = *count;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < num_tiles;
         t += (long long)gridDim.x * blockDim.x) {
        const int p = tail_pos[t];
        if (p < 0) continue;
        const long long end = p + 1 < runs ? starts[p + 1] : n;
        lengths[p] = (int)(end - tail_start[t]);
    }
}
