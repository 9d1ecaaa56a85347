// Run-length encoding in one pass over the input: each block loads a tile, finds the run
// heads (an element differing from the one before it) in registers, scans the head counts
// across the tile and, through the decoupled look-back (lookback.cuh), across tiles, and
// scatters each run's value and first index to its position. The input is read once; the
// flags and positions never reach memory. The tile that ends the array writes the number
// of runs. (The run lengths follow from the starts: 06_run_lengths.cu.)
#include "lookback.cuh"

template <typename T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
rle_encode_fused(const T* __restrict__ in, T* __restrict__ values, int* __restrict__ starts,
                 int* __restrict__ count, long long n, unsigned* counter, unsigned num_tiles,
                 unsigned long long* words, unsigned epoch) {
    static_assert(sizeof(T) == 4, "4-byte elements (the head counts share their layout)");
    constexpr int VEC = Vec16<T>::N;
    static_assert(ITEMS % VEC == 0 && ITEMS <= 32, "ITEMS: a multiple of 4, at most 32");
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    __shared__ unsigned s_tile;
    __shared__ int s_warp[BLOCK / 32];
    __shared__ int s_prefix;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long tile = take_ticket(counter, num_tiles, &s_tile);
    const long long base = tile * TILE;
    const long long chunk = base + (long long)warp * 32 * ITEMS;
    const TileStatus<int> st{words, nullptr, nullptr, nullptr, epoch};

    T x[ITEMS];
    load_tile<T, ITEMS>(in, base, n, warp, lane, x, TILE);
    // The element before each row's first one: the lane before's last, across rows at
    // lane 0, and for the chunk's first element the one before the chunk (from memory).
    const T before_chunk = (lane == 0 && chunk > 0 && chunk - 1 < n) ? in[chunk - 1] : T(0);
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
        for (int k = 0; k < VEC; ++k) {
            const long long i = chunk + ((long long)j * 32 + lane) * VEC + k;
            const bool head = i < n && (i == 0 || x[j * VEC + k] != prev);
            prev = x[j * VEC + k];
            f[j * VEC + k] = head;
            heads |= (unsigned)head << (j * VEC + k);
        }
    }
    int pre[ITEMS / VEC];
    const int warp_total = warp_scan_rows<int, ITEMS>(f, lane, pre);
    const int total = block_scan_warps<int, BLOCK>(warp_total, warp, lane, s_warp);
    // The look-back of 03 (lookback.cuh), on the counts of run heads.
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
            s_prefix = excl;
            if (tile == num_tiles - 1) *count = excl + total;
        }
    }
    __syncthreads();
    const int excl = s_prefix;
    finish_rows<int, ITEMS, false>(f, pre, excl + s_warp[warp]);   // f := positions
#pragma unroll
    for (int j = 0; j < ITEMS / VEC; ++j)
#pragma unroll
        for (int k = 0; k < VEC; ++k)
            if (heads & (1u << (j * VEC + k))) {
                const int p = f[j * VEC + k];
                values[p] = x[j * VEC + k];
                starts[p] = (int)(chunk + ((long long)j * 32 + lane) * VEC + k);
            }
}
