// Single-pass scan with decoupled look-back, one block per tile as in 03, but the tile
// waits in shared memory instead of registers. In 03 a thread holds its ITEMS elements
// in registers from the load to the store (58 registers: 4 blocks of 256 per SM, 128 KB
// of tiles), so an SM's bytes in flight are capped by its register file. Here the tile is
// copied into shared memory with cp.async (pipeline.cuh's issue_tile: 16 bytes a thread,
// no register holds them), read once for the row sums and once more for the output, so a
// thread keeps only its ITEMS / VEC row prefixes: the block fits in MIN_BLOCKS per SM and
// the SM holds MIN_BLOCKS tiles of shared memory in flight (6 x 32 KB or 8 x 24 KB).
//   DELAY_NS, WIDTH: the pause between two polls of a predecessor's status, and the
//   predecessors a lane reads per round trip (lookback_polled.cuh)
//   LOOKBACK = false: a diagnostic, not a scan: every tile scans itself with a zero
//   prefix (no status, no waiting), the ceiling of this tile structure.
// Dynamic shared memory: BLOCK * ITEMS * sizeof(T) bytes.
#include "staged.cuh"
#include "lookback_polled.cuh"

template <typename T, int BLOCK, int ITEMS, int MIN_BLOCKS, int DELAY_NS, int WIDTH,
          bool INCLUSIVE, bool LOOKBACK>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
scan_staged(const T* __restrict__ in, T* __restrict__ out, long long n,
            unsigned* counter, unsigned num_tiles, unsigned long long* words,
            unsigned* flags, T* aggregate, T* prefix, unsigned epoch) {
    constexpr int VEC = Vec16<T>::N;
    static_assert(ITEMS % VEC == 0, "ITEMS must be a multiple of one 16-byte vector");
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK: whole warps, at most 1024");
    constexpr int WARPS = BLOCK / 32;
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* stage = reinterpret_cast<T*>(smem_raw);
    __shared__ unsigned s_tile;
    __shared__ T s_warp[WARPS];
    __shared__ T s_prefix;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const TileStatus<T> st{words, flags, aggregate, prefix, epoch};
    const long long tile = take_ticket(counter, num_tiles, &s_tile);
    const long long base = tile * TILE;
    issue_tile<T, ITEMS>(stage, in, base, n, warp, lane);
    ptx::cp_async_commit();
    ptx::cp_async_wait<0>();                        // this thread's own vectors are in

    // Row sums from shared memory (staged.cuh), the block's total, the look-back.
    const T* mine = stage + warp * 32 * ITEMS + lane * VEC;
    T pre[ITEMS / VEC];
    const T carry = staged_row_sums<T, ITEMS>(mine, lane, pre);
    const T total = block_scan_warps<T, BLOCK>(carry, warp, lane, s_warp);

    if (warp == 0) {
        T excl = T(0);
        if (LOOKBACK) {
            if (tile == 0) {
                if (lane == 0) st.publish(0, ST_PREFIX, total);
            } else {
                if (lane == 0) st.publish(tile, ST_AGGREGATE, total);
                excl = look_back_polled<DELAY_NS, WIDTH>(st, tile, lane);
                if (lane == 0) st.publish(tile, ST_PREFIX, excl + total);
            }
        }
        if (lane == 0) s_prefix = excl;
    }
    __syncthreads();

    // The output: each row once more from shared memory, plus its prefix, to memory.
    const T start = s_prefix + s_warp[warp];
    staged_store<T, ITEMS, INCLUSIVE>(out, mine, pre, start, base, n, warp, lane, TILE);
}
