// A tile waiting in shared memory (the staged single passes, 10 and 12): the thread's
// rows read from the stage for their sums, and again for the output. The stage has
// tile.cuh's layout (pipeline.cuh's issue_tile fills it): row j of lane l of warp w is the
// 16-byte vector at w * 32 * ITEMS + (j * 32 + l) * VEC.
#pragma once
#include "pipeline.cuh"

// This thread's rows of the stage: `mine` = stage + warp * 32 * ITEMS + lane * VEC.
// pre[j] = the sum of the warp's chunk before row j of this lane (tile.cuh's
// warp_scan_rows, reading each row as it goes); returns the warp's total.
template <typename T, int ITEMS>
__device__ __forceinline__ T staged_row_sums(const T* mine, int lane,
                                             T (&pre)[ITEMS / Vec16<T>::N]) {
    constexpr int VEC = Vec16<T>::N;
    using Pack = typename Vec16<T>::Pack;
    T carry = T(0);
#pragma unroll
    for (int j = 0; j < ITEMS / VEC; ++j) {
        const Pack p = *reinterpret_cast<const Pack*>(mine + j * 32 * VEC);
        T s = p.v[0];
#pragma unroll
        for (int k = 1; k < VEC; ++k) s += p.v[k];
        const T inc = warp_inclusive_scan(s, lane);
        const T exc = __shfl_up_sync(FULL_MASK, inc, 1);
        pre[j] = lane == 0 ? carry : carry + exc;
        carry += __shfl_sync(FULL_MASK, inc, 31);
    }
    return carry;
}

// The output: each row once more from the stage, plus `start` (the tile's exclusive
// prefix and the warps before this one) and its row prefix, to memory.
template <typename T, int ITEMS, bool INCLUSIVE>
__device__ __forceinline__ void staged_store(T* __restrict__ out, const T* mine,
                                             const T (&pre)[ITEMS / Vec16<T>::N], T start,
                                             long long base, long long n, int warp, int lane,
                                             long long tile_elems) {
    constexpr int VEC = Vec16<T>::N;
    using Pack = typename Vec16<T>::Pack;
    const long long chunk = base + (long long)warp * 32 * ITEMS;
    const bool whole = base + tile_elems <= n;
#pragma unroll
    for (int j = 0; j < ITEMS / VEC; ++j) {
        Pack p = *reinterpret_cast<const Pack*>(mine + j * 32 * VEC);
        T run = start + pre[j];
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            const T v = p.v[k];
            if (INCLUSIVE) { run += v; p.v[k] = run; }
            else { p.v[k] = run; run += v; }
        }
        const long long i = chunk + ((long long)j * 32 + lane) * VEC;
        if (whole) {
            *reinterpret_cast<Pack*>(out + i) = p;
        } else {
#pragma unroll
            for (int k = 0; k < VEC; ++k)
                if (i + k < n) out[i + k] = p.v[k];
        }
    }
}
