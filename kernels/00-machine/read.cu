// Read bandwidth: the ceiling of a pass that reads its input once and writes next to
// nothing (a reduction; an encoder whose runs are few). As copy.cu, each thread issues
// UNROLL 16-byte loads before it uses any, so UNROLL requests a thread are in flight;
// consecutive threads read consecutive 16-byte vectors. The loads' XOR is compared with
// `key`, which the compiler cannot know, so no load can be dropped; the one word written
// when a thread's XOR happens to equal it is the only store.
template <int UNROLL>
__global__ void __launch_bounds__(256)
read_vec4(const int4* __restrict__ src, long long n4, int key, int* __restrict__ sink)
{
    const long long base = (long long)blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
    int4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long i = base + (long long)u * blockDim.x;
        v[u] = i < n4 ? src[i] : make_int4(0, 0, 0, 0);
    }
    int acc = 0;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    if (acc == key) *sink = acc;
}
