// Streaming copy with a chosen number of bytes in flight (Little's law: bandwidth =
// bytes in flight / latency). The grid is sized to the GPU (blocks per SM × SMs), every
// thread loops over the buffer with the grid's stride, and each trip issues K independent
// 16-byte loads before its K stores, so each resident thread keeps K × 16 bytes of reads
// in flight. Resident warps × K × 16 bytes per SM is the knob the chapter turns.
template <int K>
__global__ void stream_copy(const int4* __restrict__ src, int4* __restrict__ dst,
                            long long n4, int zero_mask)
{
    const long long T = (long long)gridDim.x * blockDim.x;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (; i + (K - 1) * T < n4; i += K * T) {
        int4 v[K];
#pragma unroll
        for (int u = 0; u < K; ++u) v[u] = src[i + u * T];
        // zero_mask is 0 at run time, which the compiler cannot know: every store's address
        // then depends on all K loaded vectors, so no store (which would stall on its
        // load) is scheduled before the last of the K loads has been issued.
        int dep = 0;
#pragma unroll
        for (int u = 0; u < K; ++u) dep ^= v[u].x;
        const long long zero = dep & zero_mask;
#pragma unroll
        for (int u = 0; u < K; ++u) dst[i + u * T + zero] = v[u];
    }
    for (; i < n4; i += T) dst[i] = src[i];      // the last partial trip
}
