// VecAdd with 16-byte loads: each thread adds U float4 vectors (4·U elements) and issues
// the 2·U loads ahead of the stores (for U = 4 the compiler puts six of the eight before the
// first store), so that about 2·U·16 bytes per thread are in flight (Little's law:
// bandwidth = bytes in flight / latency). Consecutive threads take consecutive
// vectors: every warp access is 512 contiguous bytes. One trip per thread; the grid has
// ceil(n / (4·U·blockDim.x)) blocks (chapter 0's copy kernel, with a second input).
//
// The arrays must start at a multiple of 16 bytes (checked in Python). The last block's
// partial trip goes vector by vector behind a guard; the last n % 4 elements, which fill
// no whole vector, are added one by one by the first threads.
template <int U>
__global__ void __launch_bounds__(256)
vecadd_vec4(const float* __restrict__ a, const float* __restrict__ b,
            float* __restrict__ c, long long n)
{
    const long long n4 = n >> 2;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);
    const long long base = (long long)blockIdx.x * blockDim.x * U + threadIdx.x;
    float4 va[U], vb[U];
    if (base + (long long)(U - 1) * blockDim.x < n4) {
        // A whole trip inside the arrays (every block but the last): no guard between the
        // loads, which the compiler may then issue back to back.
#pragma unroll
        for (int u = 0; u < U; ++u) {
            va[u] = a4[base + u * blockDim.x];
            vb[u] = b4[base + u * blockDim.x];
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
            c4[base + u * blockDim.x] = make_float4(va[u].x + vb[u].x, va[u].y + vb[u].y,
                                                    va[u].z + vb[u].z, va[u].w + vb[u].w);
    } else {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = base + (long long)u * blockDim.x;
            if (i < n4)
                c4[i] = make_float4(a4[i].x + b4[i].x, a4[i].y + b4[i].y, a4[i].z + b4[i].z,
                                    a4[i].w + b4[i].w);
        }
    }
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < (n & 3)) {
        const long long j = (n4 << 2) + t;
        c[j] = a[j] + b[j];
    }
}
