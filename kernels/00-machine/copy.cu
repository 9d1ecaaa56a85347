// Copy bandwidth: the memory ceiling every chapter's roofline uses.
//
// Each byte is read once and written once, so the bytes moved are 2 x size. Each thread
// moves UNROLL 16-byte vectors, issuing all UNROLL loads before the first store so that
// UNROLL requests per thread are in flight (Little's law: bandwidth = bytes in flight /
// latency). Consecutive threads touch consecutive 16-byte vectors: every warp access is
// 512 contiguous bytes, fully coalesced.
template <int UNROLL>
__global__ void __launch_bounds__(256)
copy_vec4(const float4* __restrict__ src, float4* __restrict__ dst, long long n4)
{
    const long long base = (long long)blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long i = base + (long long)u * blockDim.x;
        if (i < n4) v[u] = src[i];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long i = base + (long long)u * blockDim.x;
        if (i < n4) dst[i] = v[u];
    }
}
