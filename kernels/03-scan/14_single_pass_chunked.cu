// Single pass in two reads: reduce a chunk from memory, scan it one chunk later from L2.
// In 10 and 12 a tile waits for its prefix holding its shared memory, so the bytes an SM
// has in flight are capped by the tiles that fit, divided by how long each one waits.
// Here nothing is held while anything waits. Persistent blocks walk CHUNKS (tickets from
// the counter); in iteration i a block
//   - reduces chunk t_i straight from memory (each lane VPL 16-byte loads in flight at
//     once, summed in registers) and publishes its AGGREGATE at once;
//   - meanwhile its look-back warp finds the exclusive prefix of the previous chunk
//     t_{i-1}, reduced one iteration earlier (by now its predecessors have published),
//     publishes that chunk's PREFIX and takes the block's next ticket;
//   - then scans t_{i-1}: it reads the chunk again, from L2 this time (the grid's chunks
//     reduced and not yet scanned are 2 x blocks x chunk bytes, a fraction of the L2),
//     and writes it.
// Memory traffic stays the copy's (input read once from memory, once from L2; output
// written once); the look-back's round trips overlap a whole chunk's reduction.
//
// Layout: data warp w owns the contiguous piece [w * PIECE, (w + 1) * PIECE) of a chunk,
// PIECE = BATCHES * VPL * 32 * VEC elements; batch b, load j of lane l is the vector at
// (b * VPL + j) * 32 + l of the piece (a warp's load is 512 contiguous bytes). The
// reduction leaves each warp's sum in shared memory; the look-back warp turns them into
// each warp's start, so the scan of a chunk needs no barrier among the data warps.
//
// Shared words between the two kinds of warps, double-buffered by iteration parity and
// exchanged only across the block's barrier (__syncthreads, every thread, once an
// iteration): s_wsum[b] (data -> look-back warp, read one iteration later), s_start[b]
// and s_ticket[b] (look-back warp -> data, read after the barrier of the same iteration).
// The data warps also meet at named barrier 1 (WARPS * 32 threads) so that data warp 0
// can publish the chunk's aggregate.
//   POL: 0 = plain first read, second read ld.global.cs, stores st.global.cs;
//        1 = first read with an L2 evict_last policy, second read evict_first, stores .cs;
//        2 = plain loads and stores everywhere.
//   PRELOAD (BATCHES = 1 only): when the data warps issue the second read of the previous
//        chunk: 0 after the block's barrier, 1 before it (after the reduction), 2 before
//        the reduction's own loads (both reads in flight together).
//   TIER: 0 = the one-level look-back (lookback_polled.cuh, WIDTH words a lane per round
//        trip); S = 2 … 32: the two-level look-back over super-chunks of S chunks
//        (lookback_tiered.cuh; its status words follow the chunks' in the same arrays).
//   LOOKBACK = false: a diagnostic, not a scan: every chunk scanned alone (zero prefix).
// WARPS + 1 warps a block; no dynamic shared memory.
#include "lookback_tiered.cuh"
#include "handoff.cuh"

constexpr unsigned NO_CHUNK = 0xffffffffu;

template <int POL>
__device__ __forceinline__ unsigned long long l2_policy_first() {
    unsigned long long p = 0;
    if constexpr (POL == 1)
        asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}
template <int POL>
__device__ __forceinline__ unsigned long long l2_policy_second() {
    unsigned long long p = 0;
    if constexpr (POL == 1)
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}

__device__ __forceinline__ uint4 ld_hint(const uint4* p, unsigned long long pol) {
    uint4 v;
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
    return v;
}

// FIRST: the reduction's read from memory; otherwise the scan's read, from L2.
template <int POL, bool FIRST>
__device__ __forceinline__ uint4 ld_vec(const uint4* p, unsigned long long pol) {
    if constexpr (POL == 1) return ld_hint(p, pol);
    else if constexpr (POL == 0 && !FIRST) return __ldcs(p);
    else return *p;
}
template <int POL>
__device__ __forceinline__ void st_vec(uint4* p, uint4 v) {
    if constexpr (POL == 2) *p = v;
    else __stcs(p, v);
}

// One vector of `in` at element i: whole when it lies inside [0, n), else its elements
// inside and the identity (0) past n.
template <typename T, int POL, bool FIRST>
__device__ __forceinline__ typename Vec16<T>::Pack load_pack(const T* __restrict__ in,
                                                             long long i, long long n,
                                                             bool whole,
                                                             unsigned long long pol) {
    using Pack = typename Vec16<T>::Pack;
    constexpr int VEC = Vec16<T>::N;
    Pack p;
    if (whole || i + VEC <= n) {
        p = bits_as<Pack>(ld_vec<POL, FIRST>(reinterpret_cast<const uint4*>(in + i), pol));
    } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k) p.v[k] = i + k < n ? in[i + k] : T(0);
    }
    return p;
}

// The second read of a one-batch chunk, issued early (PRELOAD): this lane's VPL vectors.
template <typename T, int VPL, int POL>
__device__ __forceinline__ void preload_chunk(typename Vec16<T>::Pack (&q)[VPL],
                                              const T* __restrict__ in, long long base,
                                              long long n, bool whole,
                                              unsigned long long pol, int lane, bool active) {
    constexpr int VEC = Vec16<T>::N;
    if (!active) return;
#pragma unroll
    for (int j = 0; j < VPL; ++j)
        q[j] = load_pack<T, POL, false>(in, base + ((long long)j * 32 + lane) * VEC, n, whole, pol);
}

template <typename T, int WARPS, int VPL, int BATCHES, int MIN_BLOCKS, int DELAY_NS,
          int WIDTH, int POL, int PRELOAD, int TIER, bool INCLUSIVE, bool LOOKBACK>
__global__ void __launch_bounds__((WARPS + 1) * 32, MIN_BLOCKS)
scan_chunked(const T* __restrict__ in, T* __restrict__ out, long long n,
             unsigned* counter, unsigned num_chunks, unsigned long long* words,
             unsigned* flags, T* aggregate, T* prefix, unsigned epoch) {
    constexpr int VEC = Vec16<T>::N;
    using Pack = typename Vec16<T>::Pack;
    static_assert(WARPS >= 1 && WARPS <= 31, "WARPS: 1 to 31 data warps (one more looks back)");
    static_assert(VPL >= 1 && VPL <= 16 && BATCHES >= 1, "VPL: 1 to 16 vectors a lane");
    static_assert(PRELOAD == 0 || BATCHES == 1, "PRELOAD: one batch a chunk");
    constexpr long long PIECE = (long long)BATCHES * VPL * 32 * VEC;
    constexpr long long CHUNK = PIECE * WARPS;
    __shared__ T s_wsum[2][WARPS];
    __shared__ T s_start[2][WARPS];
    __shared__ unsigned s_ticket[2];

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const TileStatus<T> st{words, flags, aggregate, prefix, epoch};
    if (threadIdx.x == 0) s_ticket[1] = next_ticket(counter, num_chunks);
    __syncthreads();
    unsigned cur = s_ticket[1], prev = NO_CHUNK;
    const unsigned long long pol1 = l2_policy_first<POL>(), pol2 = l2_policy_second<POL>();

    for (int it = 0;; ++it) {
        const int b = it & 1;
        Pack q[VPL];                                 // the previous chunk, read early
        const long long pbase = (long long)prev * CHUNK + warp * PIECE;
        const bool pwhole = (long long)prev * CHUNK + CHUNK <= n;
        if (PRELOAD == 2) preload_chunk<T, VPL, POL>(q, in, pbase, n, pwhole, pol2, lane,
                                                      warp < WARPS && prev < num_chunks);
        if (warp < WARPS) {
            // Reduce chunk `cur` from memory; publish its aggregate.
            if (cur < num_chunks) {
                const long long base = (long long)cur * CHUNK + warp * PIECE;
                const bool whole = (long long)cur * CHUNK + CHUNK <= n;
                T sum = T(0);
#pragma unroll 1
                for (int bt = 0; bt < BATCHES; ++bt) {
                    Pack p[VPL];
#pragma unroll
                    for (int j = 0; j < VPL; ++j)
                        p[j] = load_pack<T, POL, true>(
                            in, base + ((long long)(bt * VPL + j) * 32 + lane) * VEC, n, whole, pol1);
#pragma unroll
                    for (int j = 0; j < VPL; ++j)
#pragma unroll
                        for (int k = 0; k < VEC; ++k) sum += p[j].v[k];
                }
                sum = warp_reduce(sum);
                if (lane == 0) s_wsum[b][warp] = sum;
                bar_sync(1, WARPS * 32);
                if (warp == 0 && lane == 0) {
                    T total = T(0);
#pragma unroll
                    for (int w = 0; w < WARPS; ++w) total += s_wsum[b][w];
                    if (LOOKBACK) st.publish(cur, cur == 0 ? ST_PREFIX : ST_AGGREGATE, total);
                }
            }
        } else {
            // The look-back warp: the next ticket, then the previous chunk's prefix and
            // each data warp's start in it.
            unsigned next = NO_CHUNK;
            if (lane == 0 && cur < num_chunks) next = next_ticket(counter, num_chunks);
            if (prev < num_chunks) {
                const T v = lane < WARPS ? s_wsum[b ^ 1][lane] : T(0);
                const T inc = warp_inclusive_scan(v, lane);
                const T up = __shfl_up_sync(FULL_MASK, inc, 1);
                const T total = __shfl_sync(FULL_MASK, inc, 31);
                T excl = T(0);
                if (LOOKBACK && prev > 0) {
                    if constexpr (TIER > 0)
                        excl = look_back_tiered<DELAY_NS, TIER>(st, num_chunks, prev, total, lane);
                    else
                        excl = look_back_polled<DELAY_NS, WIDTH>(st, prev, lane);
                    if (lane == 0) st.publish(prev, ST_PREFIX, excl + total);
                }
                if (lane < WARPS) s_start[b][lane] = lane == 0 ? excl : excl + up;
            }
            if (lane == 0) s_ticket[b] = next;
        }
        if (PRELOAD == 1) preload_chunk<T, VPL, POL>(q, in, pbase, n, pwhole, pol2, lane,
                                                      warp < WARPS && prev < num_chunks);
        __syncthreads();
        const unsigned nxt = s_ticket[b];
        if (warp < WARPS && prev < num_chunks) {
            // Scan chunk `prev` from L2, from this warp's start, and write it.
            const long long base = (long long)prev * CHUNK + warp * PIECE;
            const bool whole = (long long)prev * CHUNK + CHUNK <= n;
            T carry = s_start[b][warp];
#pragma unroll 1
            for (int bt = 0; bt < BATCHES; ++bt) {
                Pack p[VPL];
#pragma unroll
                for (int j = 0; j < VPL; ++j)
                    p[j] = PRELOAD ? q[j]
                                   : load_pack<T, POL, false>(
                                         in, base + ((long long)(bt * VPL + j) * 32 + lane) * VEC,
                                         n, whole, pol2);
#pragma unroll
                for (int j = 0; j < VPL; ++j) {
                    T s = p[j].v[0];
#pragma unroll
                    for (int k = 1; k < VEC; ++k) s += p[j].v[k];
                    const T inc = warp_inclusive_scan(s, lane);
                    const T exc = __shfl_up_sync(FULL_MASK, inc, 1);
                    T run = lane == 0 ? carry : carry + exc;
#pragma unroll
                    for (int k = 0; k < VEC; ++k) {
                        const T x = p[j].v[k];
                        if (INCLUSIVE) { run += x; p[j].v[k] = run; }
                        else { p[j].v[k] = run; run += x; }
                    }
                    carry += __shfl_sync(FULL_MASK, inc, 31);
                    const long long i = base + ((long long)(bt * VPL + j) * 32 + lane) * VEC;
                    if (whole || i + VEC <= n) {
                        st_vec<POL>(reinterpret_cast<uint4*>(out + i), bits_as<uint4>(p[j]));
                    } else {
#pragma unroll
                        for (int k = 0; k < VEC; ++k)
                            if (i + k < n) out[i + k] = p[j].v[k];
                    }
                }
            }
        }
        if (cur >= num_chunks) break;
        prev = cur;
        cur = nxt;
    }
}
