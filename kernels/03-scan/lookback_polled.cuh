// The warp-wide look-back of lookback.cuh with a chosen pause between polls of a status
// word that is not yet written. lookback.cuh pauses 32 ns after four quick polls: with
// hundreds of tiles in flight, every lane of every waiting warp then asks the same few L2
// lines for a word about every 50 ns, and the status words' L2 slices serve polls instead
// of the publishes everyone is waiting for. Here a lane pauses DELAY_NS between polls
// (CUB pauses a fixed few hundred ns on this architecture), so a waiting warp costs L2 a
// poll per DELAY_NS and a publish is seen at most DELAY_NS late.
// (The same loop as lookback.cuh's look_back and TileStatus::wait, kept apart so the rows
// recorded with 03, 05, 08 and 09 keep their source.)
#pragma once
#include "lookback.cuh"

template <int DELAY_NS, typename T>
__device__ __forceinline__ unsigned wait_polled(const TileStatus<T>& st, long long tile,
                                                T& value) {
    unsigned tag;
    if constexpr (sizeof(T) == 4) {
        unsigned long long w;
        while (true) {
            w = ld_relaxed_u64(st.words + tile);
            tag = (unsigned)(w >> 32);
            if ((tag >> 2) == st.epoch && (tag & 3u) != ST_INVALID) break;
            __nanosleep(DELAY_NS);
        }
        value = bits_as<T>((unsigned)(w & 0xffffffffull));
    } else {
        while (true) {
            tag = ld_relaxed_u32(st.flags + tile);
            if ((tag >> 2) == st.epoch && (tag & 3u) != ST_INVALID) break;
            __nanosleep(DELAY_NS);
        }
        __threadfence();
        const T* slot = ((tag & 3u) == ST_PREFIX ? st.prefix : st.aggregate) + tile;
        unsigned long long bits;
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(bits) : "l"(slot) : "memory");
        value = bits_as<T>(bits);
    }
    return tag & 3u;
}

// The warp-wide look-back of lookback.cuh, widened: each lane reads WIDTH predecessors
// per round trip (all its loads in flight at once, then it waits for the ones not yet
// written), so one step covers 32 * WIDTH tiles. Lane l, load v reads tile
// window - 32 v - l: load v of every lane is one 32-tile slice, nearest first. Every tile
// before a PREFIX has published (that PREFIX was summed over all of them), so waiting for
// every word of the window never waits for a word the sum does not need.
template <int DELAY_NS, int WIDTH, typename T>
__device__ __forceinline__ T look_back_polled(const TileStatus<T>& st, long long tile, int lane) {
    static_assert(WIDTH >= 1 && WIDTH <= 16, "WIDTH: 1 to 16 loads a lane");
    T exclusive = T(0);
    long long window = tile - 1;
    while (true) {
        T value[WIDTH];
        unsigned state[WIDTH];
        if constexpr (sizeof(T) == 4) {
            unsigned long long w[WIDTH];
#pragma unroll
            for (int v = 0; v < WIDTH; ++v) {          // issue every load, then look
                const long long pred = window - 32 * v - lane;
                w[v] = pred >= 0 ? ld_relaxed_u64(st.words + pred) : 0ull;
            }
#pragma unroll
            for (int v = 0; v < WIDTH; ++v) {
                const long long pred = window - 32 * v - lane;
                unsigned tag = (unsigned)(w[v] >> 32);
                if (pred >= 0 && !((tag >> 2) == st.epoch && (tag & 3u) != ST_INVALID))
                    tag = wait_polled<DELAY_NS>(st, pred, value[v]);
                else
                    value[v] = bits_as<T>((unsigned)(w[v] & 0xffffffffull));
                state[v] = pred >= 0 ? (tag & 3u) : ST_PREFIX;   // before tile 0: identity
                if (pred < 0) value[v] = T(0);
            }
        } else {
#pragma unroll
            for (int v = 0; v < WIDTH; ++v) {
                const long long pred = window - 32 * v - lane;
                value[v] = T(0);
                state[v] = pred >= 0 ? wait_polled<DELAY_NS>(st, pred, value[v]) : ST_PREFIX;
            }
        }
#pragma unroll
        for (int v = 0; v < WIDTH; ++v) {
            const unsigned prefixes = __ballot_sync(FULL_MASK, state[v] == ST_PREFIX);
            const int nearest = prefixes ? __ffs(prefixes) - 1 : 31;
            exclusive = warp_reduce(lane <= nearest ? value[v] : T(0)) + exclusive;
            if (prefixes) return exclusive;
        }
        window -= 32 * WIDTH;
    }
}
