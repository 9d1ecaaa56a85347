// Persistent blocks with an asynchronous load pipeline, for the chapter's second single
// pass (08) and second encoder (09).
//
// Why: in 03 and 05 a tile lives in registers from its load to its store, so an SM has
// bytes in flight only while its few resident tiles are loading; while they scan, wait on
// the look-back and store, the memory is idle (scan.tune: the fraction of copy follows
// ITEMS_PER_THREAD, the bytes a thread has in flight, not the tile size). Here each block
// keeps STAGES tiles in a shared-memory ring, filled by cp.async (16 bytes a thread, no
// register cost): while it works on tile k, tiles k+1 .. k+STAGES-1 are already loading.
//
// Each thread copies into shared memory exactly the 16-byte vectors it later reads back
// (the same layout as tile.cuh's registers), so its own cp.async.wait_group is all the
// synchronisation the data needs.
//
// Tickets: one thread of the block's last warp (not warp 0, which looks back) takes the
// tickets, one iteration before they are published to the block, so the atomic's round
// trip overlaps a whole tile's work. A block holds STAGES + 2 tickets ahead and works on
// them in increasing order; the smallest unfinished ticket of the whole grid is always
// the one its block is working on, and it waits only on smaller ones: every wait ends.
// A block stops taking tickets at its first one past the last tile, so exactly
// num_tiles + gridDim.x tickets are taken; the block that takes the last one resets the
// counter for the next call (next_ticket, lookback.cuh).
#pragma once
#include "lookback.cuh"
#include "common/ptx.cuh"

constexpr unsigned NO_TILE = 0xffffffffu;

// cp.async of this thread's vectors of the tile at `base` into `stage` (the tile's
// layout); what lies past n is zero (the identity of the sum).
template <typename T, int ITEMS>
__device__ __forceinline__ void issue_tile(T* stage, const T* __restrict__ in, long long base,
                                           long long n, int warp, int lane) {
    constexpr int VEC = Vec16<T>::N;
#pragma unroll
    for (int j = 0; j < ITEMS / VEC; ++j) {
        const int off = warp * 32 * ITEMS + (j * 32 + lane) * VEC;
        const long long i = base + off;
        const long long rem = (n - i) * (long long)sizeof(T);
        if (rem >= 16) {
            ptx::cp_async_cg16(ptx::smem_u32(stage + off), in + i, 16);
        } else {
            // The vector at the end of the array: 4-byte copies of the words inside it,
            // zeros (plain shared stores, read back by this thread) past it. No access
            // reaches past the array, not even a zero-byte one.
            unsigned* dst = reinterpret_cast<unsigned*>(stage + off);
            const unsigned* src = reinterpret_cast<const unsigned*>(in + i);
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                if (4 * w < rem) ptx::cp_async_ca4(ptx::smem_u32(dst + w), src + w, 4);
                else dst[w] = 0u;
            }
        }
    }
}

// This thread's vectors of the tile, from shared memory into registers.
template <typename T, int ITEMS>
__device__ __forceinline__ void read_tile(const T* stage, int warp, int lane, T (&x)[ITEMS]) {
    constexpr int VEC = Vec16<T>::N;
    using Pack = typename Vec16<T>::Pack;
#pragma unroll
    for (int j = 0; j < ITEMS / VEC; ++j) {
        const Pack p = *reinterpret_cast<const Pack*>(stage + warp * 32 * ITEMS + (j * 32 + lane) * VEC);
#pragma unroll
        for (int k = 0; k < VEC; ++k) x[j * VEC + k] = p.v[k];
    }
}

// store_tile with streaming stores (st.global.cs: the output is not read again soon).
template <typename T, int ITEMS>
__device__ __forceinline__ void store_tile_cs(T* __restrict__ out, long long base, long long n,
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
            __stcs(reinterpret_cast<uint4*>(out + chunk + ((long long)j * 32 + lane) * VEC),
                   bits_as<uint4>(p));
        }
    } else {
        store_tile<T, ITEMS>(out, base, n, warp, lane, y, tile_elems);
    }
}

// The ticket taker's side: a ticket, or NO_TILE once this block has taken one past the
// last tile.
struct Tickets {
    unsigned* counter;
    unsigned num_tiles;
    bool done;
    __device__ __forceinline__ unsigned take() {
        if (done) return NO_TILE;
        const unsigned t = next_ticket(counter, num_tiles);
        if (t >= num_tiles) done = true;
        return t;
    }
};
