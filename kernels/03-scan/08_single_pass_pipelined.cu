// Single-pass scan with decoupled look-back, as 03, but with persistent blocks that keep
// STAGES tiles loading into shared memory (pipeline.cuh): while a block scans tile k,
// looks back and stores it, tiles k+1 .. k+STAGES-1 are on their way, so every SM keeps
// loads in flight all the time. One read and one write of the data, like a copy.
// Dynamic shared memory: STAGES * BLOCK * ITEMS * sizeof(T) bytes.
#include "pipeline.cuh"

template <typename T, int BLOCK, int ITEMS, int STAGES, bool INCLUSIVE>
__global__ void __launch_bounds__(BLOCK)
scan_pipelined(const T* __restrict__ in, T* __restrict__ out, long long n,
               unsigned* counter, unsigned num_tiles, unsigned long long* words,
               unsigned* flags, T* aggregate, T* prefix, unsigned epoch) {
    constexpr int VEC = Vec16<T>::N;
    static_assert(ITEMS % VEC == 0, "ITEMS must be a multiple of one 16-byte vector");
    static_assert(BLOCK % 32 == 0 && BLOCK >= 64 && BLOCK <= 1024, "BLOCK: 2 to 32 warps");
    static_assert(STAGES >= 1, "at least one stage");
    constexpr int WARPS = BLOCK / 32;
    constexpr int R = STAGES + 2;                   // ticket slots
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* ring = reinterpret_cast<T*>(smem_raw);
    __shared__ unsigned s_tk[R];
    __shared__ T s_warp[2][WARPS];                  // double-buffered by iteration parity
    __shared__ T s_prefix[2];

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const bool taker = threadIdx.x == BLOCK - 32;   // lane 0 of the last warp
    const TileStatus<T> st{words, flags, aggregate, prefix, epoch};
    Tickets tk{counter, num_tiles, false};
    unsigned pending = NO_TILE;                     // taken one iteration before it is shown
    if (taker) {
        for (int s = 0; s <= STAGES; ++s) s_tk[s] = tk.take();
        pending = tk.take();
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
        const unsigned t = s_tk[s];
        if (t < num_tiles) issue_tile<T, ITEMS>(ring + s * TILE, in, (long long)t * TILE, n, warp, lane);
        ptx::cp_async_commit();
    }
    for (int k = 0;; ++k) {
        const unsigned tile = s_tk[k % R];
        if (tile >= num_tiles) break;
        const unsigned refill = s_tk[(k + STAGES) % R];
        if (taker) { s_tk[(k + STAGES + 1) % R] = pending; pending = tk.take(); }
        const int b = k & 1;
        T* stage = ring + (k % STAGES) * TILE;
        const long long base = (long long)tile * TILE;

        ptx::cp_async_wait<STAGES - 1>();           // this thread's vectors of tile k are in
        T x[ITEMS];
        read_tile<T, ITEMS>(stage, warp, lane, x);
        T pre[ITEMS / VEC];
        const T warp_total = warp_scan_rows<T, ITEMS>(x, lane, pre);
        // x is in registers and used: refill the stage with the tile of iteration k+STAGES.
        if (refill < num_tiles)
            issue_tile<T, ITEMS>(stage, in, (long long)refill * TILE, n, warp, lane);
        ptx::cp_async_commit();
        const T total = block_scan_warps<T, BLOCK>(warp_total, warp, lane, s_warp[b]);
        if (warp == 0) {
            T excl = T(0);
            if (tile == 0) {
                if (lane == 0) st.publish(0, ST_PREFIX, total);
            } else {
                if (lane == 0) st.publish(tile, ST_AGGREGATE, total);
                excl = look_back<T>(st, tile, lane);
                if (lane == 0) st.publish(tile, ST_PREFIX, excl + total);
            }
            if (lane == 0) s_prefix[b] = excl;
        }
        __syncthreads();
        finish_rows<T, ITEMS, INCLUSIVE>(x, pre, s_prefix[b] + s_warp[b][warp]);
        store_tile_cs<T, ITEMS>(out, base, n, warp, lane, x, TILE);
    }
    ptx::cp_async_wait<0>();
}
