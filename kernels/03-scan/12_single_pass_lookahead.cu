// The staged single pass (10) with a warp that looks back while the tile loads. In 10 a
// tile starts its look-back only after its own data has arrived and been summed, so every
// tile adds the look-back's round trips to the time it holds its shared memory. Here the
// block has BLOCK data threads and one more warp: as soon as the ticket is known that
// warp walks back over the predecessors (their status does not depend on this tile),
// while the data warps wait for the tile, sum it and publish its AGGREGATE at once. The
// two meet at a barrier; the look-back warp publishes the PREFIX, the data warps write
// the tile. A tile's AGGREGATE never waits for its own look-back, so no chain forms.
// Dynamic shared memory: BLOCK * ITEMS * sizeof(T) bytes; BLOCK + 32 threads a block.
#include "staged.cuh"
#include "lookback_polled.cuh"

// Named barrier `id` of `threads` (a multiple of 32) threads: bar.sync arrives and waits,
// bar.arrive arrives and goes on.
__device__ __forceinline__ void bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(threads) : "memory");
}

template <typename T, int BLOCK, int ITEMS, int MIN_BLOCKS, int DELAY_NS, bool INCLUSIVE>
__global__ void __launch_bounds__(BLOCK + 32, MIN_BLOCKS)
scan_lookahead(const T* __restrict__ in, T* __restrict__ out, long long n,
               unsigned* counter, unsigned num_tiles, unsigned long long* words,
               unsigned* flags, T* aggregate, T* prefix, unsigned epoch) {
    constexpr int VEC = Vec16<T>::N;
    static_assert(ITEMS % VEC == 0, "ITEMS must be a multiple of one 16-byte vector");
    static_assert(BLOCK % 32 == 0 && BLOCK + 32 <= 1024, "BLOCK: whole warps, one more fits");
    constexpr int WARPS = BLOCK / 32;                // data warps; warp WARPS looks back
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    constexpr int DATA = 1;       // the data warps wait there; the look-back warp only arrives
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* stage = reinterpret_cast<T*>(smem_raw);
    __shared__ unsigned s_tile;
    __shared__ T s_warp[WARPS];
    __shared__ T s_total, s_excl;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const TileStatus<T> st{words, flags, aggregate, prefix, epoch};
    const long long tile = take_ticket(counter, num_tiles, &s_tile);

    const long long base = tile * TILE;
    const T* mine = stage + warp * 32 * ITEMS + lane * VEC;
    T pre[ITEMS / VEC];
    if (warp == WARPS) {                             // the look-back warp
        bar_arrive(DATA, BLOCK + 32);                // the data warps need nothing from it yet
        const T excl = tile > 0 ? look_back_polled<DELAY_NS, 1>(st, tile, lane) : T(0);
        if (lane == 0) s_excl = excl;
    } else {                                         // the data warps
        issue_tile<T, ITEMS>(stage, in, base, n, warp, lane);
        ptx::cp_async_commit();
        ptx::cp_async_wait<0>();
        const T carry = staged_row_sums<T, ITEMS>(mine, lane, pre);
        // tile.cuh's block_scan_warps, on the data warps' own barrier.
        if (lane == 0) s_warp[warp] = carry;
        bar_sync(DATA, BLOCK + 32);
        if (warp == 0) {
            const T v = lane < WARPS ? s_warp[lane] : T(0);
            const T inc = warp_inclusive_scan(v, lane);
            const T exc = __shfl_up_sync(FULL_MASK, inc, 1);
            const T total = __shfl_sync(FULL_MASK, inc, WARPS - 1);
            __syncwarp();
            if (lane < WARPS) s_warp[lane] = lane == 0 ? T(0) : exc;
            if (lane == 0) {
                st.publish(tile, tile == 0 ? ST_PREFIX : ST_AGGREGATE, total);
                s_total = total;
            }
        }
    }
    __syncthreads();                                 // the look-back warp meets the data
    if (warp == WARPS) {
        if (tile > 0 && lane == 0) st.publish(tile, ST_PREFIX, s_excl + s_total);
        return;
    }

    const T start = s_excl + s_warp[warp];
    staged_store<T, ITEMS, INCLUSIVE>(out, mine, pre, start, base, n, warp, lane, TILE);
}
