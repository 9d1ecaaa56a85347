// A tile of BLOCK * ITEMS elements held in registers, ITEMS per thread, and the scans
// over it that every kernel of this chapter shares.
//
// Layout: warp w owns the contiguous chunk [w * 32 * ITEMS, (w + 1) * 32 * ITEMS) of the
// tile. A thread holds ITEMS / VEC groups ("rows") of VEC adjacent elements, VEC = 16 bytes
// / sizeof(T): row j of lane l is elements (j * 32 + l) * VEC .. + VEC of the chunk. So every
// load and store is one 16-byte vector and a warp's 32 vectors are 512 contiguous bytes
// (coalesced), with no shared-memory transpose.
//
// Scan within the tile, for row j: each thread adds its VEC elements in order, a
// warp-shuffle scan (5 steps) gives each lane the sum of the rows before it, and a carry
// runs over the rows; the warps' totals meet in shared memory.
#pragma once

template <typename T> struct Vec16 {                // VEC elements in one 16-byte access
    static constexpr int N = 16 / sizeof(T);
    struct alignas(16) Pack { T v[N]; };
};

constexpr unsigned FULL_MASK = 0xffffffffu;

template <typename T>
__device__ __forceinline__ T warp_inclusive_scan(T v, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        T u = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v = u + v;
    }
    return v;
}

template <typename T>
__device__ __forceinline__ T warp_reduce(T v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(FULL_MASK, v, d);
    return v;
}

// Load the tile starting at element `base`: 16-byte vectors when the whole tile lies
// inside [0, n), guarded scalar loads (missing elements = 0, the identity) otherwise.
template <typename T, int ITEMS>
__device__ __forceinline__ void load_tile(const T* __restrict__ in, long long base,
                                          long long n, int warp, int lane, T (&x)[ITEMS],
                                          long long tile_elems) {
    constexpr int VEC = Vec16<T>::N;
    using Pack = typename Vec16<T>::Pack;
    const long long chunk = base + (long long)warp * 32 * ITEMS;
    if (base + tile_elems <= n) {
#pragma unroll
        for (int j = 0; j < ITEMS / VEC; ++j) {
            Pack p = *reinterpret_cast<const Pack*>(in + chunk + ((long long)j * 32 + lane) * VEC);
#pragma unroll
            for (int k = 0; k < VEC; ++k) x[j * VEC + k] = p.v[k];
        }
    } else {
#pragma unroll
        for (int j = 0; j < ITEMS / VEC; ++j)
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
                long long i = chunk + ((long long)j * 32 + lane) * VEC + k;
                x[j * VEC + k] = i < n ? in[i] : T(0);
            }
    }
}

template <typename T, int ITEMS>
__device__ __forceinline__ void store_tile(T* __restrict__ out, long long base, long long n,
                                           int warp, int lane, const T (&y)[ITEMS],
                                           long long tile_elems) {
    constexpr int VEC = Vec16<T>::N;
    using Pack = typename Vec16<T>::Pack;
    const long long chunk = base + (long long)warp * 32 * ITEMS;
    if (base + tile_elems <= n) {
#pragma unroll
        for (int j = 0; j < ITEMS / VEC; ++j) {
            Pack p;
#pragma unroll
            for (int k = 0; k < VEC; ++k) p.v[k] = y[j * VEC + k];
            *reinterpret_cast<Pack*>(out + chunk + ((long long)j * 32 + lane) * VEC) = p;
        }
    } else {
#pragma unroll
        for (int j = 0; j < ITEMS / VEC; ++j)
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
                long long i = chunk + ((long long)j * 32 + lane) * VEC + k;
                if (i < n) out[i] = y[j * VEC + k];
            }
    }
}

// Warp-level part of the tile scan: pre[j] = the sum of every element of this warp's chunk
// before row j of this lane; returns the warp's total (the same in every lane).
template <typename T, int ITEMS>
__device__ __forceinline__ T warp_scan_rows(const T (&x)[ITEMS], int lane,
                                            T (&pre)[ITEMS / Vec16<T>::N]) {
    constexpr int VEC = Vec16<T>::N;
    T carry = T(0);
#pragma unroll
    for (int j = 0; j < ITEMS / VEC; ++j) {
        T s = x[j * VEC];
#pragma unroll
        for (int k = 1; k < VEC; ++k) s += x[j * VEC + k];
        const T inc = warp_inclusive_scan(s, lane);
        T exc = __shfl_up_sync(FULL_MASK, inc, 1);
        pre[j] = lane == 0 ? carry : carry + exc;
        carry += __shfl_sync(FULL_MASK, inc, 31);
    }
    return carry;
}

// Block-level part: every warp's total into shared memory, then warp 0 scans them.
// Afterwards warp_pre[w] = the sum of the warps before w; returns the block total (valid
// in warp 0 only). Ends with the caller's __syncthreads.
template <typename T, int BLOCK>
__device__ __forceinline__ T block_scan_warps(T warp_total, int warp, int lane, T* warp_pre) {
    constexpr int WARPS = BLOCK / 32;
    if (lane == 0) warp_pre[warp] = warp_total;
    __syncthreads();
    T total = T(0);
    if (warp == 0) {
        T v = lane < WARPS ? warp_pre[lane] : T(0);
        const T inc = warp_inclusive_scan(v, lane);
        const T exc = __shfl_up_sync(FULL_MASK, inc, 1);
        total = __shfl_sync(FULL_MASK, inc, WARPS - 1);
        __syncwarp();
        if (lane < WARPS) warp_pre[lane] = lane == 0 ? T(0) : exc;
    }
    return total;
}

// The scanned tile, in place: x = prefix + (every element before it in the tile)
// [+ itself, when INCLUSIVE].
template <typename T, int ITEMS, bool INCLUSIVE>
__device__ __forceinline__ void finish_rows(T (&x)[ITEMS],
                                            const T (&pre)[ITEMS / Vec16<T>::N], T prefix) {
    constexpr int VEC = Vec16<T>::N;
#pragma unroll
    for (int j = 0; j < ITEMS / VEC; ++j) {
        T run = prefix + pre[j];
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            const T v = x[j * VEC + k];
            if (INCLUSIVE) { run += v; x[j * VEC + k] = run; }
            else { x[j * VEC + k] = run; run += v; }
        }
    }
}
