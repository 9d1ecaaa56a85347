// The floor of a pass that reads its input once and writes m bytes (an encoder writing its
// runs): read.cu's loads, and each block also stores its share of the output, 16 bytes at
// a time, as an encoder's tile writes its runs next to where it read them. Nothing is
// computed. The loads' XOR is compared with `key`, which the compiler cannot know, so no
// load can be dropped; each stored vector holds its own index, so the output can be checked.
template <int UNROLL>
__global__ void __launch_bounds__(256)
read_write_vec4(const int4* __restrict__ src, long long n4, int4* __restrict__ dst,
                long long m4, int key, int* __restrict__ sink)
{
    const long long base = (long long)blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
    int4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long i = base + (long long)u * blockDim.x;
        v[u] = i < n4 ? src[i] : make_int4(0, 0, 0, 0);
    }
    // this block's share of the output: vectors [lo, hi), in proportion to its input
    const long long lo = m4 * blockIdx.x / gridDim.x;
    const long long hi = m4 * (blockIdx.x + 1) / gridDim.x;
    for (long long j = lo + threadIdx.x; j < hi; j += blockDim.x)
        dst[j] = make_int4((int)j, (int)(j >> 32), 0, 0);
    int acc = 0;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    if (acc == key) *sink = acc;
}
