// Single-pass scan with decoupled look-back: one read and one write of the data, like a
// copy. Each block scans a tile of BLOCK * ITEMS elements in registers (tile.cuh),
// publishes the tile's total, looks back over its predecessors' published totals for the
// tile's prefix (lookback.cuh), publishes the inclusive prefix, then writes the tile.
//   WIDE:       the whole block looks back, BLOCK predecessors per step (else one warp, 32)
//   PERSISTENT: a grid of resident blocks loops over tiles, each taking its next ticket
//               while it works on the current tile (else one block per tile)
#include "lookback.cuh"

template <typename T, int BLOCK, int ITEMS, bool INCLUSIVE, bool WIDE, bool PERSISTENT>
__global__ void __launch_bounds__(BLOCK)
scan_single_pass(const T* __restrict__ in, T* __restrict__ out, long long n,
                 unsigned* counter, unsigned num_tiles, unsigned long long* words,
                 unsigned* flags, T* aggregate, T* prefix, unsigned epoch) {
    constexpr int VEC = Vec16<T>::N;
    static_assert(ITEMS % VEC == 0, "ITEMS must be a multiple of one 16-byte vector");
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK: whole warps, at most 1024");
    constexpr int WARPS = BLOCK / 32;
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    __shared__ unsigned s_tile;
    __shared__ T s_warp[WARPS];
    __shared__ T s_part[WARPS];
    __shared__ unsigned s_found[WARPS];
    __shared__ T s_prefix;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const TileStatus<T> st{words, flags, aggregate, prefix, epoch};
    if (PERSISTENT) {
        if (threadIdx.x == 0) s_tile = next_ticket(counter, num_tiles);
        __syncthreads();
    } else {
        take_ticket(counter, num_tiles, &s_tile);
    }
    while (true) {
        const long long tile = s_tile;
        if (tile >= num_tiles) break;
        unsigned ahead = 0;
        if (PERSISTENT && threadIdx.x == 0) ahead = next_ticket(counter, num_tiles);
        const long long base = tile * TILE;

        T x[ITEMS];
        load_tile<T, ITEMS>(in, base, n, warp, lane, x, TILE);
        T pre[ITEMS / VEC];
        const T warp_total = warp_scan_rows<T, ITEMS>(x, lane, pre);
        const T total = block_scan_warps<T, BLOCK>(warp_total, warp, lane, s_warp);

        T excl = T(0);
        if (WIDE) {
            if (threadIdx.x == 0) st.publish(tile, tile == 0 ? ST_PREFIX : ST_AGGREGATE, total);
            if (tile > 0) {
                excl = look_back_block<T, BLOCK>(st, tile, s_part, s_found);
                if (threadIdx.x == 0) st.publish(tile, ST_PREFIX, excl + total);
            }
            __syncthreads();
        } else {
            if (warp == 0) {
                if (tile == 0) {
                    if (lane == 0) st.publish(0, ST_PREFIX, total);
                } else {
                    if (lane == 0) st.publish(tile, ST_AGGREGATE, total);
                    excl = look_back<T>(st, tile, lane);
                    if (lane == 0) st.publish(tile, ST_PREFIX, excl + total);
                }
                if (lane == 0) s_prefix = excl;
            }
            __syncthreads();
            excl = s_prefix;
        }
        finish_rows<T, ITEMS, INCLUSIVE>(x, pre, excl + s_warp[warp]);
        store_tile<T, ITEMS>(out, base, n, warp, lane, x, TILE);
        if (!PERSISTENT) break;
        __syncthreads();                            // s_warp, s_prefix free again
        if (threadIdx.x == 0) s_tile = ahead;
        __syncthreads();
    }
}
