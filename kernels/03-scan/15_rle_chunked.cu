// Run-length encoding on the chunked single pass (14): a chunk's run heads are counted
// from memory, and one iteration later, after the look-back, the chunk is read again from
// L2 and only its runs are written, their values and their lengths. In iteration i a block
//   - counts the heads of chunk t_i (an element that differs from the one before it) and
//     finds the index of each warp's last head, reading the chunk from memory; publishes
//     the count as the chunk's AGGREGATE;
//   - meanwhile its look-back warp finds the number of runs before chunk t_{i-1}, and
//     gives each data warp its first run's position and the index of the last head before
//     its piece (a max over the warps before it), and writes the chunk's last run
//     (position, start) for rle_tails;
//   - then walks t_{i-1} again from L2: a warp scan of the head counts gives each head its
//     run's position, a warp max-scan of the head indices the index of the head before it;
//     each head writes its value and the length of the run before it (13's second walk).
// A run that goes on into later chunks ends where a later chunk's first run starts: that
// chunk writes the start (starts[position]), and rle_tails (13_rle_lookahead.cu), one
// thread a chunk, sets the length of every chunk's last run from it.
// Layout, tickets, look-back (TIER) and the shared words' buffers as in 14. 4-byte values.
#include "lookback_tiered.cuh"
#include "handoff.cuh"

constexpr unsigned NO_CHUNK = 0xffffffffu;

__device__ __forceinline__ int warp_inclusive_max(int v, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int u = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v = max(u, v);
    }
    return v;
}

// FIRST: the count's read from memory (plain); otherwise the walk's, from L2 (.cs).
template <bool FIRST>
__device__ __forceinline__ int4 load_row(const int* __restrict__ in, long long i, long long n,
                                         bool whole) {
    if (whole || i + 4 <= n) {
        const int4* p = reinterpret_cast<const int4*>(in + i);
        return FIRST ? *p : __ldcs(p);
    }
    int4 r;
    r.x = i < n ? in[i] : 0;
    r.y = i + 1 < n ? in[i + 1] : 0;
    r.z = i + 2 < n ? in[i + 2] : 0;
    r.w = i + 3 < n ? in[i + 3] : 0;
    return r;
}

// The heads of the row of 4 elements at index i, as a 4-bit mask; `prev` the element
// before the row.
__device__ __forceinline__ unsigned heads4(const int4& r, int prev, long long i, long long n) {
    const int x[4] = {r.x, r.y, r.z, r.w};
    unsigned m = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const int p = k == 0 ? prev : x[k - 1];
        m |= (unsigned)(i + k < n && (i + k == 0 || x[k] != p)) << k;
    }
    return m;
}

template <int WARPS, int VPL, int BATCHES, int MIN_BLOCKS, int DELAY_NS, int WIDTH, int TIER>
__global__ void __launch_bounds__((WARPS + 1) * 32, MIN_BLOCKS)
rle_encode_chunked(const int* __restrict__ in, int* __restrict__ values,
                   int* __restrict__ lengths, int* __restrict__ starts,
                   int* __restrict__ tail_pos, int* __restrict__ tail_start,
                   int* __restrict__ count, long long n, unsigned* counter,
                   unsigned num_chunks, unsigned long long* words, unsigned epoch) {
    static_assert(WARPS >= 1 && WARPS <= 31, "WARPS: 1 to 31 data warps (one more looks back)");
    static_assert(VPL >= 1 && VPL <= 16 && BATCHES >= 1, "VPL: 1 to 16 vectors a lane");
    constexpr long long PIECE = (long long)BATCHES * VPL * 32 * 4;
    constexpr long long CHUNK = PIECE * WARPS;
    __shared__ int s_count[2][WARPS], s_last[2][WARPS];
    __shared__ int s_pos[2][WARPS], s_head[2][WARPS];
    __shared__ unsigned s_ticket[2];

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const TileStatus<int> st{words, nullptr, nullptr, nullptr, epoch};
    if (threadIdx.x == 0) s_ticket[1] = next_ticket(counter, num_chunks);
    __syncthreads();
    unsigned cur = s_ticket[1], prev = NO_CHUNK;

    for (int it = 0;; ++it) {
        const int b = it & 1;
        if (warp < WARPS) {
            // Count the heads of chunk `cur` from memory and find this warp's last one.
            if (cur < num_chunks) {
                const long long base = (long long)cur * CHUNK + warp * PIECE;
                const bool whole = (long long)cur * CHUNK + CHUNK <= n;
                int carry = (base > 0 && base - 1 < n) ? in[base - 1] : 0;   // before the piece
                int heads = 0, last = -1;
#pragma unroll 1
                for (int bt = 0; bt < BATCHES; ++bt) {
                    int4 r[VPL];
#pragma unroll
                    for (int j = 0; j < VPL; ++j)
                        r[j] = load_row<true>(in, base + ((long long)(bt * VPL + j) * 32 + lane) * 4,
                                              n, whole);
#pragma unroll
                    for (int j = 0; j < VPL; ++j) {
                        const long long i = base + ((long long)(bt * VPL + j) * 32 + lane) * 4;
                        const int up = __shfl_up_sync(FULL_MASK, r[j].w, 1);
                        const unsigned m = heads4(r[j], lane > 0 ? up : carry, i, n);
                        heads += __popc(m);
                        if (m) last = (int)i + 31 - __clz(m);
                        carry = __shfl_sync(FULL_MASK, r[j].w, 31);
                    }
                }
                heads = warp_reduce(heads);
#pragma unroll
                for (int d = 16; d > 0; d >>= 1) last = max(last, __shfl_xor_sync(FULL_MASK, last, d));
                if (lane == 0) { s_count[b][warp] = heads; s_last[b][warp] = last; }
                bar_sync(1, WARPS * 32);
                if (warp == 0 && lane == 0) {
                    int total = 0;
#pragma unroll
                    for (int w = 0; w < WARPS; ++w) total += s_count[b][w];
                    st.publish(cur, cur == 0 ? ST_PREFIX : ST_AGGREGATE, total);
                }
            }
        } else {
            // The look-back warp: the next ticket; the previous chunk's run count before
            // it, each warp's first position and the head before it, the chunk's last run.
            unsigned next = NO_CHUNK;
            if (lane == 0 && cur < num_chunks) next = next_ticket(counter, num_chunks);
            if (prev < num_chunks) {
                const int c = lane < WARPS ? s_count[b ^ 1][lane] : 0;
                const int l = lane < WARPS ? s_last[b ^ 1][lane] : -1;
                const int inc = warp_inclusive_scan(c, lane);
                const int up = __shfl_up_sync(FULL_MASK, inc, 1);
                const int total = __shfl_sync(FULL_MASK, inc, 31);
                const int inc_l = warp_inclusive_max(l, lane);
                const int up_l = __shfl_up_sync(FULL_MASK, inc_l, 1);
                const int chunk_last = __shfl_sync(FULL_MASK, inc_l, 31);
                int excl = 0;
                if (prev > 0) {
                    if constexpr (TIER > 0)
                        excl = look_back_tiered<DELAY_NS, TIER>(st, num_chunks, prev, total, lane);
                    else
                        excl = look_back_polled<DELAY_NS, WIDTH>(st, prev, lane);
                }
                if (lane < WARPS) {
                    s_pos[b][lane] = lane == 0 ? excl : excl + up;
                    s_head[b][lane] = lane == 0 ? -1 : up_l;
                }
                if (lane == 0) {
                    if (prev > 0) st.publish(prev, ST_PREFIX, excl + total);
                    tail_pos[prev] = total > 0 ? excl + total - 1 : -1;
                    tail_start[prev] = chunk_last;
                    if (prev == num_chunks - 1) *count = excl + total;
                }
            }
            if (lane == 0) s_ticket[b] = next;
        }
        __syncthreads();
        const unsigned nxt = s_ticket[b];
        if (warp < WARPS && prev < num_chunks) {
            // Walk chunk `prev` again, from L2: each head writes its value and the length
            // of the run before it.
            const long long base = (long long)prev * CHUNK + warp * PIECE;
            const bool whole = (long long)prev * CHUNK + CHUNK <= n;
            int carry = (base > 0 && base - 1 < n) ? in[base - 1] : 0;
            int pos = s_pos[b][warp], prev_head = s_head[b][warp];
#pragma unroll 1
            for (int bt = 0; bt < BATCHES; ++bt) {
                int4 r[VPL];
#pragma unroll
                for (int j = 0; j < VPL; ++j)
                    r[j] = load_row<false>(in, base + ((long long)(bt * VPL + j) * 32 + lane) * 4,
                                           n, whole);
#pragma unroll
                for (int j = 0; j < VPL; ++j) {
                    const long long i0 = base + ((long long)(bt * VPL + j) * 32 + lane) * 4;
                    const int up = __shfl_up_sync(FULL_MASK, r[j].w, 1);
                    const unsigned m = heads4(r[j], lane > 0 ? up : carry, i0, n);
                    carry = __shfl_sync(FULL_MASK, r[j].w, 31);
                    const int c = __popc(m);
                    const int l = m ? (int)i0 + 31 - __clz(m) : -1;
                    const int inc_c = warp_inclusive_scan(c, lane);
                    const int inc_l = warp_inclusive_max(l, lane);
                    int p = pos + inc_c - c;
                    const int up_l = __shfl_up_sync(FULL_MASK, inc_l, 1);
                    int h = lane > 0 ? max(prev_head, up_l) : prev_head;
                    const int x[4] = {r[j].x, r[j].y, r[j].z, r[j].w};
#pragma unroll
                    for (int k = 0; k < 4; ++k) {
                        if (m & (1u << k)) {
                            const int i = (int)i0 + k;
                            values[p] = x[k];
                            if (h >= 0) lengths[p - 1] = i - h;    // the run before ends here
                            else starts[p] = i;                     // the chunk's first run
                            h = i;
                            ++p;
                        }
                    }
                    pos += __shfl_sync(FULL_MASK, inc_c, 31);
                    prev_head = max(prev_head, __shfl_sync(FULL_MASK, inc_l, 31));
                }
            }
        }
        if (cur >= num_chunks) break;
        prev = cur;
        cur = nxt;
    }
}
