// Streaming copy with a chosen number of bytes in flight (Little's law: bandwidth =
// bytes in flight / latency). The grid is sized to the GPU (blocks per SM × SMs) and each
// trip of a thread issues K independent 16-byte loads before its K stores, so each
// resident thread keeps K × 16 bytes of reads in flight: resident warps × K × 16 bytes
// per SM is the knob the chapter turns.
//
// BLOCKED = false: every thread strides over the whole buffer by the grid's size, so one
// trip's K loads are a grid (megabytes) apart. BLOCKED = true: each block copies its own
// contiguous chunk, striding by its size, so a trip's K loads are one block-width apart
// and a block's accesses stay in a few DRAM pages at a time.
template <int K, bool BLOCKED>
__global__ void stream_copy(const int4* __restrict__ src, int4* __restrict__ dst,
                            long long n4, int zero_mask)
{
    long long begin = 0, end = n4, step = (long long)gridDim.x * blockDim.x;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (BLOCKED) {
        const long long per = (long long)K * blockDim.x;
        const long long chunk = (n4 + gridDim.x - 1) / gridDim.x;
        const long long size = (chunk + per - 1) / per * per;
        begin = blockIdx.x * size;
        end = begin + size < n4 ? begin + size : n4;
        step = blockDim.x;
        i = begin + threadIdx.x;
    }
    // unroll 1 (here and in the tail): the compiler may not unroll a loop and hoist the
    // next trip's loads above this trip's stores, which would put more than K in flight.
#pragma unroll 1
    for (; i + (K - 1) * step < end; i += K * step) {
        int4 v[K];
#pragma unroll
        for (int u = 0; u < K; ++u) v[u] = src[i + u * step];
        // zero_mask is 0 at run time, which the compiler cannot know: every store's address
        // then depends on all K loaded vectors, so no store (which would stall on its
        // load) is scheduled before the last of the K loads has been issued.
        int dep = 0;
#pragma unroll
        for (int u = 0; u < K; ++u) dep ^= v[u].x;
        const long long zero = dep & zero_mask;
#pragma unroll
        for (int u = 0; u < K; ++u) dst[i + u * step + zero] = v[u];
    }
#pragma unroll 1
    for (; i < end; i += step) dst[i] = src[i];      // the last partial trip
}
