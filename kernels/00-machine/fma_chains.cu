// FP32 FMA peak: how many independent dependency chains a thread needs.
//
// Each thread runs CHAINS independent recurrences x <- fma(x, y, z). One FFMA has a
// latency of about 4 cycles and each SM sub-partition issues one warp-FFMA per cycle, so
// a scheduler needs about 4 independent FFMAs ready every cycle: from several warps
// (occupancy) or from several chains within one warp (instruction-level parallelism).
// y and z are kernel arguments, so the compiler cannot fold the loop away; with
// y = z = 0.5 every chain converges to 1 and the result is checkable in float64.
template <int CHAINS>
__global__ void __launch_bounds__(1024)
fma_chains(float* __restrict__ out, float y, float z, int iters)
{
    float x[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = (float)(c + 1) * 0.125f;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) x[c] = fmaf(x[c], y, z);
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) s += x[c];
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
