// The seed's decomposition, with the fix it names: reduce every tile, scan the tile
// totals, then scan every tile again from its offset. Each thread holds ITEMS elements in
// registers and a warp-shuffle scan combines the threads (tile.cuh); no thread idles.
// Traffic: the input is read twice and the output written once, 3 × the bytes of a copy
// of half of it: at best 2/3 of the copy's speed.
#include "tile.cuh"

// 1. totals[t] = the sum of tile t.
template <typename T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
reduce_tiles(const T* __restrict__ in, T* __restrict__ totals, long long n) {
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    __shared__ T s_warp[BLOCK / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long base = (long long)blockIdx.x * TILE;
    T x[ITEMS];
    load_tile<T, ITEMS>(in, base, n, warp, lane, x, TILE);
    T s = x[0];
#pragma unroll
    for (int i = 1; i < ITEMS; ++i) s += x[i];
    s = warp_reduce(s);
    if (lane == 0) s_warp[warp] = s;
    __syncthreads();
    if (warp == 0) {
        T v = lane < BLOCK / 32 ? s_warp[lane] : T(0);
        v = warp_reduce(v);
        if (lane == 0) totals[blockIdx.x] = v;
    }
}

// 2. One block: totals := their exclusive scan, in chunks of BLOCK * ITEMS, with a carry.
template <typename T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
scan_totals(T* totals, long long num_tiles) {
    constexpr int VEC = Vec16<T>::N;
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    __shared__ T s_warp[BLOCK / 32];
    __shared__ T s_carry;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) s_carry = T(0);
    for (long long base = 0; base < num_tiles; base += TILE) {
        T x[ITEMS];
        load_tile<T, ITEMS>(totals, base, num_tiles, warp, lane, x, TILE);
        T pre[ITEMS / VEC];
        const T warp_total = warp_scan_rows<T, ITEMS>(x, lane, pre);
        const T total = block_scan_warps<T, BLOCK>(warp_total, warp, lane, s_warp);
        __syncthreads();
        const T carry = s_carry;
        finish_rows<T, ITEMS, false>(x, pre, carry + s_warp[warp]);
        store_tile<T, ITEMS>(totals, base, num_tiles, warp, lane, x, TILE);
        __syncthreads();                          // everyone has read s_carry and s_warp
        if (threadIdx.x == 0) s_carry = carry + total;
    }
}

// 3. out = scan of each tile, starting from the tile's offset.
template <typename T, int BLOCK, int ITEMS, bool INCLUSIVE>
__global__ void __launch_bounds__(BLOCK)
scan_tiles(const T* __restrict__ in, const T* __restrict__ offsets, T* __restrict__ out,
           long long n) {
    constexpr int VEC = Vec16<T>::N;
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    __shared__ T s_warp[BLOCK / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long base = (long long)blockIdx.x * TILE;
    T x[ITEMS];
    load_tile<T, ITEMS>(in, base, n, warp, lane, x, TILE);
    T pre[ITEMS / VEC];
    const T warp_total = warp_scan_rows<T, ITEMS>(x, lane, pre);
    block_scan_warps<T, BLOCK>(warp_total, warp, lane, s_warp);
    __syncthreads();
    finish_rows<T, ITEMS, INCLUSIVE>(x, pre, offsets[blockIdx.x] + s_warp[warp]);
    store_tile<T, ITEMS>(out, base, n, warp, lane, x, TILE);
}
