// Run-length encoding in one pass, as 05, on the persistent pipeline of 08
// (pipeline.cuh): STAGES tiles loading into shared memory while the block finds the run
// heads of tile k, counts them across tiles by the decoupled look-back and scatters each
// run's value and first index. The element before each warp's chunk (the halo) comes in
// with the tile, by a 4-byte cp.async of the warp's lane 0. The tile that ends the array
// writes the number of runs; the run lengths follow from the starts (06_run_lengths.cu).
// Dynamic shared memory: STAGES * BLOCK * ITEMS * 4 bytes.
#include "pipeline.cuh"

template <typename T, int BLOCK, int ITEMS, int STAGES>
__global__ void __launch_bounds__(BLOCK)
rle_encode_pipelined(const T* __restrict__ in, T* __restrict__ values, int* __restrict__ starts,
                     int* __restrict__ count, long long n, unsigned* counter,
                     unsigned num_tiles, unsigned long long* words, unsigned epoch) {
    static_assert(sizeof(T) == 4, "4-byte elements (the head counts share their layout)");
    constexpr int VEC = Vec16<T>::N;
    static_assert(ITEMS % VEC == 0 && ITEMS <= 32, "ITEMS: a multiple of 4, at most 32");
    constexpr int WARPS = BLOCK / 32;
    constexpr int R = STAGES + 2;
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* ring = reinterpret_cast<T*>(smem_raw);
    __shared__ unsigned s_tk[R];
    __shared__ T s_halo[STAGES][WARPS];
    __shared__ int s_warp[2][WARPS];
    __shared__ int s_prefix[2];

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const bool taker = threadIdx.x == BLOCK - 32;
    const TileStatus<int> st{words, nullptr, nullptr, nullptr, epoch};
    Tickets tk{counter, num_tiles, false};
    unsigned pending = NO_TILE;

    // The tile's vectors and, by lane 0 of each warp, the element before the warp's chunk.
    auto issue = [&](int s, unsigned t) {
        const long long base = (long long)t * TILE;
        issue_tile<T, ITEMS>(ring + s * TILE, in, base, n, warp, lane);
        if (lane == 0) {
            const long long c = base + (long long)warp * 32 * ITEMS;
            if (c > 0 && c - 1 < n) ptx::cp_async_ca4(ptx::smem_u32(&s_halo[s][warp]), in + (c - 1), 4);
            else s_halo[s][warp] = T(0);
        }
    };
    if (taker) {
        for (int s = 0; s <= STAGES; ++s) s_tk[s] = tk.take();
        pending = tk.take();
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
        const unsigned t = s_tk[s];
        if (t < num_tiles) issue(s, t);
        ptx::cp_async_commit();
    }
    for (int k = 0;; ++k) {
        const unsigned tile = s_tk[k % R];
        if (tile >= num_tiles) break;
        const unsigned refill = s_tk[(k + STAGES) % R];
        if (taker) { s_tk[(k + STAGES + 1) % R] = pending; pending = tk.take(); }
        const int b = k & 1, s = k % STAGES;
        const long long base = (long long)tile * TILE;
        const long long chunk = base + (long long)warp * 32 * ITEMS;

        ptx::cp_async_wait<STAGES - 1>();
        T x[ITEMS];
        read_tile<T, ITEMS>(ring + s * TILE, warp, lane, x);
        const T before_chunk = s_halo[s][warp];     // meaningful in lane 0 only
        int f[ITEMS];
        unsigned heads = 0;
#pragma unroll
        for (int j = 0; j < ITEMS / VEC; ++j) {
            const T up = __shfl_up_sync(FULL_MASK, x[j * VEC + VEC - 1], 1);
            T prev;
            if (j == 0) {
                prev = lane > 0 ? up : before_chunk;
            } else {
                const T wrap = __shfl_sync(FULL_MASK, x[(j - 1) * VEC + VEC - 1], 31);
                prev = lane > 0 ? up : wrap;
            }
#pragma unroll
            for (int q = 0; q < VEC; ++q) {
                const long long i = chunk + ((long long)j * 32 + lane) * VEC + q;
                const bool head = i < n && (i == 0 || x[j * VEC + q] != prev);
                prev = x[j * VEC + q];
                f[j * VEC + q] = head;
                heads |= (unsigned)head << (j * VEC + q);
            }
        }
        // x (and the halo) are in registers: refill the stage with iteration k+STAGES's tile.
        if (refill < num_tiles) issue(s, refill);
        ptx::cp_async_commit();
        int pre[ITEMS / VEC];
        const int warp_total = warp_scan_rows<int, ITEMS>(f, lane, pre);
        const int total = block_scan_warps<int, BLOCK>(warp_total, warp, lane, s_warp[b]);
        if (warp == 0) {
            int excl = 0;
            if (tile == 0) {
                if (lane == 0) st.publish(0, ST_PREFIX, total);
            } else {
                if (lane == 0) st.publish(tile, ST_AGGREGATE, total);
                excl = look_back<int>(st, tile, lane);
                if (lane == 0) st.publish(tile, ST_PREFIX, excl + total);
            }
            if (lane == 0) {
                s_prefix[b] = excl;
                if (tile == num_tiles - 1) *count = excl + total;
            }
        }
        __syncthreads();
        finish_rows<int, ITEMS, false>(f, pre, s_prefix[b] + s_warp[b][warp]);   // f := positions
#pragma unroll
        for (int j = 0; j < ITEMS / VEC; ++j)
#pragma unroll
            for (int q = 0; q < VEC; ++q)
                if (heads & (1u << (j * VEC + q))) {
                    const int p = f[j * VEC + q];
                    values[p] = x[j * VEC + q];
                    starts[p] = (int)(chunk + ((long long)j * 32 + lane) * VEC + q);
                }
    }
    ptx::cp_async_wait<0>();
}
