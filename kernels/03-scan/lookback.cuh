// Decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan with
// Decoupled Look-back", 2016): every tile publishes its status in global memory, first
// its own total (AGGREGATE), later the total of everything up to and including it
// (PREFIX). A tile computes its exclusive prefix by walking back over its predecessors,
// summing aggregates until it meets a PREFIX.
//
// Status of tile t, for 4-byte values: one 64-bit word, written with one store and read
// with one load, so a reader never sees a flag without its value (no torn read, no fence):
//     high 32 bits: epoch << 2 | state      low 32 bits: the value's bits
// For 8-byte values: a 32-bit flag word (epoch << 2 | state) and two value arrays,
// aggregate and prefix; the writer stores the value, fences, stores the flag; the reader
// loads the flag, fences, loads the value (the release/acquire pattern of the PTX memory
// model with fence.acq_rel.gpu = __threadfence).
//
// The epoch is a per-call number (1, 2, 3, ...): a word from an earlier call carries an
// older epoch and reads as "not yet written", so the status array is never cleared
// between calls (one launch per scan, no memset).
//
// Tile indices come from an atomic ticket counter, not from blockIdx: a tile only ever
// waits on tiles whose ticket was taken before its own, and a block that took a ticket is
// running, so every wait ends. The block that takes the last ticket resets the counter
// for the next call (every other block has taken its ticket by then).
#pragma once
#include "tile.cuh"

template <typename To, typename From>
__device__ __forceinline__ To bits_as(From f) {
    static_assert(sizeof(To) == sizeof(From), "same size");
    To t;
    memcpy(&t, &f, sizeof(To));
    return t;
}

enum : unsigned { ST_INVALID = 0, ST_AGGREGATE = 1, ST_PREFIX = 2 };

__device__ __forceinline__ unsigned long long ld_relaxed_u64(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_relaxed_u64(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned ld_relaxed_u32(const unsigned* p) {
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_relaxed_u32(unsigned* p, unsigned v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

// The tile status of one call. For 4-byte T only `words` is used; for 8-byte T `flags`,
// `aggregate` and `prefix`.
template <typename T> struct TileStatus {
    unsigned long long* words;
    unsigned* flags;
    T* aggregate;
    T* prefix;
    unsigned epoch;

    __device__ __forceinline__ void publish(long long tile, unsigned state, T value) const {
        const unsigned tag = (epoch << 2) | state;
        if constexpr (sizeof(T) == 4) {
            const unsigned bits = bits_as<unsigned>(value);
            st_relaxed_u64(words + tile, ((unsigned long long)tag << 32) | bits);
        } else {
            T* slot = (state == ST_PREFIX ? prefix : aggregate) + tile;
            asm volatile("st.relaxed.gpu.global.u64 [%0], %1;"
                         :: "l"(slot), "l"(bits_as<unsigned long long>(value))
                         : "memory");
            __threadfence();
            st_relaxed_u32(flags + tile, tag);
        }
    }

    // Wait until tile `tile` has published this call; return its state and value.
    __device__ __forceinline__ unsigned wait(long long tile, T& value) const {
        unsigned tag;
        int spins = 0;
        if constexpr (sizeof(T) == 4) {
            unsigned long long w;
            while (true) {
                w = ld_relaxed_u64(words + tile);
                tag = (unsigned)(w >> 32);
                if ((tag >> 2) == epoch && (tag & 3u) != ST_INVALID) break;
                if (++spins > 4) __nanosleep(32);
            }
            value = bits_as<T>((unsigned)(w & 0xffffffffull));
        } else {
            while (true) {
                tag = ld_relaxed_u32(flags + tile);
                if ((tag >> 2) == epoch && (tag & 3u) != ST_INVALID) break;
                if (++spins > 4) __nanosleep(32);
            }
            __threadfence();
            const T* slot = ((tag & 3u) == ST_PREFIX ? prefix : aggregate) + tile;
            unsigned long long bits;
            asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(bits) : "l"(slot) : "memory");
            value = bits_as<T>(bits);
        }
        return tag & 3u;
    }
};

// Warp-wide look-back, called by all 32 lanes of one warp of tile `tile` (> 0): lane l
// reads predecessor tile - 1 - l - 32k, so 32 predecessors are read at once. Returns the
// exclusive prefix of the tile (in every lane).
template <typename T>
__device__ __forceinline__ T look_back(const TileStatus<T>& st, long long tile, int lane) {
    T exclusive = T(0);
    long long window = tile - 1;                    // predecessor read by lane 0
    while (true) {
        const long long pred = window - lane;
        T value = T(0);
        unsigned state = ST_PREFIX;                  // before tile 0: the identity
        if (pred >= 0) state = st.wait(pred, value);
        const unsigned prefixes = __ballot_sync(FULL_MASK, state == ST_PREFIX);
        // Lanes up to and including the nearest PREFIX contribute; beyond it, nothing.
        const int nearest = prefixes ? __ffs(prefixes) - 1 : 31;
        exclusive = warp_reduce(lane <= nearest ? value : T(0)) + exclusive;
        if (prefixes) return exclusive;
        window -= 32;
    }
}

// Block-wide look-back, called by every thread of the block (tile > 0): thread g reads
// predecessor tile - 1 - g - BLOCK k, so BLOCK predecessors are read per round trip to L2
// (the nearest tile holding a full prefix is often hundreds of tiles back: every tile
// in flight still holds only its aggregate). Each warp sums its lanes up to its nearest
// PREFIX; shared memory combines the warps, nearest first.
template <typename T, int BLOCK>
__device__ __forceinline__ T look_back_block(const TileStatus<T>& st, long long tile,
                                             T* s_part, unsigned* s_found) {
    constexpr int WARPS = BLOCK / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T exclusive = T(0);
    long long window = tile - 1;
    while (true) {
        const long long pred = window - threadIdx.x;
        T value = T(0);
        unsigned state = ST_PREFIX;
        if (pred >= 0) state = st.wait(pred, value);
        const unsigned prefixes = __ballot_sync(FULL_MASK, state == ST_PREFIX);
        const int nearest = prefixes ? __ffs(prefixes) - 1 : 31;
        const T part = warp_reduce(lane <= nearest ? value : T(0));
        if (lane == 0) { s_part[warp] = part; s_found[warp] = prefixes != 0; }
        __syncthreads();
        T sum = T(0);
        bool found = false;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            if (!found) { sum += s_part[w]; found = s_found[w] != 0; }
        }
        __syncthreads();                              // before the next round's writes
        exclusive = sum + exclusive;
        if (found) return exclusive;
        window -= BLOCK;
    }
}

// Persistent blocks: thread 0 takes the next ticket while the block works on the current
// tile (the atomic's round trip overlaps the work). Every block takes one ticket past the
// last tile, its signal to stop; the block that takes the very last ticket
// (num_tiles + gridDim.x - 1) resets the counter for the next call.
__device__ __forceinline__ unsigned next_ticket(unsigned* counter, unsigned num_tiles) {
    const unsigned t = atomicAdd(counter, 1u);
    if (t == num_tiles + gridDim.x - 1) atomicExch(counter, 0u);
    return t;
}

// Take this block's tile index from the ticket counter (thread 0), share it.
__device__ __forceinline__ long long take_ticket(unsigned* counter, unsigned num_tiles,
                                                 unsigned* s_tile) {
    if (threadIdx.x == 0) {
        const unsigned t = atomicAdd(counter, 1u);
        if (t == num_tiles - 1) atomicExch(counter, 0u);   // last ticket: reset for the next call
        *s_tile = t;
    }
    __syncthreads();
    return (long long)*s_tile;
}
