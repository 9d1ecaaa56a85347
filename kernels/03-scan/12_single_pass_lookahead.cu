// The staged single pass (10) with a warp that looks back while the tile loads. In 10 a
// tile starts its look-back only after its own data has arrived and been summed, so every
// tile adds the look-back's round trips to the time it holds its shared memory. Here the
// block has BLOCK data threads and one more warp: as soon as the ticket is known that
// warp walks back over the predecessors (their status does not depend on this tile),
// while the data warps wait for the tile, sum it and publish its AGGREGATE at once. A
// tile's AGGREGATE never waits for its own look-back, so no chain forms.
//
// Two details keep it small and free of shared-memory races:
// - The row prefixes live in the stage, not in registers: a read of each row writes it
//   back scanned (the sum of the warp's chunk up to each element), so the output pass
//   only adds one number. A thread holds no per-row state across the wait (at 12 blocks
//   of 160 threads an SM the compiler gets 32 registers a thread).
// - The look-back warp hands the tile's exclusive prefix to the data warps through an
//   mbarrier (one arrival, release; the data warps wait on its phase, acquire) and exits;
//   the data warps synchronise only among themselves (named barrier 1, BLOCK threads);
//   data warp 0 publishes the PREFIX (handoff.cuh). Every shared word is written once,
//   before the barrier or arrival that its readers wait on.
// Dynamic shared memory: BLOCK * ITEMS * sizeof(T) bytes; BLOCK + 32 threads a block.
#include "staged.cuh"
#include "lookback_polled.cuh"
#include "handoff.cuh"

// One read of this thread's rows: each written back as the sum of the warp's chunk
// up to and including (INCLUSIVE) or before each element; returns the warp's total.
template <typename T, int ITEMS, bool INCLUSIVE>
__device__ __forceinline__ T scan_rows_in_place(T* mine, int lane) {
    constexpr int VEC = Vec16<T>::N;
    using Pack = typename Vec16<T>::Pack;
    T carry = T(0);
#pragma unroll 2
    for (int j = 0; j < ITEMS / VEC; ++j) {
        Pack* row = reinterpret_cast<Pack*>(mine + j * 32 * VEC);
        Pack p = *row;
        T s = p.v[0];
#pragma unroll
        for (int k = 1; k < VEC; ++k) s += p.v[k];
        const T inc = warp_inclusive_scan(s, lane);
        const T exc = __shfl_up_sync(FULL_MASK, inc, 1);
        T run = lane == 0 ? carry : carry + exc;
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            const T v = p.v[k];
            if (INCLUSIVE) { run += v; p.v[k] = run; }
            else { p.v[k] = run; run += v; }
        }
        *row = p;
        carry += __shfl_sync(FULL_MASK, inc, 31);
    }
    return carry;
}

// The output: each row once more from the stage, plus `start`, to memory.
template <typename T, int ITEMS>
__device__ __forceinline__ void store_rows(T* __restrict__ out, const T* mine, T start,
                                           long long base, long long n, int warp, int lane,
                                           long long tile_elems) {
    constexpr int VEC = Vec16<T>::N;
    using Pack = typename Vec16<T>::Pack;
    const long long chunk = base + (long long)warp * 32 * ITEMS;
    if (base + tile_elems <= n) {                   // a whole tile: 16-byte stores
#pragma unroll 4                                 // (8 rows of loads at once spill at 32 registers)
        for (int j = 0; j < ITEMS / VEC; ++j) {
            Pack p = *reinterpret_cast<const Pack*>(mine + j * 32 * VEC);
#pragma unroll
            for (int k = 0; k < VEC; ++k) p.v[k] = start + p.v[k];
            *reinterpret_cast<Pack*>(out + chunk + ((long long)j * 32 + lane) * VEC) = p;
        }
    } else {                                        // the tile that ends the array
        for (int j = 0; j < ITEMS / VEC; ++j) {
            const long long i = chunk + ((long long)j * 32 + lane) * VEC;
#pragma unroll
            for (int k = 0; k < VEC; ++k)
                if (i + k < n) out[i + k] = start + mine[j * 32 * VEC + k];
        }
    }
}

// EARLY: the AGGREGATE is published from a plain sum of the rows, before they are scanned
// in place (successors wait on it; the scan is then off their critical path). Without
// it (the sweep's comparison) the sums come out of the in-place scan.
template <typename T, int BLOCK, int ITEMS, int MIN_BLOCKS, int DELAY_NS, bool INCLUSIVE,
          bool EARLY>
__global__ void __launch_bounds__(BLOCK + 32, MIN_BLOCKS)
scan_lookahead(const T* __restrict__ in, T* __restrict__ out, long long n,
               unsigned* counter, unsigned num_tiles, unsigned long long* words,
               unsigned* flags, T* aggregate, T* prefix, unsigned epoch) {
    constexpr int VEC = Vec16<T>::N;
    static_assert(ITEMS % VEC == 0 && ITEMS <= 64, "ITEMS: whole 16-byte vectors, at most 64");
    static_assert(BLOCK % 32 == 0 && BLOCK + 32 <= 1024, "BLOCK: whole warps, one more fits");
    constexpr int WARPS = BLOCK / 32;                // data warps; warp WARPS looks back
    constexpr long long TILE = (long long)BLOCK * ITEMS;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* stage = reinterpret_cast<T*>(smem_raw);
    __shared__ unsigned s_tile;
    __shared__ T s_warp[WARPS];
    __shared__ T s_excl;
    __shared__ unsigned long long s_handoff;         // mbarrier: the look-back warp -> data

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const TileStatus<T> st{words, flags, aggregate, prefix, epoch};
    if (threadIdx.x == 0) mbar_init(&s_handoff, 1);
    const long long tile = take_ticket(counter, num_tiles, &s_tile);   // __syncthreads

    if (warp == WARPS) {                             // the look-back warp
        const T excl = tile > 0 ? look_back_polled<DELAY_NS, 1>(st, tile, lane) : T(0);
        if (lane == 0) {
            s_excl = excl;
            mbar_arrive(&s_handoff);
        }
        return;
    }

    const long long base = tile * TILE;             // the data warps
    issue_tile<T, ITEMS>(stage, in, base, n, warp, lane);
    ptx::cp_async_commit();
    ptx::cp_async_wait<0>();
    T* mine = stage + warp * 32 * ITEMS + lane * VEC;
    T carry = T(0);
    if (EARLY) {                                     // the warp's total, rows summed
        using Pack = typename Vec16<T>::Pack;
#pragma unroll 4
        for (int j = 0; j < ITEMS / VEC; ++j) {
            const Pack p = *reinterpret_cast<const Pack*>(mine + j * 32 * VEC);
#pragma unroll
            for (int k = 0; k < VEC; ++k) carry += p.v[k];
        }
        carry = warp_reduce(carry);
    } else {
        carry = scan_rows_in_place<T, ITEMS, INCLUSIVE>(mine, lane);
    }
    if (lane == 0) s_warp[warp] = carry;
    bar_sync(1, BLOCK);
    T before = T(0), total = T(0);                   // every warp sums the warp totals
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        const T v = s_warp[w];
        if (w < warp) before += v;
        total += v;
    }
    if (warp == 0 && lane == 0) st.publish(tile, tile == 0 ? ST_PREFIX : ST_AGGREGATE, total);
    if (EARLY) scan_rows_in_place<T, ITEMS, INCLUSIVE>(mine, lane);
    mbar_wait_parity(&s_handoff, 0);
    const T excl = s_excl;
    if (tile > 0 && warp == 0 && lane == 0) st.publish(tile, ST_PREFIX, excl + total);
    store_rows<T, ITEMS>(out, mine, excl + before, base, n, warp, lane, TILE);
}
