// An L2 roof for the roofline: how fast the SMs read a working set that lives in L2.
//
// Every thread walks a grid-strided range of float4s PASSES times, four loads in flight
// (the host makes the buffer a multiple of 4 x threads float4s), and sums them. The loads
// are ld.global.cg (__ldcg): cached in L2 only, so an SM cannot keep its share of the
// buffer in its L1 and every pass is served by L2. With the buffer a fraction of the L2
// (about 16 MiB of 60 MiB), the time of a launch is bytes / L2 read bandwidth; with a
// buffer larger than L2 it is the DRAM's read bandwidth instead, measured by the same
// kernel in the same run.
//
// The sum is written per thread (the host checks it against a float64 sum): without a
// use, the loads would be dead code.
//
// Launch: block 256, grid = 4 blocks per SM (32 warps, 4 x 16 B x 32 lanes in flight each).

extern "C" __global__ void __launch_bounds__(256)
l2_read(const float4* __restrict__ x, long long n4, int passes, float* __restrict__ out) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int p = 0; p < passes; ++p) {
        long long i = t;
        for (; i + 3 * stride < n4; i += 4 * stride) {   // four loads in flight per thread
            const float4 a = __ldcg(x + i), b = __ldcg(x + i + stride);
            const float4 c = __ldcg(x + i + 2 * stride), d = __ldcg(x + i + 3 * stride);
            s += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w))
               + ((c.x + c.y) + (c.z + c.w)) + ((d.x + d.y) + (d.z + d.w));
        }
        for (; i < n4; i += stride) {
            const float4 v = __ldcg(x + i);
            s += (v.x + v.y) + (v.z + v.w);
        }
    }
    out[t] = s;
}
